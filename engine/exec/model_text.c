/* model_text.c - what a compiled model shows of itself as text: the
 * graph after its passes (pg_model_text) and each step's tensors and
 * kernels (pg_model_step_info).  Made when first asked, not by the
 * compile: a decode loop recompiles for every step and reads none of it
 * (formatting it took ~5% of such a compile).  Two threads asking at once
 * keep one text (the other's is freed). */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "model.h"

/* Appends to the text in buf[cap] (cap > 0) at *o, truncating at the end.
 * snprintf returns the length it would have written, so adding that to the
 * offset can carry it past cap, where the next call's `cap - *o` wraps to a
 * huge size and writes past the buffer: *o stays at most cap - 1 (the
 * terminator of a full buffer), so every later append is a no-op. */
static void text_append(char *buf, size_t cap, size_t *o, const char *fmt, ...)
{
    if (*o >= cap - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *o, cap - *o, fmt, ap);
    va_end(ap);
    if (n > 0)
        *o = (size_t)n < cap - *o ? *o + (size_t)n : cap - 1;
}

/* "name:dtype[dims], ..." of a step's tensors, truncated at 2047 bytes
 * (tensor names come from the model file and may be of any length). */
static char *tensor_list_text(const pg_graph *g, const int *ids, int n)
{
    char buf[2048];
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < n && o < sizeof buf - 1; i++) {
        const pg_tensor *t = ids[i] >= 0 ? g->tensors[ids[i]] : NULL;
        if (!t) {
            text_append(buf, sizeof buf, &o, "%s-", i ? ", " : "");
            continue;
        }
        text_append(buf, sizeof buf, &o, "%s%s:%s[", i ? ", " : "", t->name, pg_dtype_name(t->dtype));
        for (int d = 0; d < t->rank; d++)
            text_append(buf, sizeof buf, &o, "%s%lld", d ? "," : "", (long long)t->shape[d]);
        text_append(buf, sizeof buf, &o, "]%s", t->layout == PG_LAYOUT_PACKED ? "packed" : "");
    }
    return pg_strdup(buf);
}

/* What the step shows: the fused activation, a packed weight, and the
 * kernels it is bound to ("activation=gelu packed-B sgemm=f32_gemm_...") */
static char *step_detail(const pg_graph *g, const pg_node *n, const pg_binding *b)
{
    char d[256] = "";
    size_t o = 0;
    if (n->op == PG_OP_FUSED_MATMUL || n->op == PG_OP_QKV_MATMUL)
        text_append(d, sizeof d, &o, "activation=%s%s", pg_ir_attr_string(n, "activation", "none"),
                    g->tensors[n->inputs[1]]->layout == PG_LAYOUT_PACKED ? " packed-B" : "");
    if ((n->op == PG_OP_MATMUL || n->op == PG_OP_FUSED_MATMUL || n->op == PG_OP_QKV_MATMUL) &&
        n->n_inputs > 1 && n->inputs[1] >= 0) {
        int lay = g->tensors[n->inputs[1]]->layout;
        if (lay == PG_LAYOUT_PACKED_BF16 || lay == PG_LAYOUT_PACKED_U8S8)
            text_append(d, sizeof d, &o, "%sprecision=%s", o ? " " : "",
                        lay == PG_LAYOUT_PACKED_BF16 ? "bf16" : "int8-dynamic");
    }
    if (n->op == PG_OP_CONV || n->op == PG_OP_FUSED_CONV) {
        /* the window, so a profile row says which conv it is */
        int nk = 0, ns = 0;
        const int64_t *ks = pg_ir_attr_ints(n, "kernel_shape", &nk), *st = pg_ir_attr_ints(n, "strides", &ns);
        for (int i = 0; ks && i < nk && i < 3; i++)
            text_append(d, sizeof d, &o, "%s%lld", i ? "x" : o ? " kernel_shape=" : "kernel_shape=",
                        (long long)ks[i]);
        if (st && ns > 0 && st[0] != 1)
            text_append(d, sizeof d, &o, " stride=%lld", (long long)st[0]);
        int64_t grp = pg_ir_attr_int(n, "group", 1);
        if (grp != 1)
            text_append(d, sizeof d, &o, " group=%lld", (long long)grp);
    }
    for (int r = 0; r < (int)(sizeof b->kern / sizeof b->kern[0]); r++)
        if (b->kern[r])
            text_append(d, sizeof d, &o, "%skernel=%s", o ? " " : "", b->kern[r]->name);
    return pg_strdup(d);
}

/* *slot's text, or made (NULL: out of memory) and put there if still empty */
static const char *keep_text(_Atomic(char *) *slot, char *made)
{
    char *none = NULL;
    if (!made || atomic_compare_exchange_strong(slot, &none, made))
        return made;
    free(made);   /* another thread's is there: none holds it */
    return none;
}

pg_status pg_model_step_info(const pg_model *m, int i, pg_step_info *out)
{
    if (!m || !out || i < 0 || i >= m->n_steps)
        return pg_fail(PG_ERR_INVALID_ARG, "no step %d", i);
    pg_step *st = &m->steps[i];
    const pg_node *n = st->node;
    out->node = n->name;
    out->op_type = n->op_type;
    if (!(out->inputs = atomic_load(&st->in_text)))
        out->inputs = keep_text(&st->in_text, tensor_list_text(m->g, n->inputs, n->n_inputs));
    if (!(out->outputs = atomic_load(&st->out_text)))
        out->outputs = keep_text(&st->out_text, tensor_list_text(m->g, n->outputs, n->n_outputs));
    if (!(out->detail = atomic_load(&st->detail)))
        out->detail = keep_text(&st->detail, step_detail(m->g, n, st->bind));
    if (!out->inputs || !out->outputs || !out->detail)
        return pg_fail(PG_ERR_NOMEM, "out of memory describing step %d", i);
    return PG_OK;
}

const char *pg_model_text(const pg_model *m)
{
    if (!m)
        return "";
    pg_model *w = (pg_model *)m;   /* the text is a cache, not state */
    const char *t = atomic_load(&w->text);
    if (!t)
        t = keep_text(&w->text, pg_ir_to_text(m->g));
    return t ? t : "";
}

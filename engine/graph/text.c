/* text.c - a graph as text: one line per node in execution order,
 *   name = OpType(input:float32[1,128,768], w*, ...)  attrs  -> out:float32[...]
 * where * marks a constant and "packed" a pre-packed weight. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "ir.h"

typedef struct sbuf {
    char *s;
    size_t len, cap;
    int oom;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t nc = b->cap * 2 + (size_t)n;
        char *p = pg_obj_realloc(b->s, nc);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->s = p;
        b->cap = nc;
    }
}

static void put_tensor(sbuf *b, const pg_graph *g, int id)
{
    if (id < 0 || id >= g->n_tensors || !g->tensors[id]) {
        put(b, "-");
        return;
    }
    const pg_tensor *t = g->tensors[id];
    if (t->rank < 0) {   /* not through shape inference yet */
        put(b, "%s%s:?", t->name, t->is_const ? "*" : "");
        return;
    }
    put(b, "%s%s:%s[", t->name, t->is_const ? "*" : "", pg_dtype_name(t->dtype));
    for (int i = 0; i < t->rank; i++)
        put(b, "%s%lld", i ? "," : "", (long long)t->shape[i]);
    put(b, "]%s", t->layout == PG_LAYOUT_PACKED ? " packed" : "");
}

static void put_attr(sbuf *b, const pg_attr *a)
{
    put(b, " %s=", a->name);
    switch (a->type) {
    case PG_ATTR_INT: put(b, "%lld", (long long)a->i); break;
    case PG_ATTR_FLOAT: put(b, "%g", (double)a->f); break;
    case PG_ATTR_STRING: put(b, "\"%s\"", a->s); break;
    case PG_ATTR_TENSOR: put(b, "<tensor>"); break;
    case PG_ATTR_INTS:
    case PG_ATTR_FLOATS:
        put(b, "[");
        for (int i = 0; i < a->n && i < 16; i++) {
            if (a->type == PG_ATTR_INTS) put(b, "%s%lld", i ? "," : "", (long long)a->ints[i]);
            else put(b, "%s%g", i ? "," : "", (double)a->floats[i]);
        }
        put(b, "%s]", a->n > 16 ? ",..." : "");
        break;
    }
}

char *pg_ir_to_text(const pg_graph *g)
{
    sbuf b = { pg_obj_malloc(4096), 0, 4096, 0 };
    if (!b.s)
        return NULL;
    b.s[0] = 0;
    int *order = pg_obj_malloc(sizeof(int) * (size_t)(g->n_nodes + 1)), n = 0;
    if (!order) {
        pg_free(b.s);
        return NULL;
    }
    if (pg_ir_topo_order(g, order, &n) != PG_OK) {
        /* still render something useful: insertion order */
        n = 0;
        PG_IR_FOR_NODES(g, nd)
            order[n++] = nd->id;
    }
    put(&b, "graph(");
    for (int i = 0; i < g->n_inputs; i++) {
        put(&b, "%s", i ? ", " : "");
        put_tensor(&b, g, g->inputs[i]);
    }
    put(&b, ")\n");
    for (int i = 0; i < n; i++) {
        const pg_node *nd = g->nodes[order[i]];
        put(&b, "  %s = %s(", nd->name, nd->op_type);
        for (int k = 0; k < nd->n_inputs; k++) {
            put(&b, "%s", k ? ", " : "");
            put_tensor(&b, g, nd->inputs[k]);
        }
        put(&b, ")");
        for (int k = 0; k < nd->n_attrs; k++)
            put_attr(&b, &nd->attrs[k]);
        put(&b, " -> ");
        for (int k = 0; k < nd->n_outputs; k++) {
            put(&b, "%s", k ? ", " : "");
            put_tensor(&b, g, nd->outputs[k]);
        }
        put(&b, "\n");
    }
    put(&b, "return ");
    for (int i = 0; i < g->n_outputs; i++) {
        put(&b, "%s%s", i ? ", " : "", g->output_names[i]);
        const pg_tensor *t = g->outputs[i] >= 0 ? g->tensors[g->outputs[i]] : NULL;
        if (t && strcmp(t->name, g->output_names[i]))
            put(&b, " (= %s)", t->name);
    }
    put(&b, "\n");
    pg_free(order);
    if (b.oom) {
        pg_free(b.s);
        return NULL;
    }
    /* callers free() it: hand back a plain malloc copy */
    char *out = malloc(b.len + 1);
    if (out)
        memcpy(out, b.s, b.len + 1);
    pg_free(b.s);
    return out;
}

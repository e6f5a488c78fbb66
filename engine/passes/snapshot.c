/* snapshot.c - building the pass log (see snapshot.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "snapshot.h"

/* A growing string; on OOM it stays NULL and sb_take returns NULL. */
typedef struct sbuf {
    char  *s;
    size_t len, cap;
    int    bad;
} sbuf;

static void sb_put(sbuf *b, const char *fmt, ...) PG_PRINTF(2, 3);
static void sb_put(sbuf *b, const char *fmt, ...)
{
    if (b->bad)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->bad = 1;
            return;
        }
        if (b->s && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t ncap = (b->cap ? b->cap * 2 : 64) + (size_t)n + 1;
        char *p = realloc(b->s, ncap);
        if (!p) {
            b->bad = 1;
            return;
        }
        b->s = p;
        b->cap = ncap;
    }
}

static char *sb_take(sbuf *b)
{
    if (b->bad) {
        free(b->s);
        return NULL;
    }
    if (!b->s)
        return strdup("");
    return b->s;
}

static void put_shape(sbuf *b, const pg_tensor *t)
{
    if (!t) {
        sb_put(b, "-");
        return;
    }
    if (t->rank < 0) {
        sb_put(b, "?");
        return;
    }
    if (t->rank == 0) {
        sb_put(b, "scalar");
        return;
    }
    for (int d = 0; d < t->rank; d++) {
        if (t->shape[d] < 0)
            sb_put(b, "%s?", d ? "x" : "");
        else
            sb_put(b, "%s%lld", d ? "x" : "", (long long)t->shape[d]);
    }
    if (t->layout == PG_LAYOUT_PACKED)
        sb_put(b, " packed/%d", t->pack_nr);
}

static void put_attr(sbuf *b, const pg_graph *g, const pg_attr *a)
{
    sb_put(b, "%s=", a->name);
    switch (a->type) {
    case PG_ATTR_INT:
        sb_put(b, "%lld", (long long)a->i);
        break;
    case PG_ATTR_FLOAT:
        sb_put(b, "%g", (double)a->f);
        break;
    case PG_ATTR_STRING:
        sb_put(b, "%s", a->s ? a->s : "");
        break;
    case PG_ATTR_INTS:
    case PG_ATTR_FLOATS:
        sb_put(b, "[");
        for (int i = 0; i < a->n && i < 8; i++) {
            if (a->type == PG_ATTR_INTS)
                sb_put(b, "%s%lld", i ? "," : "", (long long)a->ints[i]);
            else
                sb_put(b, "%s%g", i ? "," : "", (double)a->floats[i]);
        }
        sb_put(b, "%s]", a->n > 8 ? ",..." : "");
        break;
    case PG_ATTR_TENSOR: {
        const pg_tensor *t = a->tensor >= 0 && a->tensor < g->n_tensors ? g->tensors[a->tensor] : NULL;
        sb_put(b, "<");
        put_shape(b, t);
        sb_put(b, ">");
        break;
    }
    }
}

static int is_fused(const pg_pass_log *log, const char *name)
{
    for (int i = 0; i < log->n_fused; i++)
        if (!strcmp(log->fused[i], name))
            return 1;
    return 0;
}

static void free_nodes(pg_snap_pass *p)
{
    if (p->shared) {   /* an earlier entry's: that one frees them */
        p->shared = 0;
        p->nodes = NULL;
        p->n_nodes = 0;
        return;
    }
    for (int i = 0; i < p->n_nodes; i++) {
        pg_snap_node *n = &p->nodes[i];
        free(n->name); free(n->op); free(n->inputs); free(n->outputs);
        free(n->in_shapes); free(n->shapes); free(n->dtypes); free(n->attrs);
    }
    free(p->nodes);
    p->nodes = NULL;
    p->n_nodes = 0;
}

static pg_status snap_node(const pg_pass_log *log, const pg_graph *g, const pg_node *n,
                           pg_snap_node *s)
{
    sbuf in = { 0 }, out = { 0 }, ins = { 0 }, outs = { 0 }, dts = { 0 }, at = { 0 };
    for (int i = 0; i < n->n_inputs; i++) {
        const pg_tensor *t = n->inputs[i] >= 0 ? g->tensors[n->inputs[i]] : NULL;
        sb_put(&in, "%s%s", i ? "," : "", t ? t->name : "");
        if (i)
            sb_put(&ins, ";");
        put_shape(&ins, t);
    }
    for (int i = 0; i < n->n_outputs; i++) {
        const pg_tensor *t = g->tensors[n->outputs[i]];
        sb_put(&out, "%s%s", i ? "," : "", t->name);
        if (i) {
            sb_put(&outs, ";");
            sb_put(&dts, ";");
        }
        put_shape(&outs, t);
        sb_put(&dts, "%s", t->rank < 0 ? "?" : pg_dtype_name(t->dtype));
    }
    for (int i = 0; i < n->n_attrs; i++) {
        if (i)
            sb_put(&at, " ");
        put_attr(&at, g, &n->attrs[i]);
    }
    s->name = strdup(n->name);
    s->op = strdup(n->op_type);
    s->inputs = sb_take(&in);
    s->outputs = sb_take(&out);
    s->in_shapes = sb_take(&ins);
    s->shapes = sb_take(&outs);
    s->dtypes = sb_take(&dts);
    s->attrs = sb_take(&at);
    s->fused = is_fused(log, n->name);
    if (!s->name || !s->op || !s->inputs || !s->outputs || !s->in_shapes || !s->shapes ||
        !s->dtypes || !s->attrs)
        return pg_fail(PG_ERR_NOMEM, "out of memory taking a graph snapshot");
    return PG_OK;
}

pg_status pg_snap_take(pg_pass_log *log, pg_snap_pass *p, const pg_graph *g)
{
    free_nodes(p);
    int *order = malloc(sizeof(int) * (size_t)(g->n_nodes + 1)), count = 0;
    if (!order)
        return pg_fail(PG_ERR_NOMEM, "out of memory taking a graph snapshot");
    /* Execution order reads best; a graph with a cycle (a bad input graph)
     * is still shown, in insertion order. */
    if (pg_ir_topo_order(g, order, &count) != PG_OK) {
        pg_clear_error();
        count = 0;
        PG_IR_FOR_NODES(g, n)
            order[count++] = n->id;
    }
    p->nodes = calloc((size_t)(count ? count : 1), sizeof *p->nodes);
    if (!p->nodes) {
        free(order);
        return pg_fail(PG_ERR_NOMEM, "out of memory taking a graph snapshot");
    }
    p->n_nodes = count;
    pg_status st = PG_OK;
    for (int i = 0; i < count && st == PG_OK; i++)
        st = snap_node(log, g, g->nodes[order[i]], &p->nodes[i]);
    free(order);
    p->const_bytes = 0;
    PG_IR_FOR_TENSORS(g, t)
        if (t->is_const)
            p->const_bytes += (int64_t)t->nbytes;
    return st;
}

void pg_snap_share(pg_snap_pass *p, const pg_snap_pass *from)
{
    free_nodes(p);
    p->nodes = from->nodes;
    p->n_nodes = from->n_nodes;
    p->const_bytes = from->const_bytes;
    p->shared = 1;
}

pg_snap_pass *pg_snap_add_pass(pg_pass_log *log, const char *name, const char *description,
                               int level, int enabled)
{
    if (log->n == log->cap) {
        int ncap = log->cap ? log->cap * 2 : 16;
        pg_snap_pass *p = realloc(log->passes, sizeof *p * (size_t)ncap);
        if (!p) {
            log->oom = 1;
            return NULL;
        }
        log->passes = p;
        log->cap = ncap;
    }
    pg_snap_pass *p = &log->passes[log->n++];
    memset(p, 0, sizeof *p);
    p->name = name;
    p->description = description;
    p->level = level;
    p->enabled = enabled;
    return p;
}

void pg_snap_add_change(pg_pass_log *log, pg_snap_pass *p, int kind, const char *node,
                        const char *op, const char *reason)
{
    if (p->n_changes == p->cap_changes) {
        int ncap = p->cap_changes ? p->cap_changes * 2 : 16;
        pg_snap_change *c = realloc(p->changes, sizeof *c * (size_t)ncap);
        if (!c) {
            log->oom = 1;
            return;
        }
        p->changes = c;
        p->cap_changes = ncap;
    }
    pg_snap_change *c = &p->changes[p->n_changes];
    c->kind = kind;
    c->node = strdup(node ? node : "");
    c->op = strdup(op ? op : "");
    c->reason = strdup(reason ? reason : "");
    if (!c->node || !c->op || !c->reason) {
        free(c->node); free(c->op); free(c->reason);
        log->oom = 1;
        return;
    }
    p->n_changes++;
}

void pg_snap_mark_fused(pg_pass_log *log, const char *node)
{
    if (is_fused(log, node))
        return;
    if (log->n_fused == log->cap_fused) {
        int ncap = log->cap_fused ? log->cap_fused * 2 : 32;
        char **f = realloc(log->fused, sizeof *f * (size_t)ncap);
        if (!f) {
            log->oom = 1;
            return;
        }
        log->fused = f;
        log->cap_fused = ncap;
    }
    if (!(log->fused[log->n_fused] = strdup(node))) {
        log->oom = 1;
        return;
    }
    log->n_fused++;
}

void pg_snap_clear(pg_pass_log *log)
{
    for (int i = 0; i < log->n; i++) {
        pg_snap_pass *p = &log->passes[i];
        free_nodes(p);
        for (int j = 0; j < p->n_changes; j++) {
            free(p->changes[j].node);
            free(p->changes[j].op);
            free(p->changes[j].reason);
        }
        free(p->changes);
    }
    free(log->passes);
    for (int i = 0; i < log->n_fused; i++)
        free(log->fused[i]);
    free(log->fused);
    memset(log, 0, sizeof *log);
}

pg_pass_log *pg_pass_log_new(void)
{
    pg_pass_log *log = calloc(1, sizeof *log);
    if (!log)
        pg_fail(PG_ERR_NOMEM, "out of memory allocating the pass log");
    return log;
}

void pg_pass_log_free(pg_pass_log *log)
{
    if (!log)
        return;
    pg_snap_clear(log);
    free(log);
}

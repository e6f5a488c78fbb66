/* snapshot.c - building the pass log (see snapshot.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "snapshot.h"

/* A growing string; on OOM it is marked bad and snap_node fails.  The
 * appenders below are plain copies, not printf: a snapshot formats every
 * node of the graph after each pass that changed it, and a compile for a
 * new input shape (an OnnxModel's next decode step) paid more for the
 * formatting than for the passes. */
typedef struct sbuf {
    char  *s;
    size_t len, cap;
    int    bad;
} sbuf;

static void sb_mem(sbuf *b, const char *p, size_t n)
{
    if (b->bad)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t ncap = (b->cap ? b->cap * 2 : 256) + n;
        char *s = realloc(b->s, ncap);
        if (!s) {
            b->bad = 1;
            return;
        }
        b->s = s;
        b->cap = ncap;
    }
    memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = 0;
}

static void sb_str(sbuf *b, const char *s) { sb_mem(b, s, strlen(s)); }

static void sb_int(sbuf *b, long long v)
{
    char d[24];
    int i = (int)sizeof d;
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    do
        d[--i] = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0)
        d[--i] = '-';
    sb_mem(b, d + i, sizeof d - (size_t)i);
}

static void sb_float(sbuf *b, float f)
{
    char d[32];
    int n = snprintf(d, sizeof d, "%g", (double)f);
    sb_mem(b, d, n > 0 ? (size_t)n : 0);
}

/* Ends the current string (its NUL is kept) and returns where the next
 * one starts. */
static size_t sb_end(sbuf *b)
{
    sb_mem(b, "", 0);
    if (!b->bad)
        b->len++;
    return b->len;
}

static void put_shape(sbuf *b, const pg_tensor *t)
{
    if (!t) {
        sb_str(b, "-");
        return;
    }
    if (t->rank < 0) {
        sb_str(b, "?");
        return;
    }
    if (t->rank == 0) {
        sb_str(b, "scalar");
        return;
    }
    for (int d = 0; d < t->rank; d++) {
        if (d)
            sb_str(b, "x");
        if (t->shape[d] < 0)
            sb_str(b, "?");
        else
            sb_int(b, (long long)t->shape[d]);
    }
    if (t->layout == PG_LAYOUT_PACKED) {
        sb_str(b, " packed/");
        sb_int(b, t->pack_nr);
    }
}

static void put_attr(sbuf *b, const pg_graph *g, const pg_attr *a)
{
    sb_str(b, a->name);
    sb_str(b, "=");
    switch (a->type) {
    case PG_ATTR_INT:
        sb_int(b, (long long)a->i);
        break;
    case PG_ATTR_FLOAT:
        sb_float(b, a->f);
        break;
    case PG_ATTR_STRING:
        sb_str(b, a->s ? a->s : "");
        break;
    case PG_ATTR_INTS:
    case PG_ATTR_FLOATS:
        sb_str(b, "[");
        for (int i = 0; i < a->n && i < 8; i++) {
            if (i)
                sb_str(b, ",");
            if (a->type == PG_ATTR_INTS)
                sb_int(b, (long long)a->ints[i]);
            else
                sb_float(b, a->floats[i]);
        }
        sb_str(b, a->n > 8 ? ",...]" : "]");
        break;
    case PG_ATTR_TENSOR: {
        const pg_tensor *t = a->tensor >= 0 && a->tensor < g->n_tensors ? g->tensors[a->tensor] : NULL;
        sb_str(b, "<");
        put_shape(b, t);
        sb_str(b, ">");
        break;
    }
    }
}

static int is_fused(const pg_pass_log *log, const char *name)
{
    return pg_namemap_get(&log->fused_names, name) >= 0;
}

static void free_nodes(pg_snap_pass *p)
{
    if (p->shared) {   /* an earlier entry's: that one frees them */
        p->shared = 0;
        p->nodes = NULL;
        p->n_nodes = 0;
        return;
    }
    free(p->strings);
    free(p->nodes);
    p->strings = NULL;
    p->nodes = NULL;
    p->n_nodes = 0;
}

/* One node's strings, appended to the snapshot's block b: name, op,
 * inputs, outputs, input shapes, output shapes, dtypes, attributes; at[]
 * gets where each starts (pointers once the block stops moving). */
static void snap_node(sbuf *bp, const pg_graph *g, const pg_node *n, size_t at[8])
{
    sbuf b = *bp;
    at[0] = b.len;
    sb_str(&b, n->name);
    at[1] = sb_end(&b);
    sb_str(&b, n->op_type);
    at[2] = sb_end(&b);
    for (int i = 0; i < n->n_inputs; i++) {
        const pg_tensor *t = n->inputs[i] >= 0 ? g->tensors[n->inputs[i]] : NULL;
        if (i)
            sb_str(&b, ",");
        sb_str(&b, t ? t->name : "");
    }
    at[3] = sb_end(&b);
    for (int i = 0; i < n->n_outputs; i++) {
        if (i)
            sb_str(&b, ",");
        sb_str(&b, g->tensors[n->outputs[i]]->name);
    }
    at[4] = sb_end(&b);
    for (int i = 0; i < n->n_inputs; i++) {
        if (i)
            sb_str(&b, ";");
        put_shape(&b, n->inputs[i] >= 0 ? g->tensors[n->inputs[i]] : NULL);
    }
    at[5] = sb_end(&b);
    for (int i = 0; i < n->n_outputs; i++) {
        if (i)
            sb_str(&b, ";");
        put_shape(&b, g->tensors[n->outputs[i]]);
    }
    at[6] = sb_end(&b);
    for (int i = 0; i < n->n_outputs; i++) {
        const pg_tensor *t = g->tensors[n->outputs[i]];
        if (i)
            sb_str(&b, ";");
        sb_str(&b, t->rank < 0 ? "?" : pg_dtype_name(t->dtype));
    }
    at[7] = sb_end(&b);
    for (int i = 0; i < n->n_attrs; i++) {
        if (i)
            sb_str(&b, " ");
        put_attr(&b, g, &n->attrs[i]);
    }
    sb_end(&b);
    *bp = b;
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
    /* every node's strings in one block (a recompile takes a snapshot per
     * changing pass: a block per node cost ~1,700 allocations a compile) */
    size_t (*at)[8] = malloc(sizeof *at * (size_t)(count ? count : 1));
    sbuf b = { 0 };
    for (int i = 0; i < count && at && !b.bad; i++)
        snap_node(&b, g, g->nodes[order[i]], at[i]);
    free(order);
    if (!at || b.bad) {
        free(at);
        free(b.s);
        free(p->nodes);
        p->nodes = NULL;
        return pg_fail(PG_ERR_NOMEM, "out of memory taking a graph snapshot");
    }
    p->n_nodes = count;
    p->strings = b.s;
    for (int i = 0; i < count; i++) {
        pg_snap_node *s = &p->nodes[i];
        char **field[8] = { &s->name, &s->op, &s->inputs, &s->outputs, &s->in_shapes,
                            &s->shapes, &s->dtypes, &s->attrs };
        for (int f = 0; f < 8; f++)
            *field[f] = b.s + at[i][f];
        s->fused = is_fused(log, s->name);
    }
    free(at);
    pg_status st = PG_OK;
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
    /* the three strings in one block, owned by node (a pass log holds
     * hundreds of changes per compile) */
    node = node ? node : "", op = op ? op : "", reason = reason ? reason : "";
    size_t ln = strlen(node) + 1, lo = strlen(op) + 1, lr = strlen(reason) + 1;
    if (!(c->node = malloc(ln + lo + lr))) {
        log->oom = 1;
        return;
    }
    c->op = c->node + ln;
    c->reason = c->op + lo;
    memcpy(c->node, node, ln);
    memcpy(c->op, op, lo);
    memcpy(c->reason, reason, lr);
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
    if (!(log->fused[log->n_fused] = strdup(node)) ||
        pg_namemap_put(&log->fused_names, log->fused[log->n_fused], log->n_fused, NULL) < 0) {
        free(log->fused[log->n_fused]);
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
        for (int j = 0; j < p->n_changes; j++)
            free(p->changes[j].node);   /* op and reason are in its block */
        free(p->changes);
    }
    free(log->passes);
    pg_namemap_free(&log->fused_names);
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

/* planner.c - liveness, aliasing and placement of the activation arena
 * (see planner.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../exec/ops.h"
#include "planner.h"

static size_t tensor_bytes(const pg_tensor *t)
{
    int64_t n = pg_tensor_numel(t);
    return n > 0 ? (size_t)n * pg_dtype_size(t->dtype) : 0;
}

static int new_buf(pg_plan *p, size_t bytes, int first, int kind, int root)
{
    pg_plan_buf *b = &p->bufs[p->n_bufs];
    memset(b, 0, sizeof *b);
    b->bytes = pg_align_up(bytes ? bytes : 1);
    b->first = first;
    b->last = first;
    b->kind = kind;
    b->root = root;
    b->offset = -1;
    return p->n_bufs++;
}

static void extend(pg_plan *p, int buf, int last)
{
    if (buf >= 0 && p->bufs[buf].last < last)
        p->bufs[buf].last = last;
}

/* ---- placement ----------------------------------------------------------- */

/* The orders sort pointers into p->bufs, so the comparators need no state
 * beside their arguments (ties go to the lower buffer index: the pointers
 * are into one array). */
#define BUF(a) (*(const pg_plan_buf *const *)(a))
#define BY_INDEX(x, y) ((x) < (y) ? -1 : (x) > (y))

static int by_size(const void *a, const void *b)
{
    const pg_plan_buf *x = BUF(a), *y = BUF(b);
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
    if (x->first != y->first) return x->first - y->first;
    return BY_INDEX(x, y);
}

/* Size first; among equal sizes the longer-lived first, so a long chain of
 * in-place buffers claims its range before the short ones scatter over it. */
static int by_size_then_life(const void *a, const void *b)
{
    const pg_plan_buf *x = BUF(a), *y = BUF(b);
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
    int lx = x->last - x->first, ly = y->last - y->first;
    if (lx != ly) return ly - lx;
    return BY_INDEX(x, y);
}

static int by_first(const void *a, const void *b)
{
    const pg_plan_buf *x = BUF(a), *y = BUF(b);
    if (x->first != y->first) return x->first - y->first;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
    return BY_INDEX(x, y);
}

static int by_offset(const void *a, const void *b)
{
    const pg_plan_buf *x = BUF(a), *y = BUF(b);
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int time_overlap(const pg_plan_buf *a, const pg_plan_buf *b)
{
    return a->first <= b->last && b->first <= a->last;
}

/* Offsets for the buffers idx[0..n) in that order: each goes into a gap
 * between the already placed buffers live at the same time, the lowest
 * (best_fit 0) or the smallest that fits (best_fit 1), else on top of them.
 * Returns the arena size. */
static uint64_t lay_out(pg_plan_buf *const *idx, int n, pg_plan_buf **live, int best_fit)
{
    uint64_t end = 0;
    for (int i = 0; i < n; i++) {
        pg_plan_buf *b = idx[i];
        int nl = 0;
        for (int j = 0; j < i; j++)
            if (time_overlap(b, idx[j]))
                live[nl++] = idx[j];
        qsort(live, (size_t)nl, sizeof *live, by_offset);
        int64_t at = 0, best = -1;
        uint64_t best_gap = UINT64_MAX;
        for (int j = 0; j < nl; j++) {
            const pg_plan_buf *o = live[j];
            if (o->offset >= at + (int64_t)b->bytes) {
                uint64_t gap = (uint64_t)(o->offset - at);
                if (!best_fit) {
                    best = at;
                    break;
                }
                if (gap < best_gap) {
                    best_gap = gap;
                    best = at;
                }
            }
            if (o->offset + (int64_t)o->bytes > at)
                at = o->offset + (int64_t)o->bytes;
        }
        b->offset = best >= 0 ? best : at;   /* no gap: on top of the live ones */
        if ((uint64_t)b->offset + b->bytes > end)
            end = (uint64_t)b->offset + b->bytes;
    }
    return end;
}

static pg_status place(pg_plan *p, const char *strategy)
{
    int n = 0;
    pg_plan_buf **idx = pg_malloc(sizeof *idx * (size_t)(p->n_bufs + 1));
    pg_plan_buf **live = pg_malloc(sizeof *live * (size_t)(p->n_bufs + 1));
    if (!idx || !live) {
        pg_free(idx);
        pg_free(live);
        return pg_fail(PG_ERR_NOMEM, "out of memory planning");
    }
    for (int i = 0; i < p->n_bufs; i++)
        if (p->bufs[i].kind == PG_PLAN_ARENA)
            idx[n++] = &p->bufs[i];
    uint64_t end = 0;
    if (!strcmp(strategy, "naive")) {
        for (int i = 0; i < n; i++) {
            idx[i]->offset = (int64_t)end;
            end += idx[i]->bytes;
        }
    } else {
        /* Greedy placement depends on the order and on which gap a buffer
         * takes; no single choice wins everywhere (first fit strands a gap
         * next to an odd-sized buffer that best fit fills, and a short buffer
         * placed first can split the range a long in-place chain needed), so
         * the planner tries its orders with first and best fit and keeps the
         * smallest arena.  Compile time only: n^2 per try. */
        int (*const size_orders[])(const void *, const void *) = { by_size, by_size_then_life };
        int (*const first_orders[])(const void *, const void *) = { by_first };
        int greedy_size = !strcmp(strategy, "greedy_by_size");
        int (*const *orders)(const void *, const void *) = greedy_size ? size_orders : first_orders;
        int n_orders = greedy_size ? 2 : 1;
        int best_order = 0, best_fit = 0;
        end = UINT64_MAX;
        for (int o = 0; o < n_orders; o++)
            for (int fit = 0; fit < 2; fit++) {
                qsort(idx, (size_t)n, sizeof *idx, orders[o]);
                uint64_t e = lay_out(idx, n, live, fit);
                if (e < end) {
                    end = e;
                    best_order = o;
                    best_fit = fit;
                }
            }
        qsort(idx, (size_t)n, sizeof *idx, orders[best_order]);
        end = lay_out(idx, n, live, best_fit);
    }
    p->arena_bytes = end;
    pg_free(idx);
    pg_free(live);
    return PG_OK;
}

pg_status pg_plan_check(const pg_plan *p)
{
    for (int i = 0; i < p->n_bufs; i++) {
        const pg_plan_buf *a = &p->bufs[i];
        if (a->kind != PG_PLAN_ARENA)
            continue;
        if (a->offset < 0 || a->offset % PG_ALIGN || (uint64_t)a->offset + a->bytes > p->arena_bytes)
            return pg_fail(PG_ERR_INTERNAL, "memory plan: buffer %d is misplaced (offset %lld)", i,
                           (long long)a->offset);
        for (int j = i + 1; j < p->n_bufs; j++) {
            const pg_plan_buf *b = &p->bufs[j];
            if (b->kind != PG_PLAN_ARENA || !time_overlap(a, b))
                continue;
            if (a->offset < b->offset + (int64_t)b->bytes && b->offset < a->offset + (int64_t)a->bytes)
                return pg_fail(PG_ERR_INTERNAL, "memory plan: buffers %d [%lld,+%zu) steps %d-%d and "
                               "%d [%lld,+%zu) steps %d-%d overlap", i, (long long)a->offset, a->bytes,
                               a->first, a->last, j, (long long)b->offset, b->bytes, b->first, b->last);
        }
    }
    return PG_OK;
}

/* ---- liveness and aliasing ----------------------------------------------- */

void pg_plan_free(pg_plan *p)
{
    if (!p)
        return;
    pg_free(p->order);
    pg_free(p->t);
    pg_free(p->bufs);
    pg_free(p->scratch_buf);
    memset(p, 0, sizeof *p);
}

pg_status pg_plan_build(const pg_graph *g, const char *strategy, const size_t *scratch_bytes,
                        pg_plan *p)
{
    memset(p, 0, sizeof *p);
    if (!strategy || !*strategy)
        strategy = "greedy_by_size";
    if (strcmp(strategy, "greedy_by_size") && strcmp(strategy, "greedy_by_first_use") &&
        strcmp(strategy, "naive"))
        return pg_fail(PG_ERR_INVALID_ARG, "unknown planner '%s' (greedy_by_size, "
                       "greedy_by_first_use, naive)", strategy);
    snprintf(p->planner, sizeof p->planner, "%s", strategy);
    int nt = g->n_tensors;
    p->order = pg_malloc(sizeof(int) * (size_t)(g->n_nodes + 1));
    p->t = pg_calloc((size_t)(nt + 1), sizeof(pg_plan_tensor));
    /* at most one buffer per tensor plus one scratch per step */
    p->bufs = pg_calloc((size_t)(nt + g->n_nodes + 1), sizeof(pg_plan_buf));
    p->scratch_buf = pg_malloc(sizeof(int) * (size_t)(g->n_nodes + 1));
    if (!p->order || !p->t || !p->bufs || !p->scratch_buf) {
        pg_plan_free(p);
        return pg_fail(PG_ERR_NOMEM, "out of memory planning");
    }
    pg_status st = pg_ir_topo_order(g, p->order, &p->n_steps);
    if (st) {
        pg_plan_free(p);
        return st;
    }
    int S = p->n_steps;
    for (int i = 0; i < nt; i++) {
        p->t[i].buf = -1;
        p->t[i].alias_of = -1;
        p->t[i].first = -1;
        p->t[i].last = -1;
    }
    /* tensor liveness: produced at its step, read until its last consumer;
     * graph outputs live to the end (S) */
    for (int s = 0; s < S; s++) {
        const pg_node *n = g->nodes[p->order[s]];
        for (int i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] >= 0)
                p->t[n->inputs[i]].last = s;
        for (int o = 0; o < n->n_outputs; o++) {
            p->t[n->outputs[o]].first = s;
            if (p->t[n->outputs[o]].last < s)
                p->t[n->outputs[o]].last = s;
        }
    }
    for (int i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] >= 0)
            p->t[g->outputs[i]].last = S;
    /* constants and inputs */
    PG_IR_FOR_TENSORS(g, t) {
        if (t->is_const) {
            p->t[t->id].kind = PG_PLAN_WEIGHT;
            p->t[t->id].buf = new_buf(p, t->nbytes, -1, PG_PLAN_WEIGHT, t->id);
            p->bufs[p->t[t->id].buf].last = S;
            p->weight_bytes += pg_align_up(t->nbytes);
        } else if (t->is_input) {
            p->t[t->id].kind = PG_PLAN_INPUT;
            p->t[t->id].buf = new_buf(p, tensor_bytes(t), -1, PG_PLAN_INPUT, t->id);
            p->bufs[p->t[t->id].buf].last = S;
        }
    }
    /* walk the steps: views, QKV blocks, in place, own buffers */
    for (int s = 0; s < S; s++) {
        const pg_node *n = g->nodes[p->order[s]];
        const pg_tensor *ins[64] = { 0 };
        for (int i = 0; i < n->n_inputs && i < 64; i++)
            ins[i] = n->inputs[i] >= 0 ? g->tensors[n->inputs[i]] : NULL;
        p->scratch_buf[s] = -1;
        const pg_tensor *outs[64];
        for (int o = 0; o < n->n_outputs && o < 64; o++)
            outs[o] = g->tensors[n->outputs[o]];
        size_t scratch = scratch_bytes ? scratch_bytes[n->id] : 0;
        if (scratch) {
            p->scratch_buf[s] = new_buf(p, scratch, s, PG_PLAN_ARENA, -1);
            p->bufs[p->scratch_buf[s]].label = n->name;
        }
        int y = n->outputs[0];
        pg_plan_tensor *py = &p->t[y];
        const pg_opdef *def = pg_opdef_of(n->op);
        if (def && (def->flags & PG_OPF_VIEW) && ins[0]) {
            pg_plan_tensor *px = &p->t[ins[0]->id];
            int root_kind = p->bufs[px->buf].kind;
            /* a graph output must not be a view of a feed or a weight (the
             * caller's copy would alias them): give it its own buffer */
            if (!(py->last == S && root_kind != PG_PLAN_ARENA)) {
                py->buf = px->buf;
                py->sub = px->sub;
                py->kind = PG_PLAN_VIEW;
                py->alias_of = ins[0]->id;
                extend(p, py->buf, py->last);
                continue;
            }
        }
        if (n->op == PG_OP_QKV_MATMUL && n->n_outputs == 3) {
            size_t total = 0;
            for (int o = 0; o < 3; o++)
                total += pg_align_up(tensor_bytes(outs[o]));
            int b = new_buf(p, total, s, PG_PLAN_ARENA, y);
            size_t sub = 0;
            for (int o = 0; o < 3; o++) {
                pg_plan_tensor *po = &p->t[n->outputs[o]];
                po->buf = b;
                po->sub = sub;
                po->kind = o ? PG_PLAN_VIEW : PG_PLAN_ARENA;
                po->alias_of = o ? y : -1;
                sub += pg_align_up(tensor_bytes(outs[o]));
                extend(p, b, po->last);
            }
            continue;
        }
        unsigned mask = n->n_outputs == 1 ? pg_exec_inplace_mask(n, ins, outs[0]) : 0;
        int done = 0;
        for (int i = 0; i < n->n_inputs && i < 8 && mask && !done; i++) {
            if (!(mask & (1u << i)) || !ins[i])
                continue;
            pg_plan_tensor *px = &p->t[ins[i]->id];
            pg_plan_buf *b = &p->bufs[px->buf];
            /* the whole buffer must die here and hold exactly this tensor;
             * the same tensor read twice by this node is fine (elementwise) */
            if (b->kind != PG_PLAN_ARENA || b->last != s || px->sub != 0 ||
                b->bytes != pg_align_up(tensor_bytes(outs[0])) || b->root < 0)
                continue;
            py->buf = px->buf;
            py->sub = 0;
            py->kind = PG_PLAN_INPLACE;
            py->alias_of = ins[i]->id;
            extend(p, py->buf, py->last);
            done = 1;
        }
        if (done)
            continue;
        for (int o = 0; o < n->n_outputs; o++) {
            pg_plan_tensor *po = &p->t[n->outputs[o]];
            po->buf = new_buf(p, tensor_bytes(outs[o]), s, PG_PLAN_ARENA, n->outputs[o]);
            po->kind = PG_PLAN_ARENA;
            extend(p, po->buf, po->last);
        }
    }
    /* naive sum and the lower bound (max over steps of live bytes) */
    for (int i = 0; i < p->n_bufs; i++)
        if (p->bufs[i].kind == PG_PLAN_ARENA)
            p->naive_bytes += p->bufs[i].bytes;
    for (int s = 0; s <= S; s++) {
        uint64_t live = 0;
        for (int i = 0; i < p->n_bufs; i++)
            if (p->bufs[i].kind == PG_PLAN_ARENA && p->bufs[i].first <= s && s <= p->bufs[i].last)
                live += p->bufs[i].bytes;
        if (live > p->lower_bound_bytes)
            p->lower_bound_bytes = live;
    }
    if ((st = place(p, strategy)) || (st = pg_plan_check(p))) {
        pg_plan_free(p);
        return st;
    }
    return PG_OK;
}

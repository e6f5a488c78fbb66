/* planner.c - liveness, aliasing and placement of the activation arena
 * (see planner.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/limits.h"
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

static int time_overlap(const pg_plan_buf *a, const pg_plan_buf *b)
{
    return a->first <= b->last && b->first <= a->last;
}

/* Offsets for the buffers idx[0..n) in that order: each goes into a gap
 * between the already placed buffers live at the same time, the lowest
 * (best_fit 0) or the smallest that fits (best_fit 1), else on top of them.
 * The placed buffers are kept sorted by offset (placed[]), so finding the
 * gaps is one walk over them.  Returns the arena size. */
static uint64_t lay_out(pg_plan_buf *const *idx, int n, pg_plan_buf **placed, int best_fit)
{
    uint64_t end = 0;
    for (int i = 0; i < n; i++) {
        pg_plan_buf *b = idx[i];
        int64_t at = 0, best = -1;
        uint64_t best_gap = UINT64_MAX;
        for (int j = 0; j < i; j++) {
            const pg_plan_buf *o = placed[j];
            if (!time_overlap(b, o))
                continue;
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
        int lo = 0, hi = i;   /* keep placed[] sorted by offset */
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (placed[mid]->offset <= b->offset) lo = mid + 1; else hi = mid;
        }
        memmove(placed + lo + 1, placed + lo, sizeof *placed * (size_t)(i - lo));
        placed[lo] = b;
    }
    return end;
}

/* ---- large plans: first fit in execution order ---------------------------
 *
 * The searching layouts above cost O(n^2) per try (each buffer looks at
 * every buffer placed before it).  Past PG_PLAN_EXACT_MAX buffers the
 * planner lays the arena out the way an allocator would while the steps
 * run: buffers are taken when their first step comes (largest first) from
 * the lowest free hole that fits, and given back after their last step,
 * holes merging with their neighbours.  O(n * holes): linear on the graphs
 * people build, still within a few percent of the lower bound on them. */
#define PG_PLAN_EXACT_MAX 2048

typedef struct hole { uint64_t off, bytes; } hole;

static int by_first_then_size(const void *a, const void *b)
{
    const pg_plan_buf *x = BUF(a), *y = BUF(b);
    if (x->first != y->first) return x->first - y->first;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
    return BY_INDEX(x, y);
}

static int by_last(const void *a, const void *b)
{
    const pg_plan_buf *x = BUF(a), *y = BUF(b);
    if (x->last != y->last) return x->last - y->last;
    return BY_INDEX(x, y);
}

/* Gives [off, off+bytes) back: into the offset-sorted holes, merged with
 * its neighbours; a hole that reaches the top lowers the top instead. */
static void give_back(hole *h, int *nh, uint64_t *top, uint64_t off, uint64_t bytes)
{
    int lo = 0, hi = *nh;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (h[mid].off < off) lo = mid + 1; else hi = mid;
    }
    int i = lo;
    if (i > 0 && h[i - 1].off + h[i - 1].bytes == off) {        /* joins the one below */
        h[i - 1].bytes += bytes;
        if (i < *nh && h[i - 1].off + h[i - 1].bytes == h[i].off) {
            h[i - 1].bytes += h[i].bytes;
            memmove(h + i, h + i + 1, sizeof *h * (size_t)(*nh - i - 1));
            --*nh;
        }
        i--;
    } else if (i < *nh && off + bytes == h[i].off) {            /* joins the one above */
        h[i].off = off;
        h[i].bytes += bytes;
    } else {
        memmove(h + i + 1, h + i, sizeof *h * (size_t)(*nh - i));
        h[i].off = off;
        h[i].bytes = bytes;
        ++*nh;
    }
    if (h[i].off + h[i].bytes == *top) {
        *top = h[i].off;
        --*nh;   /* the topmost hole is always the last */
    }
}

static uint64_t lay_out_online(pg_plan_buf **idx, int n, pg_plan_buf **by_end, hole *h)
{
    qsort(idx, (size_t)n, sizeof *idx, by_first_then_size);
    memcpy(by_end, idx, sizeof *idx * (size_t)n);
    qsort(by_end, (size_t)n, sizeof *by_end, by_last);
    uint64_t top = 0, end = 0;
    int nh = 0, freed = 0;
    for (int i = 0; i < n; i++) {
        pg_plan_buf *b = idx[i];
        /* everything whose last step is before this one's first is free */
        while (freed < n && by_end[freed]->last < b->first) {
            pg_plan_buf *d = by_end[freed++];
            give_back(h, &nh, &top, (uint64_t)d->offset, d->bytes);
        }
        int k = 0;
        while (k < nh && h[k].bytes < b->bytes)
            k++;
        if (k < nh) {
            b->offset = (int64_t)h[k].off;
            h[k].off += b->bytes;
            if (!(h[k].bytes -= b->bytes)) {
                memmove(h + k, h + k + 1, sizeof *h * (size_t)(nh - k - 1));
                nh--;
            }
        } else {
            b->offset = (int64_t)top;
            top += b->bytes;
        }
        if (top > end)
            end = top;
    }
    return end;
}

static pg_status place(pg_plan *p, const char *strategy)
{
    int n = 0;
    pg_plan_buf **idx = pg_obj_malloc(sizeof *idx * (size_t)(p->n_bufs + 1));
    pg_plan_buf **live = pg_obj_malloc(sizeof *live * (size_t)(p->n_bufs + 1));
    if (!idx || !live) {
        pg_free(idx);
        pg_free(live);
        return pg_fail(PG_ERR_NOMEM, "out of memory planning");
    }
    for (int i = 0; i < p->n_bufs; i++)
        if (p->bufs[i].kind == PG_PLAN_ARENA)
            idx[n++] = &p->bufs[i];
    uint64_t end = 0;
    if (n > PG_PLAN_EXACT_MAX && strcmp(strategy, "naive")) {
        hole *h = pg_obj_malloc(sizeof *h * (size_t)(n + 1));
        if (!h) {
            pg_free(idx);
            pg_free(live);
            return pg_fail(PG_ERR_NOMEM, "out of memory planning");
        }
        end = lay_out_online(idx, n, live, h);
        pg_free(h);
        snprintf(p->planner, sizeof p->planner, "%.20s/online", strategy);
    } else if (!strcmp(strategy, "naive")) {
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
    if (end > pg_memory_limit()) {
        pg_free(idx);
        pg_free(live);
        return pg_fail(PG_ERR_SHAPE, "the memory plan needs a %llu-byte arena, above the memory "
                       "limit of %llu (pg_set_memory_limit)", (unsigned long long)end,
                       (unsigned long long)pg_memory_limit());
    }
    pg_free(idx);
    pg_free(live);
    return PG_OK;
}

static int by_first_only(const void *a, const void *b)
{
    const pg_plan_buf *x = BUF(a), *y = BUF(b);
    return x->first != y->first ? x->first - y->first : BY_INDEX(x, y);
}

static pg_status overlap_error(const pg_plan *p, const pg_plan_buf *a, const pg_plan_buf *b)
{
    return pg_fail(PG_ERR_INTERNAL, "memory plan: buffers %d [%lld,+%zu) steps %d-%d and "
                   "%d [%lld,+%zu) steps %d-%d overlap", (int)(a - p->bufs), (long long)a->offset,
                   a->bytes, a->first, a->last, (int)(b - p->bufs), (long long)b->offset, b->bytes,
                   b->first, b->last);
}

/* A sweep over the steps: buffers join an offset-sorted set of live ones
 * at their first step and leave after their last; a newcomer must not
 * touch its neighbours in that set.  O(n log n + n * live) memmoves. */
pg_status pg_plan_check(const pg_plan *p)
{
    int n = 0;
    for (int i = 0; i < p->n_bufs; i++) {
        const pg_plan_buf *a = &p->bufs[i];
        if (a->kind != PG_PLAN_ARENA)
            continue;
        if (a->offset < 0 || a->offset % PG_ALIGN || (uint64_t)a->offset + a->bytes > p->arena_bytes)
            return pg_fail(PG_ERR_INTERNAL, "memory plan: buffer %d is misplaced (offset %lld)", i,
                           (long long)a->offset);
        n++;
    }
    const pg_plan_buf **in = pg_obj_malloc(sizeof *in * (size_t)(n + 1));
    const pg_plan_buf **out = pg_obj_malloc(sizeof *out * (size_t)(n + 1));
    const pg_plan_buf **act = pg_obj_malloc(sizeof *act * (size_t)(n + 1));
    if (!in || !out || !act) {
        pg_free(in);
        pg_free(out);
        pg_free(act);
        return pg_fail(PG_ERR_NOMEM, "out of memory checking the plan");
    }
    int k = 0;
    for (int i = 0; i < p->n_bufs; i++)
        if (p->bufs[i].kind == PG_PLAN_ARENA)
            in[k] = out[k] = &p->bufs[i], k++;
    qsort(in, (size_t)n, sizeof *in, by_first_only);
    qsort(out, (size_t)n, sizeof *out, by_last);
    pg_status st = PG_OK;
    int na = 0, left = 0;
    for (int i = 0; i < n && st == PG_OK; i++) {
        const pg_plan_buf *b = in[i];
        while (left < n && out[left]->last < b->first) {   /* dead before b starts */
            const pg_plan_buf *d = out[left++];
            for (int j = 0; j < na; j++)
                if (act[j] == d) {
                    memmove(act + j, act + j + 1, sizeof *act * (size_t)(na - j - 1));
                    na--;
                    break;
                }
        }
        int lo = 0, hi = na;   /* first live buffer at or above b's offset */
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (act[mid]->offset < b->offset) lo = mid + 1; else hi = mid;
        }
        if (lo > 0 && act[lo - 1]->offset + (int64_t)act[lo - 1]->bytes > b->offset)
            st = overlap_error(p, act[lo - 1], b);
        else if (lo < na && b->offset + (int64_t)b->bytes > act[lo]->offset)
            st = overlap_error(p, b, act[lo]);
        memmove(act + lo + 1, act + lo, sizeof *act * (size_t)(na - lo));
        act[lo] = b;
        na++;
    }
    pg_free(in);
    pg_free(out);
    pg_free(act);
    return st;
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
    p->order = pg_obj_malloc(sizeof(int) * (size_t)(g->n_nodes + 1));
    p->t = pg_obj_calloc((size_t)(nt + 1), sizeof(pg_plan_tensor));
    /* at most one buffer per tensor plus one scratch per step */
    p->bufs = pg_obj_calloc((size_t)(nt + g->n_nodes + 1), sizeof(pg_plan_buf));
    p->scratch_buf = pg_obj_malloc(sizeof(int) * (size_t)(g->n_nodes + 1));
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
        if (def && (def->flags & PG_OPF_PERSISTENT)) {
            py->buf = new_buf(p, tensor_bytes(outs[0]), -1, PG_PLAN_PERSISTENT, y);
            py->kind = PG_PLAN_PERSISTENT;
            p->bufs[py->buf].last = S;
            p->bufs[py->buf].offset = (int64_t)p->persistent_bytes;
            p->persistent_bytes += p->bufs[py->buf].bytes;
            continue;
        }
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
    /* live bytes per step as a running sum of +bytes at first, -bytes after last */
    int64_t *delta = pg_obj_calloc((size_t)S + 3, sizeof *delta);
    if (!delta) {
        pg_plan_free(p);
        return pg_fail(PG_ERR_NOMEM, "out of memory planning");
    }
    for (int i = 0; i < p->n_bufs; i++)
        if (p->bufs[i].kind == PG_PLAN_ARENA) {
            delta[p->bufs[i].first + 1] += (int64_t)p->bufs[i].bytes;
            delta[p->bufs[i].last + 2] -= (int64_t)p->bufs[i].bytes;
        }
    int64_t live = 0;
    for (int s = 0; s <= S + 1; s++) {
        live += delta[s];
        if (live > (int64_t)p->lower_bound_bytes)
            p->lower_bound_bytes = (uint64_t)live;
    }
    pg_free(delta);
    if ((st = place(p, strategy)) || (st = pg_plan_check(p))) {
        pg_plan_free(p);
        return st;
    }
    return PG_OK;
}

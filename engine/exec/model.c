/* model.c - pg_compile, pg_model_run and the model accessors.
 *
 * Compile: copy the graph, verify, infer shapes, run the passes for the
 * level (each change verified and inferred again), plan memory, then
 * resolve every step (its executor, descriptors, scratch, output pointers)
 * and allocate the arena once.  Run: check and bind the feeds, point each
 * step's inputs at their homes, call the steps in order.  A run allocates
 * nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../core/alloc.h"
#include "../core/cpu.h"
#include "../core/error.h"
#include "../core/threadpool.h"
#include "../passes/passes.h"
#include "model.h"
#include "shared_consts.h"
#include "weight_cache.h"

/* ---- helpers ------------------------------------------------------------- */


/* Where a tensor's bytes are this run. */
static void *home(const pg_model *m, int tid)
{
    const pg_plan_tensor *pt = &m->plan.t[tid];
    if (pt->buf < 0)
        return NULL;
    const pg_plan_buf *b = &m->plan.bufs[pt->buf];
    const pg_tensor *root = b->root >= 0 ? m->g->tensors[b->root] : NULL;
    switch (b->kind) {
    case PG_PLAN_WEIGHT:
        return (char *)root->data + pt->sub;
    case PG_PLAN_PERSISTENT:
        return m->persist ? (char *)m->persist + b->offset + pt->sub : NULL;
    case PG_PLAN_INPUT:
        /* before a run binds the feeds (while the steps are built) an input
         * has no address yet: NULL, never NULL + offset */
        for (int i = 0; i < m->g->n_inputs; i++)
            if (m->g->inputs[i] == b->root)
                return m->feeds[i] ? (char *)m->feeds[i] + pt->sub : NULL;
        return NULL;
    default:
        if (m->redirect && m->redirect[pt->buf])     /* pg_model_run_into's caller memory */
            return (char *)m->redirect[pt->buf] + pt->sub;
        return (char *)m->arena + b->offset + pt->sub;
    }
}

static void free_steps(pg_model *m)
{
    if (!m->steps)
        return;
    for (int s = 0; s < m->n_steps; s++) {
        pg_step *st = &m->steps[s];
        pg_free(st->in);
        pg_free(st->x);
        pg_free(st->out);
        pg_free(st->y);
        pg_free(atomic_load(&st->in_text));
        pg_free(atomic_load(&st->out_text));
        pg_free(atomic_load(&st->detail));
    }
    pg_free(m->steps);
    m->steps = NULL;
    m->n_steps = 0;
}

/* Everything that depends on the bound kernels: steps, plan, arena. */
static void free_bound(pg_model *m)
{
    free_steps(m);
    if (m->out_copy)
        for (int i = 0; i < m->g->n_outputs; i++)
            pg_free(m->out_copy[i]);
    pg_free(m->out_copy);
    pg_free(m->out_buf);
    pg_free(m->redirect);
    m->out_buf = NULL;
    m->redirect = NULL;
    pg_free(m->feeds);
    pg_free(m->arena);
    pg_free(m->binds);
    if (m->persist_owned) {
        pg_free(m->persist);
        m->persist = NULL;
        m->persist_owned = 0;
    }
    m->out_copy = NULL;
    m->feeds = NULL;
    m->arena = NULL;
    m->binds = NULL;
    pg_plan_free(&m->plan);
}

void pg_model_free(pg_model *m)
{
    if (!m)
        return;
    if (m->g)
        free_bound(m);
    free(atomic_load(&m->text));
    pg_pass_log_free(m->pass_log);
    pg_ir_free(m->g);           /* never frees the constants it borrows (m->map, m->shared) */
    pg_share_release(m->shared, m->n_shared);
    pg_free(m->shared);
    if (m->map)
        munmap(m->map, m->map_bytes);
    pg_free(m);
}

/* ---- compile -------------------------------------------------------------- */


static pg_status build_steps(pg_model *m)
{
    pg_graph *g = m->g;
    m->n_steps = m->plan.n_steps;
    m->steps = pg_obj_calloc((size_t)(m->n_steps + 1), sizeof(pg_step));
    if (!m->steps)
        return pg_fail(PG_ERR_NOMEM, "out of memory compiling");
    for (int s = 0; s < m->n_steps; s++) {
        pg_step *st = &m->steps[s];
        const pg_node *n = g->nodes[m->plan.order[s]];
        st->node = n;
        const pg_opdef *def = pg_opdef_of(n->op);
        st->fn = def ? def->exec : NULL;
        if (!st->fn)
            return pg_fail(PG_ERR_UNSUPPORTED, "node '%s': no executor for op '%s'", n->name, n->op_type);
        st->bind = &m->binds[n->id];
        st->n_in = n->n_inputs;
        st->n_out = n->n_outputs;
        st->in = pg_obj_calloc((size_t)(n->n_inputs + 1), sizeof(void *));
        st->x = pg_obj_calloc((size_t)(n->n_inputs + 1), sizeof(void *));
        st->out = pg_obj_calloc((size_t)n->n_outputs, sizeof(void *));
        st->y = pg_obj_calloc((size_t)n->n_outputs, sizeof(void *));
        if (!st->in || !st->x || !st->out || !st->y)
            return pg_fail(PG_ERR_NOMEM, "out of memory compiling");
        for (int i = 0; i < n->n_inputs; i++)
            st->in[i] = n->inputs[i] >= 0 ? g->tensors[n->inputs[i]] : NULL;
        for (int o = 0; o < n->n_outputs; o++) {
            st->out[o] = g->tensors[n->outputs[o]];
            st->y[o] = home(m, n->outputs[o]);
        }
        int sb = m->plan.scratch_buf[s];
        if (sb >= 0) {
            st->scratch = (char *)m->arena + m->plan.bufs[sb].offset;
            st->scratch_bytes = m->plan.bufs[sb].bytes;
        }
        st->state = (void *)pg_exec_node_state(g, n);
        st->flops = pg_step_flops(st);
    }
    m->prof_runs = 0;
    return PG_OK;
}

/* Every step's data pointers; a run rebinds only the ones that are feeds
 * (the others' homes are fixed: on a decoder, re-deriving ~700 steps'
 * pointers from plan tables the weights had evicted cost ~3% of a token). */
static int feed_home(const pg_model *m, int tid)
{
    const pg_plan_tensor *pt = &m->plan.t[tid];
    if (pt->buf < 0)
        return 0;
    if (m->plan.bufs[pt->buf].kind == PG_PLAN_INPUT)
        return 1;
    /* a buffer pg_model_run_into may point at the caller's output */
    for (int i = 0; m->out_buf && i < m->g->n_outputs; i++)
        if (m->out_buf[i] == pt->buf)
            return 1;
    return 0;
}

/* Which outputs pg_model_run_into can compute in place: the output's
 * tensor is in the arena at the start of a buffer no scratch and no other
 * output uses, and every tensor placed in that buffer (an in-place chain,
 * views) fits in the output's own bytes. */
static void find_output_bufs(pg_model *m)
{
    const pg_graph *g = m->g;
    for (int i = 0; i < g->n_outputs; i++) {
        int tid = g->outputs[i], b = m->plan.t[tid].buf;
        m->out_buf[i] = -1;
        if (b < 0 || m->plan.bufs[b].kind != PG_PLAN_ARENA || m->plan.bufs[b].label ||
            m->plan.t[tid].sub != 0)
            continue;
        size_t nb = (size_t)pg_tensor_numel(g->tensors[tid]) * pg_dtype_size(g->tensors[tid]->dtype);
        int ok = nb > 0;
        for (int t = 0; ok && t < g->n_tensors; t++)
            if (m->plan.t[t].buf == b && g->tensors[t])
                ok = m->plan.t[t].sub + (size_t)pg_tensor_numel(g->tensors[t]) *
                     pg_dtype_size(g->tensors[t]->dtype) <= nb;
        for (int j = 0; ok && j < g->n_outputs; j++)
            ok = j == i || m->plan.t[g->outputs[j]].buf != b;
        if (ok)
            m->out_buf[i] = b;
    }
}

static void bind_pointers(pg_model *m)
{
    for (int s = 0; s < m->n_steps; s++) {
        pg_step *st = &m->steps[s];
        st->n_feed = 0;
        for (int j = 0; j < st->n_in + st->n_out; j++) {
            int t = j < st->n_in ? st->node->inputs[j] : st->node->outputs[j - st->n_in];
            if (j < st->n_in)
                st->x[j] = t >= 0 ? home(m, t) : NULL;
            else
                st->y[j - st->n_in] = home(m, t);
            if (t < 0 || !feed_home(m, t) || st->n_feed < 0)
                continue;
            if (st->n_feed == 4) {
                st->n_feed = -1;
                continue;
            }
            st->feed_slot[st->n_feed] = j < st->n_in ? j : -1 - (j - st->n_in);
            st->feed_tid[st->n_feed++] = t;
        }
    }
}

static int is_output_alias_outside_arena(const pg_model *m, int tid)
{
    const pg_plan_tensor *pt = &m->plan.t[tid];
    return pt->buf < 0 || m->plan.bufs[pt->buf].kind != PG_PLAN_ARENA;
}

/* Compiling ends here; rebinding and loading (model_io.c) run it again. */
pg_status pg_model_bind_and_plan(pg_model *m, const char *planner)
{
    pg_graph *g = m->g;
    size_t *scratch = pg_obj_calloc((size_t)(g->n_nodes + 1), sizeof *scratch);
    m->binds = pg_obj_calloc((size_t)(g->n_nodes + 1), sizeof *m->binds);
    if (!scratch || !m->binds) {
        pg_free(scratch);
        return pg_fail(PG_ERR_NOMEM, "out of memory compiling");
    }
    pg_status st = PG_OK;
    PG_IR_FOR_NODES(g, n) {
        const pg_tensor *ins[64] = { 0 }, *outs[64] = { 0 };
        for (int i = 0; i < n->n_inputs && i < 64; i++)
            ins[i] = n->inputs[i] >= 0 ? g->tensors[n->inputs[i]] : NULL;
        for (int o = 0; o < n->n_outputs && o < 64; o++)
            outs[o] = g->tensors[n->outputs[o]];
        if ((st = pg_exec_bind(n, ins, outs, &m->binds[n->id])))
            break;
        scratch[n->id] = pg_exec_scratch_bytes(n, ins, outs, m->threads, &m->binds[n->id]);
    }
    if (st == PG_OK)
        st = pg_plan_build(g, planner, scratch, &m->plan);
    pg_free(scratch);
    if (st)
        return st;
    m->arena = pg_malloc(m->plan.arena_bytes ? m->plan.arena_bytes : 64);
    if (m->persist && m->persist_bytes < m->plan.persistent_bytes)
        return pg_fail(PG_ERR_INVALID_ARG, "the persistent block given is %zu bytes; the plan "
                       "needs %llu", m->persist_bytes, (unsigned long long)m->plan.persistent_bytes);
    if (!m->persist && m->plan.persistent_bytes) {
        if (!(m->persist = pg_calloc(1, m->plan.persistent_bytes)))
            return pg_fail(PG_ERR_NOMEM, "out of memory for a %llu-byte persistent block",
                           (unsigned long long)m->plan.persistent_bytes);
        m->persist_owned = 1;
        m->persist_bytes = m->plan.persistent_bytes;
    }
    m->feeds = pg_obj_calloc((size_t)(g->n_inputs + 1), sizeof(void *));
    m->out_copy = pg_obj_calloc((size_t)(g->n_outputs + 1), sizeof(void *));
    m->out_buf = pg_obj_calloc((size_t)(g->n_outputs + 1), sizeof(int));
    m->redirect = pg_obj_calloc((size_t)(m->plan.n_bufs + 1), sizeof(void *));
    if (!m->arena || !m->feeds || !m->out_copy || !m->out_buf || !m->redirect)
        return pg_fail(PG_ERR_NOMEM, "out of memory for a %llu-byte arena",
                       (unsigned long long)m->plan.arena_bytes);
    for (int i = 0; i < g->n_outputs; i++) {
        int tid = g->outputs[i];
        if (is_output_alias_outside_arena(m, tid)) {
            const pg_tensor *t = g->tensors[tid];
            m->out_copy[i] = pg_malloc((size_t)pg_tensor_numel(t) * pg_dtype_size(t->dtype) + 1);
            if (!m->out_copy[i])
                return pg_fail(PG_ERR_NOMEM, "out of memory");
        }
    }
    find_output_bufs(m);
    if ((st = build_steps(m)))
        return st;
    bind_pointers(m);
    m->bound_flags = pg_cpu_active_flags();
    return PG_OK;
}

/* The origin keys of the constants the caller lends (weight_cache.h): its
 * promise makes address, size and dtype stand for the bytes. */
static void key_lent_consts(pg_graph *g, pg_weight_cache *cache)
{
    g->weight_cache = cache;
    PG_IR_FOR_TENSORS(g, t)
        if (t->data_borrowed == PG_DATA_LENT) {
            uint64_t what[2] = { t->nbytes, (uint64_t)t->dtype };
            t->origin = pg_key_derive((uintptr_t)t->data, 0x6c656e74ull /* "lent" */, what, 2);
        }
}

pg_status pg_compile(const pg_graph *src, const pg_compile_options *opts, pg_model **out)
{
    pg_clear_error();
    if (!src || !out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_compile: NULL graph or output");
    *out = NULL;
    pg_compile_options o = { .level = 3, .precision = PG_PRECISION_FP32 };
    if (opts)
        o = *opts;
    if (o.level < 0 || o.level > 3)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_compile: level %d is not 0..3", o.level);
    if (o.precision < PG_PRECISION_FP32 || o.precision > PG_PRECISION_INT8_DYNAMIC)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_compile: precision %d is not fp32 (0), bf16 (1) "
                       "or int8-dynamic (2)", o.precision);
    if (o.n_input_shapes < 0 || (o.n_input_shapes > 0 && (!o.input_shape_names ||
                                                          !o.input_shape_ranks || !o.input_shape_dims)))
        return pg_fail(PG_ERR_INVALID_ARG, "pg_compile: %d input shapes without their names, "
                       "ranks and dims", o.n_input_shapes);
    pg_model *m = pg_obj_calloc(1, sizeof *m);
    if (!m)
        return pg_fail(PG_ERR_NOMEM, "out of memory compiling");
    m->level = o.level;
    /* resolved now: the plan sizes per-thread scratch for this count */
    m->threads_opt = o.threads > 0 ? o.threads : 0;
    m->threads = pg_threads_resolve(o.threads);
    pg_status st;
    /* the source's lent weights are read in place by the passes, then
     * copied or shared by pg_share_consts below */
    if (!(m->g = pg_ir_clone_lent(src))) {
        st = pg_last_status();
        goto fail;
    }
    m->g->precision = o.precision;
    m->g->topo_keep = 1;   /* the compile's own graph: one ordering per change */
    if ((st = pg_graph_set_input_shapes(m->g, o.n_input_shapes, o.input_shape_names,
                                        o.input_shape_ranks, o.input_shape_dims)))
        goto fail;
    if (o.weight_cache)
        key_lent_consts(m->g, o.weight_cache);
    if ((st = pg_ir_verify(m->g)) || (st = pg_ir_infer_shapes(m->g)))
        goto fail;
    if (o.level > 0) {
        if (!o.no_pass_log && !(m->pass_log = pg_pass_log_new())) {
            st = pg_last_status();
            goto fail;
        }
        /* it verifies and infers again after every pass that changed the
         * graph: what it returns is checked */
        if ((st = pg_passes_run(m->g, o.level, o.disabled, m->pass_log)))
            goto fail;
    }
    if ((st = pg_share_consts(m->g, o.weight_cache, &m->shared, &m->n_shared, &m->cap_shared)) ||
        (st = pg_model_bind_and_plan(m, o.planner)))
        goto fail;
    m->g->weight_cache = NULL;   /* the model may outlive the cache */
    m->g->topo_keep = 0;         /* the model's graph may be read from several threads */
    *out = m;
    return PG_OK;
fail:
    pg_model_free(m);
    return st;
}

pg_status pg_model_use_persistent(pg_model *m, void *mem, size_t bytes)
{
    if (!m || (mem && bytes < m->plan.persistent_bytes))
        return pg_fail(PG_ERR_INVALID_ARG, "pg_model_use_persistent: %zu bytes for a plan of %llu",
                       bytes, m ? (unsigned long long)m->plan.persistent_bytes : 0ull);
    if (m->persist_owned)
        pg_free(m->persist);
    m->persist = mem;
    m->persist_bytes = bytes;
    m->persist_owned = 0;
    if (!mem && m->plan.persistent_bytes) {
        if (!(m->persist = pg_calloc(1, m->plan.persistent_bytes)))
            return pg_fail(PG_ERR_NOMEM, "out of memory for a %llu-byte persistent block",
                           (unsigned long long)m->plan.persistent_bytes);
        m->persist_owned = 1;
        m->persist_bytes = m->plan.persistent_bytes;
    }
    if (m->steps)
        bind_pointers(m);
    return PG_OK;
}

int pg_model_is_stale(const pg_model *m)
{
    return m && m->bound_flags != pg_cpu_active_flags();
}

pg_status pg_model_rebind(pg_model *m)
{
    pg_clear_error();
    if (!m)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_model_rebind: NULL model");
    if (atomic_exchange(&m->busy, 1))
        return pg_fail(PG_ERR_INVALID_ARG, "pg_model_rebind: the model is running on another thread");
    char planner[sizeof m->plan.planner];
    memcpy(planner, m->plan.planner, sizeof planner);
    free_bound(m);
    int repacked = 0;
    pg_status st = pg_prepack_relayout(m->g, &repacked);
    if (st == PG_OK)   /* the weights packed anew join the store */
        st = pg_share_consts(m->g, NULL, &m->shared, &m->n_shared, &m->cap_shared);
    if (st == PG_OK)
        st = pg_model_bind_and_plan(m, planner);
    if (st) {
        /* no half-bound model: it refuses to run until a rebind succeeds */
        free_bound(m);
        m->bound_flags = 0;
    }
    atomic_store(&m->busy, 0);
    return st;
}

/* ---- run ------------------------------------------------------------------ */

static pg_status run_once(pg_model *m, int n_feeds, const char *const *names,
                          const void *const *data, const int *ranks, const int64_t *const *shapes,
                          void *const *out);

/* One run at a time per model: its arena and feed table are the model's
 * own, so a second thread gets a clear error instead of a wrong answer. */
pg_status pg_model_run(pg_model *m, int n_feeds, const char *const *names,
                       const void *const *data, const int *ranks, const int64_t *const *shapes)
{
    pg_clear_error();
    if (!m || (n_feeds && (!names || !data || !ranks || !shapes)))
        return pg_fail(PG_ERR_INVALID_ARG, "pg_model_run: NULL argument");
    if (atomic_exchange(&m->busy, 1))
        return pg_fail(PG_ERR_INVALID_ARG, "pg_model_run: the model is already running on another "
                       "thread (a compiled model runs one call at a time: compile one per thread, "
                       "or serialise the calls)");
    pg_status st = run_once(m, n_feeds, names, data, ranks, shapes, NULL);
    atomic_store(&m->busy, 0);
    return st;
}

pg_status pg_model_run_into(pg_model *m, int n_feeds, const char *const *names,
                            const void *const *data, const int *ranks,
                            const int64_t *const *shapes, int n_out, void *const *out)
{
    pg_clear_error();
    if (!m || (n_feeds && (!names || !data || !ranks || !shapes)) || (n_out && !out))
        return pg_fail(PG_ERR_INVALID_ARG, "pg_model_run_into: NULL argument");
    if (n_out != 0 && n_out != m->g->n_outputs)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_model_run_into: %d output buffers for a model with "
                       "%d outputs", n_out, m->g->n_outputs);
    if (atomic_exchange(&m->busy, 1))
        return pg_fail(PG_ERR_INVALID_ARG, "pg_model_run_into: the model is already running on "
                       "another thread (a compiled model runs one call at a time: compile one per "
                       "thread, or serialise the calls)");
    pg_status st = run_once(m, n_feeds, names, data, ranks, shapes, n_out ? out : NULL);
    atomic_store(&m->busy, 0);
    return st;
}

static pg_status run_once(pg_model *m, int n_feeds, const char *const *names,
                          const void *const *data, const int *ranks, const int64_t *const *shapes,
                          void *const *out)
{
    if (!m->steps)
        return pg_fail(PG_ERR_INVALID_ARG, "the model is not bound to kernels: its last rebind "
                       "failed (pg_model_rebind again)");
    pg_graph *g = m->g;
    for (int i = 0; i < g->n_inputs; i++)
        m->feeds[i] = NULL;
    for (int f = 0; f < n_feeds; f++) {
        int found = -1;
        for (int i = 0; i < g->n_inputs; i++)
            if (names[f] && !strcmp(g->tensors[g->inputs[i]]->name, names[f]))
                found = i;
        if (found < 0)
            return pg_fail(PG_ERR_INVALID_ARG, "feed '%s' is not an input of the model",
                           names[f] ? names[f] : "(null)");
        const pg_tensor *t = g->tensors[g->inputs[found]];
        int ok = ranks[f] == t->rank;
        for (int d = 0; ok && d < t->rank; d++)
            ok = shapes[f][d] == t->shape[d];
        if (!ok) {
            char want[160], got[160];
            size_t a = 0, b = 0;
            want[0] = got[0] = 0;
            for (int d = 0; d < t->rank && a < sizeof want - 24; d++)
                a += (size_t)snprintf(want + a, sizeof want - a, "%s%lld", d ? "," : "", (long long)t->shape[d]);
            for (int d = 0; d < ranks[f] && d < 8 && b < sizeof got - 24; d++)
                b += (size_t)snprintf(got + b, sizeof got - b, "%s%lld", d ? "," : "", (long long)shapes[f][d]);
            return pg_fail(PG_ERR_SHAPE, "feed '%s' has shape [%s]; the model was compiled for [%s]",
                           names[f], got, want);
        }
        if (!data[f] && pg_tensor_numel(t) > 0)
            return pg_fail(PG_ERR_INVALID_ARG, "feed '%s' has no data", names[f]);
        /* NULL marks "not fed", so an empty feed (nothing to read, maybe no
         * buffer) gets the arena's address, which no step will read */
        m->feeds[found] = data[f] ? data[f] : m->arena;
    }
    for (int i = 0; i < g->n_inputs; i++)
        if (!m->feeds[i])
            return pg_fail(PG_ERR_INVALID_ARG, "input '%s' is not fed", g->tensors[g->inputs[i]]->name);
    /* the outputs computed in the caller's memory this run; the steps that
     * touch their buffers rebind them (feed_home), now and on the next run */
    for (int i = 0; i < g->n_outputs; i++)
        if (m->out_buf[i] >= 0)
            m->redirect[m->out_buf[i]] = out && out[i] && !((uintptr_t)out[i] & 63) ? out[i] : NULL;
    pg_status rc = PG_OK;
    for (int s = 0; s < m->n_steps && !rc; s++) {
        pg_step *st = &m->steps[s];
        if (st->n_feed < 0) {
            for (int i = 0; i < st->n_in; i++)
                st->x[i] = st->node->inputs[i] >= 0 ? home(m, st->node->inputs[i]) : NULL;
            /* outputs too: a view of a feed lives in this run's feed buffer */
            for (int o = 0; o < st->n_out; o++)
                st->y[o] = home(m, st->node->outputs[o]);
        }
        for (int f = 0; f < st->n_feed; f++) {
            if (st->feed_slot[f] >= 0)
                st->x[st->feed_slot[f]] = home(m, st->feed_tid[f]);
            else
                st->y[-1 - st->feed_slot[f]] = home(m, st->feed_tid[f]);
        }
        pg_kctx k = { .node = st->node, .n_in = st->n_in, .n_out = st->n_out, .in = st->in,
                      .x = st->x, .out = st->out, .y = st->y, .scratch = st->scratch,
                      .scratch_bytes = st->scratch_bytes, .state = st->state,
                      .bind = st->bind, .threads = m->threads };
        if (m->profiling) {
            uint64_t t0 = pg_profile_now_ns();
            rc = st->fn(&k);
            st->prof_ns += pg_profile_now_ns() - t0;
        } else {
            rc = st->fn(&k);
        }
    }
    if (m->profiling && !rc)
        m->prof_runs++;
    for (int i = 0; !rc && i < g->n_outputs; i++) {
        const pg_tensor *t = g->tensors[g->outputs[i]];
        size_t nb = (size_t)pg_tensor_numel(t) * pg_dtype_size(t->dtype);
        int direct = m->out_buf[i] >= 0 && m->redirect[m->out_buf[i]];
        if (out && out[i] && !direct && nb)
            memcpy(out[i], home(m, t->id), nb);
        else if (!out && m->out_copy[i])
            memcpy(m->out_copy[i], home(m, t->id), nb);
    }
    for (int i = 0; i < g->n_outputs; i++)
        if (m->out_buf[i] >= 0)
            m->redirect[m->out_buf[i]] = NULL;
    return rc;
}

/* ---- accessors ------------------------------------------------------------ */

static void fill_info(const pg_tensor *t, const char *name, void *data, pg_tensor_info *out)
{
    memset(out, 0, sizeof *out);
    out->name = name;
    out->dtype = t->dtype;
    out->rank = t->rank;
    for (int d = 0; d < t->rank && d < 8; d++)
        out->dims[d] = t->shape[d];
    out->data = data;
    out->nbytes = (uint64_t)pg_tensor_numel(t) * pg_dtype_size(t->dtype);
}

int pg_model_input_count(const pg_model *m) { return m ? m->g->n_inputs : 0; }
int pg_model_output_count(const pg_model *m) { return m ? m->g->n_outputs : 0; }

pg_status pg_model_input_info(const pg_model *m, int i, pg_tensor_info *out)
{
    if (!m || !out || i < 0 || i >= m->g->n_inputs)
        return pg_fail(PG_ERR_INVALID_ARG, "no model input %d", i);
    const pg_tensor *t = m->g->tensors[m->g->inputs[i]];
    fill_info(t, t->name, NULL, out);
    return PG_OK;
}

pg_status pg_model_output_info(const pg_model *m, int i, pg_tensor_info *out)
{
    if (!m || !out || i < 0 || i >= m->g->n_outputs)
        return pg_fail(PG_ERR_INVALID_ARG, "no model output %d", i);
    int tid = m->g->outputs[i];
    const pg_tensor *t = m->g->tensors[tid];
    const pg_plan_buf *b = &m->plan.bufs[m->plan.t[tid].buf];
    /* a persistent buffer (a KV cache read out as an output) lives in the
     * persistent block, not the arena */
    void *data = m->out_copy[i]                   ? m->out_copy[i]
                 : b->kind == PG_PLAN_PERSISTENT ? home(m, tid)
                                                 : (char *)m->arena + b->offset + m->plan.t[tid].sub;
    fill_info(t, m->g->output_names[i], data, out);
    return PG_OK;
}

pg_status pg_model_get_stats(const pg_model *m, pg_model_stats *out)
{
    if (!m || !out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_model_get_stats: NULL argument");
    memset(out, 0, sizeof *out);
    out->arena_bytes = m->plan.arena_bytes;
    out->naive_bytes = m->plan.naive_bytes;
    out->lower_bound_bytes = m->plan.lower_bound_bytes;
    out->weight_bytes = m->plan.weight_bytes;
    out->steps = m->n_steps;
    out->planned = pg_model_plan_count(m);
    out->planner = m->plan.planner;
    out->persistent_bytes = m->plan.persistent_bytes;
    out->shared_weight_bytes = pg_share_bytes_held_elsewhere(m->shared, m->n_shared);
    return PG_OK;
}

/* Plan rows: every tensor with a home except weights and feeds first ...
 * rows are: activation tensors in step order, then scratch buffers. */
static int plan_row_tensor(const pg_model *m, int i, int *scratch_step)
{
    int k = 0;
    *scratch_step = -1;
    for (int s = 0; s < m->n_steps; s++) {
        const pg_node *n = m->steps[s].node;
        for (int o = 0; o < n->n_outputs; o++)
            if (k++ == i)
                return n->outputs[o];
        if (m->plan.scratch_buf[s] >= 0 && k++ == i) {
            *scratch_step = s;
            return -1;
        }
    }
    return -2;
}

int pg_model_plan_count(const pg_model *m)
{
    if (!m)
        return 0;
    int k = 0;
    for (int s = 0; s < m->n_steps; s++)
        k += m->steps[s].node->n_outputs + (m->plan.scratch_buf[s] >= 0);
    return k;
}

pg_status pg_model_plan_row(const pg_model *m, int i, pg_plan_row *out)
{
    if (!m || !out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_model_plan_row: NULL argument");
    int ss;
    int tid = plan_row_tensor(m, i, &ss);
    if (tid == -2)
        return pg_fail(PG_ERR_INVALID_ARG, "no plan row %d", i);
    memset(out, 0, sizeof *out);
    if (tid < 0) {
        const pg_plan_buf *b = &m->plan.bufs[m->plan.scratch_buf[ss]];
        out->tensor = b->label;   /* the node's name; kind ARENA, alias "scratch" */
        out->bytes = b->bytes;
        out->offset = b->offset;
        out->first = out->last = ss;
        out->kind = PG_PLAN_ARENA;
        out->alias_of = "(scratch)";
        return PG_OK;
    }
    const pg_plan_tensor *pt = &m->plan.t[tid];
    const pg_plan_buf *b = &m->plan.bufs[pt->buf];
    const pg_tensor *t = m->g->tensors[tid];
    out->tensor = t->name;
    out->bytes = (uint64_t)pg_tensor_numel(t) * pg_dtype_size(t->dtype);
    out->offset = b->kind == PG_PLAN_ARENA || pt->kind == PG_PLAN_PERSISTENT
                      ? b->offset + (int64_t)pt->sub : -1;
    out->first = pt->first;
    out->last = pt->last;
    out->kind = (pg_plan_kind)pt->kind;
    out->alias_of = pt->alias_of >= 0 ? m->g->tensors[pt->alias_of]->name : NULL;
    return PG_OK;
}

int pg_model_step_count(const pg_model *m) { return m ? m->n_steps : 0; }


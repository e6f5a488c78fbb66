/* model.h - a compiled graph: the optimised IR, its memory plan, and the
 * steps the executor runs (everything resolved at compile time, so a run
 * only binds the feed pointers and calls one function per step). */
#ifndef PG_EXEC_MODEL_H
#define PG_EXEC_MODEL_H

#include <stdatomic.h>

#include "../plan/planner.h"
#include "ops.h"

typedef struct pg_step {
    const pg_node    *node;
    pg_exec_fn        fn;
    int               n_in, n_out;
    const pg_tensor **in;
    const void      **x;        /* rebound per run (feeds move) */
    const pg_tensor **out;
    void            **y;
    void             *scratch;
    size_t            scratch_bytes;
    void             *state;
    const pg_binding *bind;     /* its kernels, bound at compile (m->binds) */
    /* the pointers that are (views of) feeds, rebound per run: up to 4 as
     * (slot: i for x[i], -1 - o for y[o], tensor id), here so a run reads
     * no cold node or plan tables; n_feed -1: more, all rebound.  Every
     * other pointer is fixed when the steps are built. */
    int               n_feed;
    int               feed_slot[4], feed_tid[4];
    /* what pg_model_step_info shows, made when first asked (model_text.c):
     * a compile pays nothing for text that no one reads */
    _Atomic(char *)   in_text, out_text, detail;
    uint64_t          prof_ns;  /* wall time summed over the profiled runs (profile.c) */
    double            flops;    /* of one run: 2 x multiply-adds (convs, products), else 0 */
} pg_step;

struct pg_model {
    pg_graph  *g;               /* the compiled (optimised) graph, owned */
    pg_plan    plan;
    pg_step   *steps;
    int        n_steps;
    void      *arena;           /* activations, plan.arena_bytes */
    void      *persist;         /* the persistent block, plan.persistent_bytes: the
                                   model's own (persist_owned) or its user's */
    size_t     persist_bytes;
    int        persist_owned;
    const void **feeds;         /* per graph input: this run's feed */
    void     **out_copy;        /* per graph output: own buffer when its tensor lives outside the arena */
    /* pg_model_run_into: per graph output, the plan buffer it can be
     * computed straight into (its tensor and every tensor sharing the buffer
     * fit in the output's bytes; no other output shares it), else -1; per
     * plan buffer, this run's caller memory in place of the arena (NULL) */
    int       *out_buf;
    void     **redirect;
    _Atomic(char *) text;       /* pg_model_text's, made when first asked */
    struct pg_pass_log *pass_log; /* what each pass did; NULL at level 0 */
    pg_binding *binds;          /* per node id: the kernels bound at compile / rebind */
    uint64_t   bound_flags;     /* the CPU flags the mask allowed then */
    int        profiling;       /* pg_model_profile: runs time their steps */
    uint64_t   prof_runs;       /* the runs timed since it was turned on (or the steps rebuilt) */
    int        threads;
    int        threads_opt;     /* the threads option as asked (0 = the default) */
    int        level;
    atomic_int busy;            /* a run (or rebind, or save) is in progress */
    /* a model from pg_model_load (model_io.c): its constants point into
     * this read-only mapping of the file (data_borrowed), unmapped after
     * the graph is freed */
    void      *map;
    size_t     map_bytes;
    int        loaded;
    int        repacked_at_load;
    /* its large constants' entries in the shared store (shared_consts.h):
     * those constants' data is borrowed from there, released at free */
    struct pg_shared_const **shared;
    int        n_shared, cap_shared;
    uint64_t   file_flags;      /* the CPU flags the file was bound under */
};

/* The floating-point operations of one run of a step (profile.c). */
double pg_step_flops(const pg_step *st);
/* The time since an arbitrary start, in nanoseconds (profile.c). */
uint64_t pg_profile_now_ns(void);

/* Binds every node's kernels under the current CPU mask, sizes their
 * scratch, plans memory (planner NULL = the default), allocates the arena
 * and builds the steps: how a compile ends, and all a load re-runs. */
pg_status pg_model_bind_and_plan(pg_model *m, const char *planner);

/* Points the model's persistent buffers (PG_PLAN_PERSISTENT: an LLM's KV
 * cache) at mem, bytes long (at least plan.persistent_bytes), owned by the
 * caller and kept across runs and rebinds: how two compiled shapes of one
 * decoder share one cache.  mem NULL: the model's own block again. */
pg_status pg_model_use_persistent(pg_model *m, void *mem, size_t bytes);

#endif

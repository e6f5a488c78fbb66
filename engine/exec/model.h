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
    char             *in_text, *out_text, *detail;
} pg_step;

struct pg_model {
    pg_graph  *g;               /* the compiled (optimised) graph, owned */
    pg_plan    plan;
    pg_step   *steps;
    int        n_steps;
    void      *arena;           /* activations, plan.arena_bytes */
    const void **feeds;         /* per graph input: this run's feed */
    void     **out_copy;        /* per graph output: own buffer when its tensor lives outside the arena */
    char      *text;
    struct pg_pass_log *pass_log; /* what each pass did; NULL at level 0 */
    pg_binding *binds;          /* per node id: the kernels bound at compile / rebind */
    uint64_t   bound_flags;     /* the CPU flags the mask allowed then */
    int        threads;
    int        level;
    atomic_int busy;            /* a run (or rebind) is in progress */
};

#endif

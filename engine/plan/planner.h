/* planner.h - the memory plan of a compiled graph.
 *
 * Steps are the nodes in execution order.  Every tensor that needs storage
 * gets a home:
 *   - constants: the persistent weight arena (their own data, never moved);
 *   - graph inputs: the caller's feed buffer, bound per run;
 *   - views (Reshape, Flatten, Squeeze, Unsqueeze, Identity): their
 *     source's buffer at the same offset;
 *   - QKVMatMul's three outputs: one block, back to back;
 *   - elementwise / row ops whose input's buffer dies at that step: the
 *     input's buffer (in place);
 *   - outputs of persistent ops (KVCache, PG_OPF_PERSISTENT): a buffer of
 *     the persistent block, which lives across runs (never reused, never
 *     cleared: an LLM's KV cache), back to back in step order;
 *   - everything else: a buffer of its own in the activation arena.
 * Buffers of the arena are intervals (bytes, first step, last step); the
 * placement puts each at a 64-byte aligned offset so that no two buffers
 * live at the same step overlap - three strategies:
 *   "greedy_by_size"      largest first, lowest gap (TFLite's default)
 *   "greedy_by_first_use" in order of first use, lowest gap
 *   "naive"               every buffer its own range (the sum)
 * pg_plan_check() proves the no-overlap property after placement. */
#ifndef PG_PLAN_PLANNER_H
#define PG_PLAN_PLANNER_H

#include <stddef.h>
#include <stdint.h>

#include "../graph/ir.h"

typedef struct pg_plan_buf {
    size_t bytes;          /* 64-byte rounded */
    int first, last;       /* steps, inclusive */
    int64_t offset;        /* in the arena, after placement */
    int kind;              /* pg_plan_kind of its root: ARENA, INPUT, WEIGHT */
    int root;              /* tensor id that owns it */
    const char *label;     /* a scratch buffer's label (NULL for tensors) */
} pg_plan_buf;

typedef struct pg_plan_tensor {
    int buf;               /* index into bufs, -1 for none */
    size_t sub;            /* byte offset inside the buffer (QKV parts) */
    int kind;              /* pg_plan_kind */
    int alias_of;          /* VIEW / INPLACE: tensor id, else -1 */
    int first, last;       /* the tensor's own liveness */
} pg_plan_tensor;

typedef struct pg_plan {
    int n_steps;
    int *order;            /* node ids in execution order */
    pg_plan_tensor *t;     /* per tensor id (g->n_tensors) */
    pg_plan_buf *bufs;
    int n_bufs;
    int *scratch_buf;      /* per step: buffer index of its scratch, -1 */
    uint64_t arena_bytes, naive_bytes, lower_bound_bytes, weight_bytes;
    uint64_t persistent_bytes;  /* the persistent block (PG_PLAN_PERSISTENT buffers) */
    char planner[32];
} pg_plan;

/* Plans g (shapes inferred) with the named strategy (NULL = greedy_by_size).
 * scratch_bytes[node id]: the working memory each node's bound kernels need
 * (pg_exec_scratch_bytes), NULL for none.  The planner keeps no state
 * outside *out: models may be planned on several threads at once. */
pg_status pg_plan_build(const pg_graph *g, const char *strategy, const size_t *scratch_bytes,
                        pg_plan *out);
void      pg_plan_free(pg_plan *p);
/* The self-check: PG_ERR_INTERNAL naming the two buffers if any overlap. */
pg_status pg_plan_check(const pg_plan *p);

#endif

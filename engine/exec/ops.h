/* ops.h - the per-op executors: one small C function per op.
 *
 * Every executor reads its node's attributes, the descriptors of its inputs
 * and outputs (dtype and shape, fixed at compile time) and the data
 * pointers the executor bound for this run, and computes the outputs.  An
 * executor never allocates: what it needs beyond its outputs is the scratch
 * the planner reserved for it (pg_exec_scratch_bytes at compile time).
 *
 * The same functions compute compile-time values (shape inference folding
 * Shape -> Gather -> Concat chains, pg_ir_infer_shapes), so they must be
 * correct for any buffers, aliased or not, as stated per op below. */
#ifndef PG_EXEC_OPS_H
#define PG_EXEC_OPS_H

#include <stddef.h>

#include "../graph/ir.h"

typedef struct pg_kctx {
    const pg_node    *node;
    int               n_in, n_out;
    const pg_tensor *const *in;   /* descriptors; NULL for an absent input */
    const void      *const *x;    /* input data; NULL for an absent input */
    const pg_tensor *const *out;
    void            *const *y;    /* output data */
    void             *scratch;    /* pg_exec_scratch_bytes, 64-byte aligned */
    size_t            scratch_bytes;
    void             *state;      /* op-private compile-time state (packed weights) */
    int               threads;    /* the model's thread count (compile option,
                                   * resolved); 0 outside a model = 1 for
                                   * scratch-sized work, the default for SGEMM */
} pg_kctx;

typedef pg_status (*pg_exec_fn)(pg_kctx *k);

/* What a node's kctx.state must be: Constant and ConstantOfShape read
 * their `value` tensor attribute through it (NULL for every other op).
 * Anyone calling an executor outside the model (constant folding) sets
 * k.state = pg_exec_node_state(g, node). */
const void *pg_exec_node_state(const pg_graph *g, const pg_node *n);

/* The executor of an op, NULL if none. */
pg_exec_fn pg_exec_lookup(pg_opcode op);
/* Scratch an op needs for this node (its descriptors are final), run on
 * one thread; _threads: on up to `threads` threads (per-thread parts, e.g.
 * FusedAttention's tiles), what a model compiled for `threads` reserves. */
size_t pg_exec_scratch_bytes(const pg_node *n, const pg_tensor *const *in,
                             const pg_tensor *const *out);
size_t pg_exec_scratch_bytes_threads(const pg_node *n, const pg_tensor *const *in,
                                     const pg_tensor *const *out, int threads);

/* Ops whose output is a view of input 0 (same bytes, new shape): the planner
 * gives the output its input's buffer and the executor then skips the copy
 * (it copies only when the two pointers differ). */
int pg_exec_is_view(pg_opcode op);
/* Elementwise ops whose output may overwrite input `slot` (same size,
 * same dtype, each element read before it is written). Returns a mask of
 * input slots that may be overwritten in place. */
unsigned pg_exec_inplace_mask(const pg_node *n, const pg_tensor *const *in,
                              const pg_tensor *out);

/* Executors, by family (ops_*.c). */
pg_status pg_exec_binary(pg_kctx *k);     /* Add Sub Mul Div Pow Equal Less Greater And Or */
pg_status pg_exec_where(pg_kctx *k);
pg_status pg_exec_unary(pg_kctx *k);      /* Sqrt ... Identity, Cast */
pg_status pg_exec_softmax(pg_kctx *k);
pg_status pg_exec_layernorm(pg_kctx *k);
pg_status pg_exec_rmsnorm(pg_kctx *k);
pg_status pg_exec_reduce(pg_kctx *k);     /* ReduceMean ReduceSum */
pg_status pg_exec_matmul(pg_kctx *k);     /* MatMul, Gemm, FusedMatMul, QKVMatMul */
pg_status pg_exec_attention(pg_kctx *k);  /* FusedAttention */
pg_status pg_exec_copy(pg_kctx *k);       /* Reshape Flatten Squeeze Unsqueeze Identity */
pg_status pg_exec_transpose(pg_kctx *k);
pg_status pg_exec_concat(pg_kctx *k);
pg_status pg_exec_split(pg_kctx *k);
pg_status pg_exec_slice(pg_kctx *k);
pg_status pg_exec_gather(pg_kctx *k);
pg_status pg_exec_expand(pg_kctx *k);
pg_status pg_exec_shape(pg_kctx *k);
pg_status pg_exec_constant(pg_kctx *k);
pg_status pg_exec_constant_of_shape(pg_kctx *k);

/* Strides (in elements) that broadcast a tensor of rank r / shape s to an
 * output of rank orank / oshape: 0 on broadcast dims, leading dims added. */
void pg_broadcast_strides(int r, const int64_t *s, int orank, const int64_t *oshape,
                          int64_t *strides);
/* Normalise an axis against a rank (negative counts from the end); -1 if
 * out of range. */
int pg_norm_axis(int64_t axis, int rank);

#endif

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
#include "../graph/opdefs.h"
#include "../kernels/variant.h"

/* The kernels a step was bound to when its model compiled (the row's bind
 * function, opdefs.def), so no step selects a variant while it runs and a
 * CPU-mask change reaches a model only through pg_model_rebind.  Roles:
 *   MatMul, Gemm, FusedMatMul, QKVMatMul  kern[0] sgemm (for a packed weight:
 *                                         of its panel width), kern[1] the
 *                                         activation's table when the SGEMM
 *                                         epilogue lacks it, kern[3]
 *                                         gemv_panels (one row of A on a
 *                                         packed weight, where one fits)
 *   FusedAttention                        kern[0] sgemm, kern[1] softmax, kern[2]
 *                                         gemv_nk, kern[3] gemv (one query row)
 *   Add, Mul                              kern[0] vadd, vmul
 *   Tanh Sigmoid SiLU Exp Gelu            kern[0] its elementwise table
 *   Softmax, LayerNormalization, RMSNorm  kern[0] the row kernel
 * A NULL role: the executor's plain loop (an op or dtype with no table). */
typedef struct pg_binding {
    const pg_variant *kern[5];   /* [2]: a low-precision product's converter / quantiser */
} pg_binding;

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
    const pg_binding *bind;       /* never NULL: the step's bound kernels */
    int               threads;    /* the model's thread count (compile option,
                                   * resolved); 0 outside a model = 1 for
                                   * scratch-sized work, the default for SGEMM */
} pg_kctx;

/* What a node's kctx.state must be: Constant and ConstantOfShape read
 * their `value` tensor attribute through it (NULL for every other op).
 * Anyone calling an executor outside the model (constant folding) sets
 * k.state = pg_exec_node_state(g, node). */
const void *pg_exec_node_state(const pg_graph *g, const pg_node *n);

/* Binds a node's kernels (its row's bind function, an empty binding when it
 * has none) and sizes its scratch for them on up to `threads` threads:
 * what a model compiled for `threads` reserves, and what anyone running an
 * executor outside a model (constant folding) provides. */
pg_status pg_exec_bind(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                       pg_binding *b);
size_t pg_exec_scratch_bytes(const pg_node *n, const pg_tensor *const *in,
                             const pg_tensor *const *out, int threads, const pg_binding *b);
/* Input slots the output may overwrite in place (the row's flags; same
 * size and dtype, each element read before it is written). */
unsigned pg_exec_inplace_mask(const pg_node *n, const pg_tensor *const *in,
                              const pg_tensor *out);

/* Kernel binding and scratch of the ops that have them (opdefs.def). */
pg_status pg_bind_matmul(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out, pg_binding *b);
pg_status pg_bind_attention(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out, pg_binding *b);
pg_status pg_bind_binary(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out, pg_binding *b);
pg_status pg_bind_unary(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out, pg_binding *b);
pg_status pg_bind_row(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out, pg_binding *b);
pg_status pg_bind_transpose(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                            pg_binding *b);
/* InstanceNormalization / GroupNormalization: each group a layernorm row */
pg_status pg_bind_groupnorm(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                            pg_binding *b);
size_t pg_scratch_groupnorm(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                            int threads, const pg_binding *b);
/* Conv, FusedConv (conv_fast.c): kern[0] sgemm (GEMM form) or dwconv3x3/5x5
 * (depthwise), NULL for the reference loop; kern[1] silu for a fused SiLU */
pg_status pg_bind_conv(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out, pg_binding *b);
size_t pg_scratch_conv(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                       int threads, const pg_binding *b);
pg_status pg_exec_fused_conv(pg_kctx *k);   /* FusedConv (conv_fast.c) */
pg_status pg_exec_fast_maxpool(pg_kctx *k); /* FastMaxPool, MaxPool's fast path (pool_fast.c) */
size_t pg_scratch_matmul(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                         int threads, const pg_binding *b);
size_t pg_scratch_gemm(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                       int threads, const pg_binding *b);
size_t pg_scratch_attention(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                            int threads, const pg_binding *b);

/* Executors, by family (ops_*.c). */
pg_status pg_exec_binary(pg_kctx *k);     /* Add Sub Mul Div Pow, the comparisons, And Or */
pg_status pg_exec_where(pg_kctx *k);
pg_status pg_exec_unary(pg_kctx *k);      /* Sqrt ... Identity, Cast */
pg_status pg_exec_softmax(pg_kctx *k);
pg_status pg_exec_layernorm(pg_kctx *k);
pg_status pg_exec_rmsnorm(pg_kctx *k);
pg_status pg_exec_reduce(pg_kctx *k);     /* ReduceMean ReduceSum */
pg_status pg_exec_matmul(pg_kctx *k);     /* MatMul, Gemm, FusedMatMul, QKVMatMul */
pg_status pg_exec_attention(pg_kctx *k);  /* FusedAttention */
pg_status pg_exec_rotary(pg_kctx *k);     /* Rotary (ops_rotary.c) */
pg_status pg_exec_copy(pg_kctx *k);       /* Reshape Flatten Squeeze Unsqueeze Identity Dropout */
pg_status pg_exec_transpose(pg_kctx *k);
pg_status pg_exec_concat(pg_kctx *k);
pg_status pg_exec_split(pg_kctx *k);
pg_status pg_exec_slice(pg_kctx *k);
pg_status pg_exec_gather(pg_kctx *k);
pg_status pg_exec_expand(pg_kctx *k);
pg_status pg_exec_shape(pg_kctx *k);
pg_status pg_exec_constant(pg_kctx *k);
pg_status pg_exec_constant_of_shape(pg_kctx *k);

/* The ops added for exported transformer graphs, plain C (correctness
 * first; float64 and integer dtypes where the ONNX cases have them). */
pg_status pg_exec_math_unary(pg_kctx *k);   /* Sin Cos Floor Ceil Round Sign IsNaN LeakyRelu
                                             * HardSigmoid HardSwish Softplus Mish (ops_math.c) */
pg_status pg_exec_variadic(pg_kctx *k);     /* Max Min over 1..64 inputs */
pg_status pg_exec_mod(pg_kctx *k);
pg_status pg_exec_clip(pg_kctx *k);
pg_status pg_exec_gather_elements(pg_kctx *k);   /* ops_index.c */
pg_status pg_exec_gather_nd(pg_kctx *k);
pg_status pg_exec_scatter_nd(pg_kctx *k);
pg_status pg_exec_onehot(pg_kctx *k);
pg_status pg_exec_nonzero(pg_kctx *k);
pg_status pg_exec_topk(pg_kctx *k);
pg_status pg_exec_argmax(pg_kctx *k);       /* ArgMax ArgMin */
size_t pg_scratch_topk(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                       int threads, const pg_binding *b);
pg_status pg_exec_range(pg_kctx *k);        /* ops_seq.c */
pg_status pg_exec_cumsum(pg_kctx *k);
pg_status pg_exec_size(pg_kctx *k);
pg_status pg_exec_pad(pg_kctx *k);          /* ops_pad_tile.c */
pg_status pg_exec_tile(pg_kctx *k);
pg_status pg_exec_trilu(pg_kctx *k);
pg_status pg_exec_einsum(pg_kctx *k);       /* ops_einsum.c */
pg_status pg_exec_logsoftmax(pg_kctx *k);   /* ops_norm2.c */
pg_status pg_exec_instancenorm(pg_kctx *k);
pg_status pg_exec_groupnorm(pg_kctx *k);
pg_status pg_exec_reduce_ext(pg_kctx *k);   /* ReduceMax ReduceMin ReduceProd ReduceL2 (ops_reduce.c) */
/* CNN ops, NCHW, plain C (exec/cnn.h has the shared window geometry) */
pg_status pg_exec_conv(pg_kctx *k);           /* ops_conv.c */
pg_status pg_exec_conv_transpose(pg_kctx *k);
pg_status pg_exec_pool(pg_kctx *k);           /* MaxPool AveragePool (ops_pool.c) */
pg_status pg_exec_global_pool(pg_kctx *k);    /* GlobalAveragePool GlobalMaxPool */
pg_status pg_exec_reorder(pg_kctx *k);        /* ReorderInput ReorderOutput (conv_nchwc.c) */
pg_status pg_exec_resize(pg_kctx *k);         /* Resize Upsample (ops_resize.c) */
pg_status pg_exec_batchnorm(pg_kctx *k);      /* ops_cnn_misc.c */
pg_status pg_exec_prelu(pg_kctx *k);
pg_status pg_exec_depth_space(pg_kctx *k);    /* DepthToSpace SpaceToDepth */
/* quantisation (ops_quant.c): QuantMatMul binds the int8 GEMM; the
 * quantisers (and QuantMatMul's float A) bind quantize_u8_span and minmax_keys */
pg_status pg_exec_quantize_linear(pg_kctx *k);
pg_status pg_bind_quantize(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                           pg_binding *b);
pg_status pg_exec_dequantize_linear(pg_kctx *k);
pg_status pg_exec_dynamic_quantize_linear(pg_kctx *k);
pg_status pg_exec_matmul_integer(pg_kctx *k);
pg_status pg_exec_qlinear_matmul(pg_kctx *k);
pg_status pg_exec_conv_integer(pg_kctx *k);
pg_status pg_exec_qlinear_conv(pg_kctx *k);
pg_status pg_exec_quant_matmul(pg_kctx *k);
pg_status pg_bind_quant_matmul(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                               pg_binding *b);
size_t pg_scratch_quant_matmul(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                               int threads, const pg_binding *b);
/* the GGUF decoder's ops (ops_llm.c): GGUFQuantize binds kern[0] the
 * activation quantiser; GGUFMatMul kern[0] qgemv, kern[1] qgemm of the
 * weight's type; LLMRotary kern[0] rope_ggml; CachedAttention kern[0]
 * softmax, kern[1] tanh, kern[2] / [3] attn_kq_ggml / attn_pv_ggml, kern[4]
 * round_f16 */
pg_status pg_exec_gguf_embed(pg_kctx *k);
pg_status pg_exec_gguf_quantize(pg_kctx *k);
pg_status pg_exec_gguf_matmul(pg_kctx *k);
pg_status pg_exec_llm_rotary(pg_kctx *k);
pg_status pg_bind_llm_rotary(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                            pg_binding *b);
pg_status pg_exec_kv_cache(pg_kctx *k);
pg_status pg_exec_kv_write(pg_kctx *k);
pg_status pg_exec_kv_read(pg_kctx *k);
/* KVCacheWrite kern[0] round_f16 (an f32 cache) or cvt_f32_f16 (an f16 one);
 * KVCacheRead kern[0] cvt_f16_f32 */
pg_status pg_bind_kv_write(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                           pg_binding *b);
pg_status pg_bind_kv_read(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                          pg_binding *b);
pg_status pg_exec_cached_attention(pg_kctx *k);
pg_status pg_bind_gguf_quantize(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                                pg_binding *b);
pg_status pg_bind_gguf_matmul(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                              pg_binding *b);
pg_status pg_bind_cached_attention(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                                   pg_binding *b);
size_t pg_scratch_cached_attention(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                                   int threads, const pg_binding *b);
/* 1 if a reduction op takes that input dtype (ops_reduce.c). */
int pg_reduce_dtype_ok(pg_opcode op, pg_dtype dt);

/* Pad's modes; pg_pad_mode: -1 for an unknown name. */
enum { PG_PAD_CONSTANT, PG_PAD_REFLECT, PG_PAD_EDGE, PG_PAD_WRAP };
int pg_pad_mode(const char *mode);
/* Per-dim pads (lo: before, hi: after) from ONNX pads [x1_begin, ...,
 * x1_end, ...] over all dims (axes NULL) or over the given axes; -1 if the
 * counts or an axis do not fit the rank. */
int pg_pad_amounts(int rank, const int64_t *pads, int npads, const int64_t *axes, int naxes,
                   int64_t *lo, int64_t *hi);

/* Strides (in elements) that broadcast a tensor of rank r / shape s to an
 * output of rank orank / oshape: 0 on broadcast dims, leading dims added. */
void pg_broadcast_strides(int r, const int64_t *s, int orank, const int64_t *oshape,
                          int64_t *strides);
/* Normalise an axis against a rank (negative counts from the end); -1 if
 * out of range. */
int pg_norm_axis(int64_t axis, int rank);

#endif

/* infer.h - the shape rules of the graph ops (shape_infer.c), one per row
 * family of opdefs.def.
 *
 * A rule sees one node whose inputs have known dtypes and shapes (and, for
 * the value inputs its row declares, values) and whose arity the driver has
 * already checked against the row; it checks the dtypes and shapes and sets
 * its outputs' dtype and shape, or fails naming the node and the reason. */
#ifndef PG_GRAPH_INFER_H
#define PG_GRAPH_INFER_H

#include "../core/error.h"
#include "ir.h"

typedef struct pg_infer_ctx {
    pg_graph  *g;
    pg_node   *n;
    pg_tensor *in[64];   /* NULL: an absent optional input */
    int        n_in;
} pg_infer_ctx;

/* Helpers the rules share (shape_infer.c). */
#define PG_INFER_FAIL(st, ...) pg_infer_fail(c, st, __VA_ARGS__)
/* Fails naming the node: "node 'name' (op): <message>". */
pg_status pg_infer_fail(pg_infer_ctx *c, pg_status st, const char *fmt, ...) PG_PRINTF(3, 4);
void pg_infer_shape_str(const pg_tensor *t, char *buf, size_t cap);   /* "[2,3]" */
/* PG_INFER_FAIL with a message that shows the shapes of a and b, written
 * into sa and sb (char arrays) only on the way out: formatting every
 * MatMul's operands up front was ~1.3% of a decode step's recompile. */
#define PG_INFER_FAIL_AB(a, sa, b, sb, st, ...)                                  \
    (pg_infer_shape_str(a, sa, sizeof sa), pg_infer_shape_str(b, sb, sizeof sb), \
     pg_infer_fail(c, st, __VA_ARGS__))
/* A tensor's compile-time value: its data (a constant) or its known
 * value (computed from shapes); NULL if neither. */
const void *pg_infer_value(const pg_tensor *t);
/* An int64/int32 input's compile-time value (at most cap values). */
pg_status pg_infer_read_ints(pg_infer_ctx *c, int slot, int64_t *out, int cap, int *count);
/* A one-element numeric input's compile-time value, as a double; `what`
 * names it in the error ("depth"). */
pg_status pg_infer_read_scalar(pg_infer_ctx *c, int slot, const char *what, double *v);
void pg_infer_set_out(pg_infer_ctx *c, int i, pg_dtype dt, int rank, const int64_t *shape);
pg_status pg_infer_need_float(pg_infer_ctx *c, int slot);            /* float32 only */
/* numpy broadcasting of the inputs in slots[0..k) */
pg_status pg_infer_broadcast(pg_infer_ctx *c, const int *slots, int k, int *rank, int64_t *shape);
/* Reduction axes: input `slot` (a value) or the `axes` attribute. */
pg_status pg_infer_axes(pg_infer_ctx *c, int slot, int64_t *axes, int *n);
static inline int pg_infer_has_in(const pg_infer_ctx *c, int slot) { return slot < c->n_in && c->in[slot]; }

pg_status pg_infer_binary(pg_infer_ctx *c);
pg_status pg_infer_where(pg_infer_ctx *c);
pg_status pg_infer_unary(pg_infer_ctx *c);
pg_status pg_infer_norm(pg_infer_ctx *c);      /* Softmax, LayerNormalization, RMSNorm */
pg_status pg_infer_reduce(pg_infer_ctx *c);
pg_status pg_infer_matmul(pg_infer_ctx *c);    /* MatMul, Gemm, FusedMatMul, QKVMatMul */
pg_status pg_infer_attention(pg_infer_ctx *c);
pg_status pg_infer_rotary(pg_infer_ctx *c);      /* infer_rotary.c */
/* the GGUF decoder's ops (infer_llm.c) */
pg_status pg_infer_gguf_embed(pg_infer_ctx *c);
pg_status pg_infer_gguf_quantize(pg_infer_ctx *c);
pg_status pg_infer_gguf_matmul(pg_infer_ctx *c);
pg_status pg_infer_llm_rotary(pg_infer_ctx *c);
pg_status pg_infer_kv_cache(pg_infer_ctx *c);
pg_status pg_infer_kv_write(pg_infer_ctx *c);
pg_status pg_infer_kv_read(pg_infer_ctx *c);
pg_status pg_infer_cached_attention(pg_infer_ctx *c);
pg_status pg_infer_transpose(pg_infer_ctx *c);
pg_status pg_infer_reshape(pg_infer_ctx *c);
pg_status pg_infer_flatten(pg_infer_ctx *c);
pg_status pg_infer_squeeze(pg_infer_ctx *c);
pg_status pg_infer_unsqueeze(pg_infer_ctx *c);
pg_status pg_infer_concat(pg_infer_ctx *c);
pg_status pg_infer_split(pg_infer_ctx *c);
pg_status pg_infer_slice(pg_infer_ctx *c);
pg_status pg_infer_gather(pg_infer_ctx *c);
pg_status pg_infer_expand(pg_infer_ctx *c);
pg_status pg_infer_shape(pg_infer_ctx *c);
pg_status pg_infer_constant(pg_infer_ctx *c);
pg_status pg_infer_constant_of_shape(pg_infer_ctx *c);

/* infer_math.c: elementwise math */
pg_status pg_infer_math_unary(pg_infer_ctx *c);  /* Sin Cos Floor Ceil Round Sign IsNaN LeakyRelu
                                                  * HardSigmoid HardSwish Softplus Mish */
pg_status pg_infer_variadic(pg_infer_ctx *c);    /* Max Min */
pg_status pg_infer_mod(pg_infer_ctx *c);
pg_status pg_infer_clip(pg_infer_ctx *c);
/* infer_index.c: indexing */
pg_status pg_infer_gather_elements(pg_infer_ctx *c);
pg_status pg_infer_gather_nd(pg_infer_ctx *c);
pg_status pg_infer_scatter_nd(pg_infer_ctx *c);
pg_status pg_infer_onehot(pg_infer_ctx *c);
pg_status pg_infer_nonzero(pg_infer_ctx *c);
pg_status pg_infer_topk(pg_infer_ctx *c);
pg_status pg_infer_argmax(pg_infer_ctx *c);      /* ArgMax ArgMin */
/* infer_data.c: sequences, padding, tiling */
pg_status pg_infer_range(pg_infer_ctx *c);
pg_status pg_infer_cumsum(pg_infer_ctx *c);
pg_status pg_infer_size(pg_infer_ctx *c);
pg_status pg_infer_tile(pg_infer_ctx *c);
pg_status pg_infer_pad(pg_infer_ctx *c);
pg_status pg_infer_trilu(pg_infer_ctx *c);
/* infer_einsum.c */
pg_status pg_infer_einsum(pg_infer_ctx *c);
/* infer_norm2.c: InstanceNormalization, GroupNormalization */
pg_status pg_infer_instancenorm(pg_infer_ctx *c);
pg_status pg_infer_groupnorm(pg_infer_ctx *c);
/* infer_conv.c: the CNN ops (NCHW) */
pg_status pg_infer_conv(pg_infer_ctx *c);
pg_status pg_infer_conv_transpose(pg_infer_ctx *c);
pg_status pg_infer_pool(pg_infer_ctx *c);          /* MaxPool AveragePool */
pg_status pg_infer_global_pool(pg_infer_ctx *c);   /* GlobalAveragePool GlobalMaxPool */
/* the NCHW16c forms and ReorderInput / ReorderOutput (exec/conv_nchwc.c) */
pg_status pg_infer_nchwc(pg_infer_ctx *c);
pg_status pg_infer_batchnorm(pg_infer_ctx *c);
pg_status pg_infer_resize(pg_infer_ctx *c);        /* Resize Upsample */
pg_status pg_infer_prelu(pg_infer_ctx *c);
pg_status pg_infer_depth_space(pg_infer_ctx *c);   /* DepthToSpace SpaceToDepth */
/* infer_quant.c: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
 * MatMulInteger, QLinearMatMul, QuantMatMul (made by quant_fusion) */
pg_status pg_infer_quantize_linear(pg_infer_ctx *c);
pg_status pg_infer_dequantize_linear(pg_infer_ctx *c);
pg_status pg_infer_dynamic_quantize_linear(pg_infer_ctx *c);
pg_status pg_infer_matmul_integer(pg_infer_ctx *c);
pg_status pg_infer_qlinear_matmul(pg_infer_ctx *c);
pg_status pg_infer_conv_integer(pg_infer_ctx *c);
pg_status pg_infer_qlinear_conv(pg_infer_ctx *c);
pg_status pg_infer_quant_matmul(pg_infer_ctx *c);

#endif /* PG_GRAPH_INFER_H */

/* infer.h - the shape rules of the graph ops (shape_infer.c), one per row
 * family of opdefs.def.
 *
 * A rule sees one node whose inputs have known dtypes and shapes (and, for
 * the value inputs its row declares, values) and whose arity the driver has
 * already checked against the row; it checks the dtypes and shapes and sets
 * its outputs' dtype and shape, or fails naming the node and the reason. */
#ifndef PG_GRAPH_INFER_H
#define PG_GRAPH_INFER_H

#include "ir.h"

typedef struct pg_infer_ctx {
    pg_graph  *g;
    pg_node   *n;
    pg_tensor *in[64];   /* NULL: an absent optional input */
    int        n_in;
} pg_infer_ctx;

pg_status pg_infer_binary(pg_infer_ctx *c);
pg_status pg_infer_where(pg_infer_ctx *c);
pg_status pg_infer_unary(pg_infer_ctx *c);
pg_status pg_infer_norm(pg_infer_ctx *c);      /* Softmax, LayerNormalization, RMSNorm */
pg_status pg_infer_reduce(pg_infer_ctx *c);
pg_status pg_infer_matmul(pg_infer_ctx *c);    /* MatMul, Gemm, FusedMatMul, QKVMatMul */
pg_status pg_infer_attention(pg_infer_ctx *c);
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

#endif /* PG_GRAPH_INFER_H */

/* lowp.h - MatMul / FusedMatMul / QKVMatMul on a weight packed by
 * lowp_prepack (PG_LAYOUT_PACKED_BF16, PG_LAYOUT_PACKED_U8S8): the bind,
 * scratch and run entry points ops_matmul.c hands such a node to. */
#ifndef PG_EXEC_LOWP_H
#define PG_EXEC_LOWP_H

#include "gemm.h"
#include "ops.h"

int pg_lowp_layout(const pg_tensor *w);
/* kern[0] the gemm_bf16 / gemm_u8s8 variant, kern[1] the activation's
 * elementwise kernel where the epilogue lacks it, kern[2] cvt_bf16 /
 * quantize_u8. */
pg_status pg_lowp_bind(const pg_node *n, const pg_tensor *const *in, pg_binding *b);
/* A's rows converted (bf16) or quantised (u8 + scale + zero point). */
size_t pg_lowp_scratch(const pg_node *n, const pg_tensor *const *in);
pg_status pg_lowp_matmul(pg_kctx *k, const float *bias, pg_act_kind act);

#endif

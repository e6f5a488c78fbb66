/* gemm.h - the one matrix-product entry point of the executors:
 *   C[M,N] = act(alpha * A . B[:, col0:col0+N] + bias)
 * B is row-major (ldb), transposed (B^T stored, ldb its row length) or a
 * constant pre-packed into the SGEMM kernel's NR-wide panels.  Products go
 * through the packed SGEMM kernel - packing B (either way round) into the
 * step's scratch when it was not pre-packed; only an unpacked B with alpha
 * != 1 takes the plain C loop. */
#ifndef PG_EXEC_GEMM_H
#define PG_EXEC_GEMM_H

#include <stddef.h>

#include "ops.h"

typedef enum pg_act_kind {
    PG_ACTK_NONE = 0, PG_ACTK_RELU, PG_ACTK_GELU, PG_ACTK_GELU_TANH,
    PG_ACTK_SIGMOID, PG_ACTK_TANH, PG_ACTK_SILU, PG_ACTK_INVALID
} pg_act_kind;

pg_act_kind pg_act_from_name(const char *s);

typedef struct pg_gemm_b {
    const float *data;
    size_t ldb;      /* row length of the stored matrix (unpacked) */
    int trans;       /* stored as B^T [N_total, K] */
    int packed;      /* NR-wide panels of the whole [K, N_total] */
    size_t nr;
} pg_gemm_b;

/* Runs on the step's bound SGEMM kernel (k->bind->kern[0]); a packed B
 * must be packed for it (else PG_ERR_INTERNAL: never a silent slow path). */
pg_status pg_gemm2d(pg_kctx *k, size_t M, size_t N, size_t K, const float *A, size_t lda,
                    const pg_gemm_b *B, size_t col0, float *C, size_t ldc,
                    const float *bias, pg_act_kind act, float alpha);
/* B = Bt^T (Bt stored [N, K], row length ldb) packed into nr-wide SGEMM
 * panels: ceil(N/nr) * K * nr floats at dst, the columns past N zero. */
void pg_gemm_pack_bt(size_t K, size_t N, const float *Bt, size_t ldb, size_t nr, float *dst);
/* Scratch pg_gemm2d needs for M rows of A (row stride K) against a K x N
 * B on that kernel: room to pack B unless it is pre-packed, and a copy of
 * A at an unaliased stride where its own puts a tile's rows in one L1 set
 * (pg_sgemm_a_aliases; without the room the driver copies by tiles). */
size_t pg_gemm_scratch_bytes(const pg_variant *sgemm, size_t M, size_t K, size_t N, int b_packed);
/* Applies an activation to n floats in place (the ones the SGEMM epilogue
 * does not have): the bound elementwise kernel, or a plain loop if NULL. */
void pg_apply_act(const pg_variant *kern, pg_act_kind act, float *y, size_t n);

#endif

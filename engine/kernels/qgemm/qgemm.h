/* qgemm.h - quantised matrix product, the prefill step of an LLM:
 *
 *     C[m * ldc + n] = dot(W row n, X row m)     0 <= m < M, 0 <= n < N
 *
 * W as in qgemv.h (N rows of K / 32 blocks, stride ldw bytes); X is M rows
 * of activations quantised once (the type qgemv_act_type names), row m at
 * X + m * ldx bytes; C is fp32 with leading dimension ldc floats.  Every
 * element is the same block formula as qgemv's, so row m of C equals
 * pg_qgemv on row m of X up to fp32 summation order.
 *
 * The kernels take four rows of X against one row of W: each weight block
 * is loaded and widened once and used four times, which is what makes the
 * prefill cheaper per token than M decode steps.  The last M % 4 rows run
 * the same code with the missing rows aimed at the first and their outputs
 * not stored.  The driver (qgemm.c) splits N into row blocks for the
 * thread pool, every thread doing all M rows of its block. */
#ifndef PG_KERNELS_QGEMM_H
#define PG_KERNELS_QGEMM_H

#include <stddef.h>

#include "../variant.h"

/* The entry point: pg_qgemm_fn, the qgemm member of pg_kernel_fn (kernel_fn.h). */

#define PG_QGEMM_DECLARE(t, isa)                                                          \
    void pg_q##t##_gemm_##isa(size_t M, size_t N, size_t K, const void *W, size_t ldw, \
                              const void *X, size_t ldx, float *C, size_t ldc);
#define PG_QGEMM_DECLARE_ALL(isa)                                                         \
    PG_QGEMM_DECLARE(4_0_q8_0, isa) PG_QGEMM_DECLARE(4_1_q8_1, isa)                       \
    PG_QGEMM_DECLARE(8_0_q8_0, isa)

PG_QGEMM_DECLARE_ALL(c)
PG_QGEMM_DECLARE_ALL(4x1_avx2)
PG_QGEMM_DECLARE_ALL(4x1_avxvnni)
PG_QGEMM_DECLARE_ALL(4x1_neon)
PG_QGEMM_DECLARE_ALL(4x1_dotprod)
PG_QGEMM_DECLARE(8_0_q8_0, 4x6_avx512vnni)

extern const pg_kernel_family pg_kernels_qgemm_q4_0;
extern const pg_kernel_family pg_kernels_qgemm_q4_1;
extern const pg_kernel_family pg_kernels_qgemm_q8_0;

const pg_kernel_family *pg_qgemm_family(int wtype);

#endif

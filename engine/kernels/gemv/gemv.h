/* gemv.h - fp32 matrix-vector product for M = 1 (the decode step):
 *
 *     y[j] = bias[j] + sum_k x[k] * B[k * ldb + j]      0 <= j < N
 *
 * B is K x N row-major with leading dimension ldb >= N (the layout of
 * SGEMM's unpacked B); bias may be NULL (then y = x . B).  GEMV is bound by
 * memory bandwidth, not arithmetic: every kernel streams B exactly once,
 * four rows at a time as four contiguous forward streams (which hardware
 * prefetchers follow), and keeps a block of y (up to 16384 columns) in
 * L1/L2 between row groups.  gemv_nk.h is the same product with the
 * weights transposed (nn.Linear layout).
 *
 * A kernel computes the whole product for the columns it is given; the
 * driver (gemv.c) splits N into column slices for the thread pool by calling
 * the kernel on (N_slice, B + j0, bias + j0, y + j0). */
#ifndef PG_KERNELS_GEMV_H
#define PG_KERNELS_GEMV_H

#include <stddef.h>

#include "../variant.h"

/* The entry point: pg_f32_gemv_fn, the gemv member of pg_kernel_fn (kernel_fn.h). */

void pg_f32_gemv_c(size_t N, size_t K, const float *x, const float *B, size_t ldb,
                   const float *bias, float *y);
void pg_f32_gemv_4row_avx2_fma3(size_t N, size_t K, const float *x, const float *B, size_t ldb,
                                const float *bias, float *y);
void pg_f32_gemv_4row_avx512f(size_t N, size_t K, const float *x, const float *B, size_t ldb,
                              const float *bias, float *y);
void pg_f32_gemv_4row_neon(size_t N, size_t K, const float *x, const float *B, size_t ldb,
                           const float *bias, float *y);

extern const pg_kernel_family pg_kernels_gemv;

#endif

/* gemv_nk.h - fp32 matrix-vector product with the weights in nn.Linear
 * (and GGUF) layout, M = 1:
 *
 *     y[n] = bias[n] + sum_k W[n * ldw + k] x[k]      0 <= n < N
 *
 * W is N x K row-major with leading dimension ldw >= K; bias may be NULL.
 * The sibling of gemv.h (B as K x N): here each output is one dot product
 * over one contiguous row, so a model whose weights come as [out, in] runs
 * its decode step without transposing them.  The kernels take four rows of
 * W at a time (four contiguous forward streams), share each load of x among
 * them, and end with one horizontal reduction per four outputs.  Bound by
 * memory bandwidth: W is read once.
 *
 * A kernel computes every row it is given; the driver (gemv_nk.c) splits N
 * into row blocks for the thread pool, each a contiguous stretch of W. */
#ifndef PG_KERNELS_GEMV_NK_H
#define PG_KERNELS_GEMV_NK_H

#include <stddef.h>

#include "../variant.h"

/* The entry point: pg_f32_gemv_nk_fn, the gemv_nk member of pg_kernel_fn (kernel_fn.h). */

void pg_f32_gemv_nk_c(size_t N, size_t K, const float *x, const float *W, size_t ldw,
                      const float *bias, float *y);
void pg_f32_gemv_nk_4row_avx2_fma3(size_t N, size_t K, const float *x, const float *W,
                                   size_t ldw, const float *bias, float *y);
void pg_f32_gemv_nk_4row_neon(size_t N, size_t K, const float *x, const float *W, size_t ldw,
                              const float *bias, float *y);

extern const pg_kernel_family pg_kernels_gemv_nk;

#endif

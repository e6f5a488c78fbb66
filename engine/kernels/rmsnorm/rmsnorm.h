/* rmsnorm.h - one row: y = x / sqrt(mean(x^2) + eps) * gamma (LLaMA's RMSNorm,
 * ONNX SimplifiedLayerNormalization).
 *
 * gamma (n floats) is required.  Two passes: the sum of squares, then y.
 * y may equal x (in place); gamma must not overlap y.  n = 0 does nothing.
 * The variants sum in float with 8-lane partial sums; the C reference sums
 * in double. */
#ifndef PG_KERNELS_RMSNORM_H
#define PG_KERNELS_RMSNORM_H

#include <stddef.h>

#include "../variant.h"

/* The entry point: pg_f32_rmsnorm_fn, the rmsnorm member of pg_kernel_fn (kernel_fn.h). */

void pg_f32_rmsnorm_c(size_t n, const float *x, const float *gamma, float eps, float *y);
void pg_f32_rmsnorm_avx2_fma3(size_t n, const float *x, const float *gamma, float eps, float *y);
void pg_f32_rmsnorm_neon(size_t n, const float *x, const float *gamma, float eps, float *y);

extern const pg_kernel_family pg_kernels_rmsnorm;

#endif

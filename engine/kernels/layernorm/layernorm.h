/* layernorm.h - one row: y = (x - mean) / sqrt(var + eps) * gamma + beta.
 *
 * mean and var (the biased, 1/n, variance of ONNX LayerNormalization and
 * PyTorch) are over the n elements of the row, computed in two passes
 * (mean, then the mean of squared deviations), so a large common offset
 * does not cancel the variance away; a third pass writes y.
 * gamma (n floats) is required; beta is NULL for none (ONNX's B is
 * optional, its Scale is not).  y may equal x (in place); gamma and beta
 * must not overlap y.  n = 0 does nothing.
 * The variants sum in float with 8-lane (several-accumulator) partial sums;
 * the C reference sums in double. */
#ifndef PG_KERNELS_LAYERNORM_H
#define PG_KERNELS_LAYERNORM_H

#include <stddef.h>

#include "../variant.h"

/* The entry point: pg_f32_layernorm_fn, the layernorm member of pg_kernel_fn (kernel_fn.h). */

void pg_f32_layernorm_c(size_t n, const float *x, const float *gamma, const float *beta,
                        float eps, float *y);
void pg_f32_layernorm_avx2_fma3(size_t n, const float *x, const float *gamma, const float *beta,
                                float eps, float *y);
void pg_f32_layernorm_neon(size_t n, const float *x, const float *gamma, const float *beta,
                           float eps, float *y);

extern const pg_kernel_family pg_kernels_layernorm;

#endif

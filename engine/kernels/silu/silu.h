/* silu.h - elementwise y = x * sigmoid(x) (SiLU, "swish").
 *
 * Computed as y = x (x >= 0 ? 1 : t) / (1 + t) with t = exp(-|x|): no
 * overflow, relative accuracy kept for large negative x (where y is a tiny
 * negative number rather than a cancelled 0).  NaN propagates.
 *
 * Accuracy of f32_silu_avx2_fma3 against x / (1 + exp(-x)) in double:
 * max error 3.5 ulp for x >= -87.3
 * (measured 3.28 ulp); below, where exp(x) is subnormal, the absolute
 * error is within (1 + |x|) 2^-149 (results under 1e-36). */
#ifndef PG_KERNELS_SILU_H
#define PG_KERNELS_SILU_H

#include <stddef.h>

#include "../unary_fn.h"
#include "../variant.h"

typedef pg_f32_unary_fn pg_f32_silu_fn;

void pg_f32_silu_c(size_t n, const float *x, float *y);
void pg_f32_silu_avx2_fma3(size_t n, const float *x, float *y);
void pg_f32_silu_neon(size_t n, const float *x, float *y);

extern const pg_kernel_family pg_kernels_silu;

#endif

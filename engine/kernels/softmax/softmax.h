/* softmax.h - one row: y = softmax(scale * x + mask), numerically stable.
 *
 *     v[i] = scale * x[i] + (mask ? mask[i] : 0)
 *     y[i] = exp(v[i] - max v) / sum_j exp(v[j] - max v)
 *
 * mask is NULL (none) or an additive row of n floats (attention masks:
 * 0 to keep, -inf or a large negative number to drop); scale is the
 * attention 1/sqrt(d) (1 for a plain softmax).  The kernel does one row;
 * rows, strides and a mask broadcast over rows are the caller's loop
 * (pg_kernel_softmax in eltwise_api.c).
 *
 * Passes: max of v; e = exp(v - max) stored into y while summing; y *= 1/sum.
 * y may equal x (in place); mask must not overlap y.  n = 0 does nothing.
 * A row whose every v is -inf has no softmax: it comes out NaN (0/0),
 * in every variant.  Error: exp's (vexp.h), the float sum and the final
 * scale, plus the rounding of v = scale * x + mask itself (|v| 2^-24, which
 * exp turns into a relative error of y that no variant can undo): checkasm
 * holds f32_softmax_avx2_fma3 to y (4 + |v| + |max v| + n/16) 2^-23 and
 * measured at most 24 * 2^-24 y for x in [-12, 12], n <= 1100. */
#ifndef PG_KERNELS_SOFTMAX_H
#define PG_KERNELS_SOFTMAX_H

#include <stddef.h>

#include "../variant.h"

/* The entry point: pg_f32_softmax_fn, the softmax member of pg_kernel_fn (kernel_fn.h). */

void pg_f32_softmax_c(size_t n, const float *x, float scale, const float *mask, float *y);
void pg_f32_softmax_avx2_fma3(size_t n, const float *x, float scale, const float *mask, float *y);
void pg_f32_softmax_avx512f(size_t n, const float *x, float scale, const float *mask, float *y);
void pg_f32_softmax_neon(size_t n, const float *x, float scale, const float *mask, float *y);

extern const pg_kernel_family pg_kernels_softmax;

#endif

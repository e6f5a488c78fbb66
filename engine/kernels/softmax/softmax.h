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
 * in every variant.  The result is exact up to the exp error (vexp.h) plus
 * one rounding each for v, the sum and the scale; v itself carries the
 * rounding of scale * x + mask, |v| ulp, which no variant can undo. */
#ifndef PG_KERNELS_SOFTMAX_H
#define PG_KERNELS_SOFTMAX_H

#include <stddef.h>

#include "../variant.h"

typedef void (*pg_f32_softmax_fn)(size_t n, const float *x, float scale, const float *mask,
                                  float *y);

void pg_f32_softmax_c(size_t n, const float *x, float scale, const float *mask, float *y);
void pg_f32_softmax_avx2_fma3(size_t n, const float *x, float scale, const float *mask, float *y);
void pg_f32_softmax_neon(size_t n, const float *x, float scale, const float *mask, float *y);

extern const pg_op pg_op_softmax;

#endif

/* sigmoid.h - elementwise y = 1 / (1 + exp(-x)) (ONNX Sigmoid).
 *
 * The variants compute it in the form that never overflows and keeps its
 * relative accuracy in both tails: t = exp(-|x|), y = (x >= 0 ? 1 : t) / (1 + t).
 * sigmoid(+inf) = 1, sigmoid(-inf) = 0, NaN propagates.
 *
 * Accuracy of f32_sigmoid_avx2_fma3 against sigmoid in double:
 * max error 2.5 ulp
 * (measured 2.34 ulp; results below 2^-126 within 2^-149). */
#ifndef PG_KERNELS_SIGMOID_H
#define PG_KERNELS_SIGMOID_H

#include <stddef.h>

#include "../unary_fn.h"
#include "../variant.h"

typedef pg_f32_unary_fn pg_f32_sigmoid_fn;

void pg_f32_sigmoid_c(size_t n, const float *x, float *y);
void pg_f32_sigmoid_avx2_fma3(size_t n, const float *x, float *y);
void pg_f32_sigmoid_neon(size_t n, const float *x, float *y);

extern const pg_kernel_family pg_kernels_sigmoid;

#endif

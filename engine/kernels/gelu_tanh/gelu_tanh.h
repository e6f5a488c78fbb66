/* gelu_tanh.h - elementwise GELU, tanh approximation:
 *     y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
 * (ONNX Gelu approximate="tanh", the GPT-2 "gelu_new").
 *
 * The assembly uses the identity 0.5 (1 + tanh(u)) = 1 / (1 + exp(-2u)), so
 * y = x (u >= 0 ? 1 : t) / (1 + t) with t = exp(-2|u|): one exp, one divide,
 * and full relative accuracy for negative x, where the literal formula (and
 * the C reference, which is the literal formula in float) loses digits to
 * the cancellation 1 + tanh(u) ~ 0.  So the C reference is itself only
 * accurate to about 2^-24 |x| absolute there; checkasm compares both to a
 * double-precision evaluation.
 *
 * Accuracy of f32_gelu_tanh_avx2_fma3 against the formula in double:
 * max error 2.5 (1 + |2u|) ulp
 * (measured 2.2); the |2u| factor is the condition of exp at the float-rounded
 * argument 2u (for x >= 0 it stays near 2 ulp: measured 2.0). */
#ifndef PG_KERNELS_GELU_TANH_H
#define PG_KERNELS_GELU_TANH_H

#include <stddef.h>

#include "../unary_fn.h"
#include "../variant.h"

typedef pg_f32_unary_fn pg_f32_gelu_tanh_fn;

void pg_f32_gelu_tanh_c(size_t n, const float *x, float *y);
void pg_f32_gelu_tanh_avx2_fma3(size_t n, const float *x, float *y);
void pg_f32_gelu_tanh_neon(size_t n, const float *x, float *y);

extern const pg_kernel_family pg_kernels_gelu_tanh;

#endif

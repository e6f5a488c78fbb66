/* vexp.h - elementwise y = exp(x) over n floats (signature: unary_fn.h).
 *
 * Semantics (every variant): exp(+inf) = +inf, exp(-inf) = +0, NaN in gives
 * NaN out, results above FLT_MAX are +inf (x > 88.72), results below the
 * smallest normal are the subnormals (x down to -103.97) and then +0.
 *
 * Accuracy of f32_vexp_avx2_fma3 (checkasm measures it against exp() in
 * double on every run): max error 1 ulp for results
 * in the normal range (x in [-87.33, 88.72]; measured 0.98 ulp, 2^22 point
 * sweep and checkasm's random runs); subnormal results within 2^-149.
 * Method: n = round(x log2 e), r = x - n ln2 with a two-constant
 * (Cody-Waite) ln2 and FMA, so r is exact to ~2^-48; e^r by a degree-6
 * minimax polynomial on [-ln2/2, ln2/2] (fitted by tools/fit_eltwise.py);
 * the 2^n scale is applied as two exponent-field products 2^(n/2) 2^(n-n/2)
 * so overflow rounds to inf and underflow rounds once into the subnormals. */
#ifndef PG_KERNELS_VEXP_H
#define PG_KERNELS_VEXP_H

#include <stddef.h>

#include "../unary_fn.h"
#include "../variant.h"

typedef pg_f32_unary_fn pg_f32_vexp_fn;

void pg_f32_vexp_c(size_t n, const float *x, float *y);
void pg_f32_vexp_avx2_fma3(size_t n, const float *x, float *y);
void pg_f32_vexp_neon(size_t n, const float *x, float *y);

extern const pg_kernel_family pg_kernels_vexp;

#endif

/* gelu_erf.h - elementwise GELU, exact form (ONNX Gelu, PyTorch default):
 *     y = 0.5 x (1 + erf(x / sqrt 2))
 *
 * The assembly evaluates erf(z), z = |x| / sqrt 2, by a piecewise
 * polynomial (coefficients fitted by tools/fit_eltwise.py), its
 * coefficients picked per lane from tables: AVX2 cuts [0, 4) into 4
 * intervals of width 1, degree 9 in z - k - 1/2, picked with vpermilps;
 * NEON into 8 of width 1/2, degree 7 in z - k/2, picked with tbl;
 * erf(z) = 1 for z >= 4 (1 - erf(4) < 2^-27).  Then y = h + h erf(x/sqrt2)
 * with h = x / 2.  For negative x that sum cancels (it is x Phi(x), small),
 * so the error there is absolute, about 2^-24 |x|, as in every erf-based
 * GELU (the C reference, 0.5f x (1 + erff(..)), has the same property).
 *
 * Accuracy of f32_gelu_erf_avx2_fma3 against the formula in double:
 * max error 1.5 ulp for x >= 0
 * (measured 1.27 ulp) and 1.25 * 2^-24 |x| absolute for x < 0 (measured
 * 1.02 * 2^-24 |x|: the float rounding of erf(k) in the tables; the C
 * reference: 1.6 ulp and 0.81 * 2^-24 |x|). */
#ifndef PG_KERNELS_GELU_ERF_H
#define PG_KERNELS_GELU_ERF_H

#include <stddef.h>

#include "../unary_fn.h"
#include "../variant.h"

typedef pg_f32_unary_fn pg_f32_gelu_erf_fn;

void pg_f32_gelu_erf_c(size_t n, const float *x, float *y);
void pg_f32_gelu_erf_avx2_fma3(size_t n, const float *x, float *y);
void pg_f32_gelu_erf_neon(size_t n, const float *x, float *y);

extern const pg_kernel_family pg_kernels_gelu_erf;

#endif

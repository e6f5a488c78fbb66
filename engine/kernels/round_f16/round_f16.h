/* round_f16.h - x -> the IEEE half nearest x, kept as a float: where the
 * GGUF decoder holds a value in f16 as llama.cpp does (the KV cache, Q and
 * the softmax before the products with K and V) without changing format.
 *
 *   y[i] = f16(x[i])            scale == 0 (+0 or -0): no scale
 *   y[i] = f16(x[i] * scale)    otherwise, the product rounded to float first
 *
 * f16(v) is pg_f16_to_f32(pg_f32_to_f16(v)) bit for bit: round to nearest
 * even, |v| >= 65520 to a signed infinity, the f16 subnormals (multiples of
 * 2^-24) kept, signed zeros kept.  A NaN stays a NaN (its payload may
 * differ between variants).  In place (y == x) is allowed; any n.
 *
 * x86: F16C (vcvtps2ph with immediate 0, nearest even, then vcvtph2ps; ymm,
 * vmaskmovps tail) and AVX-512F (zmm, masked tail); AArch64: NEON (fcvtn /
 * fcvtl, the FPCR's default nearest even).  A variant may multiply by 1.0
 * when scale is 0: exact for every float, NaN aside. */
#ifndef PG_KERNELS_ROUND_F16_H
#define PG_KERNELS_ROUND_F16_H

#include <stddef.h>

#include "../variant.h"

void pg_f32_round_f16_c(size_t n, const float *x, float scale, float *y);
void pg_f32_round_f16_avx512f(size_t n, const float *x, float scale, float *y);
void pg_f32_round_f16_f16c(size_t n, const float *x, float scale, float *y);
void pg_f32_round_f16_neon(size_t n, const float *x, float scale, float *y);

extern const pg_kernel_family pg_kernels_round_f16;

#endif

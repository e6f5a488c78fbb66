/* cvt_f16.h - fp32 <-> IEEE half rows: the f16 KV cache's store (narrow,
 * round to nearest even, overflow to inf, as pg_f32_to_f16) and load
 * (widen, exact).  Two families, C reference last:
 *   cvt_f32_f16: the quantize member (n, const float *x, void *y: n halves)
 *   cvt_f16_f32: the widen member (n, const void *x: n halves, float *y)
 * Any n (the tails run element by element).  x86: F16C (vcvtps2ph /
 * vcvtph2ps, 8 a step); AArch64: fcvtn / fcvtl (4 a step). */
#ifndef PG_KERNELS_CVT_F16_H
#define PG_KERNELS_CVT_F16_H

#include <stddef.h>

#include "../variant.h"

void pg_cvt_f32_f16_c(size_t n, const float *x, void *y);
void pg_cvt_f16_f32_c(size_t n, const void *x, float *y);
void pg_cvt_f32_f16_f16c(size_t n, const float *x, void *y);
void pg_cvt_f16_f32_f16c(size_t n, const void *x, float *y);
void pg_cvt_f32_f16_neon(size_t n, const float *x, void *y);
void pg_cvt_f16_f32_neon(size_t n, const void *x, float *y);

extern const pg_kernel_family pg_kernels_cvt_f32_f16;
extern const pg_kernel_family pg_kernels_cvt_f16_f32;

#endif

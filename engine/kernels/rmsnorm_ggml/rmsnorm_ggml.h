/* rmsnorm_ggml.h - one row of RMSNorm with llama.cpp's rounding points:
 *
 *   sum   = sum of (double)(x[i] * x[i])       (each square rounded in float)
 *   scale = 1.0f / sqrtf((float)(sum / n) + eps)   (in float)
 *   y[i]  = (x[i] * scale) * gamma[i]              (in float, in that order)
 *
 * The GGUF decoder's norm (graph/RMSNorm with rounding = "ggml", bound by
 * exec/ops_norm.c's pg_bind_row): its activations are quantised to 8 bits
 * right after, and a one-ulp difference in y flips the rounding of some of
 * them, which then spreads through the layers; following ggml's order keeps
 * the decoder on llama.cpp's numbers (the rmsnorm family computes x * r *
 * gamma with r in double, or sums in float lanes).  The variants may sum
 * the double squares in another order (lanes), which can move the double
 * sum by a few of its ulps: the float scale, rounded from it, is then the
 * same but where the sum lies that close to a rounding boundary.
 * y may equal x (in place); gamma must not overlap y.  n = 0 does nothing. */
#ifndef PG_KERNELS_RMSNORM_GGML_H
#define PG_KERNELS_RMSNORM_GGML_H

#include <stddef.h>

#include "../variant.h"

/* The entry point: pg_f32_rmsnorm_fn (the rmsnorm member of pg_kernel_fn). */

void pg_f32_rmsnorm_ggml_c(size_t n, const float *x, const float *gamma, float eps, float *y);
void pg_f32_rmsnorm_ggml_avx2(size_t n, const float *x, const float *gamma, float eps, float *y);
void pg_f32_rmsnorm_ggml_neon(size_t n, const float *x, const float *gamma, float eps, float *y);

extern const pg_kernel_family pg_kernels_rmsnorm_ggml;

#endif

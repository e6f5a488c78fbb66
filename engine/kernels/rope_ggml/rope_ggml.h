/* rope_ggml.h - the GGUF decoder's rotary position embedding (RoPE) in
 * ggml's two pair orders, for rows rows of heads heads of hd floats:
 *
 *   normal (neox == 0, llama): pair i of a head is (x[2i], x[2i + 1])
 *   NeoX   (neox != 0, qwen2/3, gemma, phi3): pair i is (x[i], x[i + n_rot/2])
 *
 * for i < n_rot / 2 (only the first n_rot dims of a head turn: partial
 * rotary leaves dims n_rot..hd-1 as they are), each pair (a, b) becoming
 *
 *   a' = a c[i] - b s[i]        b' = a s[i] + b c[i]
 *
 * where row r of x starts at x + r ld, its heads hd floats apart, and its
 * angles are c = cos_tab + r ld_cs, s = sin_tab + r ld_cs (n_rot / 2 each:
 * the cos / sin rows of that row's position; ld_cs = n_rot / 2 walks
 * consecutive positions of the decoder's tables).  In place; ld and ld_cs
 * count floats; rows, heads or n_rot may be 0 (nothing to do).  n_rot is
 * even and at most hd, hd at most 256; any n_rot / 2 (odd, or not a
 * multiple of the vector width: nothing past it is read or written).
 *
 * Every variant rounds as the reference: both products rounded to float,
 * then one subtraction or addition - never a fused multiply-add - so the
 * results are the reference's bit for bit (a c - b s equals a c + b (-s)
 * exactly, and the addition commutes, so a variant may hold -s and add).
 * x86: AVX-512F (zmm, masked tails), AVX2 (ymm, vmaskmovps tails); AArch64:
 * NEON (ld2 / st2 split the normal order's pairs). */
#ifndef PG_KERNELS_ROPE_GGML_H
#define PG_KERNELS_ROPE_GGML_H

#include <stddef.h>

#include "../variant.h"

#define PG_ROPE_MAX_HD 256

void pg_f32_rope_ggml_c(size_t rows, size_t ld, size_t heads, size_t hd, size_t n_rot, int neox,
                        const float *cos_tab, const float *sin_tab, size_t ld_cs, float *x);
void pg_f32_rope_ggml_avx512f(size_t rows, size_t ld, size_t heads, size_t hd, size_t n_rot, int neox,
                              const float *cos_tab, const float *sin_tab, size_t ld_cs, float *x);
void pg_f32_rope_ggml_avx2(size_t rows, size_t ld, size_t heads, size_t hd, size_t n_rot, int neox,
                           const float *cos_tab, const float *sin_tab, size_t ld_cs, float *x);
void pg_f32_rope_ggml_neon(size_t rows, size_t ld, size_t heads, size_t hd, size_t n_rot, int neox,
                           const float *cos_tab, const float *sin_tab, size_t ld_cs, float *x);

extern const pg_kernel_family pg_kernels_rope_ggml;

#endif

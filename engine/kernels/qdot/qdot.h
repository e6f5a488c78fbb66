/* qdot.h - quantised dot products as llama.cpp defines them, and the
 * quantisation of activations they consume.
 *
 * The weight types come from GGUF files (q8_0, q4_1); activations are
 * quantised on the fly per block of 32 to the matching type:
 *   q8_0 weights . q8_0 activations:  sum_b d_w d_a * sum_j w_j a_j
 *   q4_0 weights . q8_0 activations:  sum_b d_w d_a * sum_j (q_j - 8) a_j
 *   q4_1 weights . q8_1 activations:  sum_b d_w d_a * sum_j q_j a_j + m_w * s_a
 * where q8_1 carries s = d_a * sum_j a_j so the q4_1 offset m costs one
 * multiply per block.  Block layouts (bytes, little-endian):
 *   q8_0: f16 d, int8 q[32]                      (34)
 *   q8_1: f16 d, f16 s, int8 q[32]               (36)
 *   q4_0: f16 d, uint8 nibbles[16]               (18; j low nibble, j+16 high)
 *   q4_1: f16 d, f16 m, uint8 nibbles[16]        (20; j low nibble, j+16 high)
 * The C references here are the oracle for the assembly variants; each op
 * has its own variant table (C reference last).  The quantisers have
 * AVX2 and NEON variants, byte-exact with the reference; the products over
 * whole matrices are qgemv/ and qgemm/ (the single dot products here stay
 * C only: they are the formula those kernels are checked against). */
#ifndef PG_KERNELS_QDOT_H
#define PG_KERNELS_QDOT_H

#include <stddef.h>

#include "../variant.h"

/* The entry points, members of pg_kernel_fn (kernel_fn.h):
 *   pg_quantize_row_fn (quantize): n (a multiple of 32) activations -> n / 32 blocks at y;
 *   pg_vec_dot_fn (vec_dot): *s = dot of n elements, weights w (blocks) . activations a (blocks). */

void pg_quantize_row_q8_0_c(size_t n, const float *x, void *y);
void pg_quantize_row_q8_1_c(size_t n, const float *x, void *y);
void pg_quantize_row_q8_0_avx2(size_t n, const float *x, void *y);
void pg_quantize_row_q8_1_avx2(size_t n, const float *x, void *y);
void pg_quantize_row_q8_0_neon(size_t n, const float *x, void *y);
void pg_quantize_row_q8_1_neon(size_t n, const float *x, void *y);
void pg_vec_dot_q8_0_q8_0_c(size_t n, const void *w, const void *a, float *s);
void pg_vec_dot_q4_0_q8_0_c(size_t n, const void *w, const void *a, float *s);
void pg_vec_dot_q4_1_q8_1_c(size_t n, const void *w, const void *a, float *s);

extern const pg_kernel_family pg_kernels_quantize_q8_0;
extern const pg_kernel_family pg_kernels_quantize_q8_1;
extern const pg_kernel_family pg_kernels_qdot_q8_0_q8_0;
extern const pg_kernel_family pg_kernels_qdot_q4_1_q8_1;

#endif

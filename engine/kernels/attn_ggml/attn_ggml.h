/* attn_ggml.h - the two products of the GGUF decoder's attention in the
 * order ggml's CPU backend sums them (ggml_vec_dot_f16 built for AVX-512:
 * four accumulators of 16 lanes over steps of 64 elements, folded 0+2,
 * 1+3, then 0+1, then the 16 lanes by halves - 8+8, 4+4, (0+1)+(2+3); the
 * elements past the last whole step added one by one in double):
 *
 *   attn_kq:  s[j] = q . k_j                   for j < n, k_j = k + j ldk
 *             (the scores of one query against n cached keys)
 *   attn_pv:  out[d] = sum_j p[j] v[j ldv + d]  for d < hd
 *             (ggml computes each out[d] as a dot over j of V's transposed
 *             cache: the same folds, over j; acc is 64 hd floats of
 *             scratch, accumulator a lane l's sums at acc[(16 a + l) hd])
 *
 * Every operand is an f16 value (llm_attention.c rounds Q, K, V and the
 * softmax to f16 where llama.cpp holds them in f16), so each product is
 * exact in f32 and a fused multiply-add rounds as the product and the add
 * do: only the order of the additions can differ, and every variant keeps
 * this one - the results are the reference's bit for bit.  hd is a
 * multiple of 16 from 16 to 256 (llm_arch.c refuses other heads); ldk and
 * ldv count floats; n >= 0. */
#ifndef PG_KERNELS_ATTN_GGML_H
#define PG_KERNELS_ATTN_GGML_H

#include <stddef.h>

#include "../variant.h"

#define PG_ATTN_MAX_HD 256

void pg_f32_attn_kq_ggml_c(size_t n, size_t hd, const float *q, const float *k, size_t ldk, float *s);
void pg_f32_attn_pv_ggml_c(size_t n, size_t hd, const float *p, const float *v, size_t ldv, float *acc,
                           float *out);
void pg_f32_attn_kq_ggml_avx512f(size_t n, size_t hd, const float *q, const float *k, size_t ldk, float *s);
void pg_f32_attn_pv_ggml_avx512f(size_t n, size_t hd, const float *p, const float *v, size_t ldv, float *acc,
                                 float *out);
void pg_f32_attn_kq_ggml_avx2_fma3(size_t n, size_t hd, const float *q, const float *k, size_t ldk, float *s);
void pg_f32_attn_pv_ggml_avx2_fma3(size_t n, size_t hd, const float *p, const float *v, size_t ldv, float *acc,
                                   float *out);
void pg_f32_attn_kq_ggml_neon(size_t n, size_t hd, const float *q, const float *k, size_t ldk, float *s);
void pg_f32_attn_pv_ggml_neon(size_t n, size_t hd, const float *p, const float *v, size_t ldv, float *acc,
                              float *out);

extern const pg_kernel_family pg_kernels_attn_kq_ggml;
extern const pg_kernel_family pg_kernels_attn_pv_ggml;

#endif

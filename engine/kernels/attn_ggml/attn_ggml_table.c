/* attn_ggml_table.c - the variant tables of attn_kq_ggml and attn_pv_ggml. */
#include "attn_ggml.h"

#define X86_AVX2 (PG_CPU_AVX2 | PG_CPU_FMA)
#define X86_AVX512 (X86_AVX2 | PG_CPU_AVX512F)

static const pg_variant kq[] = {
#if defined(__x86_64__)
    { "f32_attn_kq_ggml_avx512f", "avx512", X86_AVX512, .fn = { .attn_kq = pg_f32_attn_kq_ggml_avx512f }, NULL },
    { "f32_attn_kq_ggml_avx2_fma3", "avx2", X86_AVX2, .fn = { .attn_kq = pg_f32_attn_kq_ggml_avx2_fma3 }, NULL },
#endif
#if defined(__aarch64__)
    { "f32_attn_kq_ggml_neon", "neon", PG_CPU_NEON, .fn = { .attn_kq = pg_f32_attn_kq_ggml_neon }, NULL },
#endif
    { "f32_attn_kq_ggml_c", "c", 0, .fn = { .attn_kq = pg_f32_attn_kq_ggml_c }, NULL },
};

static const pg_variant pv[] = {
#if defined(__x86_64__)
    { "f32_attn_pv_ggml_avx512f", "avx512", X86_AVX512, .fn = { .attn_pv = pg_f32_attn_pv_ggml_avx512f }, NULL },
    { "f32_attn_pv_ggml_avx2_fma3", "avx2", X86_AVX2, .fn = { .attn_pv = pg_f32_attn_pv_ggml_avx2_fma3 }, NULL },
#endif
#if defined(__aarch64__)
    { "f32_attn_pv_ggml_neon", "neon", PG_CPU_NEON, .fn = { .attn_pv = pg_f32_attn_pv_ggml_neon }, NULL },
#endif
    { "f32_attn_pv_ggml_c", "c", 0, .fn = { .attn_pv = pg_f32_attn_pv_ggml_c }, NULL },
};

const pg_kernel_family pg_kernels_attn_kq_ggml = {
    "attn_kq_ggml", "the scores q . k_j of one query against n cached keys, in ggml's summation order "
    "(f16-valued operands: exact products): the GGUF decoder's attention",
    kq, PG_COUNTOF(kq), PG_KERNEL_FN_attn_kq };

const pg_kernel_family pg_kernels_attn_pv_ggml = {
    "attn_pv_ggml", "one head's output sum_j p[j] v_j over n cached values, in ggml's summation order "
    "(f16-valued operands: exact products): the GGUF decoder's attention",
    pv, PG_COUNTOF(pv), PG_KERNEL_FN_attn_pv };

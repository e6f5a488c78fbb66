/* gemm_bf16_table.c - the variant tables of gemm_bf16 and cvt_bf16, best
 * first, C last. */
#include "gemm_bf16.h"

#if defined(__x86_64__)
static const pg_bf16_params p_32x32 = { 32, 32, 32, pg_amx_tile_release, 4e7 };
static const pg_bf16_params p_12x32 = { 12, 32, 2, NULL, 2e6 };
#define X86_AVX512BF16 (PG_CPU_AVX512F | PG_CPU_AVX512BW | PG_CPU_AVX512VL | PG_CPU_AVX512DQ | \
                        PG_CPU_AVX2 | PG_CPU_FMA | PG_CPU_AVX512BF16)
#endif
#if defined(__aarch64__)
static const pg_bf16_params p_4x32_mmla = { 4, 32, 4, NULL, 2e6 };
static const pg_bf16_params p_2x32 = { 2, 32, 8, NULL, 2e6 };
#endif
static const pg_bf16_params p_4x32 = { 4, 32, 2, NULL, 2e6 };

static const pg_variant gemm_variants[] = {
#if defined(__x86_64__)
    { "bf16_gemm_32x32_amx", "amx", X86_AVX512BF16 | PG_CPU_AMXBF16,
      .fn = { .gemm_bf16 = pg_bf16_gemm_32x32_amx }, &p_32x32 },
    { "bf16_gemm_12x32_avx512bf16", "avx512bf16", X86_AVX512BF16,
      .fn = { .gemm_bf16 = pg_bf16_gemm_12x32_avx512bf16 }, &p_12x32 },
#endif
#if defined(__aarch64__)
    { "bf16_gemm_4x32_bfmmla", "i8mm", PG_CPU_NEON | PG_CPU_BF16,
      .fn = { .gemm_bf16 = pg_bf16_gemm_4x32_bfmmla }, &p_4x32_mmla },
    { "bf16_gemm_2x32_neon", "i8mm", PG_CPU_NEON | PG_CPU_BF16,
      .fn = { .gemm_bf16 = pg_bf16_gemm_2x32_neon }, &p_2x32 },
#endif
    { "bf16_gemm_4x32_c", "c", 0, .fn = { .gemm_bf16 = pg_bf16_gemm_4x32_c }, &p_4x32 },
};

const pg_kernel_family pg_kernels_gemm_bf16 = {
    "gemm_bf16", "C = A*B (+bias) (+ReLU/GELU), bf16 inputs, fp32 accumulate, B packed once",
    gemm_variants, PG_COUNTOF(gemm_variants), PG_KERNEL_FN_gemm_bf16 };

static const pg_variant cvt_variants[] = {
#if defined(__x86_64__)
    { "cvt_f32_bf16_avx512bf16", "avx512bf16", X86_AVX512BF16,
      .fn = { .cvt_bf16 = pg_cvt_f32_bf16_avx512bf16 }, NULL },
#endif
    { "cvt_f32_bf16_c", "c", 0, .fn = { .cvt_bf16 = pg_cvt_f32_bf16_c }, NULL },
};

const pg_kernel_family pg_kernels_cvt_bf16 = {
    "cvt_bf16", "fp32 -> bf16, round to nearest even",
    cvt_variants, PG_COUNTOF(cvt_variants), PG_KERNEL_FN_cvt_bf16 };

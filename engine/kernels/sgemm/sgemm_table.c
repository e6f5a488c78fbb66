/* sgemm_table.c - the variant table of sgemm, best first, C last. */
#include "sgemm.h"

#if defined(__x86_64__)
static const pg_sgemm_params p_12x32 = { 12, 32 };
static const pg_sgemm_params p_6x16 = { 6, 16 };
#endif
#if defined(__aarch64__)
static const pg_sgemm_params p_8x12 = { 8, 12 };
#endif
static const pg_sgemm_params p_4x8 = { 4, 8 };

static const pg_variant variants[] = {
#if defined(__x86_64__)
    { "f32_gemm_12x32_avx512f", "avx512",
      PG_CPU_AVX512F | PG_CPU_AVX512BW | PG_CPU_AVX512VL | PG_CPU_AVX512DQ | PG_CPU_AVX2 |
          PG_CPU_FMA,
      .fn = { .sgemm = pg_f32_gemm_12x32_avx512f }, &p_12x32 },
    { "f32_gemm_6x16_avx2_fma3", "avx2", PG_CPU_AVX2 | PG_CPU_FMA,
      .fn = { .sgemm = pg_f32_gemm_6x16_avx2_fma3 }, &p_6x16 },
#endif
#if defined(__aarch64__)
    { "f32_gemm_8x12_neon", "neon", PG_CPU_NEON, .fn = { .sgemm = pg_f32_gemm_8x12_neon }, &p_8x12 },
#endif
    { "f32_gemm_4x8_c", "c", 0, .fn = { .sgemm = pg_f32_gemm_4x8_c }, &p_4x8 },
};

const pg_kernel_family pg_kernels_sgemm = { "sgemm", "C = A*B (+bias) (+ReLU/GELU), fp32, B packed once",
                            variants, PG_COUNTOF(variants), PG_KERNEL_FN_sgemm };

/* gemv_panels_table.c - the variant table of gemv_panels, best first, C
 * reference last.  Each SGEMM kernel's panel width has its assembly reader
 * (32 columns for AVX-512, 16 for AVX2, 12 for NEON); ops_matmul.c binds
 * this only where an assembly variant of the weight's width fits, and a
 * weight of another width stays on SGEMM. */
#include "gemv_panels.h"

#if defined(__x86_64__)
static const pg_gemv_panels_params p_32 = { 32 };
static const pg_gemv_panels_params p_16 = { 16 };
#endif
#if defined(__aarch64__)
static const pg_gemv_panels_params p_12 = { 12 };
#endif
static const pg_gemv_panels_params p_any = { 0 };

static const pg_variant variants[] = {
#if defined(__x86_64__)
    { "f32_gemv_panels32_avx512f", "avx512", PG_CPU_AVX512F,
      .fn = { .gemv_panels = pg_f32_gemv_panels32_avx512f }, &p_32 },
    { "f32_gemv_panels16_avx2_fma3", "avx2", PG_CPU_AVX2 | PG_CPU_FMA,
      .fn = { .gemv_panels = pg_f32_gemv_panels16_avx2_fma3 }, &p_16 },
#endif
#if defined(__aarch64__)
    { "f32_gemv_panels12_neon", "neon", PG_CPU_NEON,
      .fn = { .gemv_panels = pg_f32_gemv_panels12_neon }, &p_12 },
#endif
    { "f32_gemv_panels_c", "c", 0, .fn = { .gemv_panels = pg_f32_gemv_panels_c }, &p_any },
};

const pg_kernel_family pg_kernels_gemv_panels = {
    "gemv_panels", "y = x . B (+ bias), fp32, M = 1, B packed in SGEMM's panels",
    variants, PG_COUNTOF(variants), PG_KERNEL_FN_gemv_panels };

/* gemv_table.c - the variant table of gemv, best first, C reference last. */
#include "gemv.h"

static const pg_variant variants[] = {
#if defined(__x86_64__)
    { "f32_gemv_4row_avx512f", "avx512",
      PG_CPU_AVX512F | PG_CPU_AVX512BW | PG_CPU_AVX512VL | PG_CPU_AVX512DQ | PG_CPU_AVX2 |
          PG_CPU_FMA,
      .fn = { .gemv = pg_f32_gemv_4row_avx512f }, NULL },
    { "f32_gemv_4row_avx2_fma3", "avx2", PG_CPU_AVX2 | PG_CPU_FMA,
      .fn = { .gemv = pg_f32_gemv_4row_avx2_fma3 }, NULL },
#endif
#if defined(__aarch64__)
    { "f32_gemv_4row_neon", "neon", PG_CPU_NEON, .fn = { .gemv = pg_f32_gemv_4row_neon }, NULL },
#endif
    { "f32_gemv_c", "c", 0, .fn = { .gemv = pg_f32_gemv_c }, NULL },
};

const pg_kernel_family pg_kernels_gemv = { "gemv", "y = x . B (+ bias), fp32, M = 1, B row-major K x N",
                           variants, PG_COUNTOF(variants), PG_KERNEL_FN_gemv };

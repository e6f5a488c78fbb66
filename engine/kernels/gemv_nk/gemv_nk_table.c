/* gemv_nk_table.c - the variant table of gemv_nk, best first, C reference last. */
#include "gemv_nk.h"

static const pg_variant variants[] = {
#if defined(__x86_64__)
    { "f32_gemv_nk_4row_avx2_fma3", "avx2", PG_CPU_AVX2 | PG_CPU_FMA,
      .fn = { .gemv_nk = pg_f32_gemv_nk_4row_avx2_fma3 }, NULL },
#endif
#if defined(__aarch64__)
    { "f32_gemv_nk_4row_neon", "neon", PG_CPU_NEON, .fn = { .gemv_nk = pg_f32_gemv_nk_4row_neon }, NULL },
#endif
    { "f32_gemv_nk_c", "c", 0, .fn = { .gemv_nk = pg_f32_gemv_nk_c }, NULL },
};

const pg_kernel_family pg_kernels_gemv_nk = { "gemv_nk", "y = W . x (+ bias), fp32, M = 1, W row-major N x K (nn.Linear)",
                              variants, PG_COUNTOF(variants), PG_KERNEL_FN_gemv_nk };

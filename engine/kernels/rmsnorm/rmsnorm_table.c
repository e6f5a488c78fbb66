/* rmsnorm_table.c - the variant table of rmsnorm. */
#include "rmsnorm.h"

static const pg_variant variants[] = {
#if defined(__x86_64__)
    { "f32_rmsnorm_avx2_fma3", "avx2", PG_CPU_AVX2 | PG_CPU_FMA,
      .fn = { .rmsnorm = pg_f32_rmsnorm_avx2_fma3 }, NULL },
#endif
#if defined(__aarch64__)
    { "f32_rmsnorm_neon", "neon", PG_CPU_NEON, .fn = { .rmsnorm = pg_f32_rmsnorm_neon }, NULL },
#endif
    { "f32_rmsnorm_c", "c", 0, .fn = { .rmsnorm = pg_f32_rmsnorm_c }, NULL },
};

const pg_kernel_family pg_kernels_rmsnorm = { "rmsnorm", "one row: y = x / sqrt(mean(x^2) + eps) * gamma (fp32)",
                              variants, PG_COUNTOF(variants), PG_KERNEL_FN_rmsnorm };

/* layernorm_table.c - the variant table of layernorm. */
#include "layernorm.h"

static const pg_variant variants[] = {
#if defined(__x86_64__)
    { "f32_layernorm_avx2_fma3", "avx2", PG_CPU_AVX2 | PG_CPU_FMA,
      .fn = { .layernorm = pg_f32_layernorm_avx2_fma3 }, NULL },
#endif
#if defined(__aarch64__)
    { "f32_layernorm_neon", "neon", PG_CPU_NEON, .fn = { .layernorm = pg_f32_layernorm_neon }, NULL },
#endif
    { "f32_layernorm_c", "c", 0, .fn = { .layernorm = pg_f32_layernorm_c }, NULL },
};

const pg_kernel_family pg_kernels_layernorm = { "layernorm",
                                "one row: y = (x - mean) / sqrt(var + eps) * gamma + beta (fp32)",
                                variants, PG_COUNTOF(variants), PG_KERNEL_FN_layernorm };

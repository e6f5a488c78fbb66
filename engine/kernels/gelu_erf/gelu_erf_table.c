/* gelu_erf_table.c - the variant table of gelu_erf. */
#include "gelu_erf.h"

static const pg_variant variants[] = {
#if defined(__x86_64__)
    { "f32_gelu_erf_avx2_fma3", "avx2", PG_CPU_AVX2 | PG_CPU_FMA, .fn = { .unary = pg_f32_gelu_erf_avx2_fma3 }, NULL },
#endif
#if defined(__aarch64__)
    { "f32_gelu_erf_neon", "neon", PG_CPU_NEON, .fn = { .unary = pg_f32_gelu_erf_neon }, NULL },
#endif
    { "f32_gelu_erf_c", "c", 0, .fn = { .unary = pg_f32_gelu_erf_c }, NULL },
};

const pg_kernel_family pg_kernels_gelu_erf = { "gelu_erf", "y = 0.5 x (1 + erf(x / sqrt 2)) (fp32)", variants, PG_COUNTOF(variants), PG_KERNEL_FN_unary };

/* tanh_table.c - the variant table of tanh. */
#include "tanh.h"

static const pg_variant variants[] = {
#if defined(__x86_64__)
    { "f32_tanh_avx2_fma3", "avx2", PG_CPU_AVX2 | PG_CPU_FMA, .fn = { .unary = pg_f32_tanh_avx2_fma3 }, NULL },
#endif
#if defined(__aarch64__)
    { "f32_tanh_neon", "neon", PG_CPU_NEON, .fn = { .unary = pg_f32_tanh_neon }, NULL },
#endif
    { "f32_tanh_c", "c", 0, .fn = { .unary = pg_f32_tanh_c }, NULL },
};

const pg_kernel_family pg_kernels_tanh = { "tanh", "y = tanh(x) elementwise (fp32)", variants, PG_COUNTOF(variants), PG_KERNEL_FN_unary };

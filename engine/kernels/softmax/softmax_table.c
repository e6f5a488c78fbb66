/* softmax_table.c - the variant table of softmax. */
#include "softmax.h"

static const pg_variant variants[] = {
#if defined(__x86_64__)
    { "f32_softmax_avx512f", "avx512", PG_CPU_AVX512F | PG_CPU_AVX2 | PG_CPU_FMA,
      .fn = { .softmax = pg_f32_softmax_avx512f }, NULL },
    { "f32_softmax_avx2_fma3", "avx2", PG_CPU_AVX2 | PG_CPU_FMA,
      .fn = { .softmax = pg_f32_softmax_avx2_fma3 }, NULL },
#endif
#if defined(__aarch64__)
    { "f32_softmax_neon", "neon", PG_CPU_NEON, .fn = { .softmax = pg_f32_softmax_neon }, NULL },
#endif
    { "f32_softmax_c", "c", 0, .fn = { .softmax = pg_f32_softmax_c }, NULL },
};

const pg_kernel_family pg_kernels_softmax = { "softmax", "one row: y = softmax(scale * x + mask) (fp32)", variants,
                              PG_COUNTOF(variants), PG_KERNEL_FN_softmax };

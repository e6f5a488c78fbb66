/* vadd_table.c - the variant table of vadd. */
#include "vadd.h"

static const pg_variant variants[] = {
#if defined(__x86_64__)
    { "f32_vadd_avx2", "avx2", PG_CPU_AVX2, .fn = { .binary = pg_f32_vadd_avx2 }, NULL },
#endif
#if defined(__aarch64__)
    { "f32_vadd_neon", "neon", PG_CPU_NEON, .fn = { .binary = pg_f32_vadd_neon }, NULL },
#endif
    { "f32_vadd_c", "c", 0, .fn = { .binary = pg_f32_vadd_c }, NULL },
};

const pg_kernel_family pg_kernels_vadd = { "vadd", "y = a + b elementwise (fp32)", variants, PG_COUNTOF(variants), PG_KERNEL_FN_binary };

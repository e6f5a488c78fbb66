/* vmul_table.c - the variant table of vmul. */
#include "vmul.h"

static const pg_variant variants[] = {
#if defined(__x86_64__)
    { "f32_vmul_avx2", "avx2", PG_CPU_AVX2, .fn = { .binary = pg_f32_vmul_avx2 }, NULL },
#endif
#if defined(__aarch64__)
    { "f32_vmul_neon", "neon", PG_CPU_NEON, .fn = { .binary = pg_f32_vmul_neon }, NULL },
#endif
    { "f32_vmul_c", "c", 0, .fn = { .binary = pg_f32_vmul_c }, NULL },
};

const pg_kernel_family pg_kernels_vmul = { "vmul", "y = a * b elementwise (fp32)", variants, PG_COUNTOF(variants), PG_KERNEL_FN_binary };

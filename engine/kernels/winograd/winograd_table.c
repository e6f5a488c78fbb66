/* winograd_table.c - the variant tables of wino_in_f23 and wino_out_f23,
 * best first, C reference last. */
#include "winograd.h"

static const pg_variant in_variants[] = {
#if defined(__x86_64__)
    { "f32_wino_in_f23_avx512f", "avx512", PG_CPU_AVX512F | PG_CPU_AVX2 | PG_CPU_FMA,
      .fn = { .wino_in = pg_f32_wino_in_f23_avx512f }, NULL },
    { "f32_wino_in_f23_avx2", "avx2", PG_CPU_AVX2 | PG_CPU_FMA,
      .fn = { .wino_in = pg_f32_wino_in_f23_avx2 }, NULL },
#endif
    { "f32_wino_in_f23_c", "c", 0, .fn = { .wino_in = pg_f32_wino_in_f23_c }, NULL },
};

static const pg_variant out_variants[] = {
#if defined(__x86_64__)
    { "f32_wino_out_f23_avx512f", "avx512", PG_CPU_AVX512F | PG_CPU_AVX2 | PG_CPU_FMA,
      .fn = { .wino_out = pg_f32_wino_out_f23_avx512f }, NULL },
    { "f32_wino_out_f23_avx2", "avx2", PG_CPU_AVX2 | PG_CPU_FMA,
      .fn = { .wino_out = pg_f32_wino_out_f23_avx2 }, NULL },
#endif
    { "f32_wino_out_f23_c", "c", 0, .fn = { .wino_out = pg_f32_wino_out_f23_c }, NULL },
};

const pg_kernel_family pg_kernels_wino_in_f23 = {
    "wino_in_f23", "Winograd F(2x2,3x3) input transform, one NCHW16c tile row: U = B^T d B",
    in_variants, PG_COUNTOF(in_variants), PG_KERNEL_FN_wino_in };
const pg_kernel_family pg_kernels_wino_out_f23 = {
    "wino_out_f23", "Winograd F(2x2,3x3) output transform, one NCHW16c tile row: A^T M A + bias "
    "(+ skip) + clamp",
    out_variants, PG_COUNTOF(out_variants), PG_KERNEL_FN_wino_out };

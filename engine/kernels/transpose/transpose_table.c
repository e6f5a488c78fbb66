/* transpose_table.c - the variant table of transpose, best first, C
 * reference last. */
#include "transpose.h"

static const pg_transpose_params t1 = { 1 };
#if defined(__x86_64__)
static const pg_transpose_params t16 = { 16 }, t8 = { 8 };
#endif
#if defined(__aarch64__)
static const pg_transpose_params t4 = { 4 };
#endif

static const pg_variant variants[] = {
#if defined(__x86_64__)
    { "f32_transpose_avx512f", "avx512", PG_CPU_AVX512F | PG_CPU_AVX2,
      .fn = { .transpose = pg_f32_transpose_avx512f }, &t16 },
    { "f32_transpose_avx2", "avx2", PG_CPU_AVX2, .fn = { .transpose = pg_f32_transpose_avx2 }, &t8 },
#endif
#if defined(__aarch64__)
    { "f32_transpose_neon", "neon", PG_CPU_NEON, .fn = { .transpose = pg_f32_transpose_neon }, &t4 },
#endif
    { "f32_transpose_c", "c", 0, .fn = { .transpose = pg_f32_transpose_c }, &t1 },
};

const pg_kernel_family pg_kernels_transpose = {
    "transpose", "block transpose of 4-byte elements, whole tiles (the Transpose executor's planes)",
    variants, PG_COUNTOF(variants), PG_KERNEL_FN_transpose };

/* round_f16_table.c - the variant table of round_f16. */
#include "round_f16.h"

#define X86_F16C (PG_CPU_AVX | PG_CPU_F16C)
#define X86_AVX512 (X86_F16C | PG_CPU_AVX512F)

static const pg_variant variants[] = {
#if defined(__x86_64__)
    { "f32_round_f16_avx512f", "avx512", X86_AVX512, .fn = { .round_f16 = pg_f32_round_f16_avx512f }, NULL },
    { "f32_round_f16_f16c", "avx", X86_F16C, .fn = { .round_f16 = pg_f32_round_f16_f16c }, NULL },
#elif defined(__aarch64__)
    { "f32_round_f16_neon", "neon", PG_CPU_NEON, .fn = { .round_f16 = pg_f32_round_f16_neon }, NULL },
#endif
    { "f32_round_f16_c", "c", 0, .fn = { .round_f16 = pg_f32_round_f16_c }, NULL },
};

const pg_kernel_family pg_kernels_round_f16 = {
    "round_f16", "x (times scale unless 0) -> the nearest f16 value, kept as fp32 (nearest even, "
    "overflow to inf): the GGUF decoder's f16 roundings of K, V, Q and the softmax",
    variants, PG_COUNTOF(variants), PG_KERNEL_FN_round_f16 };

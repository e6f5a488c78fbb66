/* rope_ggml_table.c - the variant table of rope_ggml. */
#include "rope_ggml.h"

#define X86_AVX2 (PG_CPU_AVX | PG_CPU_AVX2)
#define X86_AVX512 (X86_AVX2 | PG_CPU_AVX512F)

static const pg_variant variants[] = {
#if defined(__x86_64__)
    { "f32_rope_ggml_avx512f", "avx512", X86_AVX512, .fn = { .rope = pg_f32_rope_ggml_avx512f }, NULL },
    { "f32_rope_ggml_avx2", "avx2", X86_AVX2, .fn = { .rope = pg_f32_rope_ggml_avx2 }, NULL },
#elif defined(__aarch64__)
    { "f32_rope_ggml_neon", "neon", PG_CPU_NEON, .fn = { .rope = pg_f32_rope_ggml_neon }, NULL },
#endif
    { "f32_rope_ggml_c", "c", 0, .fn = { .rope = pg_f32_rope_ggml_c }, NULL },
};

const pg_kernel_family pg_kernels_rope_ggml = {
    "rope_ggml", "rotary position embedding of the first n_rot dims of each head, ggml's normal or "
    "NeoX pair order, rows at their own positions (unfused products): the GGUF decoder's RoPE",
    variants, PG_COUNTOF(variants), PG_KERNEL_FN_rope };

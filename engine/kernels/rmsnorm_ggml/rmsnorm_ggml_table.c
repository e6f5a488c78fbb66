/* rmsnorm_ggml_table.c - the variant table of rmsnorm_ggml. */
#include "rmsnorm_ggml.h"

static const pg_variant variants[] = {
#if defined(__x86_64__)
    { "f32_rmsnorm_ggml_avx2", "avx2", PG_CPU_AVX2, .fn = { .rmsnorm = pg_f32_rmsnorm_ggml_avx2 }, NULL },
#endif
#if defined(__aarch64__)
    { "f32_rmsnorm_ggml_neon", "neon", PG_CPU_NEON, .fn = { .rmsnorm = pg_f32_rmsnorm_ggml_neon }, NULL },
#endif
    { "f32_rmsnorm_ggml_c", "c", 0, .fn = { .rmsnorm = pg_f32_rmsnorm_ggml_c }, NULL },
};

const pg_kernel_family pg_kernels_rmsnorm_ggml = {
    "rmsnorm_ggml", "one row of RMSNorm in llama.cpp's rounding order (float squares summed in double, "
    "float scale, (x * scale) * gamma): the GGUF decoder's norm",
    variants, PG_COUNTOF(variants), PG_KERNEL_FN_rmsnorm };

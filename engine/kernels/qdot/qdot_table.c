/* qdot_table.c - the variant tables of the quantised dot products and the
 * activation quantisers, best first, C reference last. */
#include "qdot.h"

static const pg_variant quantize_q8_0[] = {
#if defined(__x86_64__)
    { "quantize_q8_0_avx2", "avx2", PG_CPU_AVX2 | PG_CPU_F16C,
      .fn = { .quantize = pg_quantize_row_q8_0_avx2 }, NULL },
#elif defined(__aarch64__)
    { "quantize_q8_0_neon", "neon", PG_CPU_NEON, .fn = { .quantize = pg_quantize_row_q8_0_neon }, NULL },
#endif
    { "quantize_q8_0_c", "c", 0, .fn = { .quantize = pg_quantize_row_q8_0_c }, NULL },
};
static const pg_variant quantize_q8_1[] = {
#if defined(__x86_64__)
    { "quantize_q8_1_avx2", "avx2", PG_CPU_AVX2 | PG_CPU_F16C,
      .fn = { .quantize = pg_quantize_row_q8_1_avx2 }, NULL },
#elif defined(__aarch64__)
    { "quantize_q8_1_neon", "neon", PG_CPU_NEON, .fn = { .quantize = pg_quantize_row_q8_1_neon }, NULL },
#endif
    { "quantize_q8_1_c", "c", 0, .fn = { .quantize = pg_quantize_row_q8_1_c }, NULL },
};
static const pg_variant qdot_q8_0_q8_0[] = {
    { "qdot_q8_0_q8_0_c", "c", 0, .fn = { .vec_dot = pg_vec_dot_q8_0_q8_0_c }, NULL },
};
static const pg_variant qdot_q4_1_q8_1[] = {
    { "qdot_q4_1_q8_1_c", "c", 0, .fn = { .vec_dot = pg_vec_dot_q4_1_q8_1_c }, NULL },
};

const pg_kernel_family pg_kernels_quantize_q8_0 = { "quantize_q8_0", "f32 activations -> q8_0 blocks of 32",
                                    quantize_q8_0, PG_COUNTOF(quantize_q8_0), PG_KERNEL_FN_quantize };
const pg_kernel_family pg_kernels_quantize_q8_1 = { "quantize_q8_1", "f32 activations -> q8_1 blocks (with d*sum)",
                                    quantize_q8_1, PG_COUNTOF(quantize_q8_1), PG_KERNEL_FN_quantize };
const pg_kernel_family pg_kernels_qdot_q8_0_q8_0 = { "qdot_q8_0_q8_0", "dot of q8_0 weights and q8_0 activations",
                                     qdot_q8_0_q8_0, PG_COUNTOF(qdot_q8_0_q8_0), PG_KERNEL_FN_vec_dot };
const pg_kernel_family pg_kernels_qdot_q4_1_q8_1 = { "qdot_q4_1_q8_1", "dot of q4_1 weights and q8_1 activations",
                                     qdot_q4_1_q8_1, PG_COUNTOF(qdot_q4_1_q8_1), PG_KERNEL_FN_vec_dot };

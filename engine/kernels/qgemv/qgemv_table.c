/* qgemv_table.c - the variant tables of the quantised GEMV, one per weight
 * type, best first, C reference last.  The x86 kernels need F16C for the
 * scales (part of the avx2 level); the VNNI ones replace vpmaddubsw +
 * vpmaddwd by one vpdpbusd, the AVX-512 VNNI ones do two rows' blocks per
 * vpdpbusd; the AArch64 dotprod ones use sdot. */
#include "../../gguf/ggml_types.h"
#include "../kquant/kquant.h"
#include "qgemv.h"

#define X86_AVX2 (PG_CPU_AVX2 | PG_CPU_FMA | PG_CPU_F16C)

#define X86_AVX512VNNI (X86_AVX2 | PG_CPU_AVX512F | PG_CPU_AVX512BW | PG_CPU_AVX512VL | \
                        PG_CPU_AVX512VNNI)

#if defined(__x86_64__)
#define ROW_512(t)                                                                         \
    { "q" #t "_gemv_4row_avx512vnni", "avx512vnni", X86_AVX512VNNI,                        \
      .fn = { .qgemv = pg_q##t##_gemv_4row_avx512vnni }, NULL },
#define ROW_VNNI(t)                                                                        \
    { "q" #t "_gemv_4row_avxvnni", "avxvnni", X86_AVX2 | PG_CPU_AVXVNNI,                   \
      .fn = { .qgemv = pg_q##t##_gemv_4row_avxvnni }, NULL },
#define ROW_AVX2(t)                                                                        \
    { "q" #t "_gemv_4row_avx2", "avx2", X86_AVX2,                                          \
      .fn = { .qgemv = pg_q##t##_gemv_4row_avx2 }, NULL },
/* q8_0: the zmm kernel streams fastest; q4_*: it needs more shuffles per
 * block than the ymm AVX-VNNI one and runs ~10% behind it where a CPU has
 * both (Sapphire Rapids), so it comes after it there and serves the
 * AVX-512 VNNI CPUs without AVX-VNNI (Cascade Lake, Ice Lake) */
#define ASM_ROWS(t) ROW_VNNI(t) ROW_512(t) ROW_AVX2(t)
#define ASM_ROWS_Q8(t) ROW_512(t) ROW_VNNI(t) ROW_AVX2(t)
#elif defined(__aarch64__)
#define ASM_ROWS(t)                                                                        \
    { "q" #t "_gemv_4row_dotprod", "dotprod", PG_CPU_NEON | PG_CPU_DOTPROD,                \
      .fn = { .qgemv = pg_q##t##_gemv_4row_dotprod }, NULL },                              \
    { "q" #t "_gemv_4row_neon", "neon", PG_CPU_NEON,                                       \
      .fn = { .qgemv = pg_q##t##_gemv_4row_neon }, NULL },
#else
#define ASM_ROWS(t)
#endif
#ifndef ASM_ROWS_Q8
#define ASM_ROWS_Q8(t) ASM_ROWS(t)
#endif

static const pg_variant q4_0[] = {
    ASM_ROWS(4_0_q8_0)
    { "q4_0_q8_0_gemv_c", "c", 0, .fn = { .qgemv = pg_q4_0_q8_0_gemv_c }, NULL },
};
static const pg_variant q4_1[] = {
    ASM_ROWS(4_1_q8_1)
    { "q4_1_q8_1_gemv_c", "c", 0, .fn = { .qgemv = pg_q4_1_q8_1_gemv_c }, NULL },
};
static const pg_variant q8_0[] = {
    ASM_ROWS_Q8(8_0_q8_0)
    { "q8_0_q8_0_gemv_c", "c", 0, .fn = { .qgemv = pg_q8_0_q8_0_gemv_c }, NULL },
};

const pg_kernel_family pg_kernels_qgemv_q4_0 = { "qgemv_q4_0", "y = W . x, W q4_0 rows (N x K), x q8_0, M = 1",
                                 q4_0, PG_COUNTOF(q4_0), PG_KERNEL_FN_qgemv };
const pg_kernel_family pg_kernels_qgemv_q4_1 = { "qgemv_q4_1", "y = W . x, W q4_1 rows (N x K), x q8_1, M = 1",
                                 q4_1, PG_COUNTOF(q4_1), PG_KERNEL_FN_qgemv };
const pg_kernel_family pg_kernels_qgemv_q8_0 = { "qgemv_q8_0", "y = W . x, W q8_0 rows (N x K), x q8_0, M = 1",
                                 q8_0, PG_COUNTOF(q8_0), PG_KERNEL_FN_qgemv };

const pg_kernel_family *pg_qgemv_family(int wtype)
{
    switch (wtype) {
    case PG_GGML_Q4_0: return &pg_kernels_qgemv_q4_0;
    case PG_GGML_Q4_1: return &pg_kernels_qgemv_q4_1;
    case PG_GGML_Q8_0: return &pg_kernels_qgemv_q8_0;
    default: return pg_kquant_gemv_family(wtype);
    }
}

int pg_qgemv_act_type(int wtype)
{
    switch (wtype) {
    case PG_GGML_Q4_0:
    case PG_GGML_Q8_0: return PG_GGML_Q8_0;
    case PG_GGML_Q4_1: return PG_GGML_Q8_1;
    case PG_GGML_Q4_K:
    case PG_GGML_Q5_K:
    case PG_GGML_Q6_K: return PG_GGML_Q8_K;
    case PG_GGML_F16:
    case PG_GGML_BF16:
    case PG_GGML_F32: return PG_GGML_F32;
    default: return -1;
    }
}

size_t pg_qweights_k_multiple(int wtype)
{
    return pg_qgemv_act_type(wtype) == PG_GGML_Q8_K ? 256 : 32;
}

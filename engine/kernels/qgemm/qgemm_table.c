/* qgemm_table.c - the variant tables of the quantised GEMM, one per weight
 * type, best first, C reference last. */
#include "../../gguf/ggml_types.h"
#include "../kquant/kquant.h"
#include "qgemm.h"

#define X86_AVX2 (PG_CPU_AVX2 | PG_CPU_FMA | PG_CPU_F16C)

#if defined(__x86_64__)
#define ASM_ROWS(t)                                                                        \
    { "q" #t "_gemm_4x1_avxvnni", "avxvnni", X86_AVX2 | PG_CPU_AVXVNNI,                    \
      .fn = { .qgemm = pg_q##t##_gemm_4x1_avxvnni }, NULL },                               \
    { "q" #t "_gemm_4x1_avx2", "avx2", X86_AVX2,                                           \
      .fn = { .qgemm = pg_q##t##_gemm_4x1_avx2 }, NULL },
#elif defined(__aarch64__)
#define ASM_ROWS(t)                                                                        \
    { "q" #t "_gemm_4x1_dotprod", "dotprod", PG_CPU_NEON | PG_CPU_DOTPROD,                 \
      .fn = { .qgemm = pg_q##t##_gemm_4x1_dotprod }, NULL },                               \
    { "q" #t "_gemm_4x1_neon", "neon", PG_CPU_NEON,                                        \
      .fn = { .qgemm = pg_q##t##_gemm_4x1_neon }, NULL },
#else
#define ASM_ROWS(t)
#endif

#if defined(__x86_64__)
#define X86_AVX512VNNI (X86_AVX2 | PG_CPU_AVX512F | PG_CPU_AVX512BW | PG_CPU_AVX512VL | \
                        PG_CPU_AVX512VNNI)
/* the register-blocked panel GEMM (kquant_panel.c): 2-3x the 4x1 form at
 * M = 64 (3.4x the 4x6 for q8_0), first for q4_0 and q8_0 (as for the
 * k-quants).  It rounds differently from the GEMV (one fp32 product per
 * block and row against the GEMV's eight lanes per block): a prompt
 * evaluated as one batch and token by token give logits ~1% of their
 * scale apart on test_llm_archs' random-weight q8_0 files, where a K or V
 * value rounded to f16 on the other side of a tie moves the later rows -
 * as llama.cpp's own one batch and token by token do on the llama, qwen2
 * and qwen3 files (its prefill GEMM rounds differently from its dot
 * products too). */
#define PANEL_16X8(t)                                                                      \
    { "q" #t "_gemm_16x8_avx512vnni", "avx512vnni", X86_AVX512VNNI,                        \
      .fn = { .qgemm = pg_q##t##_gemm_16x8_avx512vnni }, NULL },
/* q8_0's GEMM in the AVX-512 GEMV's arithmetic (q8_gemm_4x6_avx512vnni.S):
 * the same bits as the GEMV a token at a time, four W rows against six X
 * rows - 2.5x the 4x1 kernel at M = 128, a third of the panel; after the
 * panel, reached by index (checkasm, bench_kernels) */
#define Q8_4X6                                                                             \
    { "q8_0_q8_0_gemm_4x6_avx512vnni", "avx512vnni", X86_AVX512VNNI,                       \
      .fn = { .qgemm = pg_q8_0_q8_0_gemm_4x6_avx512vnni }, NULL },
#else
#define PANEL_16X8(t)
#define Q8_4X6
#endif

static const pg_variant q4_0[] = {
    PANEL_16X8(4_0_q8_0)
    ASM_ROWS(4_0_q8_0)
    { "q4_0_q8_0_gemm_c", "c", 0, .fn = { .qgemm = pg_q4_0_q8_0_gemm_c }, NULL },
};
static const pg_variant q4_1[] = {
    ASM_ROWS(4_1_q8_1)
    { "q4_1_q8_1_gemm_c", "c", 0, .fn = { .qgemm = pg_q4_1_q8_1_gemm_c }, NULL },
};
static const pg_variant q8_0[] = {
    PANEL_16X8(8_0_q8_0)
    Q8_4X6
    ASM_ROWS(8_0_q8_0)
    { "q8_0_q8_0_gemm_c", "c", 0, .fn = { .qgemm = pg_q8_0_q8_0_gemm_c }, NULL },
};

const pg_kernel_family pg_kernels_qgemm_q4_0 = { "qgemm_q4_0", "C = X . W^T, W q4_0 rows (N x K), X q8_0 rows (M x K)",
                                 q4_0, PG_COUNTOF(q4_0), PG_KERNEL_FN_qgemm };
const pg_kernel_family pg_kernels_qgemm_q4_1 = { "qgemm_q4_1", "C = X . W^T, W q4_1 rows (N x K), X q8_1 rows (M x K)",
                                 q4_1, PG_COUNTOF(q4_1), PG_KERNEL_FN_qgemm };
const pg_kernel_family pg_kernels_qgemm_q8_0 = { "qgemm_q8_0", "C = X . W^T, W q8_0 rows (N x K), X q8_0 rows (M x K)",
                                 q8_0, PG_COUNTOF(q8_0), PG_KERNEL_FN_qgemm };

const pg_kernel_family *pg_qgemm_family(int wtype)
{
    switch (wtype) {
    case PG_GGML_Q4_0: return &pg_kernels_qgemm_q4_0;
    case PG_GGML_Q4_1: return &pg_kernels_qgemm_q4_1;
    case PG_GGML_Q8_0: return &pg_kernels_qgemm_q8_0;
    default: return pg_kquant_gemm_family(wtype);
    }
}

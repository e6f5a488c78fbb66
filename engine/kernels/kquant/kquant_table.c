/* kquant_table.c - the variant tables of the k-quant and 16-bit float
 * weight types (kquant.h), best first, C reference last, and the drivers
 * of their GEMM variants.
 *
 * A GEMM variant is an asm microkernel for eight rows of X (each weight
 * block widened once for the eight: k_gemm_8x1_avx512vnni.S,
 * h_gemm_8x1_avx512.S) driven over tiles of W's rows small enough to stay
 * in L2 (48 KiB), so each weight byte comes from DRAM once per batch; the
 * rows of X past the last multiple of 8 run the same ISA's GEMV over the
 * tile.  First on AVX-512 come the register-blocked GEMMs of
 * kquant_panel.c (16 rows of W x 8 rows of X over packed weight panels for
 * the k-quants; fp32 panels under the SGEMM's 12 x 32 microkernel for f16
 * / bf16), 2-4x the 8 x 1 form at M = 64; the 8 x 1 ones stay as the
 * next level.  AVX2 has no multi-row microkernel yet: its GEMM runs the
 * GEMV for every row of X over the same tiles (the rows form). */
#include <stdint.h>

#include "../../gguf/ggml_types.h"
#include "kquant.h"

#define ROWS_TILE_BYTES ((size_t)48 << 10)

#if defined(__x86_64__)
/* The 8 x 1 GEMM: the asm microkernel takes eight rows of X against a tile
 * of W's rows; the rows of X past the last multiple of 8 run the GEMV. */
typedef void (*ukr8_fn)(size_t N, size_t K, const void *W, size_t ldw, const void *X, size_t ldx,
                        float *C, size_t ldc);

static void gemm_8x1(ukr8_fn ukr8, pg_qgemv_fn gemv, size_t M, size_t N, size_t K,
                     const void *W, size_t ldw, const void *X, size_t ldx, float *C, size_t ldc)
{
    size_t tile = ldw ? ROWS_TILE_BYTES / ldw : N;
    tile = tile < 4 ? 4 : tile & ~(size_t)3;
    for (size_t n0 = 0; n0 < N; n0 += tile) {
        size_t nr = N - n0 < tile ? N - n0 : tile;
        const uint8_t *Wt = (const uint8_t *)W + n0 * ldw;
        size_t m = 0;
        for (; m + 8 <= M; m += 8)
            ukr8(nr, K, Wt, ldw, (const uint8_t *)X + m * ldx, ldx, C + m * ldc + n0, ldc);
        for (; m < M; m++)
            gemv(nr, K, Wt, ldw, (const uint8_t *)X + m * ldx, C + m * ldc + n0);
    }
}

#endif

#if defined(__x86_64__) || defined(__aarch64__)
/* The rows form (AVX2, AArch64): every row of X runs the GEMV over the tile. */
static void gemm_rows(pg_qgemv_fn gemv, size_t M, size_t N, size_t K, const void *W, size_t ldw,
                      const void *X, size_t ldx, float *C, size_t ldc)
{
    size_t tile = ldw ? ROWS_TILE_BYTES / ldw : N;
    tile = tile < 4 ? 4 : tile & ~(size_t)3;
    for (size_t n0 = 0; n0 < N; n0 += tile) {
        size_t nr = N - n0 < tile ? N - n0 : tile;
        for (size_t m = 0; m < M; m++)
            gemv(nr, K, (const uint8_t *)W + n0 * ldw, ldw, (const uint8_t *)X + m * ldx,
                 C + m * ldc + n0);
    }
}

#define GEMM_ROWS_OF(t, isa, gemv)                                                          \
    void pg_##t##_gemm_rows_##isa(size_t M, size_t N, size_t K, const void *W, size_t ldw,  \
                                  const void *X, size_t ldx, float *C, size_t ldc)          \
    {                                                                                       \
        gemm_rows(gemv, M, N, K, W, ldw, X, ldx, C, ldc);                                   \
    }
#define GEMM_ROWS(t, isa) GEMM_ROWS_OF(t, isa, pg_##t##_gemv_4row_##isa)
#endif

#if defined(__x86_64__)
#define GEMM_8X1(t, isa)                                                                    \
    void pg_##t##_gemm_8x1_##isa(size_t M, size_t N, size_t K, const void *W, size_t ldw,   \
                                 const void *X, size_t ldx, float *C, size_t ldc)           \
    {                                                                                       \
        gemm_8x1(pg_##t##_gemm_ukr_8x1_##isa, pg_##t##_gemv_4row_##isa, M, N, K, W, ldw, X, \
                 ldx, C, ldc);                                                              \
    }

#endif

#define X86_AVX2 (PG_CPU_AVX2 | PG_CPU_FMA | PG_CPU_F16C)
#define X86_AVX512 (X86_AVX2 | PG_CPU_AVX512F | PG_CPU_AVX512BW | PG_CPU_AVX512VL)
#define X86_AVX512VNNI (X86_AVX512 | PG_CPU_AVX512VNNI)

#if defined(__x86_64__)
GEMM_8X1(f16_f32, avx512vnni)
GEMM_8X1(bf16_f32, avx512vnni)
GEMM_8X1(q4_K_q8_K, avx512vnni)
GEMM_8X1(q5_K_q8_K, avx512vnni)
GEMM_8X1(q6_K_q8_K, avx512vnni)
PG_KQ_DECLARE_ALL(GEMM_ROWS, avx2)
#define GEMV_ROWS(t)                                                                        \
    { #t "_gemv_4row_avx512vnni", "avx512vnni", X86_AVX512VNNI,                             \
      .fn = { .qgemv = pg_##t##_gemv_4row_avx512vnni }, NULL },                             \
    { #t "_gemv_4row_avx2", "avx2", X86_AVX2, .fn = { .qgemv = pg_##t##_gemv_4row_avx2 }, NULL },
#define GEMM_8X1_ROW(t)                                                                     \
    { #t "_gemm_16x8_avx512vnni", "avx512vnni", X86_AVX512VNNI,                             \
      .fn = { .qgemm = pg_##t##_gemm_16x8_avx512vnni }, NULL },                             \
    { #t "_gemm_8x1_avx512vnni", "avx512vnni", X86_AVX512VNNI,                              \
      .fn = { .qgemm = pg_##t##_gemm_8x1_avx512vnni }, NULL },                              \
    { #t "_gemm_rows_avx2", "avx2", X86_AVX2, .fn = { .qgemm = pg_##t##_gemm_rows_avx2 }, NULL },
#define GEMM_8X1_ROW_H(t)                                                                   \
    { #t "_gemm_12x32_avx512", "avx512", X86_AVX512,                                        \
      .fn = { .qgemm = pg_##t##_gemm_12x32_avx512 }, NULL },                                \
    { #t "_gemm_8x1_avx512vnni", "avx512vnni", X86_AVX512VNNI,                              \
      .fn = { .qgemm = pg_##t##_gemm_8x1_avx512vnni }, NULL },                              \
    { #t "_gemm_rows_avx2", "avx2", X86_AVX2, .fn = { .qgemm = pg_##t##_gemm_rows_avx2 }, NULL },
#elif defined(__aarch64__)
GEMM_ROWS_OF(q4_K_q8_K, dotprod, pg_q4_K_q8_K_gemv_1row_dotprod)
GEMM_ROWS_OF(q5_K_q8_K, dotprod, pg_q5_K_q8_K_gemv_1row_dotprod)
GEMM_ROWS_OF(q6_K_q8_K, dotprod, pg_q6_K_q8_K_gemv_1row_dotprod)
GEMM_ROWS_OF(f16_f32, neon, pg_f16_f32_gemv_1row_neon)
GEMM_ROWS_OF(bf16_f32, neon, pg_bf16_f32_gemv_1row_neon)
#define A64_DOTPROD (PG_CPU_NEON | PG_CPU_DOTPROD)
#define GEMV_ROWS_K(t)                                                                      \
    { #t "_gemv_1row_dotprod", "dotprod", A64_DOTPROD,                                      \
      .fn = { .qgemv = pg_##t##_gemv_1row_dotprod }, NULL },
#define GEMM_ROWS_K(t)                                                                      \
    { #t "_gemm_rows_dotprod", "dotprod", A64_DOTPROD,                                      \
      .fn = { .qgemm = pg_##t##_gemm_rows_dotprod }, NULL },
#define GEMV_ROWS_H(t)                                                                      \
    { #t "_gemv_1row_neon", "neon", PG_CPU_NEON, .fn = { .qgemv = pg_##t##_gemv_1row_neon }, NULL },
#define GEMM_ROWS_H(t)                                                                      \
    { #t "_gemm_rows_neon", "neon", PG_CPU_NEON, .fn = { .qgemm = pg_##t##_gemm_rows_neon }, NULL },
#define GEMV_ROWS(t)
#define GEMM_8X1_ROW(t)
#define GEMM_8X1_ROW_H(t)
#else
#define GEMM_8X1_ROW(t)
#define GEMM_8X1_ROW_H(t)
#define GEMV_ROWS(t)
#endif
#ifndef GEMV_ROWS_K
#define GEMV_ROWS_K(t)
#define GEMM_ROWS_K(t)
#define GEMV_ROWS_H(t)
#define GEMM_ROWS_H(t)
#endif

#define FAMILIES(t, wname, aname, GEMM_ASM, A64_GEMV, A64_GEMM)                              \
    static const pg_variant gemv_##t[] = {                                                  \
        GEMV_ROWS(t)                                                                        \
        A64_GEMV(t)                                                                         \
        { #t "_gemv_c", "c", 0, .fn = { .qgemv = pg_##t##_gemv_c }, NULL },                 \
    };                                                                                      \
    static const pg_variant gemm_##t[] = {                                                  \
        GEMM_ASM(t)                                                                         \
        A64_GEMM(t)                                                                         \
        { #t "_gemm_c", "c", 0, .fn = { .qgemm = pg_##t##_gemm_c }, NULL },                 \
    };                                                                                      \
    const pg_kernel_family pg_kernels_qgemv_##wname = {                                     \
        "qgemv_" #wname, "y = W . x, W " #wname " rows (N x K), x " aname ", M = 1",         \
        gemv_##t, PG_COUNTOF(gemv_##t), PG_KERNEL_FN_qgemv };                               \
    const pg_kernel_family pg_kernels_qgemm_##wname = {                                     \
        "qgemm_" #wname, "C = X . W^T, W " #wname " rows (N x K), X " aname " rows (M x K)", \
        gemm_##t, PG_COUNTOF(gemm_##t), PG_KERNEL_FN_qgemm };

FAMILIES(q4_K_q8_K, q4_K, "q8_K", GEMM_8X1_ROW, GEMV_ROWS_K, GEMM_ROWS_K)
FAMILIES(q5_K_q8_K, q5_K, "q8_K", GEMM_8X1_ROW, GEMV_ROWS_K, GEMM_ROWS_K)
FAMILIES(q6_K_q8_K, q6_K, "q8_K", GEMM_8X1_ROW, GEMV_ROWS_K, GEMM_ROWS_K)
FAMILIES(f16_f32, f16, "f32", GEMM_8X1_ROW_H, GEMV_ROWS_H, GEMM_ROWS_H)
FAMILIES(bf16_f32, bf16, "f32", GEMM_8X1_ROW_H, GEMV_ROWS_H, GEMM_ROWS_H)

static const pg_variant quantize_q8_K[] = {
#if defined(__x86_64__)
    { "quantize_q8_K_avx512", "avx512", X86_AVX512, .fn = { .quantize = pg_quantize_row_q8_K_avx512 }, NULL },
#endif
    { "quantize_q8_K_c", "c", 0, .fn = { .quantize = pg_quantize_row_q8_K_c }, NULL },
};
const pg_kernel_family pg_kernels_quantize_q8_K = {
    "quantize_q8_K", "f32 activations -> q8_K super-blocks of 256 (f32 d, 16 sums)",
    quantize_q8_K, PG_COUNTOF(quantize_q8_K), PG_KERNEL_FN_quantize };

const pg_kernel_family *pg_kquant_gemv_family(int wtype)
{
    switch (wtype) {
    case PG_GGML_Q4_K: return &pg_kernels_qgemv_q4_K;
    case PG_GGML_Q5_K: return &pg_kernels_qgemv_q5_K;
    case PG_GGML_Q6_K: return &pg_kernels_qgemv_q6_K;
    case PG_GGML_F16: return &pg_kernels_qgemv_f16;
    case PG_GGML_BF16: return &pg_kernels_qgemv_bf16;
    case PG_GGML_F32: return &pg_kernels_qgemv_f32;
    default: return NULL;
    }
}

const pg_kernel_family *pg_kquant_gemm_family(int wtype)
{
    switch (wtype) {
    case PG_GGML_Q4_K: return &pg_kernels_qgemm_q4_K;
    case PG_GGML_Q5_K: return &pg_kernels_qgemm_q5_K;
    case PG_GGML_Q6_K: return &pg_kernels_qgemm_q6_K;
    case PG_GGML_F16: return &pg_kernels_qgemm_f16;
    case PG_GGML_BF16: return &pg_kernels_qgemm_bf16;
    case PG_GGML_F32: return &pg_kernels_qgemm_f32;
    default: return NULL;
    }
}

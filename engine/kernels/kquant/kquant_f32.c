/* kquant_f32.c - f32 weights (GGUF type 0) in the qgemv / qgemm entry
 * points, beside f16 / bf16 (kquant.h): W rows of K floats at stride ldw
 * bytes, x / X f32 activation rows taken as they are (as ggml's f32 x f32
 * product takes them).  The C reference is a plain fp32 dot in element
 * order; the GEMV variants are gemv_nk's asm (f32_gemv_nk_4row_avx2_fma3.S,
 * f32_gemv_nk_4row_neon.S: four rows per pass, any K) called with the
 * stride in floats (a stride that is not a whole number of floats, which a
 * GGUF file cannot have, goes row by row); the GEMM variants run that GEMV
 * for every row of X over tiles of W's rows that stay in L2, so each
 * weight byte comes from memory once per batch (the rows form of the
 * k-quants on AVX2).  Real files keep only norms and biases in f32; a
 * whole f32 model is what a converter writes before quantising. */
#include <stdint.h>
#include <string.h>

#include "../../gguf/ggml_types.h"
#include "../gemv_nk/gemv_nk.h"
#include "kquant.h"

#define ROWS_TILE_BYTES ((size_t)48 << 10)

void pg_vec_dot_f32_f32_c(size_t n, const void *w, const void *a, float *s)
{
    const uint8_t *x = w;
    const float *y = a;
    float sum = 0.0f;
    for (size_t i = 0; i < n; i++) {
        float f;
        memcpy(&f, x + 4 * i, 4);
        sum += f * y[i];
    }
    *s = sum;
}

void pg_f32_f32_gemv_c(size_t N, size_t K, const void *W, size_t ldw, const void *x, float *y)
{
    for (size_t n = 0; n < N; n++)
        pg_vec_dot_f32_f32_c(K, (const uint8_t *)W + n * ldw, x, &y[n]);
}

void pg_f32_f32_gemm_c(size_t M, size_t N, size_t K, const void *W, size_t ldw, const void *X,
                       size_t ldx, float *C, size_t ldc)
{
    for (size_t m = 0; m < M; m++)
        for (size_t n = 0; n < N; n++)
            pg_vec_dot_f32_f32_c(K, (const uint8_t *)W + n * ldw, (const uint8_t *)X + m * ldx,
                                 &C[m * ldc + n]);
}

#if defined(__x86_64__) || defined(__aarch64__)
static void gemv_nk(pg_f32_gemv_nk_fn fn, size_t N, size_t K, const void *W, size_t ldw,
                    const void *x, float *y)
{
    if (ldw % 4 == 0) {
        fn(N, K, x, W, ldw / 4, NULL, y);
        return;
    }
    for (size_t n = 0; n < N; n++)
        fn(1, K, x, (const float *)(const void *)((const uint8_t *)W + n * ldw), K, NULL, y + n);
}

static void gemm_rows(pg_f32_gemv_nk_fn fn, size_t M, size_t N, size_t K, const void *W,
                      size_t ldw, const void *X, size_t ldx, float *C, size_t ldc)
{
    size_t tile = ldw ? ROWS_TILE_BYTES / ldw : N;
    tile = tile < 4 ? 4 : tile & ~(size_t)3;
    for (size_t n0 = 0; n0 < N; n0 += tile) {
        size_t nr = N - n0 < tile ? N - n0 : tile;
        for (size_t m = 0; m < M; m++)
            gemv_nk(fn, nr, K, (const uint8_t *)W + n0 * ldw, ldw, (const uint8_t *)X + m * ldx,
                    C + m * ldc + n0);
    }
}

#define F32_FORMS(isa, asm_fn)                                                               \
    void pg_f32_f32_gemv_nk_##isa(size_t N, size_t K, const void *W, size_t ldw,             \
                                  const void *x, float *y)                                   \
    {                                                                                        \
        gemv_nk(asm_fn, N, K, W, ldw, x, y);                                                 \
    }                                                                                        \
    void pg_f32_f32_gemm_rows_##isa(size_t M, size_t N, size_t K, const void *W, size_t ldw, \
                                    const void *X, size_t ldx, float *C, size_t ldc)         \
    {                                                                                        \
        gemm_rows(asm_fn, M, N, K, W, ldw, X, ldx, C, ldc);                                  \
    }
#endif

#if defined(__x86_64__)
F32_FORMS(avx2, pg_f32_gemv_nk_4row_avx2_fma3)
#define ASM_GEMV { "f32_f32_gemv_nk_avx2", "avx2", PG_CPU_AVX2 | PG_CPU_FMA,                 \
                   .fn = { .qgemv = pg_f32_f32_gemv_nk_avx2 }, NULL },
#define ASM_GEMM { "f32_f32_gemm_rows_avx2", "avx2", PG_CPU_AVX2 | PG_CPU_FMA,               \
                   .fn = { .qgemm = pg_f32_f32_gemm_rows_avx2 }, NULL },
#elif defined(__aarch64__)
F32_FORMS(neon, pg_f32_gemv_nk_4row_neon)
#define ASM_GEMV { "f32_f32_gemv_nk_neon", "neon", PG_CPU_NEON,                               \
                   .fn = { .qgemv = pg_f32_f32_gemv_nk_neon }, NULL },
#define ASM_GEMM { "f32_f32_gemm_rows_neon", "neon", PG_CPU_NEON,                             \
                   .fn = { .qgemm = pg_f32_f32_gemm_rows_neon }, NULL },
#else
#define ASM_GEMV
#define ASM_GEMM
#endif

static const pg_variant gemv_f32[] = {
    ASM_GEMV
    { "f32_f32_gemv_c", "c", 0, .fn = { .qgemv = pg_f32_f32_gemv_c }, NULL },
};
static const pg_variant gemm_f32[] = {
    ASM_GEMM
    { "f32_f32_gemm_c", "c", 0, .fn = { .qgemm = pg_f32_f32_gemm_c }, NULL },
};

const pg_kernel_family pg_kernels_qgemv_f32 = {
    "qgemv_f32", "y = W . x, W f32 rows (N x K), x f32, M = 1",
    gemv_f32, PG_COUNTOF(gemv_f32), PG_KERNEL_FN_qgemv };
const pg_kernel_family pg_kernels_qgemm_f32 = {
    "qgemm_f32", "C = X . W^T, W f32 rows (N x K), X f32 rows (M x K)",
    gemm_f32, PG_COUNTOF(gemm_f32), PG_KERNEL_FN_qgemm };

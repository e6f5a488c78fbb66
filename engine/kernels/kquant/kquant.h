/* kquant.h - the GGUF weight types beyond the blocks of 32: the k-quants
 * (super-blocks of 256 with packed sub-block scales) and the plain 16-bit
 * floats, in the same qgemv / qgemm entry points as q4_0 / q4_1 / q8_0
 * (kernel_fn.h: W rows at stride ldw bytes, x / X activation rows).
 *
 * Weight layouts (bytes, little-endian; ggml-common.h's block structs):
 *   q4_K (144): f16 d, f16 dmin, scales[12], qs[128]
 *               8 sub-blocks of 32, each a 6-bit scale sc_j and min m_j
 *               (packed: j < 4 the low 6 bits of bytes j / j + 4; j >= 4
 *               the nibbles of byte j + 4 and the top 2 bits of bytes
 *               j - 4 / j); chunk c (0..3) of 64 elements is qs[32c..+31],
 *               low nibbles sub-block 2c, high nibbles 2c + 1;
 *               w = d sc_j q - dmin m_j
 *   q5_K (176): f16 d, f16 dmin, scales[12], qh[32], qs[128]: q4_K with a
 *               fifth bit, qh[l] bit 2c (low nibbles) / 2c + 1 (high)
 *   q6_K (210): ql[128], qh[64], int8 scales[16], f16 d; half h (0, 1) of
 *               128: element 32k + l takes its low 4 bits from
 *               ql[64h + l] (k = 0), ql[64h + 32 + l] (1), their high
 *               nibbles (2, 3), and its top 2 bits from qh[32h + l] >> 2k;
 *               one scale per 16 elements; w = d sc (q - 32)
 *   f16 / bf16: one 2-byte float per element.
 * Activations:
 *   k-quants take q8_K (292): f32 d, int8 qs[256], int16 bsums[16] (the
 *   sum of each 16 qs, for the mins and q6_K's -32), ggml's
 *   quantize_row_q8_K_ref: max the value of largest magnitude, iscale =
 *   -127 / max, q = min(127, nearest(iscale x)) (round half even), d =
 *   1 / iscale;
 *   f16 / bf16 take the f32 activations as they are (ldx in bytes).
 *
 * Every k-quant output is, per super-block, an exact int32 sum of
 * sc_j * (sum of q . x_q over the sub-block) (below 2^31: at most 16 * 128
 * * 16 * 63 * 127 for q6_K), converted to fp32 and scaled by d_w d_x, minus
 * dmin d_x * (sum of m_j * bsum_j) (q4_K / q5_K) or 32 d_w d_x * (sum of
 * sc_j * bsum_j) (q6_K, its -32 folded into the same int32 sum): the C
 * references below are that formula; variants differ from them only in
 * fp32 rounding of the per-super-block conversion and the order of the
 * fp32 sum (the 16 x 8 GEMM of kquant_panel.c converts per block of 32 /
 * 16 and scales in fp32 there, within the same checkasm bound).  f16 / bf16: a plain fp32 dot (the reference sums in element
 * order). */
#ifndef PG_KERNELS_KQUANT_H
#define PG_KERNELS_KQUANT_H

#include <stddef.h>
#include <stdint.h>

#include "../variant.h"

void pg_quantize_row_q8_K_c(size_t n, const float *x, void *y);
void pg_quantize_row_q8_K_avx512(size_t n, const float *x, void *y);

void pg_vec_dot_q4_K_q8_K_c(size_t n, const void *w, const void *a, float *s);
void pg_vec_dot_q5_K_q8_K_c(size_t n, const void *w, const void *a, float *s);
void pg_vec_dot_q6_K_q8_K_c(size_t n, const void *w, const void *a, float *s);
void pg_vec_dot_f16_f32_c(size_t n, const void *w, const void *a, float *s);
void pg_vec_dot_bf16_f32_c(size_t n, const void *w, const void *a, float *s);

#define PG_KQ_GEMV_DECLARE(t, isa)                                                            \
    void pg_##t##_gemv_##isa(size_t N, size_t K, const void *W, size_t ldw, const void *x,    \
                             float *y);
#define PG_KQ_GEMM_DECLARE(t, isa)                                                            \
    void pg_##t##_gemm_##isa(size_t M, size_t N, size_t K, const void *W, size_t ldw,         \
                             const void *X, size_t ldx, float *C, size_t ldc);
#define PG_KQ_DECLARE_ALL(D, isa)                                                             \
    D(q4_K_q8_K, isa) D(q5_K_q8_K, isa) D(q6_K_q8_K, isa) D(f16_f32, isa) D(bf16_f32, isa)

PG_KQ_DECLARE_ALL(PG_KQ_GEMV_DECLARE, c)
PG_KQ_DECLARE_ALL(PG_KQ_GEMM_DECLARE, c)
PG_KQ_DECLARE_ALL(PG_KQ_GEMV_DECLARE, 4row_avx2)
PG_KQ_DECLARE_ALL(PG_KQ_GEMV_DECLARE, 4row_avx512vnni)
PG_KQ_DECLARE_ALL(PG_KQ_GEMM_DECLARE, rows_avx2)
PG_KQ_DECLARE_ALL(PG_KQ_GEMM_DECLARE, 8x1_avx512vnni)
/* the asm microkernel of the 8 x 1 GEMM: exactly eight rows of X against N
 * rows of W, C[t * ldc + n] (k_gemm_8x1_avx512vnni.S, h_gemm_8x1_avx512.S) */
#define PG_KQ_UKR8_DECLARE(t)                                                                \
    void pg_##t##_gemm_ukr_8x1_avx512vnni(size_t N, size_t K, const void *W, size_t ldw,    \
                                          const void *X, size_t ldx, float *C, size_t ldc);
PG_KQ_UKR8_DECLARE(q4_K_q8_K)
PG_KQ_UKR8_DECLARE(q5_K_q8_K)
PG_KQ_UKR8_DECLARE(q6_K_q8_K)
PG_KQ_UKR8_DECLARE(f16_f32)
PG_KQ_UKR8_DECLARE(bf16_f32)
PG_KQ_DECLARE_ALL(PG_KQ_GEMM_DECLARE, rows_avx512vnni)
/* The 16 x 8 register-blocked GEMM over packed weight panels
 * (kquant_panel.c, k_gemm_16x8_avx512vnni.S), for the k-quants and the
 * q4_0 / q8_0 blocks of 32 */
PG_KQ_GEMM_DECLARE(q4_K_q8_K, 16x8_avx512vnni)
PG_KQ_GEMM_DECLARE(q5_K_q8_K, 16x8_avx512vnni)
PG_KQ_GEMM_DECLARE(q6_K_q8_K, 16x8_avx512vnni)
PG_KQ_GEMM_DECLARE(q4_0_q8_0, 16x8_avx512vnni)
PG_KQ_GEMM_DECLARE(q8_0_q8_0, 16x8_avx512vnni)
#define PG_KQ_UKR16_DECLARE(s)                                                               \
    void pg_kq_ukr_16x8_##s##_avx512vnni(size_t nb, const uint8_t *panel, const void *X,     \
                                         size_t ldx, const uint32_t *xoff, const void *tab,  \
                                         float *C, size_t ldc, uint64_t ctl);
PG_KQ_UKR16_DECLARE(s32f)
PG_KQ_UKR16_DECLARE(s16i)
PG_KQ_UKR16_DECLARE(s32i)
/* f16 / bf16: fp32 panels under the SGEMM's 12 x 32 microkernel (kquant_panel.c) */
PG_KQ_GEMM_DECLARE(f16_f32, 12x32_avx512)
PG_KQ_GEMM_DECLARE(bf16_f32, 12x32_avx512)
/* AArch64: one row at a time (x's super-block in registers) */
PG_KQ_GEMV_DECLARE(q4_K_q8_K, 1row_dotprod)
PG_KQ_GEMV_DECLARE(q5_K_q8_K, 1row_dotprod)
PG_KQ_GEMM_DECLARE(q5_K_q8_K, rows_dotprod)
PG_KQ_GEMV_DECLARE(q6_K_q8_K, 1row_dotprod)
PG_KQ_GEMV_DECLARE(f16_f32, 1row_neon)
PG_KQ_GEMV_DECLARE(bf16_f32, 1row_neon)
PG_KQ_GEMM_DECLARE(q4_K_q8_K, rows_dotprod)
PG_KQ_GEMM_DECLARE(q6_K_q8_K, rows_dotprod)
PG_KQ_GEMM_DECLARE(f16_f32, rows_neon)
PG_KQ_GEMM_DECLARE(bf16_f32, rows_neon)

extern const pg_kernel_family pg_kernels_quantize_q8_K;
extern const pg_kernel_family pg_kernels_qgemv_q4_K, pg_kernels_qgemv_q5_K, pg_kernels_qgemv_q6_K,
    pg_kernels_qgemv_f16, pg_kernels_qgemv_bf16;
extern const pg_kernel_family pg_kernels_qgemm_q4_K, pg_kernels_qgemm_q5_K, pg_kernels_qgemm_q6_K,
    pg_kernels_qgemm_f16, pg_kernels_qgemm_bf16;

/* f32 weights (kquant_f32.c): a plain fp32 dot; gemv_nk's asm per ISA */
void pg_vec_dot_f32_f32_c(size_t n, const void *w, const void *a, float *s);
PG_KQ_GEMV_DECLARE(f32_f32, c)
PG_KQ_GEMM_DECLARE(f32_f32, c)
PG_KQ_GEMV_DECLARE(f32_f32, nk_avx2)
PG_KQ_GEMM_DECLARE(f32_f32, rows_avx2)
PG_KQ_GEMV_DECLARE(f32_f32, nk_neon)
PG_KQ_GEMM_DECLARE(f32_f32, rows_neon)
extern const pg_kernel_family pg_kernels_qgemv_f32, pg_kernels_qgemm_f32;

/* The families of a weight type among these, NULL for others. */
const pg_kernel_family *pg_kquant_gemv_family(int wtype);
const pg_kernel_family *pg_kquant_gemm_family(int wtype);

#endif

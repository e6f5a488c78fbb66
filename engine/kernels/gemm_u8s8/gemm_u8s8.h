/* gemm_u8s8.h - int8 matrix product: u8 activations x s8 weights, int32
 * accumulation, then a dequantising (fp32, + bias) or requantising (u8 /
 * s8) epilogue; and the dynamic activation quantiser (fp32 row -> u8 with
 * its own scale and zero point).  Two variant tables: gemm_u8s8 and
 * quantize_u8.  This prototype is stable: the ONNX QDQ / MatMulInteger /
 * QLinearMatMul folding binds to it.
 *
 * Real values: activation x = a_scale * (a - a_zero) with a in [0, 255],
 * weight w = b_scale[j] * (b - b_zero[j]) with b in [-128, 127] (b_zero
 * NULL = symmetric weights, every zero point 0).  The integer part of one
 * output,
 *
 *     q[i][j] = sum_k (a[i][k] - a_zero[i]) (b[k][j] - b_zero[j])
 *             = acc - a_zero[i] col_sum[j] - b_zero[j] row_corr[i]
 *     acc = sum_k a[i][k] b[k][j],  col_sum[j] = sum_k b[k][j],
 *     row_corr[i] = sum_k a[i][k] - K a_zero[i]   (only read with b_zero)
 *
 * is exact in int32 (|acc| <= K * 255 * 128 < 2^31 for K < 65793).  The
 * epilogue (ep->out_mode):
 *     PG_U8S8_OUT_F32  c (float) = (float)q * (a_scale[i] * b_scale[j]) (+ bias[j])
 *     PG_U8S8_OUT_I32  c (int32) = q   (MatMulInteger)
 *     PG_U8S8_OUT_U8   c (uint8) = clamp(rint(y * out_inv_scale) + out_zero, 0, 255)
 *     PG_U8S8_OUT_S8   c (int8)  = clamp(rint(y * out_inv_scale) + out_zero, -128, 127)
 * with y the F32 value and rint round-half-even (QLinearMatMul: a_scale =
 * the activation scale, b_scale the weight's, out_inv_scale = 1 / y_scale).
 * ldc counts elements of the output type.
 *
 * Packed weights (one layout for every variant of the family, so a packed
 * weight never needs re-packing when the CPU mask changes): K padded to kp
 * = K rounded up to a multiple of 4 (zeros), N to whole panels of
 * PG_U8S8_NR = 32 columns (zero columns).  Panel p holds columns
 * 32p .. 32p+31 as kp/4 groups of 32 x 4 bytes: group g, column j at
 * byte 128 g + 4 j holds b[4g .. 4g+3][j] (what one vpdpbusd / sdot lane
 * takes).  After the panels: col_sum (int32), scale (float) and, when the
 * weight has zero points, zero (int32), panels * 32 each.
 *
 * Microkernel: one mr x nr tile (mr 1..MR, nr 1..32) of C from mr rows of
 * quantised A (row i at a + i * lda bytes, kp readable bytes each: the
 * driver's quantised rows are padded) and k = kp bytes of one panel (b:
 * the panel start).  ep's per-row arrays start at the tile's first row,
 * its per-column arrays at the tile's first column.  No element outside
 * the tile is read from C (C is not read at all) nor written. */
#ifndef PG_KERNELS_GEMM_U8S8_H
#define PG_KERNELS_GEMM_U8S8_H

#include <stddef.h>
#include <stdint.h>

#include "../amx_tile.h"
#include "../variant.h"

#define PG_U8S8_NR 32
#define PG_U8S8_KG 4

enum { PG_U8S8_OUT_F32 = 0, PG_U8S8_OUT_I32 = 1, PG_U8S8_OUT_U8 = 2, PG_U8S8_OUT_S8 = 3 };

/* (layout read by the asm: byte offsets in the comments) */
struct pg_u8s8_epilogue {
    const int32_t *a_zero;    /* @0  per row */
    const float *a_scale;     /* @8  per row (F32 / U8 / S8) */
    const int32_t *col_sum;   /* @16 per column */
    const float *b_scale;     /* @24 per column (F32 / U8 / S8) */
    const float *bias;        /* @32 per column, or NULL */
    const int32_t *b_zero;    /* @40 per column, or NULL: symmetric weights */
    const int32_t *row_corr;  /* @48 per row, read only with b_zero */
    float out_inv_scale;      /* @56 U8 / S8 */
    int32_t out_zero;         /* @60 U8 / S8 */
    int32_t out_mode;         /* @64 PG_U8S8_OUT_* */
    int32_t a_max;            /* @68 the largest activation byte, 0 = 255 (the driver's
                               * check against the kernel's pair_max; no kernel reads it) */
    const uint16_t *a_wide;   /* @72 the tile's rows of A zero-extended to 16 bits (row i
                               * at a_wide + i * a_wide_ld, k of them), or NULL; set by the
                               * driver for a kernel with wide_a, which then reads them
                               * instead of widening A itself (the C reference ignores it) */
    size_t a_wide_ld;         /* @80 */
};

typedef struct pg_u8s8_params {
    int mr, nr;
    void (*finish)(void);   /* after a thread's run of calls, or NULL (amx_tile.h) */
    double thread_work;     /* as pg_bf16_params' (gemm_bf16.h) */
    int pair_max;           /* exact while 2 a_max w_max <= pair_max (activations in
                             * [0, a_max], weights in [-w_max, w_max]): INT_MAX, or
                             * 32767 (avx2_maddubs: u8 x s8 pairs in saturating int16) */
    int wide_a;             /* 1: the kernel multiplies A as int16 (avx2's vpmaddwd), so
                             * the driver widens a row tile once for a group of panels
                             * and hands it over in ep->a_wide (rather than every call
                             * widening the same rows again: ~5% of that kernel's time) */
} pg_u8s8_params;

void pg_u8s8_gemm_4x32_c(size_t mr, size_t nr, size_t k, const uint8_t *a, size_t lda,
                         const int8_t *b, void *c, size_t ldc, const pg_u8s8_epilogue *ep);
void pg_u8s8_gemm_32x32_amx(size_t mr, size_t nr, size_t k, const uint8_t *a, size_t lda,
                            const int8_t *b, void *c, size_t ldc, const pg_u8s8_epilogue *ep);
void pg_u8s8_gemm_2x32_dotprod(size_t mr, size_t nr, size_t k, const uint8_t *a, size_t lda,
                               const int8_t *b, void *c, size_t ldc, const pg_u8s8_epilogue *ep);
void pg_u8s8_gemm_4x32_i8mm(size_t mr, size_t nr, size_t k, const uint8_t *a, size_t lda,
                            const int8_t *b, void *c, size_t ldc, const pg_u8s8_epilogue *ep);
void pg_u8s8_gemm_6x32_avxvnni(size_t mr, size_t nr, size_t k, const uint8_t *a, size_t lda,
                               const int8_t *b, void *c, size_t ldc, const pg_u8s8_epilogue *ep);
void pg_u8s8_gemm_6x32_avx2_maddubs(size_t mr, size_t nr, size_t k, const uint8_t *a, size_t lda,
                               const int8_t *b, void *c, size_t ldc, const pg_u8s8_epilogue *ep);
void pg_u8s8_gemm_6x32_avx2(size_t mr, size_t nr, size_t k, const uint8_t *a, size_t lda,
                            const int8_t *b, void *c, size_t ldc, const pg_u8s8_epilogue *ep);
void pg_u8s8_gemm_12x32_avx512vnni(size_t mr, size_t nr, size_t k, const uint8_t *a,
                                   size_t lda, const int8_t *b, void *c, size_t ldc,
                                   const pg_u8s8_epilogue *ep);

/* The epilogue of one element from its int32 product acc (the oracle's
 * arithmetic, which every variant's epilogue follows): writes element j
 * of row c. */
void pg_u8s8_epilogue_ref(const pg_u8s8_epilogue *ep, size_t i, size_t j, int32_t acc,
                          void *crow);

/* ---- the dynamic activation quantiser (table quantize_u8) --------------
 * One row of n floats to [0, qmax] (qmax 255, or 127 for the activations
 * of a product whose weights keep 8 bits on the vpmaddubsw kernel):
 * lo = min(0, min x), hi = max(0, max x),
 * scale = (hi - lo) / qmax (1 when hi == lo), inv = 1 / scale,
 * zero = clamp(rint(-lo * inv), 0, qmax), y = clamp(rint(x * inv) + zero, 0, qmax).
 * (x * inv, not x / scale: the same operations in every variant, bit exact.) */
void pg_quant_u8_row_c(size_t n, const float *x, uint8_t *y, float *scale, int32_t *zero,
                       int qmax);
void pg_quant_u8_row_avx512(size_t n, const float *x, uint8_t *y, float *scale, int32_t *zero,
                            int qmax);
void pg_quant_u8_row_avx2(size_t n, const float *x, uint8_t *y, float *scale, int32_t *zero,
                          int qmax);
/* With a given inv_scale and zero point (per-tensor quantisation): plain C. */
void pg_quant_u8_apply(size_t n, const float *x, float inv_scale, int32_t zero, uint8_t *y);

/* ---- per-tensor quantisation with a given scale (table quantize_u8_span)
 * y = clamp(rint(x / scale) + zero, 0, 255), rint round-half-even, for
 * finite x with |x / scale| < 2^22 (DynamicQuantizeLinear's second pass,
 * ops_quant.c, once the tensor's range is known: |x / scale| <= 256). */
void pg_quant_u8_span_c(size_t n, const float *x, float scale, int32_t zero, uint8_t *y);
void pg_quant_u8_span_avx512(size_t n, const float *x, float scale, int32_t zero, uint8_t *y);
void pg_quant_u8_span_avx2(size_t n, const float *x, float scale, int32_t zero, uint8_t *y);

/* ---- a tensor's range for it (table minmax_keys) -------------------------
 * key(x) = bits(x) ^ ((bits(x) >> 31) & 0x7fffffff) orders as int32 the way
 * the floats do: out[0] = min(0, min key), out[1] = max(0, max key),
 * out[2] = 1 when some x is NaN or infinite, else 0 (the first pass). */
void pg_minmax_keys_c(size_t n, const float *x, int32_t *out);
void pg_minmax_keys_avx512(size_t n, const float *x, int32_t *out);
void pg_minmax_keys_avx2(size_t n, const float *x, int32_t *out);

/* ---- packed weights ---------------------------------------------------- */

typedef struct pg_u8s8_packed {
    size_t K, N, kp, panels;
    const int8_t *data;       /* panels * kp * 32 bytes */
    const int32_t *col_sum;   /* panels * 32 */
    const float *scale;       /* panels * 32 */
    const int32_t *zero;      /* panels * 32, or NULL */
    int w_max;                /* max |b| over the weights (pg_u8s8_params.pair_max) */
} pg_u8s8_packed;

/* Bytes of the packed blob (a multiple of 64). */
size_t pg_u8s8_packed_bytes(size_t K, size_t N, int with_zero);
/* fp32 weights K x N (row stride ldb): per-column symmetric s8 in
 * [-q, q], q = qmax (1..127; pg_u8s8_weight_qmax for the best kernel),
 * scale_j = max_k |B[k][j]| / q (1 for a zero column),
 * b = clamp(rint(B / scale_j), -q, q).  dst: pg_u8s8_packed_bytes(K, N, 0), 64-aligned. */
void pg_u8s8_pack_f32(size_t K, size_t N, const float *B, size_t ldb, int qmax, void *dst);
/* s8 weights K x N as given, scale per column (scale_per_col) or one for
 * all, zero points per column / one / none (zero NULL).  u8 weights with
 * zero point z: pass b - 128 and z - 128. */
void pg_u8s8_pack_s8(size_t K, size_t N, const int8_t *B, size_t ldb, const float *scale,
                     int scale_per_col, const int32_t *zero, int zero_per_col, void *dst);
/* The max |b| of a blob's weights, as counted (the stored w_max should be
 * it: the loader of compiled models checks). */
int pg_u8s8_weights_max(const void *blob, size_t K, size_t N, int with_zero);
/* What pg_u8s8_pack_f32 at qmax loses: ||B - dequant(quant(B))|| / ||B||
 * over the whole weight (0 for a zero weight). */
double pg_u8s8_rounding_error(size_t K, size_t N, const float *B, size_t ldb, int qmax);
/* The parts of a packed blob (after the per-column arrays: one int32,
 * the weights' max |b|). */
void pg_u8s8_view(const void *blob, size_t K, size_t N, int with_zero, pg_u8s8_packed *out);

/* ---- choosing a kernel ------------------------------------------------- */

/* The best gemm_u8s8 variant the CPU mask allows that is exact for
 * activations in [0, a_max] and weights up to |w_max| (255, 128: any), or
 * NULL. */
const pg_variant *pg_u8s8_select(int a_max, int w_max);
/* The weight range where variant v is exact with 8-bit activations: 127,
 * or 64 for avx2_maddubs; pg_u8s8_weight_qmax: the best variant's (for the
 * weights that round to it well, pass_lowp.c). */
int pg_u8s8_weight_qmax_for(const pg_variant *v);
int pg_u8s8_weight_qmax(void);
/* int8-dynamic's activation range on kernel v for weights up to |w_max|:
 * 255 where v is exact with it, else 127 (avx2_maddubs with 8-bit weights;
 * pg_u8s8_select(255, w_max) when v is not exact with 127 either). */
int pg_u8s8_act_qmax(const pg_variant *v, int w_max);

/* ---- driver ------------------------------------------------------------ */

/* Quantise M rows of fp32 A (lda) into Aq (ldq >= kp bytes, pad bytes 0)
 * to [0, qmax] with one scale / zero point per row; row_corr (may be NULL)
 * gets sum_k Aq[i][k] - K zero[i]. */
void pg_u8s8_quantize_rows(const pg_variant *quant, size_t M, size_t K, const float *A,
                           size_t lda, uint8_t *Aq, size_t ldq, float *scale, int32_t *zero,
                           int32_t *row_corr, int qmax);
/* C[M, N] = epilogue(Aq . B[:, col0 : col0 + N]) on the kernel v (a
 * gemm_u8s8 variant); col0 a multiple of 32.  ep gives the epilogue's mode
 * and scalars and the per-row arrays of row 0 (a_zero, a_scale, row_corr);
 * the per-column arrays come from B (bias: column col0's, may be NULL).
 * threads 0 = the default. */
pg_status pg_u8s8_gemm_packed(const pg_variant *v, size_t M, size_t N, const uint8_t *Aq,
                              size_t lda, const pg_u8s8_packed *B, size_t col0,
                              const pg_u8s8_epilogue *ep, void *C, size_t ldc, int threads);
/* The same with an elementwise activation (a unary variant: gelu_erf, ...)
 * applied to each row's span of a task's panels once the kernel has written
 * it, while it is in cache (act NULL: none). */
pg_status pg_u8s8_gemm_packed_act(const pg_variant *v, size_t M, size_t N, const uint8_t *Aq,
                                  size_t lda, const pg_u8s8_packed *B, size_t col0,
                                  const pg_u8s8_epilogue *ep, void *C, size_t ldc,
                                  const pg_variant *act, int threads);

/* The avxvnni kernel's yardstick: VEX vpdpbusd ymm GOP/s (peak_lowp.c,
 * timed as pg_measure_vnni_peak_gops); -1 and an error without AVX-VNNI. */
double pg_measure_avxvnni_peak_gops(int threads);
/* The avx2 kernel's: vpmaddwd + vpaddd ymm, 32 ops a pair; -1 and an
 * error without AVX2. */
double pg_measure_madd_avx2_peak_gops(int threads);
/* The avx2_maddubs kernel's: vpmaddubsw + vpmaddwd (ones) + vpaddd ymm, 64 ops. */
double pg_measure_maddubs_avx2_peak_gops(int threads);

extern const pg_kernel_family pg_kernels_gemm_u8s8;
extern const pg_kernel_family pg_kernels_quantize_u8;
extern const pg_kernel_family pg_kernels_quantize_u8_span;
extern const pg_kernel_family pg_kernels_minmax_keys;

#endif

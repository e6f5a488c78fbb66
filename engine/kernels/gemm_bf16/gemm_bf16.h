/* gemm_bf16.h - bf16 matrix product with fp32 accumulation: A and B in
 * bf16 (A converted from fp32 at the product's input, B packed once), C
 * in fp32 with the SGEMM epilogue (+ C, + bias, ReLU / GELU).  Two variant
 * tables: gemm_bf16 (the microkernels) and cvt_bf16 (fp32 -> bf16 rows).
 *
 * bf16 is the top 16 bits of an fp32.  Conversion (as vcvtne2ps2bf16
 * does it): round to nearest even; zero and denormal inputs become a zero
 * of their sign; infinities stay; a NaN stays a (quiet) NaN.  A bf16
 * times a bf16 is exact in fp32, so the products differ from the
 * reference only in the order of the fp32 sums.
 *
 * Packed B (one layout for every variant, so no re-packing when the CPU
 * mask changes): K padded to kp = K rounded up to a multiple of 32 (zeros:
 * one AMX tile step), N to whole
 * panels of PG_BF16_NR = 32 columns (zero columns).  Panel p holds columns
 * 32p .. 32p+31 as kp/2 rows of 32 pairs: pair row g, column j at element
 * 64 g + 2 j holds (b[2g][j], b[2g+1][j]) - what one vdpbf16ps / bfdot
 * lane takes.
 *
 * Microkernel: one mr x nr tile (mr 1..MR, nr 1..32) of C from mr rows of
 * bf16 A (row i at a + i * lda elements, k readable elements each: the
 * driver's converted rows are padded with zeros to kp) and the k / 2 pair
 * rows of one panel (b: the panel start); k is a multiple of the
 * variant's kstep (2, or 32 for AMX; the driver passes kp).  The epilogue is
 * sgemm's (pg_sgemm_epilogue: accumulate flag, bias of the tile's first
 * column, act); no element outside the tile is read or written in C. */
#ifndef PG_KERNELS_GEMM_BF16_H
#define PG_KERNELS_GEMM_BF16_H

#include <stddef.h>
#include <stdint.h>

#include "../sgemm/sgemm.h"
#include "../amx_tile.h"
#include "../variant.h"

#define PG_BF16_NR 32

typedef struct pg_bf16_params {
    int mr, nr, kstep;
    void (*finish)(void);   /* after a thread's run of calls, or NULL (amx_tile.h) */
    /* the work (flops, ops) a thread's share must reach before a second
     * thread pays for its wake-up: 2e6 for the vector kernels; the AMX
     * kernels run a share 10-20x faster, so theirs is 4e7 (a 128 x 384 x
     * 384 product, 38 Mflop, ran slower on two threads than on one) */
    double thread_work;
} pg_bf16_params;

/* K padded as the packed B and the converted A rows hold it */
static inline size_t pg_bf16_kp(size_t K) { return (K + 31) & ~(size_t)31; }

void pg_bf16_gemm_4x32_c(size_t mr, size_t nr, size_t k, const uint16_t *a, size_t lda,
                         const uint16_t *b, float *c, size_t ldc, const pg_sgemm_epilogue *ep);
void pg_bf16_gemm_32x32_amx(size_t mr, size_t nr, size_t k, const uint16_t *a, size_t lda,
                             const uint16_t *b, float *c, size_t ldc, const pg_sgemm_epilogue *ep);
void pg_bf16_gemm_2x32_neon(size_t mr, size_t nr, size_t k, const uint16_t *a, size_t lda,
                            const uint16_t *b, float *c, size_t ldc, const pg_sgemm_epilogue *ep);
void pg_bf16_gemm_4x32_bfmmla(size_t mr, size_t nr, size_t k, const uint16_t *a, size_t lda,
                              const uint16_t *b, float *c, size_t ldc, const pg_sgemm_epilogue *ep);
void pg_bf16_gemm_12x32_avx512bf16(size_t mr, size_t nr, size_t k, const uint16_t *a,
                                   size_t lda, const uint16_t *b, float *c, size_t ldc,
                                   const pg_sgemm_epilogue *ep);

void pg_cvt_f32_bf16_c(size_t n, const float *x, uint16_t *y);
void pg_cvt_f32_bf16_avx512bf16(size_t n, const float *x, uint16_t *y);
/* One value, the reference's rounding (back: pg_bf16_to_f32, gguf/ggml_types.h). */
uint16_t pg_f32_to_bf16(float x);

/* ---- packed weights ---------------------------------------------------- */

/* Bytes of B (K x N) packed (a multiple of 64). */
size_t pg_bf16_packed_bytes(size_t K, size_t N);
/* fp32 B (K x N, row stride ldb) rounded to bf16 and packed into dst. */
void pg_bf16_pack_f32(size_t K, size_t N, const float *B, size_t ldb, uint16_t *dst);
/* Element (k, j) of a packed B, as fp32 (for unpacking). */
float pg_bf16_packed_at(const uint16_t *packed, size_t K, size_t k, size_t j);

/* ---- driver ------------------------------------------------------------ */

/* Convert M rows of fp32 A (lda) into bf16 Ab (ldab >= kp elements, the
 * pad zero) with the cvt_bf16 variant cvt. */
void pg_bf16_convert_rows(const pg_variant *cvt, size_t M, size_t K, const float *A, size_t lda,
                          uint16_t *Ab, size_t ldab);
/* C[M, N] = act(Ab . B[:, col0 : col0 + N] + bias) on the gemm_bf16
 * variant v; B packed for K (kp = pg_bf16_kp(K)), Ntot columns in
 * all; col0 a multiple of 32; act a pg_act (PG_ACT_NONE / RELU / GELU).
 * threads 0 = the default. */
pg_status pg_bf16_gemm_packed(const pg_variant *v, size_t M, size_t N, size_t K,
                              const uint16_t *Ab, size_t ldab, const uint16_t *B, size_t col0,
                              const float *bias, int act, float *C, size_t ldc, int threads);

extern const pg_kernel_family pg_kernels_gemm_bf16;
extern const pg_kernel_family pg_kernels_cvt_bf16;

#endif

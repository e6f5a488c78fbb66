/* sgemm.h - fp32 C = A * B (+ bias) (+ activation): the microkernel
 * interface, the packed-B layout and the variant table.
 *
 * A microkernel computes one MR x NR tile of C from an MR x k sliver of A,
 * read in place with its stride (every kernel broadcasts from A, so A is
 * never packed), and one k x NR slice of a packed B panel.  Its epilogue
 * runs while the tile is in registers: + C when accumulating (K blocks after
 * the first), + bias, then the activation; the driver passes bias and the
 * activation with the last K block only.  Edge tiles (mr < MR, nr < NR) are
 * handled inside the kernel: no row or column outside the tile is read from
 * A or C, nor written. */
#ifndef PG_KERNELS_SGEMM_H
#define PG_KERNELS_SGEMM_H

#include <stddef.h>
#include <stdint.h>

#include "../variant.h"

/* ep->flags */
#define PG_SGEMM_ACCUMULATE 1u  /* C = C + A*B instead of C = A*B */
#define PG_SGEMM_PREFETCH   2u  /* ep is the head of a pg_sgemm_epilogue_pf */

/* What the microkernel does after the products (layout read by the asm);
 * the typedef pg_sgemm_epilogue is in kernel_fn.h. */
struct pg_sgemm_epilogue {
    const float *bias;   /* @0: bias of the tile's first column, or NULL */
    int32_t act;         /* @8: pg_act (PG_ACT_NONE, PG_ACT_RELU, PG_ACT_GELU) */
    uint32_t flags;      /* @12: PG_SGEMM_ACCUMULATE, PG_SGEMM_PREFETCH */
};

/* The driver's epilogue (flags has PG_SGEMM_PREFETCH): pf is where the
 * kernel streams prefetches into L2 while it runs (a quarter of the B
 * bytes it reads: 128 bytes every 4 k steps for 32-column panels, 64 for
 * 16; NULL for none), the driver's choice of this tile's share of the
 * next B slice, so that no tile waits for B coming from memory.  A kernel
 * may ignore it. */
typedef struct pg_sgemm_epilogue_pf {
    pg_sgemm_epilogue ep;
    const void *pf;      /* @16 */
} pg_sgemm_epilogue_pf;

/* One tile: mr in 1..MR rows, nr in 1..NR columns, k >= 0 (k = 0 gives the
 * epilogue of a zero product).  a: row i at a + i*lda.  b: k rows of NR
 * floats (the panel's slice, row stride NR).  c: row i at c + i*ldc.
 * The entry point: pg_sgemm_ukernel_fn, the sgemm member of pg_kernel_fn
 * (kernel_fn.h). */

/* params of every sgemm variant */
typedef struct pg_sgemm_params {
    int mr, nr;
} pg_sgemm_params;

void pg_f32_gemm_4x8_c(size_t mr, size_t nr, size_t k, const float *a, size_t lda,
                       const float *b, float *c, size_t ldc, const pg_sgemm_epilogue *ep);
void pg_f32_gemm_6x16_avx2_fma3(size_t mr, size_t nr, size_t k, const float *a, size_t lda,
                                const float *b, float *c, size_t ldc,
                                const pg_sgemm_epilogue *ep);
void pg_f32_gemm_12x32_avx512f(size_t mr, size_t nr, size_t k, const float *a, size_t lda,
                               const float *b, float *c, size_t ldc,
                               const pg_sgemm_epilogue *ep);
void pg_f32_gemm_8x12_neon(size_t mr, size_t nr, size_t k, const float *a, size_t lda,
                           const float *b, float *c, size_t ldc, const pg_sgemm_epilogue *ep);

/* Whether an MR-row tile of A read in place at row stride lda (floats)
 * puts more rows in one L1 set than it has ways for (12 rows at a stride
 * that is a multiple of 4 KiB: BERT's FFN output, 3072 floats): every broadcast
 * would miss L1.  The driver then copies A by tiles, with short K blocks;
 * a caller with room copies the whole A at pg_sgemm_unaliased_lda first
 * (128 x 3072 x 768 on Zen 4: 5-7% faster than the tile copies). */
int pg_sgemm_a_aliases(size_t mr, size_t lda);
/* The least row stride >= K, a whole number of cache lines, that does not. */
size_t pg_sgemm_unaliased_lda(size_t mr, size_t K);

/* The activations of the reference (erff-based GELU): the oracle. */
float pg_sgemm_act_ref(int act, float x);

/* Plain C = A*B (+C) (+bias) (act) on unpacked row-major B: the oracle
 * checkasm compares every kernel and the driver against. */
void pg_sgemm_naive(size_t M, size_t N, size_t K, const float *A, size_t lda,
                    const float *B, size_t ldb, const float *bias, int act, int accumulate,
                    float *C, size_t ldc);

/* B packed for one variant: ceil(N/nr) panels, panel p holding columns
 * p*nr .. p*nr+nr-1 as K rows of nr floats (row k at panel + k*nr), the
 * columns past N zero. */
struct pg_packed_b {
    const pg_variant *variant;  /* the kernel it was packed for */
    size_t K, N;
    size_t nr, panels;
    float *data;                /* 64-byte aligned, panels * K * nr floats */
};

/* Pack B (K x N, row stride ldb) into the layout of `nr`-column panels;
 * dst holds ceil(N/nr) * K * nr floats. */
void pg_sgemm_pack_panels(size_t K, size_t N, const float *B, size_t ldb, size_t nr,
                          float *dst);

extern const pg_kernel_family pg_kernels_sgemm;

#endif

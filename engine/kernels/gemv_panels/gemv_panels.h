/* gemv_panels.h - fp32 matrix-vector product for M = 1 on a weight packed
 * for SGEMM (sgemm.h: ceil(N / nr) panels, panel p holding columns
 * p nr .. p nr + nr - 1 as K rows of nr floats, the columns past N zero):
 *
 *     y[j] = bias[j] + sum_k x[k] * B[k][j]      0 <= j < N
 *
 * A compiled model packs its constant weights once for SGEMM; a decoding
 * step at batch 1 then runs one row of A against them, which streams B once
 * and is bound by memory.  The SGEMM kernel walks the panels one after
 * another (one forward stream); these kernels read several panels at once,
 * several streams the hardware prefetchers run side by side, as gemv does
 * on row-major B.  Measured on AMD Zen 3, B from DRAM (16 copies in turn,
 * 512 x 2048, 768 x 3072, 2048 x 512): 15 GB/s through SGEMM at M = 1,
 * 25-27 GB/s here; on Zen 4 with the AVX-512 32-column panels (512 x 2048,
 * 2048 x 512, 512 x 1536, 128 MiB of copies in turn), 18-24 GB/s through
 * SGEMM, 24-28 GB/s here, within the noise of a plain read's 28 GB/s.
 *
 * nr is the panel width the weight was packed for; an assembly kernel takes
 * only its own (its params' nr), the C reference any.  Nothing past y[N - 1]
 * is written; bias may be NULL.  Each y[j] sums in k order. */
#ifndef PG_KERNELS_GEMV_PANELS_H
#define PG_KERNELS_GEMV_PANELS_H

#include <stddef.h>

#include "../variant.h"

/* params of every variant: the panel width it reads (0: any) */
typedef struct pg_gemv_panels_params {
    int nr;
} pg_gemv_panels_params;

void pg_f32_gemv_panels_c(size_t N, size_t K, const float *x, const float *b, const float *bias,
                          float *y, size_t nr);
void pg_f32_gemv_panels32_avx512f(size_t N, size_t K, const float *x, const float *b,
                                  const float *bias, float *y, size_t nr);
void pg_f32_gemv_panels16_avx2_fma3(size_t N, size_t K, const float *x, const float *b,
                                    const float *bias, float *y, size_t nr);
void pg_f32_gemv_panels12_neon(size_t N, size_t K, const float *x, const float *b,
                               const float *bias, float *y, size_t nr);

/* y = x . B (+ bias) on the variant v, panels split over up to nthreads
 * threads when B is large (0: the default count); nr the packing's width. */
void pg_gemv_panels_run(const pg_variant *v, size_t N, size_t K, const float *x, const float *b,
                        size_t nr, const float *bias, float *y, int nthreads);

extern const pg_kernel_family pg_kernels_gemv_panels;

#endif

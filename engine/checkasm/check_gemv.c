/* check_gemv.c - every gemv and gemv_nk variant against the C reference.
 *
 * Walks the edge sizes for N (partial vectors, the kernels' column block
 * boundary at 16384) and for K (0, fewer rows than one group of four, the
 * 1..3 rows left over), with and without bias, with ldb == N and with a padded ldb whose
 * padding holds NaN (a kernel that reads a padding column poisons y).  y is
 * filled with NaN first, so a kernel must overwrite it, not accumulate.
 * The tolerance per element scales with K and with the magnitude of the
 * products: 2 eps (1 + sqrt K) (|bias_j| + sum_k |x_k B_kj|). */
#include <math.h>
#include <float.h>
#include <stdint.h>
#include <stdio.h>

#include "../kernels/gemv/gemv.h"
#include "../kernels/gemv_nk/gemv_nk.h"
#include "checkasm.h"


/* The buffers every case shares (sized for the largest case). */
typedef struct gemv_bufs {
    float *x, *B, *bias, *y_ref, *tol;
    size_t max_n, max_k, max_b;   /* elements */
} gemv_bufs;

static void fill_case(const gemv_bufs *b, size_t N, size_t K, size_t ldb)
{
    checkasm_fill_f32(b->x, K, -1, 1);
    for (size_t k = 0; k < K; k++) {
        checkasm_fill_f32(b->B + k * ldb, N, -1, 1);
        for (size_t j = N; j < ldb; j++)
            b->B[k * ldb + j] = NAN;
    }
    checkasm_fill_f32(b->bias, N, -1, 1);
}

static void tolerance(const gemv_bufs *b, size_t N, size_t K, size_t ldb, const float *bias)
{
    double scale = 2.0 * FLT_EPSILON * (1.0 + sqrt((double)K));
    for (size_t j = 0; j < N; j++) {
        double s = bias ? fabs(bias[j]) : 0.0;
        for (size_t k = 0; k < K; k++)
            s += fabs((double)b->x[k] * b->B[k * ldb + j]);
        b->tol[j] = (float)(scale * s) + FLT_MIN;
    }
}

void checkasm_check_gemv(void)
{
    declare_func(gemv);
    const pg_kernel_family *op = &pg_kernels_gemv;
    static const size_t ks[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 13, 32 };
    /* Across the 16384-column block boundary, and K larger than small. */
    static const size_t big[][2] = { { 16383, 3 }, { 16384, 2 }, { 16385, 5 }, { 32771, 1 },
                                     { 300, 300 }, { 1000, 257 }, { 4133, 64 } };
    int n_big = checkasm_small() ? 4 : 7;

    /* Room for the largest case: ldb is at most N + 17. */
    gemv_bufs b = { .max_n = 0, .max_k = 300, .max_b = 0 };
    for (int i = 0; i < checkasm_n_sizes + n_big; i++) {
        int is_big = i >= checkasm_n_sizes;
        size_t N = is_big ? big[i - checkasm_n_sizes][0] : checkasm_sizes[i];
        size_t K = is_big ? big[i - checkasm_n_sizes][1] : ks[PG_COUNTOF(ks) - 1];
        if (N + 17 > b.max_n)
            b.max_n = N + 17;
        if (K * (N + 17) > b.max_b)
            b.max_b = K * (N + 17);
    }
    b.x = checkasm_alloc_f32(b.max_k);
    b.B = checkasm_alloc_f32(b.max_b);
    b.bias = checkasm_alloc_f32(b.max_n);
    b.y_ref = checkasm_alloc_f32(b.max_n);
    b.tol = checkasm_alloc_f32(b.max_n);

    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        checkasm_set_funcs(op, v);
        for (int i = 0; i < checkasm_n_sizes + n_big; i++) {
            int is_big = i >= checkasm_n_sizes;
            size_t N = is_big ? big[i - checkasm_n_sizes][0] : checkasm_sizes[i];
            float *y_new = checkasm_alloc_f32(N);
            for (int ki = 0; ki < (is_big ? 1 : PG_COUNTOF(ks)); ki++) {
                size_t K = is_big ? big[i - checkasm_n_sizes][1] : ks[ki];
                for (int with_bias = 0; with_bias < 2; with_bias++) {
                    for (int padded = 0; padded < 2; padded++) {
                        size_t ldb = N + (padded ? 1 + checkasm_rand() % 17 : 0);
                        if (ldb == 0)
                            ldb = 1;
                        const float *bias = with_bias ? b.bias : NULL;
                        fill_case(&b, N, K, ldb);
                        for (size_t j = 0; j < N; j++)
                            b.y_ref[j] = y_new[j] = NAN;
                        call_ref(N, K, b.x, b.B, ldb, bias, b.y_ref);
                        call_new(N, K, b.x, b.B, ldb, bias, y_new);
                        tolerance(&b, N, K, ldb, bias);
                        if (!checkasm_check_f32_tol("y", b.y_ref, y_new, N, b.tol)) {
                            checkasm_fail("  at N=%zu K=%zu ldb=%zu %s", N, K, ldb,
                                          bias ? "bias" : "no bias");
                            goto next_variant;
                        }
                    }
                }
            }
        }
        if (checkasm_bench_enabled()) {
            /* The decode case: 64 MiB of weights, far beyond the caches. */
            size_t N = 4096, K = 4096;
            float *x = checkasm_alloc_f32(K), *B = checkasm_alloc_f32(K * N);
            float *bias = checkasm_alloc_f32(N), *y = checkasm_alloc_f32(N);
            checkasm_fill_f32(x, K, -1, 1);
            checkasm_fill_f32(B, K * N, -1, 1);
            checkasm_fill_f32(bias, N, -1, 1);
            checkasm_bench_label("%zux%zu", K, N);
            checkasm_bench_work(2.0 * N * K, 4.0 * N * K);
            bench_new(N, K, x, B, N, bias, y);
            double copy = pg_measure_copy_gbps((size_t)4 * N * K, 1);
            printf("   yardstick: asm copy of %zu MiB, 1 thread: %.2f GB/s (read + write)\n",
                   (size_t)4 * N * K >> 20, copy);
        }
    next_variant:;
    }
    checkasm_report("gemv");
}

/* gemv_nk (W as N x K rows): the edge sizes for N (groups of four rows and
 * the 1..3 left over) and for K (the 16- and 8-float steps, the masked or
 * lane-by-lane tail), with and without bias, ldw == K and a padded ldw
 * whose padding holds NaN.  Same tolerance as gemv. */
void checkasm_check_gemv_nk(void)
{
    declare_func(gemv_nk);
    const pg_kernel_family *op = &pg_kernels_gemv_nk;
    static const size_t ks[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100 };
    size_t max_n = 0;
    for (int i = 0; i < checkasm_n_sizes; i++)
        max_n = checkasm_sizes[i] > max_n ? checkasm_sizes[i] : max_n;
    size_t max_k = ks[PG_COUNTOF(ks) - 1] + 17;
    float *x = checkasm_alloc_f32(max_k), *W = checkasm_alloc_f32(max_n * max_k);
    float *bias_buf = checkasm_alloc_f32(max_n), *y_ref = checkasm_alloc_f32(max_n);
    float *tol = checkasm_alloc_f32(max_n);

    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        checkasm_set_funcs(op, v);
        for (int i = 0; i < checkasm_n_sizes; i++) {
            size_t N = checkasm_sizes[i];
            float *y_new = checkasm_alloc_f32(N);
            for (int ki = 0; ki < PG_COUNTOF(ks); ki++) {
                size_t K = ks[ki];
                for (int with_bias = 0; with_bias < 2; with_bias++) {
                    for (int padded = 0; padded < 2; padded++) {
                        size_t ldw = K + (padded ? 1 + checkasm_rand() % 17 : 0);
                        const float *bias = with_bias ? bias_buf : NULL;
                        checkasm_fill_f32(x, K, -1, 1);
                        for (size_t n = 0; n < N; n++) {
                            checkasm_fill_f32(W + n * ldw, K, -1, 1);
                            for (size_t k = K; k < ldw; k++)
                                W[n * ldw + k] = NAN;
                        }
                        checkasm_fill_f32(bias_buf, N, -1, 1);
                        for (size_t n = 0; n < N; n++)
                            y_ref[n] = y_new[n] = NAN;
                        call_ref(N, K, x, W, ldw, bias, y_ref);
                        call_new(N, K, x, W, ldw, bias, y_new);
                        double scale = 2.0 * FLT_EPSILON * (1.0 + sqrt((double)K));
                        for (size_t n = 0; n < N; n++) {
                            double s = bias ? fabs(bias[n]) : 0.0;
                            for (size_t k = 0; k < K; k++)
                                s += fabs((double)x[k] * W[n * ldw + k]);
                            tol[n] = (float)(scale * s) + FLT_MIN;
                        }
                        if (!checkasm_check_f32_tol("y", y_ref, y_new, N, tol)) {
                            checkasm_fail("  at N=%zu K=%zu ldw=%zu %s", N, K, ldw,
                                          bias ? "bias" : "no bias");
                            goto next_variant;
                        }
                    }
                }
            }
        }
        if (checkasm_bench_enabled()) {
            size_t N = 4096, K = 4096;
            float *xb = checkasm_alloc_f32(K), *Wb = checkasm_alloc_f32(K * N);
            float *bb = checkasm_alloc_f32(N), *yb = checkasm_alloc_f32(N);
            checkasm_fill_f32(xb, K, -1, 1);
            checkasm_fill_f32(Wb, K * N, -1, 1);
            checkasm_fill_f32(bb, N, -1, 1);
            checkasm_bench_label("%zux%zu", N, K);
            checkasm_bench_work(2.0 * N * K, 4.0 * N * K);
            bench_new(N, K, xb, Wb, K, bb, yb);
        }
    next_variant:;
    }
    checkasm_report("gemv_nk");
}

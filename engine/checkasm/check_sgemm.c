/* check_sgemm.c - every sgemm microkernel, and the driver over it, against
 * the naive C oracle (pg_sgemm_naive, libm erff for GELU).
 *
 * Microkernel: every tile shape mr = 1..MR x nr = 1..NR, k from 0 past one
 * unrolled group, with and without bias, each activation, with and without
 * accumulate-into-C, and strided A and C.  The padding of A (columns k..lda)
 * holds NaN, so a kernel reading past k poisons its tile; the padding of C
 * holds a sentinel that must survive, and C ends at its last element so the
 * guard bytes catch a store past the tile.
 *
 * Driver (pg_sgemm): every M x N x K of the edge sizes, each with a random
 * bias / activation / strides, plus bigger shapes whose K spans several K
 * blocks, on 1 and 2 threads.
 *
 * Tolerance per element: 4 (1 + sqrt K) eps (sum_k |a_ik b_kj| + |bias_j|
 * + |c_ij| when accumulating), the sums taken by the oracle itself on
 * absolute values.  It covers reassociation and the erf approximation of
 * GELU (relative error < 5e-7 of the pre-activation). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../kernels/sgemm/sgemm.h"
#include "checkasm.h"

#define SENTINEL 12345.0f

static const char *act_name(int act)
{
    return act == PG_ACT_RELU ? "relu" : act == PG_ACT_GELU ? "gelu" : "none";
}

/* tol[i*n + j] for an m x n result from A (lda), B (ldb), bias, C0 (ldc) */
static void tolerance(size_t m, size_t n, size_t k, const float *A, size_t lda, const float *B,
                      size_t ldb, const float *bias, const float *C0, size_t ldc, float *absA,
                      float *absB, float *tol)
{
    for (size_t i = 0; i < m; i++)
        for (size_t p = 0; p < k; p++)
            absA[i * k + p] = fabsf(A[i * lda + p]);
    for (size_t p = 0; p < k; p++)
        for (size_t j = 0; j < n; j++)
            absB[p * n + j] = fabsf(B[p * ldb + j]);
    pg_sgemm_naive(m, n, k, absA, k, absB, n, NULL, PG_ACT_NONE, 0, tol, n);
    float scale = 4.0f * (1.0f + sqrtf((float)k)) * FLT_EPSILON;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            float s = tol[i * n + j];
            if (bias)
                s += fabsf(bias[j]);
            if (C0)
                s += fabsf(C0[i * ldc + j]);
            tol[i * n + j] = scale * s + FLT_MIN;
        }
}

/* got (ldc) against ref (ldc) within tol, and the padding of got intact */
static int compare(const char *what, const float *ref, const float *got, size_t m, size_t n,
                   size_t ldc, const float *tol, float *dense)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++)
            dense[i * n + j] = got[i * ldc + j];
    float *dref = dense + m * n;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++)
            dref[i * n + j] = ref[i * ldc + j];
    if (!checkasm_check_f32_tol(what, dref, dense, m * n, tol))
        return 0;
    for (size_t i = 0; i + 1 < m; i++)
        for (size_t j = n; j < ldc; j++)
            if (got[i * ldc + j] != SENTINEL)
                return checkasm_fail("%s: padding of row %zu column %zu overwritten", what, i, j);
    return 1;
}

typedef struct bufs {
    float *A, *B, *bias, *C0, *Cref, *tol, *absA, *absB, *dense, *packed;
    float *cbuf;      /* C under test sits at its end, against the guard bytes */
    size_t cap;
} bufs;

/* clen floats ending at the end of cbuf; the floats before hold SENTINEL */
static float *c_at_end(bufs *b, size_t clen)
{
    for (size_t i = 0; i < b->cap - clen; i++)
        b->cbuf[i] = SENTINEL;
    return b->cbuf + b->cap - clen;
}

static int c_prefix_ok(const bufs *b, size_t clen)
{
    for (size_t i = 0; i < b->cap - clen; i++)
        if (b->cbuf[i] != SENTINEL)
            return checkasm_fail("C: store %zu floats before the start of C", b->cap - clen - i);
    return 1;
}

/* A (m x k, lda, NaN padding), B (k x n dense), bias, C0 (m x n, ldc,
 * sentinel padding) */
static void fill(bufs *b, size_t m, size_t n, size_t k, size_t lda, size_t ldc)
{
    for (size_t i = 0; i < m; i++) {
        checkasm_fill_f32(b->A + i * lda, k, -1, 1);
        for (size_t p = k; p < lda; p++)
            b->A[i * lda + p] = NAN;
    }
    checkasm_fill_f32(b->B, k * n, -1, 1);
    checkasm_fill_f32(b->bias, n, -1, 1);
    for (size_t i = 0; i < m; i++) {
        checkasm_fill_f32(b->C0 + i * ldc, n, -2, 2);
        for (size_t j = n; j < ldc; j++)
            b->C0[i * ldc + j] = SENTINEL;
    }
}

/* C buffers that end right at the last element, so guards catch overruns */
static void prepare_c(float *dst, const float *C0, size_t m, size_t n, size_t ldc, int accumulate)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < ldc && i * ldc + j < (m - 1) * ldc + n; j++)
            dst[i * ldc + j] = (j < n && !accumulate) ? NAN : C0[i * ldc + j];
}

static int check_tiles(const pg_kernel_family *op, int v, bufs *b)
{
    declare_func(sgemm);
    checkasm_set_funcs(op, v);
    const pg_sgemm_params *prm = op->variants[v].params;
    size_t MR = (size_t)prm->mr, NR = (size_t)prm->nr;
    static const size_t ks[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 17, 64, 131 };
    int nk = checkasm_small() ? 8 : PG_COUNTOF(ks);

    for (size_t mr = 1; mr <= MR; mr++)
        for (size_t nr = 1; nr <= NR; nr++)
            for (int ki = 0; ki < nk; ki++) {
                size_t k = ks[ki];
                for (int mode = 0; mode < 12; mode++) {
                    int act = mode % 3, with_bias = (mode / 3) & 1, accumulate = mode / 6;
                    size_t lda = k + (mode & 1 ? 0 : 1 + checkasm_rand() % 5);
                    size_t ldc = nr + (mode & 2 ? 0 : 1 + checkasm_rand() % 5);
                    fill(b, mr, nr, k, lda, ldc);
                    pg_sgemm_pack_panels(k, nr, b->B, nr, NR, b->packed);
                    size_t clen = (mr - 1) * ldc + nr;
                    float *c_new = c_at_end(b, clen);
                    prepare_c(b->Cref, b->C0, mr, nr, ldc, accumulate);
                    prepare_c(c_new, b->C0, mr, nr, ldc, accumulate);
                    const float *bias = with_bias ? b->bias : NULL;
                    /* every other case in the driver's form: the L2
                     * prefetch stream (pointed at B, or NULL) must not
                     * change a result */
                    pg_sgemm_epilogue_pf epf = { { bias, act, accumulate ? PG_SGEMM_ACCUMULATE : 0 },
                                                 mode & 4 ? b->B : NULL };
                    if (mode & 1)
                        epf.ep.flags |= PG_SGEMM_PREFETCH;
                    pg_sgemm_naive(mr, nr, k, b->A, lda, b->B, nr, bias, act, accumulate,
                                   b->Cref, ldc);
                    call_new(mr, nr, k, b->A, lda, b->packed, c_new, ldc, &epf.ep);
                    tolerance(mr, nr, k, b->A, lda, b->B, nr, bias, accumulate ? b->C0 : NULL,
                              ldc, b->absA, b->absB, b->tol);
                    if (!compare("C", b->Cref, c_new, mr, nr, ldc, b->tol, b->dense) ||
                        !c_prefix_ok(b, clen) || !checkasm_guards_ok(b->cbuf, "C"))
                        return checkasm_fail("  tile mr=%zu nr=%zu k=%zu lda=%zu ldc=%zu bias=%d "
                                             "act=%s accumulate=%d",
                                             mr, nr, k, lda, ldc, with_bias, act_name(act),
                                             accumulate);
                }
            }

    if (checkasm_bench_enabled()) {
        size_t k = 256;
        float *c = checkasm_alloc_f32(MR * NR);
        checkasm_fill_f32(b->A, MR * k, -1, 1);
        checkasm_fill_f32(b->packed, k * NR, -1, 1);
        pg_sgemm_epilogue ep = { NULL, PG_ACT_NONE, 0 };
        checkasm_bench_label("tile %zux%zu k=%zu", MR, NR, k);
        checkasm_bench_work(2.0 * MR * NR * k, 0);
        bench_new(MR, NR, k, b->A, k, b->packed, c, NR, &ep);
    }
    return 1;
}

/* The driver's bigger shapes: K over several K blocks; two with A taller
 * than half of a 2 MiB L2 (1500 rows x 184 floats), which the driver runs
 * by copying A tile by tile (one thread), in one K block of the AVX2
 * kernel and in several; and last two with K a multiple of 1024 floats,
 * read with lda = K: rows that share an L1 set, which the AVX-512 kernel's
 * 12-row tiles also copy, in K blocks cut to fit the copy. */
#define BIG_SHAPES                                                                   \
    { { 64, 129, 300 }, { 13, 29, 1100 }, { 37, 50, 1000 }, { 100, 300, 777 },      \
      { 8, 1536, 384 }, { 2000, 40, 400 }, { 1500, 20, 1100 }, { 40, 70, 1024 },    \
      { 25, 40, 2048 } }

/* one driver case through the public API, variant v */
static int check_driver_case(int v, bufs *b, size_t M, size_t N, size_t K, int threads)
{
    int act = (int)(checkasm_rand() % 3), with_bias = checkasm_rand() & 1;
    int aliasing = K >= 1024 && K % 1024 == 0;   /* BIG_SHAPES' last two keep lda = K */
    size_t lda = K + (aliasing || checkasm_rand() & 1 ? 0 : 1 + checkasm_rand() % 7);
    size_t ldc = N + (checkasm_rand() & 1 ? 0 : 1 + checkasm_rand() % 7);
    fill(b, M, N, K, lda, ldc);
    const float *bias = with_bias ? b->bias : NULL;
    size_t clen = M ? (M - 1) * ldc + N : 0;
    float *c_new = c_at_end(b, clen);
    if (M) {
        prepare_c(b->Cref, b->C0, M, N, ldc, 0);
        prepare_c(c_new, b->C0, M, N, ldc, 0);
    }
    pg_sgemm_naive(M, N, K, b->A, lda, b->B, N, bias, act, 0, b->Cref, ldc);
    pg_status s = pg_sgemm(v, M, N, K, b->A, lda, b->B, N, bias, act, c_new, ldc, threads);
    if (s != PG_OK)
        return checkasm_fail("pg_sgemm %zux%zux%zu: %s", M, N, K, pg_last_error());
    tolerance(M, N, K, b->A, lda, b->B, N, bias, NULL, ldc, b->absA, b->absB, b->tol);
    if (!compare("C", b->Cref, c_new, M, N, ldc, b->tol, b->dense) || !c_prefix_ok(b, clen) ||
        !checkasm_guards_ok(b->cbuf, "C"))
        return checkasm_fail("  pg_sgemm M=%zu N=%zu K=%zu lda=%zu ldc=%zu bias=%d act=%s "
                             "threads=%d", M, N, K, lda, ldc, with_bias, act_name(act), threads);
    return 1;
}

static int check_driver(int v, bufs *b)
{
    static const size_t edge[] = { 0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33 };
    static const size_t big[][3] = BIG_SHAPES;
    int small = checkasm_small();
    int n_edge = PG_COUNTOF(edge), n_big = small ? 2 : PG_COUNTOF(big);
    for (int threads = 1; threads <= 2; threads++) {
        for (int i = 0; i < n_edge; i++)
            for (int j = 0; j < n_edge; j++)
                for (int l = 0; l < n_edge; l++) {
                    /* emulated: every edge M and N, K from a thinner set */
                    if (small && (l % 3) != 0 && edge[l] > 3)
                        continue;
                    if (!check_driver_case(v, b, edge[i], edge[j], edge[l], threads))
                        return 0;
                }
        for (int i = 0; i < n_big; i++)
            if (!check_driver_case(v, b, big[i][0], big[i][1], big[i][2], threads))
                return 0;
    }
    return 1;
}

/* ---- driver benchmarks ------------------------------------------------ */

/* One thread runs on the caller and is timed in its CPU time (a shared,
 * busy machine steals time slices, not cycles); two threads in wall time. */
static void bench_driver(int v, size_t M, size_t N, size_t K, double peak1)
{
    float *A = checkasm_alloc_f32(M * K), *B = checkasm_alloc_f32(K * N);
    float *C = checkasm_alloc_f32(M * N);
    checkasm_fill_f32(A, M * K, -1, 1);
    checkasm_fill_f32(B, K * N, -1, 1);
    pg_packed_b *pb = NULL;
    if (pg_sgemm_pack(v, K, N, B, N, &pb) != PG_OK)
        return;
    double flops = 2.0 * M * N * K;
    for (int t = 1; t <= 2; t++) {
        int calls = 0;
        double t0 = checkasm_clock_s(t);
        while (checkasm_clock_s(t) - t0 < 0.02 || calls < 2) {
            pg_sgemm_packed(M, A, K, pb, NULL, PG_ACT_NONE, C, N, t);
            calls++;
        }
        /* best of 7 batches */
        double best = 1e30;
        for (int rep = 0; rep < 7; rep++) {
            double s = checkasm_clock_s(t);
            for (int c = 0; c < calls; c++)
                pg_sgemm_packed(M, A, K, pb, NULL, PG_ACT_NONE, C, N, t);
            double sec = (checkasm_clock_s(t) - s) / calls;
            if (sec < best)
                best = sec;
        }
        double g = flops / best * 1e-9;
        printf("   bench %-34s driver %4zux%4zux%4zu (MxKxN) %d thread%s %8.2f GFLOP/s"
               "  %5.1f%% of %d x 1-thread peak\n",
               pg_kernels_sgemm.variants[v].name, M, K, N, t, t > 1 ? "s" : " ", g,
               100.0 * g / (peak1 * t), t);
    }
    pg_packed_b_free(pb);
}

void checkasm_check_sgemm(void)
{
    const pg_kernel_family *op = &pg_kernels_sgemm;
    /* sizes of the largest case of each buffer: the edge shapes (up to
     * 33 x 33 x 33), the tiles (MR <= 16, NR <= 32, k <= 131; the tile
     * bench MR x 256 of A, 256 x NR packed) and BIG_SHAPES, strides padded
     * by up to 8 */
    static const size_t big[][3] = BIG_SHAPES;
    size_t na = 16 * 256, nb = 131 * 33, nc = 33 * 41, nmn = 33 * 41, nmk = 33 * 131, maxn = 33;
    for (int i = 0; i < PG_COUNTOF(big); i++) {
        size_t M = big[i][0], N = big[i][1], K = big[i][2];
        na = M * (K + 8) > na ? M * (K + 8) : na;
        nb = K * N > nb ? K * N : nb;
        nc = M * (N + 8) > nc ? M * (N + 8) : nc;
        nmn = M * N > nmn ? M * N : nmn;
        nmk = M * K > nmk ? M * K : nmk;
        maxn = N > maxn ? N : maxn;
    }
    bufs b;
    b.A = checkasm_alloc_f32(na);
    b.B = checkasm_alloc_f32(nb);
    b.bias = checkasm_alloc_f32(maxn);
    b.C0 = checkasm_alloc_f32(nc);
    b.Cref = checkasm_alloc_f32(nc);
    b.tol = checkasm_alloc_f32(nmn);
    b.dense = checkasm_alloc_f32(2 * nmn);
    b.absA = checkasm_alloc_f32(nmk);
    b.absB = checkasm_alloc_f32(nb);
    b.packed = checkasm_alloc_f32(256 * 32);
    b.cap = nc;
    b.cbuf = checkasm_alloc_f32(b.cap);

    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        if (!check_tiles(op, v, &b))
            continue;
        if (!check_driver(v, &b) || !checkasm_guards_ok(b.cbuf, "C"))
            continue;
        if (checkasm_bench_enabled()) {
            double peak = pg_measure_fma_peak_gflops(1);
            printf("   yardstick: FMA peak, 1 thread %.2f GFLOP/s, 2 threads %.2f GFLOP/s\n",
                   peak, pg_measure_fma_peak_gflops(2));
            static const size_t shapes[][3] = { { 256, 256, 256 }, { 512, 512, 512 },
                                                { 1024, 1024, 1024 }, { 128, 384, 384 },
                                                { 128, 384, 1536 }, { 128, 1536, 384 },
                                                /* BERT-base's layer products */
                                                { 128, 768, 2304 }, { 128, 3072, 768 } };
            for (int i = 0; i < PG_COUNTOF(shapes); i++)
                bench_driver(v, shapes[i][0], shapes[i][2], shapes[i][1], peak);
        }
    }
    checkasm_report("sgemm");
}

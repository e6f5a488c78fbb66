/* check_gemm_bf16.c - the bf16 GEMM microkernels (gemm_bf16) and the
 * fp32 -> bf16 converters (cvt_bf16) against their C references.
 *
 * Converters: bit exact on random rows of every edge length and on the
 * values the rounding rules single out: exact ties (low half 0x8000, odd
 * and even), denormals (to a signed zero), infinities, NaNs (quiet), the
 * largest finite values (rounding up to infinity).
 *
 * Microkernel: every tile shape mr = 1..MR x nr = 1..32, k (even) from 0
 * past one unrolled group, each activation, with and without bias and
 * accumulate-into-C, strided A and C.  A's padding (k..lda) holds bf16
 * NaNs, so a kernel reading past k poisons its tile; C's padding holds a
 * sentinel, and C ends at the guard bytes.  The products of two bf16 are
 * exact in fp32, so the tolerance is sgemm's, 4 (1 + sqrt k) eps
 * (sum |a b| + |bias| + |c|), over the sum order (and GELU's erf).
 *
 * Driver (pg_bf16_convert_rows + pg_bf16_gemm_packed): the variant against
 * the reference's through the same driver, edge shapes, col0 > 0, odd K,
 * MiniLM shapes, 1 and 2 threads. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../gguf/ggml_types.h"
#include "../kernels/gemm_bf16/gemm_bf16.h"
#include "checkasm.h"

#define SENTINEL 12345.0f

static uint32_t bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

static float from_bits(uint32_t u)
{
    float x;
    memcpy(&x, &u, 4);
    return x;
}

static int check_cvt(void)
{
    declare_func(cvt_bf16);
    const pg_kernel_family *op = &pg_kernels_cvt_bf16;
    float *x = checkasm_alloc_f32(1100);
    uint16_t *yr = checkasm_alloc(2200), *yn = checkasm_alloc(2200);
    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        checkasm_set_funcs(op, v);
        for (int i = 0; i < checkasm_n_sizes; i++)
            for (int kind = 0; kind < 3; kind++) {
                size_t n = checkasm_sizes[i] > 1100 ? 1100 : checkasm_sizes[i];
                for (size_t j = 0; j < n; j++) {
                    uint32_t r = checkasm_rand();
                    if (kind == 0)
                        x[j] = checkasm_randf(-10, 10);
                    else if (kind == 1)   /* ties and near ties */
                        x[j] = from_bits((bits(checkasm_randf(-3, 3)) & 0xffff0000u) |
                                         (r & 1 ? 0x8000u : 0x7fffu + (r & 2)));
                    else {
                        static const uint32_t special[] = {
                            0x00000001u, 0x807fffffu, 0x00400000u, 0x80000000u, 0x00000000u,
                            0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u, 0x7f800001u,
                            0x7f7fffffu, 0xff7fffffu, 0x00800000u, 0x3f808000u, 0x3f818000u };
                        x[j] = from_bits(special[r % PG_COUNTOF(special)]);
                    }
                }
                memset(yr, 0, 2200);
                memset(yn, 0, 2200);
                call_ref(n, x, yr);
                call_new(n, x, yn);
                if (memcmp(yr, yn, 2200) || !checkasm_guards_ok(yn, "y")) {
                    size_t at = 0;
                    while (at < n && yr[at] == yn[at])
                        at++;
                    checkasm_fail("n=%zu kind=%d: element %zu (%08x) gives %04x, want %04x", n,
                                  kind, at, at < n ? bits(x[at]) : 0, at < n ? yn[at] : 0,
                                  at < n ? yr[at] : 0);
                }
            }
        size_t n = 1536;
        checkasm_fill_f32(x, 1100, -1, 1);
        checkasm_bench_label("n=%d", 1024);
        checkasm_bench_work(0, 6.0 * 1024);
        (void)n;
        bench_new(1024, x, yn);
    }
    return 1;
}

typedef struct bbufs {
    float *Af, *B, *bias, *C0, *Cref, *cbuf, *tol;
    uint16_t *A, *packed;
    size_t cap;
} bbufs;

static int check_tiles(const pg_kernel_family *op, int v, bbufs *b)
{
    declare_func(gemm_bf16);
    checkasm_set_funcs(op, v);
    const pg_bf16_params *prm = op->variants[v].params;
    size_t MR = (size_t)prm->mr, kstep = (size_t)prm->kstep;
    static const size_t ks[] = { 0, 2, 4, 6, 8, 18, 32, 64, 96, 130, 160 };
    int nk = checkasm_small() ? 8 : PG_COUNTOF(ks);
    for (size_t mr = 1; mr <= MR; mr++)
        for (size_t nr = 1; nr <= 32; nr++)
            for (int ki = 0; ki < nk; ki++)
                for (int mode = 0; mode < 12; mode++) {
                    if (checkasm_small() && (nr % 4) != 1 && nr != 32 && nr != 16)
                        continue;
                    size_t k = ks[ki];
                    if (k % kstep)
                        continue;
                    int act = mode % 3, with_bias = (mode / 3) & 1, acc = mode / 6;
                    size_t lda = k + (mode & 1 ? 0 : 2 + 2 * (checkasm_rand() % 4));
                    size_t ldc = nr + (mode & 2 ? 0 : 1 + checkasm_rand() % 5);
                    for (size_t i = 0; i < mr * lda; i++)
                        b->A[i] = 0x7fc1;   /* NaN padding */
                    for (size_t i = 0; i < mr; i++) {
                        checkasm_fill_f32(b->Af, k, -1, 1);
                        pg_cvt_f32_bf16_c(k, b->Af, b->A + i * lda);
                    }
                    checkasm_fill_f32(b->B, k * 32, -1, 1);
                    checkasm_fill_f32(b->bias, 32, -1, 1);
                    pg_bf16_pack_f32(k, nr, b->B, 32, b->packed);
                    size_t clen = (mr - 1) * ldc + nr;
                    float *cnew = b->cbuf + b->cap - clen, *cref = b->Cref;
                    for (size_t i = 0; i < b->cap - clen; i++)
                        b->cbuf[i] = SENTINEL;
                    for (size_t i = 0; i < clen; i++) {
                        float c0 = (i % ldc) < nr ? checkasm_randf(-2, 2) : SENTINEL;
                        b->C0[i] = c0;
                        cnew[i] = cref[i] = acc || (i % ldc) >= nr ? c0 : NAN;
                    }
                    pg_sgemm_epilogue ep = { with_bias ? b->bias : NULL, act,
                                             acc ? PG_SGEMM_ACCUMULATE : 0 };
                    call_ref(mr, nr, k, b->A, lda, b->packed, cref, ldc, &ep);
                    call_new(mr, nr, k, b->A, lda, b->packed, cnew, ldc, &ep);
                    /* tolerance */
                    float scale = 4.0f * (1.0f + sqrtf((float)k)) * FLT_EPSILON;
                    int bad = 0;
                    for (size_t i = 0; i < mr && !bad; i++)
                        for (size_t j = 0; j < ldc && i * ldc + j < clen; j++) {
                            float g = cnew[i * ldc + j], r = cref[i * ldc + j];
                            if (j >= nr) {
                                bad |= g != SENTINEL;
                                continue;
                            }
                            float s = 0;
                            for (size_t p = 0; p < k; p++)
                                s += fabsf(pg_bf16_to_f32(b->A[i * lda + p]) *
                                           pg_bf16_packed_at(b->packed, k, p, j));
                            s += (with_bias ? fabsf(b->bias[j]) : 0) +
                                 (acc ? fabsf(b->C0[i * ldc + j]) : 0);
                            if (!(fabsf(g - r) <= scale * s + FLT_MIN))
                                bad = 1;
                        }
                    for (size_t i = 0; i < b->cap - clen; i++)
                        bad |= b->cbuf[i] != SENTINEL;
                    if (bad || !checkasm_guards_ok(b->cbuf, "C"))
                        return checkasm_fail("tile mr=%zu nr=%zu k=%zu lda=%zu ldc=%zu bias=%d "
                                             "act=%d accumulate=%d", mr, nr, k, lda, ldc,
                                             with_bias, act, acc);
                }
    if (checkasm_bench_enabled()) {
        size_t k = 256;
        for (size_t i = 0; i < MR * k; i++)
            b->A[i] = 0x3f80;
        checkasm_fill_f32(b->B, k * 32, -1, 1);
        pg_bf16_pack_f32(k, 32, b->B, 32, b->packed);
        pg_sgemm_epilogue ep = { NULL, PG_ACT_NONE, 0 };
        checkasm_bench_label("tile %zux32 k=%zu", MR, k);
        checkasm_bench_work(2.0 * MR * 32 * k, 0);
        bench_new(MR, 32, k, b->A, k, b->packed, b->cbuf, 32, &ep);
    }
    if (prm->finish)   /* the AMX kernels leave the tiles configured */
        prm->finish();
    return 1;
}

typedef struct dbufs {
    float *A, *B, *bias, *Cref, *Cnew;
    uint16_t *Ab, *packed;
} dbufs;

static int driver_case(const pg_kernel_family *op, int v, dbufs *d, size_t M, size_t N,
                       size_t K, size_t col0, int threads)
{
    const pg_variant *ref = &op->variants[op->count - 1], *var = &op->variants[v];
    const pg_variant *cvt = &pg_kernels_cvt_bf16.variants[pg_kernels_cvt_bf16.count - 1];
    size_t Nt = col0 + N, ld = pg_bf16_kp(K) + 2, ldc = N + 3;
    checkasm_fill_f32(d->A, M * K, -2, 2);
    checkasm_fill_f32(d->B, K * Nt, -1, 1);
    checkasm_fill_f32(d->bias, Nt, -1, 1);
    pg_bf16_pack_f32(K, Nt, d->B, Nt, d->packed);
    pg_bf16_convert_rows(cvt, M, K, d->A, K, d->Ab, ld);
    int act = (int)(checkasm_rand() % 3), with_bias = (int)(checkasm_rand() & 1);
    const float *bias = with_bias ? d->bias + col0 : NULL;
    pg_status s1 = pg_bf16_gemm_packed(ref, M, N, K, d->Ab, ld, d->packed, col0, bias, act, d->Cref, ldc, 1);
    pg_status s2 = pg_bf16_gemm_packed(var, M, N, K, d->Ab, ld, d->packed, col0, bias, act, d->Cnew, ldc, threads);
    if (s1 || s2)
        return checkasm_fail("driver M=%zu N=%zu K=%zu: %s", M, N, K, pg_last_error());
    float tol = 4.0f * (1.0f + sqrtf((float)K)) * FLT_EPSILON * (2.0f * (float)K + 1.0f) + 1e-6f;
    if (!checkasm_check_f32_2d("C", d->Cref, ldc, d->Cnew, ldc, M, N, tol, 0))
        return checkasm_fail("  driver M=%zu N=%zu K=%zu col0=%zu act=%d threads=%d", M, N, K,
                             col0, act, threads);
    return 1;
}

static int check_driver(const pg_kernel_family *op, int v, dbufs *d)
{
    static const size_t edge[] = { 1, 2, 3, 5, 12, 13, 31, 32, 33 };
    static const size_t big[][3] = { { 128, 384, 384 }, { 128, 1536, 384 }, { 128, 384, 1536 },
                                     { 37, 100, 77 } };
    int small = checkasm_small();
    for (int t = 1; t <= 2; t++) {
        for (int i = 0; i < PG_COUNTOF(edge); i++)
            for (int j = 0; j < PG_COUNTOF(edge); j++)
                for (int l = 0; l < PG_COUNTOF(edge); l++) {
                    if (small && l % 3)
                        continue;
                    if (!driver_case(op, v, d, edge[i], edge[j], edge[l], (i + j) % 2 ? 32 : 0, t))
                        return 0;
                }
        for (int i = 0; i < (small ? 1 : PG_COUNTOF(big)); i++)
            if (!driver_case(op, v, d, big[i][0], big[i][1], big[i][2], 0, t))
                return 0;
    }
    return 1;
}

static void bench_driver(const pg_variant *var, dbufs *d, size_t M, size_t N, size_t K, double peak1)
{
    size_t kp = pg_bf16_kp(K);
    checkasm_fill_f32(d->B, K * N, -1, 1);
    pg_bf16_pack_f32(K, N, d->B, N, d->packed);
    for (size_t i = 0; i < M * kp; i++)
        d->Ab[i] = 0x3f80;
    double flops = 2.0 * M * N * K;
    for (int t = 1; t <= 2; t++) {
        int calls = 0;
        double t0 = checkasm_clock_s(t);
        while (checkasm_clock_s(t) - t0 < 0.02 || calls < 2) {
            pg_bf16_gemm_packed(var, M, N, K, d->Ab, kp, d->packed, 0, NULL, 0, d->Cnew, N, t);
            calls++;
        }
        double best = 1e30;
        for (int rep = 0; rep < 7; rep++) {
            double s = checkasm_clock_s(t);
            for (int c = 0; c < calls; c++)
                pg_bf16_gemm_packed(var, M, N, K, d->Ab, kp, d->packed, 0, NULL, 0, d->Cnew, N, t);
            double sec = (checkasm_clock_s(t) - s) / calls;
            best = sec < best ? sec : best;
        }
        double g = flops / best * 1e-9;
        printf("   bench %-34s driver %4zux%4zux%4zu (MxKxN) %d thread%s %8.2f GFLOP/s"
               "  %5.1f%% of %d x 1-thread peak\n", var->name, M, K, N, t,
               t > 1 ? "s" : " ", g, 100.0 * g / (peak1 * t), t);
    }
}

void checkasm_check_gemm_bf16(void)
{
    const pg_kernel_family *op = &pg_kernels_gemm_bf16;
    bbufs b;
    b.Af = checkasm_alloc_f32(300);
    b.B = checkasm_alloc_f32(260 * 32);
    b.bias = checkasm_alloc_f32(32);
    b.cap = 32 * 40;
    b.C0 = checkasm_alloc_f32(b.cap);
    b.Cref = checkasm_alloc_f32(b.cap);
    b.cbuf = checkasm_alloc_f32(b.cap);
    b.tol = checkasm_alloc_f32(b.cap);
    b.A = checkasm_alloc(32 * 300 * 2);
    b.packed = checkasm_alloc(pg_bf16_packed_bytes(260, 32));
    size_t MM = 1024, NN = 1536 + 64, KK = 1536;
    dbufs d;
    d.A = checkasm_alloc_f32(MM * KK);
    d.B = checkasm_alloc_f32(KK * NN);
    d.bias = checkasm_alloc_f32(NN);
    d.Ab = checkasm_alloc(MM * (KK + 4) * 2);
    d.packed = checkasm_alloc(pg_bf16_packed_bytes(KK, NN));
    d.Cref = checkasm_alloc_f32(MM * (NN + 3));
    d.Cnew = checkasm_alloc_f32(MM * (NN + 3));
    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        if (!check_tiles(op, v, &b) || !check_driver(op, v, &d))
            continue;
        if (checkasm_bench_enabled()) {
            int amx = !strcmp(op->variants[v].isa, "amx");
            double peak = amx ? pg_measure_amx_bf16_peak_gflops(1) : pg_measure_bf16_peak_gflops(1);
            printf("   yardstick: %s peak, 1 thread %.2f GFLOP/s, 2 threads %.2f GFLOP/s\n",
                   amx ? "tdpbf16ps" : "vdpbf16ps",
                   peak, amx ? pg_measure_amx_bf16_peak_gflops(2) : pg_measure_bf16_peak_gflops(2));
            static const size_t shapes[][3] = { { 128, 384, 384 }, { 128, 384, 1536 },
                                                { 128, 1536, 384 }, { 1024, 384, 1536 },
                                                { 512, 512, 512 } };
            for (int i = 0; i < PG_COUNTOF(shapes); i++)
                bench_driver(&op->variants[v], &d, shapes[i][0], shapes[i][2], shapes[i][1], peak);
        }
    }
    check_cvt();
    checkasm_report("gemm_bf16");
}

/* check_gemm_u8s8.c - the int8 GEMM microkernels (gemm_u8s8) and the
 * dynamic activation quantiser (quantize_u8) against their C references.
 *
 * Every variant must equal the reference bit for bit: the integer part is
 * exact int32 arithmetic, and the epilogue is the same fp32 operations in
 * the same order (no FMA), the same round-half-even, the same clamps.
 *
 * Microkernel: mr = 1..MR, nr over the edges 1..32 of a panel, k (a
 * multiple of 4) from 0 past one unrolled group, each output mode (F32
 * with and without bias, I32, U8, S8), symmetric weights and weights with
 * zero points; A rows strided with junk past k (for a kernel with wide_a,
 * half the cases give A widened as the driver does, with junk past k, and
 * junk as A's bytes), C strided with a sentinel
 * in its padding and ending at the guard bytes (a store past the tile or
 * before it is caught).  Random u8 / s8 values cover 0, 255, -128, 127;
 * for a variant exact only while 2 a |b| <= pair_max (avx2_maddubs:
 * 32767), operands in one of its two ranges at random (8-bit activations
 * with weights in [-64, 64], or activations in [0, 127] with any s8),
 * with tiles at the ends of both (the saturation it must not hit).
 *
 * Driver (pg_u8s8_quantize_rows + pg_u8s8_gemm_packed): the variant against
 * the reference through the same driver on edge shapes (M, N, K over 0..33,
 * odd K, N off the panel width, col0 > 0) and MiniLM's shapes, 1 and 2
 * threads.  Quantiser: random rows of every edge length, all-zero rows,
 * one-signed rows, huge and tiny values, exact ties; the per-tensor
 * quantiser (quantize_u8_span) likewise, saturating and at ties; the
 * range (minmax_keys) with -0, denormals, NaNs and infinities.  The row
 * quantiser to [0, 255] and to [0, 127]. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../kernels/gemm_u8s8/gemm_u8s8.h"
#include "checkasm.h"

#define SENT 0x5a

static int out_es(int mode) { return mode == PG_U8S8_OUT_U8 || mode == PG_U8S8_OUT_S8 ? 1 : 4; }

typedef struct ubufs {
    uint8_t *A;          /* 12 x (k + pad) */
    uint16_t *Aw;        /* A widened, for a kernel with wide_a (ep->a_wide) */
    uint8_t *Ajunk;      /* what such a kernel gets as A when it is given Aw */
    int8_t *B;           /* k x 32 */
    void *packed;
    int32_t *a_zero, *row_corr;
    float *a_scale, *bias, *b_scale;
    int32_t *b_zero;
    uint8_t *cref, *cbuf;   /* cbuf: the tile under test at its end */
    size_t cap;             /* bytes of cref / cbuf */
} ubufs;

/* The operand ranges of one case for variant v: activations [0, *a_max],
 * weights [-*w_max, *w_max] (128: any s8); for a pair-limited variant one
 * of its two at random. */
static void ranges(const pg_variant *v, int *a_max, int *w_max)
{
    int pair = ((const pg_u8s8_params *)v->params)->pair_max;
    *a_max = 255, *w_max = 128;
    if (pair >= 2 * 255 * 128)
        return;
    if (checkasm_rand() & 1)
        *w_max = pg_u8s8_weight_qmax_for(v);
    else
        *a_max = pair / (2 * 128);
}

/* a weight in [-w_max, w_max] (w_max 128: any s8), one in 4 at an end */
static int8_t rand_weight(int w_max)
{
    int hi = w_max < 127 ? w_max : 127;
    uint32_t r = checkasm_rand();
    if ((r & 3) == 0)
        return (int8_t)((r & 4) ? hi : -w_max);
    return (int8_t)((int)((r >> 3) % (uint32_t)(hi + w_max + 1)) - w_max);
}

/* A widened to int16 into b->Aw (row stride ldw, junk past k, that the
 * kernel must not read), as the driver hands it to a wide_a kernel; A's
 * bytes for that call junk too */
static const uint16_t *widen_tile(ubufs *b, size_t mr, size_t k, size_t lda, size_t ldw)
{
    for (size_t i = 0; i < mr; i++)
        for (size_t p = 0; p < ldw; p++)
            b->Aw[i * ldw + p] = p < k ? b->A[i * lda + p] : (uint16_t)(checkasm_rand() | 0x100);
    for (size_t i = 0; i < mr * lda; i++)
        b->Ajunk[i] = (uint8_t)checkasm_rand();
    return b->Aw;
}

/* A's bytes in [0, a_max]: random, or (saturate) all a_max against weights
 * at the ends */
static void fill_tile(ubufs *b, size_t mr, size_t k, size_t lda, int zeros, int a_max, int w_max)
{
    int saturate = (checkasm_rand() & 7) == 0;
    for (size_t i = 0; i < mr * lda; i++)
        b->A[i] = (uint8_t)(saturate ? a_max : (int)(checkasm_rand() % (uint32_t)(a_max + 1)));
    for (size_t i = 0; i < k * 32; i++)
        b->B[i] = saturate ? (int8_t)((checkasm_rand() & 1) ? (w_max < 127 ? w_max : 127) : -w_max)
                           : rand_weight(w_max);
    for (size_t j = 0; j < 32; j++) {
        b->b_scale[j] = checkasm_randf(1e-4f, 2e-2f);
        b->bias[j] = checkasm_randf(-2, 2);
        b->b_zero[j] = zeros ? (int32_t)(checkasm_rand() % 256) - 128 : 0;
    }
    for (size_t i = 0; i < mr; i++) {
        b->a_zero[i] = (int32_t)(checkasm_rand() % (uint32_t)(a_max + 1));
        b->a_scale[i] = checkasm_randf(1e-3f, 5e-2f);
        int32_t s = 0;
        for (size_t p = 0; p < k; p++)
            s += b->A[i * lda + p];
        b->row_corr[i] = s - (int32_t)k * b->a_zero[i];
    }
}

static int check_tiles(const pg_kernel_family *op, int v, ubufs *b)
{
    declare_func(gemm_u8s8);
    checkasm_set_funcs(op, v);
    const pg_u8s8_params *prm = op->variants[v].params;
    size_t MR = (size_t)prm->mr;
    /* 516: past the avx2 kernel's 512-k chunk of widened A (not under emulation) */
    static const size_t ks[] = { 0, 4, 8, 12, 16, 20, 28, 64, 68, 132, 192, 516 };
    static const size_t nrs[] = { 1, 2, 3, 5, 8, 15, 16, 17, 24, 31, 32 };
    int nk = checkasm_small() ? 10 : PG_COUNTOF(ks);
    for (size_t mr = 1; mr <= MR; mr++)
        for (int ni = 0; ni < PG_COUNTOF(nrs); ni++)
            for (int ki = 0; ki < nk; ki++)
                for (int mode = 0; mode < 6; mode++) {
                    size_t nr = nrs[ni], k = ks[ki];
                    int out = mode == 5 ? PG_U8S8_OUT_F32 : mode % 4;   /* 0, 1, 2, 3, 0(no bias) */
                    int with_bias = mode == 0 || mode >= 2, zeros = (int)(checkasm_rand() & 1);
                    if (mode == 4)
                        out = PG_U8S8_OUT_F32, with_bias = 0;
                    size_t lda = k + (checkasm_rand() & 1 ? 0 : 1 + checkasm_rand() % 9);
                    size_t ldc = nr + (checkasm_rand() & 1 ? 0 : 1 + checkasm_rand() % 5);
                    size_t es = (size_t)out_es(out), clen = ((mr - 1) * ldc + nr) * es;
                    int a_max, w_max;
                    ranges(&op->variants[v], &a_max, &w_max);
                    fill_tile(b, mr, k, lda, zeros, a_max, w_max);
                    pg_u8s8_pack_s8(k, 32, b->B, 32, b->b_scale, 1, zeros ? b->b_zero : NULL, 1,
                                    b->packed);
                    pg_u8s8_packed pk;
                    pg_u8s8_view(b->packed, k, 32, zeros, &pk);
                    pg_u8s8_epilogue ep = {
                        .a_zero = b->a_zero, .a_scale = b->a_scale, .col_sum = pk.col_sum,
                        .b_scale = pk.scale, .bias = with_bias ? b->bias : NULL, .b_zero = pk.zero,
                        .row_corr = b->row_corr, .out_inv_scale = checkasm_randf(5.0f, 60.0f),
                        .out_zero = (int32_t)(checkasm_rand() % 64) - (out == 3 ? 32 : 0),
                        .out_mode = out, .a_max = a_max };
                    memset(b->cref, SENT, b->cap);
                    memset(b->cbuf, SENT, b->cap);
                    uint8_t *cnew = b->cbuf + b->cap - clen, *cref = b->cref + b->cap - clen;
                    call_ref(mr, nr, k, b->A, lda, pk.data, cref, ldc, &ep);
                    /* half the cases of a wide_a kernel as the driver calls it */
                    const uint8_t *anew = b->A;
                    if (prm->wide_a && (checkasm_rand() & 1)) {
                        ep.a_wide_ld = k + (checkasm_rand() & 1 ? 0 : 1 + checkasm_rand() % 7);
                        ep.a_wide = widen_tile(b, mr, k, lda, ep.a_wide_ld);
                        anew = b->Ajunk;
                    }
                    call_new(mr, nr, k, anew, lda, pk.data, cnew, ldc, &ep);
                    if (memcmp(b->cref, b->cbuf, b->cap) || !checkasm_guards_ok(b->cbuf, "C")) {
                        size_t at = 0;
                        while (at < b->cap && b->cref[at] == b->cbuf[at])
                            at++;
                        return checkasm_fail("tile mr=%zu nr=%zu k=%zu lda=%zu ldc=%zu mode=%d "
                                             "bias=%d zero points=%d widened A=%d: first "
                                             "difference at byte %zd of C (%02x, want %02x)",
                                             mr, nr, k, lda, ldc, out, with_bias, zeros,
                                             ep.a_wide != NULL,
                                             (ptrdiff_t)at - (ptrdiff_t)(b->cap - clen),
                                             at < b->cap ? b->cbuf[at] : 0,
                                             at < b->cap ? b->cref[at] : 0);
                    }
                }
    if (checkasm_bench_enabled()) {
        size_t k = 256;
        int a_max, w_max;
        ranges(&op->variants[v], &a_max, &w_max);
        fill_tile(b, MR, k, k, 0, a_max, w_max);
        pg_u8s8_pack_s8(k, 32, b->B, 32, b->b_scale, 1, NULL, 1, b->packed);
        pg_u8s8_packed pk;
        pg_u8s8_view(b->packed, k, 32, 0, &pk);
        pg_u8s8_epilogue ep = { .a_zero = b->a_zero, .a_scale = b->a_scale,
                                .col_sum = pk.col_sum, .b_scale = pk.scale,
                                .out_inv_scale = 1.0f, .out_mode = PG_U8S8_OUT_F32 };
        if (prm->wide_a) {   /* as the driver calls it */
            ep.a_wide = widen_tile(b, MR, k, k, k);
            ep.a_wide_ld = k;
        }
        checkasm_bench_label("tile %zux32 k=%zu%s", MR, k, prm->wide_a ? " widened A" : "");
        checkasm_bench_work(2.0 * MR * 32 * k, 0);
        bench_new(MR, 32, k, b->A, k, pk.data, b->cbuf, 32, &ep);
    }
    if (prm->finish)   /* the AMX kernels leave the tiles configured */
        prm->finish();
    return 1;
}

/* ---- the driver -------------------------------------------------------- */

typedef struct dbufs {
    float *A, *B, *bias;
    uint8_t *Aq;
    float *scale;
    int32_t *zero, *corr;
    void *packed;
    float *Cref, *Cnew;
} dbufs;

/* pg_u8s8_pack_f32's range for weights up to |w_max| */
static int wq_of(int w_max) { return w_max < 127 ? w_max : 127; }

static int driver_case(const pg_kernel_family *op, int v, dbufs *d, size_t M, size_t N,
                       size_t K, size_t col0, int threads)
{
    const pg_variant *ref = &op->variants[op->count - 1], *var = &op->variants[v];
    const pg_variant *quant = &pg_kernels_quantize_u8.variants[pg_kernels_quantize_u8.count - 1];
    size_t Nt = col0 + N, kp = (K + 3) / 4 * 4, ldq = kp + 4;
    checkasm_fill_f32(d->A, M * K, -3, 3);
    checkasm_fill_f32(d->B, K * Nt, -1, 1);
    checkasm_fill_f32(d->bias, Nt, -1, 1);
    int a_max, w_max;
    ranges(var, &a_max, &w_max);
    pg_u8s8_pack_f32(K, Nt, d->B, Nt, wq_of(w_max), d->packed);
    pg_u8s8_packed pk;
    pg_u8s8_view(d->packed, K, Nt, 0, &pk);
    pg_u8s8_quantize_rows(quant, M, K, d->A, K, d->Aq, ldq, d->scale, d->zero, d->corr, a_max);
    int with_bias = (int)(checkasm_rand() & 1);
    pg_u8s8_epilogue ep = { .a_zero = d->zero, .a_scale = d->scale,
                            .bias = with_bias ? d->bias + col0 : NULL, .row_corr = d->corr,
                            .out_inv_scale = 1.0f, .out_mode = PG_U8S8_OUT_F32, .a_max = a_max };
    size_t ldc = N + 3;
    for (size_t i = 0; i < M * ldc; i++)
        d->Cref[i] = d->Cnew[i] = -7.0f;
    pg_status s1 = pg_u8s8_gemm_packed(ref, M, N, d->Aq, ldq, &pk, col0, &ep, d->Cref, ldc, 1);
    pg_status s2 = pg_u8s8_gemm_packed(var, M, N, d->Aq, ldq, &pk, col0, &ep, d->Cnew, ldc, threads);
    if (s1 || s2)
        return checkasm_fail("driver M=%zu N=%zu K=%zu: %s", M, N, K, pg_last_error());
    if (memcmp(d->Cref, d->Cnew, M * ldc * sizeof(float)))
        return checkasm_fail("driver M=%zu N=%zu K=%zu col0=%zu threads=%d: C differs from the "
                             "reference's", M, N, K, col0, threads);
    return 1;
}

/* a pair-limited variant refuses 8-bit activations with 8-bit weights */
static int check_refuses_wide(const pg_variant *var, dbufs *d)
{
    int pair = ((const pg_u8s8_params *)var->params)->pair_max;
    if (pair >= 2 * 255 * 128)
        return 1;
    size_t M = 6, N = 32, K = 16;
    checkasm_fill_f32(d->B, K * N, -1, 1);
    pg_u8s8_pack_f32(K, N, d->B, N, pg_u8s8_weight_qmax_for(var) + 1, d->packed);
    pg_u8s8_packed pk;
    pg_u8s8_view(d->packed, K, N, 0, &pk);
    memset(d->Aq, 255, M * K);
    pg_u8s8_epilogue ep = { .a_zero = d->zero, .a_scale = d->scale, .out_inv_scale = 1.0f,
                            .out_mode = PG_U8S8_OUT_F32 };
    if (pg_u8s8_gemm_packed(var, M, N, d->Aq, K, &pk, 0, &ep, d->Cnew, N, 1) == PG_OK)
        return checkasm_fail("driver: weights up to |%d| with 8-bit activations ran on a "
                             "kernel exact while 2 a w <= %d", pk.w_max, pair);
    return 1;
}

static int check_driver(const pg_kernel_family *op, int v, dbufs *d)
{
    if (!check_refuses_wide(&op->variants[v], d))
        return 0;
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
    size_t kp = (K + 3) / 4 * 4;
    checkasm_fill_f32(d->B, K * N, -1, 1);
    pg_u8s8_pack_f32(K, N, d->B, N, pg_u8s8_weight_qmax_for(var), d->packed);
    pg_u8s8_packed pk;
    pg_u8s8_view(d->packed, K, N, 0, &pk);
    for (size_t i = 0; i < M * kp; i++)
        d->Aq[i] = (uint8_t)checkasm_rand();
    for (size_t i = 0; i < M; i++)
        d->zero[i] = 128, d->scale[i] = 0.01f;
    pg_u8s8_epilogue ep = { .a_zero = d->zero, .a_scale = d->scale, .out_inv_scale = 1.0f,
                            .out_mode = PG_U8S8_OUT_F32 };
    double ops = 2.0 * M * N * K;
    for (int t = 1; t <= 2; t++) {
        int calls = 0;
        double t0 = checkasm_clock_s(t);
        while (checkasm_clock_s(t) - t0 < 0.02 || calls < 2) {
            pg_u8s8_gemm_packed(var, M, N, d->Aq, kp, &pk, 0, &ep, d->Cnew, N, t);
            calls++;
        }
        double best = 1e30;
        for (int rep = 0; rep < 7; rep++) {
            double s = checkasm_clock_s(t);
            for (int c = 0; c < calls; c++)
                pg_u8s8_gemm_packed(var, M, N, d->Aq, kp, &pk, 0, &ep, d->Cnew, N, t);
            double sec = (checkasm_clock_s(t) - s) / calls;
            best = sec < best ? sec : best;
        }
        double g = ops / best * 1e-9;
        printf("   bench %-34s driver %4zux%4zux%4zu (MxKxN) %d thread%s %8.2f GOP/s"
               "  %5.1f%% of %d x 1-thread peak\n", var->name, M, K, N, t,
               t > 1 ? "s" : " ", g, 100.0 * g / (peak1 * t), t);
    }
}

/* ---- the quantiser ----------------------------------------------------- */

static int check_quant(void)
{
    declare_func(quant_u8);
    const pg_kernel_family *op = &pg_kernels_quantize_u8;
    float *x = checkasm_alloc_f32(1024);
    uint8_t *yr = checkasm_alloc(1024), *yn = checkasm_alloc(1024);
    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        checkasm_set_funcs(op, v);
        for (int i = 0; i < checkasm_n_sizes; i++)
            for (int kind = 0; kind < 12; kind++) {
                size_t n = checkasm_sizes[i] > 1000 ? 1000 : checkasm_sizes[i];
                int q = kind < 6 ? 255 : 127;
                switch (kind % 6) {
                case 0: checkasm_fill_f32(x, n, -3, 5); break;
                case 1: memset(x, 0, n * sizeof(float)); break;
                case 2: checkasm_fill_f32(x, n, 0.5f, 4); break;
                case 3: checkasm_fill_f32(x, n, -4, -0.5f); break;
                case 4:
                    for (size_t j = 0; j < n; j++)
                        x[j] = checkasm_randf(-1, 1) * (checkasm_rand() & 1 ? 1e30f : 1e-30f);
                    break;
                default:  /* ties: x = m / 4 with +-q / 2 at the ends (scale 1, zero
                           * rint(q / 2) = q / 2 + 1/2, and the top rounds to q + 1 before
                           * its clamp) */
                    for (size_t j = 0; j < n; j++)
                        x[j] = (float)((int)(checkasm_rand() % (uint32_t)(2 * q + 1)) - q) * 0.25f;
                    if (n)
                        x[0] = (float)q / 2;
                    if (n > 1)
                        x[1] = -(float)q / 2;
                }
                float sr = -1, sn = -2;
                int32_t zr = -1, zn = -2;
                memset(yr, 0, 1024);
                memset(yn, 0, 1024);
                call_ref(n, x, yr, &sr, &zr, q);
                call_new(n, x, yn, &sn, &zn, q);
                int over = 0;
                for (size_t j = 0; j < n; j++)
                    over |= yn[j] > q;
                if (memcmp(yr, yn, 1024) || memcmp(&sr, &sn, 4) || zr != zn || over ||
                    !checkasm_guards_ok(yn, "y"))
                    checkasm_fail("n=%zu kind=%d qmax=%d: scale %g / %g zero %d / %d, bytes %s", n,
                                  kind % 6, q, (double)sn, (double)sr, zn, zr,
                                  over ? "past qmax" : memcmp(yr, yn, 1024) ? "differ" : "agree");
            }
        size_t n = 384;
        checkasm_fill_f32(x, n, -3, 5);
        float s;
        int32_t z;
        checkasm_bench_label("n=%zu", n);
        checkasm_bench_work(0, 5.0 * n);
        bench_new(n, x, yn, &s, &z, 255);
    }
    return 1;
}

/* ---- the per-tensor quantiser (quantize_u8_span) -------------------------
 * Bit exact on rows of every edge length at scales that put x / scale up
 * to the whole u8 range and past it (saturation at 0 and 255), zero points
 * 0..255, exact ties (x / scale = m + 0.5: the even neighbour). */
static int check_span(void)
{
    declare_func(quant_u8_span);
    const pg_kernel_family *op = &pg_kernels_quantize_u8_span;
    float *x = checkasm_alloc_f32(1100);
    uint8_t *yr = checkasm_alloc(1100), *yn = checkasm_alloc(1100);
    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        checkasm_set_funcs(op, v);
        for (int i = 0; i < checkasm_n_sizes; i++)
            for (int kind = 0; kind < 4; kind++) {
                size_t n = checkasm_sizes[i] > 1100 ? 1100 : checkasm_sizes[i];
                float scale = kind == 3 ? 0.25f : checkasm_randf(1e-3f, 0.1f);
                int32_t zero = (int32_t)(checkasm_rand() % 256);
                for (size_t j = 0; j < n; j++) {
                    if (kind == 3)   /* ties: (m + 0.5) / 4 at scale 1/4 */
                        x[j] = ((float)((int)(checkasm_rand() % 600) - 300) + 0.5f) * 0.25f;
                    else
                        x[j] = checkasm_randf(-300, 300) * scale * (kind == 0 ? 0.5f : 1.0f);
                }
                memset(yr, 0, 1100);
                memset(yn, 0, 1100);
                call_ref(n, x, scale, zero, yr);
                call_new(n, x, scale, zero, yn);
                if (memcmp(yr, yn, 1100) || !checkasm_guards_ok(yn, "y")) {
                    size_t at = 0;
                    while (at < n && yr[at] == yn[at])
                        at++;
                    checkasm_fail("n=%zu kind=%d scale %g zero %d: element %zu (%g) gives %u, want %u",
                                  n, kind, (double)scale, zero, at, at < n ? (double)x[at] : 0.0,
                                  at < n ? yn[at] : 0, at < n ? yr[at] : 0);
                }
            }
        size_t n = 1024;
        checkasm_fill_f32(x, n, -3, 3);
        checkasm_bench_label("n=%zu", n);
        checkasm_bench_work(0, 4.0 * n);
        bench_new(n, x, 3.0f / 127.0f, 128, yn);
    }
    return 1;
}

/* ---- a tensor's range (minmax_keys) ---------------------------------------
 * The same three words on rows of every edge length: random values of both
 * signs, one-signed rows, -0 and denormals, and NaNs / infinities of either
 * sign at a random place (the flag, and their keys at the ends). */
static int check_minmax(void)
{
    declare_func(minmax_keys);
    const pg_kernel_family *op = &pg_kernels_minmax_keys;
    float *x = checkasm_alloc_f32(1100);
    static const uint32_t special[] = { 0x80000000u, 0x00000001u, 0x80000001u, 0x7f800000u,
                                        0xff800000u, 0x7fc00000u, 0xffc00001u, 0x7f7fffffu };
    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        checkasm_set_funcs(op, v);
        for (int i = 0; i < checkasm_n_sizes; i++)
            for (int kind = 0; kind < 4; kind++) {
                size_t n = checkasm_sizes[i] > 1100 ? 1100 : checkasm_sizes[i];
                checkasm_fill_f32(x, n, kind == 1 ? 0.5f : -4, kind == 2 ? -0.5f : 4);
                if (kind == 3 && n) {
                    uint32_t u = special[checkasm_rand() % PG_COUNTOF(special)];
                    memcpy(&x[checkasm_rand() % n], &u, 4);
                }
                int32_t orf[3] = { 7, 7, 7 }, onw[3] = { 9, 9, 9 };
                call_ref(n, x, orf);
                call_new(n, x, onw);
                if (memcmp(orf, onw, sizeof orf))
                    checkasm_fail("n=%zu kind=%d: %d %d %d, want %d %d %d", n, kind, onw[0], onw[1],
                                  onw[2], orf[0], orf[1], orf[2]);
            }
        int32_t o[3];
        checkasm_fill_f32(x, 1024, -3, 3);
        checkasm_bench_label("n=%d", 1024);
        checkasm_bench_work(0, 4.0 * 1024);
        bench_new(1024, x, o);
    }
    return 1;
}

void checkasm_check_gemm_u8s8(void)
{
    const pg_kernel_family *op = &pg_kernels_gemm_u8s8;
    ubufs b;
    b.A = checkasm_alloc(32 * 530);   /* up to 32 rows of k = 516 + 9 */
    b.Aw = checkasm_alloc(32 * 530 * 2);
    b.Ajunk = checkasm_alloc(32 * 530);
    b.B = checkasm_alloc(520 * 32);
    /* MR up to 32 (AMX) */
    b.packed = checkasm_alloc(pg_u8s8_packed_bytes(520, 32, 1));
    b.a_zero = checkasm_alloc(32 * 4);
    b.row_corr = checkasm_alloc(32 * 4);
    b.a_scale = checkasm_alloc_f32(32);
    b.bias = checkasm_alloc_f32(32);
    b.b_scale = checkasm_alloc_f32(32);
    b.b_zero = checkasm_alloc(32 * 4);
    b.cap = 32 * 40 * 4;
    b.cref = checkasm_alloc(b.cap);
    b.cbuf = checkasm_alloc(b.cap);
    size_t MM = 1024, NN = 1536 + 64, KK = 1536;
    dbufs d;
    d.A = checkasm_alloc_f32(MM * KK);
    d.B = checkasm_alloc_f32(KK * NN);
    d.bias = checkasm_alloc_f32(NN);
    d.Aq = checkasm_alloc(MM * (KK + 8));
    d.scale = checkasm_alloc_f32(MM);
    d.zero = checkasm_alloc(MM * 4);
    d.corr = checkasm_alloc(MM * 4);
    d.packed = checkasm_alloc(pg_u8s8_packed_bytes(KK, NN, 0));
    d.Cref = checkasm_alloc_f32(MM * (NN + 3));
    d.Cnew = checkasm_alloc_f32(MM * (NN + 3));
    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        if (!check_tiles(op, v, &b) || !check_driver(op, v, &d))
            continue;
        if (checkasm_bench_enabled()) {
            /* each against its own instruction: tdpbusd, vpdpbusd zmm or ymm
             * (AVX-VNNI), or AVX2's vpmaddwd + vpaddd */
            const char *isa = op->variants[v].isa;
            int amx = !strcmp(isa, "amx"), ymm = !strcmp(isa, "avxvnni"), avx2 = !strcmp(isa, "avx2");
            int i16 = ((const pg_u8s8_params *)op->variants[v].params)->pair_max < 2 * 255 * 128;
            double (*yard)(int) = amx ? pg_measure_amx_int8_peak_gops
                                  : ymm ? pg_measure_avxvnni_peak_gops
                                  : avx2 && i16 ? pg_measure_maddubs_avx2_peak_gops
                                  : avx2 ? pg_measure_madd_avx2_peak_gops : pg_measure_vnni_peak_gops;
            double peak = yard(1);
            printf("   yardstick: %s peak, 1 thread %.2f GOP/s, 2 threads %.2f GOP/s\n",
                   amx ? "tdpbusd" : ymm ? "vpdpbusd ymm (VEX)"
                   : avx2 && i16 ? "vpmaddubsw + vpmaddwd + vpaddd ymm"
                   : avx2 ? "vpmaddwd + vpaddd ymm" : "vpdpbusd zmm", peak, yard(2));
            static const size_t shapes[][3] = { { 128, 384, 384 }, { 128, 384, 1536 },
                                                { 128, 1536, 384 }, { 1024, 384, 1536 },
                                                { 512, 512, 512 } };
            for (int i = 0; i < PG_COUNTOF(shapes); i++)
                bench_driver(&op->variants[v], &d, shapes[i][0], shapes[i][2], shapes[i][1], peak);
        }
    }
    check_quant();
    check_span();
    check_minmax();
    checkasm_report("gemm_u8s8");
}

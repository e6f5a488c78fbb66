/* check_kquant.c - the k-quant (q4_K, q5_K, q6_K with q8_K activations)
 * and f16 / bf16 / f32 weight kernels against their C references (kquant.h):
 * the q8_K quantiser, qgemv and qgemm.
 *
 * Quantiser: byte-exact, on random rows, zero super-blocks, exact ties
 * (max 127 so iscale = -1 and x = k + 0.5 rounds to even), huge and tiny.
 *
 * Products: weight super-blocks of random bytes (every scale, min and
 * quant bit pattern) with finite f16 d / dmin (ordinary, or extreme: 0,
 * subnormal, 65504, negative); f16 / bf16 / f32 weights of random finite values;
 * q8_K activations of random int8 in [-127, 127] with their true bsums and
 * a random f32 d; fp32 activations for f16 / bf16.  K from one
 * super-block (or 32 floats) up, N 1..9 (the four-row groups and the 1..3
 * left over) and larger, padded row strides whose padding is junk.
 *
 * Tolerance: the k-quants' int32 super-block sums are exact in every
 * variant; what differs is their conversion to fp32 (exact below 2^24),
 * the scaling and the order of the fp32 sum, at most (super-blocks + 8)
 * 2^-23 of S = sum over super-blocks of |d d_x| sum_j |sc_j| sum_l |q x|
 * (q6_K: the unsigned q + 32 and 32 |bsum|, as the kernels compute) +
 * |dmin d_x| sum_j m_j |bsum_j|.  f16 / bf16: an fp32 dot of exact
 * products in another order, (K + 8) 2^-23 sum |w x|; f32 the same bound
 * (its products round, or fuse into FMAs: 2^-24 each). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../gguf/ggml_types.h"
#include "../kernels/kquant/kquant.h"
#include "../kernels/qgemm/qgemm.h"
#include "../kernels/qgemv/qgemv.h"
#include "checkasm.h"

static const int wtypes[] = { PG_GGML_Q4_K, PG_GGML_Q5_K, PG_GGML_Q6_K, PG_GGML_F16, PG_GGML_BF16,
                              PG_GGML_F32 };

static void put16(uint8_t *p, uint16_t h)
{
    p[0] = (uint8_t)h;
    p[1] = (uint8_t)(h >> 8);
}

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static uint16_t rand_f16(int extreme)
{
    uint16_t sign = (uint16_t)((checkasm_rand() & 1) << 15);
    if (extreme) {
        static const uint16_t pick[] = { 0x0000, 0x0001, 0x03ff, 0x0400, 0x7bff, 0x3c00 };
        uint32_t r = checkasm_rand() % 8;
        if (r < 6)
            return (uint16_t)(pick[r] | sign);
        return (uint16_t)((checkasm_rand() % 0x7c00) | sign);
    }
    /* 2^-14 .. 2^-1 */
    return (uint16_t)(sign | (uint16_t)((1 + checkasm_rand() % 14) << 10) |
                      (uint16_t)(checkasm_rand() & 0x3ff));
}

static uint16_t rand_bf16(int extreme)
{
    uint16_t sign = (uint16_t)((checkasm_rand() & 1) << 15);
    uint32_t e = extreme ? checkasm_rand() % 200 : 110 + checkasm_rand() % 17; /* finite */
    return (uint16_t)(sign | (uint16_t)(e << 7) | (uint16_t)(checkasm_rand() & 0x7f));
}

static size_t wbytes(int wtype) { return (size_t)pg_ggml_traits(wtype)->bytes; }
static size_t wblock(int wtype) { return (size_t)pg_ggml_traits(wtype)->block; }

static void fill_weights(int wtype, uint8_t *W, size_t N, size_t K, size_t ldw, int extreme)
{
    size_t wb = wbytes(wtype), nb = K / wblock(wtype);
    for (size_t n = 0; n < N; n++) {
        uint8_t *row = W + n * ldw;
        for (size_t i = 0; i < ldw; i++)
            row[i] = (uint8_t)checkasm_rand();
        for (size_t b = 0; b < nb; b++) {
            uint8_t *blk = row + b * wb;
            switch (wtype) {
            case PG_GGML_Q4_K:
            case PG_GGML_Q5_K:
                put16(blk, rand_f16(extreme));
                put16(blk + 2, rand_f16(extreme));
                break;
            case PG_GGML_Q6_K: put16(blk + 208, rand_f16(extreme)); break;
            case PG_GGML_F16: put16(blk, rand_f16(extreme)); break;
            case PG_GGML_F32: {
                float f = checkasm_randf(-1, 1);
                if (extreme && checkasm_rand() % 8 == 0)
                    f *= checkasm_rand() & 1 ? 1e-30f : 1e6f;
                memcpy(blk, &f, 4);
                break;
            }
            default: put16(blk, rand_bf16(extreme)); break;
            }
        }
    }
}

/* M rows of activations at stride ldx bytes: q8_K with true bsums, or f32. */
static void fill_acts(int atype, uint8_t *X, size_t M, size_t K, size_t ldx, int extreme)
{
    for (size_t m = 0; m < M; m++) {
        uint8_t *row = X + m * ldx;
        if (atype == PG_GGML_F32) {
            for (size_t k = 0; k < K; k++) {
                float f = checkasm_randf(-2, 2);
                if (extreme && checkasm_rand() % 8 == 0)
                    f *= 1e4f;
                memcpy(row + 4 * k, &f, 4);
            }
            continue;
        }
        for (size_t b = 0; b < K / 256; b++) {
            uint8_t *blk = row + b * 292;
            float d = ldexpf(checkasm_randf(0.5f, 1.0f), -(int)(checkasm_rand() % 12));
            if (extreme && checkasm_rand() % 3 == 0)
                d = checkasm_rand() & 1 ? 0.0f : 1e10f;
            memcpy(blk, &d, 4);
            for (int g = 0; g < 16; g++) {
                int s = 0;
                for (int j = 0; j < 16; j++) {
                    int q = (int)(checkasm_rand() % 255) - 127;
                    blk[4 + 16 * g + j] = (uint8_t)(int8_t)q;
                    s += q;
                }
                put16(blk + 260 + 2 * g, (uint16_t)(int16_t)s);
            }
        }
    }
}

static int scale_k4(int j, const uint8_t *s, int mins)
{
    if (j < 4)
        return s[j + (mins ? 4 : 0)] & 63;
    return mins ? (s[j + 4] >> 4) | ((s[j] >> 6) << 4) : (s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4);
}

static double abs_terms(int wtype, const uint8_t *w, const uint8_t *x, size_t K)
{
    double S = 0;
    if (wtype == PG_GGML_F16 || wtype == PG_GGML_BF16 || wtype == PG_GGML_F32) {
        for (size_t k = 0; k < K; k++) {
            float f, g;
            memcpy(&f, x + 4 * k, 4);
            if (wtype == PG_GGML_F32) {
                memcpy(&g, w + 4 * k, 4);
            } else {
                uint16_t h = get16(w + 2 * k);
                g = wtype == PG_GGML_F16 ? pg_f16_to_f32(h) : pg_bf16_to_f32(h);
            }
            S += fabs((double)g * f);
        }
        return S;
    }
    for (size_t b = 0; b < K / 256; b++, w += wbytes(wtype), x += 292) {
        float dx;
        memcpy(&dx, x, 4);
        const int8_t *xq = (const int8_t *)(x + 4);
        double si = 0, sm = 0;
        if (wtype == PG_GGML_Q6_K) {
            const int8_t *sc = (const int8_t *)(w + 192);
            for (int g = 0; g < 16; g++) {
                double a = 0;
                for (int j = 0; j < 16; j++)
                    a += 63.0 * fabs((double)xq[16 * g + j]) + 32.0 * fabs((double)xq[16 * g + j]);
                si += fabs((double)sc[g]) * a;
            }
            S += fabs((double)pg_f16_to_f32(get16(w + 208)) * dx) * si;
            continue;
        }
        for (int j = 0; j < 8; j++) {
            double a = 0;
            for (int l = 0; l < 32; l++)
                a += (wtype == PG_GGML_Q5_K ? 31.0 : 15.0) * fabs((double)xq[32 * j + l]);
            si += scale_k4(j, w + 4, 0) * a;
            sm += scale_k4(j, w + 4, 1) * a / (wtype == PG_GGML_Q5_K ? 31.0 : 15.0);
        }
        S += fabs((double)pg_f16_to_f32(get16(w)) * dx) * si +
             fabs((double)pg_f16_to_f32(get16(w + 2)) * dx) * sm;
    }
    return S;
}

static float tol_of(int wtype, const uint8_t *w, const uint8_t *x, size_t K)
{
    double n = wtype == PG_GGML_F16 || wtype == PG_GGML_BF16 || wtype == PG_GGML_F32
                   ? (double)K : (double)(K / 256);
    return (float)(ldexp(n + 8.0, -23) * abs_terms(wtype, w, x, K)) + FLT_MIN;
}

static size_t act_bytes(int atype, size_t K) { return atype == PG_GGML_F32 ? 4 * K : K / 256 * 292; }

/* ---- q8_K quantiser ------------------------------------------------------ */

static void fill_row(float *x, size_t n, int kind)
{
    checkasm_fill_f32(x, n, -1, 1);
    for (size_t b = 0; b < n / 256; b++) {
        float *blk = x + 256 * b;
        switch ((kind + b) % 5) {
        case 1: memset(blk, 0, 256 * sizeof *blk); break;
        case 2:
            for (int j = 0; j < 256; j++)
                blk[j] = (float)((int)(checkasm_rand() % 254) - 127) + 0.5f;
            blk[checkasm_rand() % 256] = (checkasm_rand() & 1) ? 127.0f : -127.0f;
            break;
        case 3:
            for (int j = 0; j < 256; j++)
                blk[j] *= 1e30f;
            break;
        case 4:
            for (int j = 0; j < 256; j++)
                blk[j] *= 1e-30f;
            break;
        default: break;
        }
    }
}

void checkasm_check_quantize_q8_K(void)
{
    const pg_kernel_family *op = &pg_kernels_quantize_q8_K;
    declare_func(quantize);
    static const size_t ns[] = { 0, 256, 512, 768, 2304 };
    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        checkasm_set_funcs(op, v);
        for (int i = 0; i < PG_COUNTOF(ns); i++) {
            size_t n = ns[i], bytes = n / 256 * 292;
            float *x = checkasm_alloc_f32(n ? n : 1);
            uint8_t *y_ref = checkasm_alloc(bytes ? bytes : 1), *y_new = checkasm_alloc(bytes ? bytes : 1);
            for (int kind = 0; kind < 5; kind++) {
                fill_row(x, n, kind);
                memset(y_ref, 0xa5, bytes);
                memset(y_new, 0x5a, bytes);
                call_ref(n, x, y_ref);
                call_new(n, x, y_new);
                if (!checkasm_guards_ok(y_new, "y"))
                    goto next_variant;
                for (size_t k = 0; k < bytes; k++)
                    if (y_ref[k] != y_new[k]) {
                        checkasm_fail("  n=%zu: byte %zu (block %zu, offset %zu): ref %02x, got %02x",
                                      n, k, k / 292, k % 292, y_ref[k], y_new[k]);
                        goto next_variant;
                    }
            }
        }
        if (checkasm_bench_enabled()) {
            size_t n = 4096;
            float *x = checkasm_alloc_f32(n);
            uint8_t *y = checkasm_alloc(n / 256 * 292);
            checkasm_fill_f32(x, n, -1, 1);
            checkasm_bench_label("n=%zu", n);
            checkasm_bench_work(0, 4.0 * n);
            bench_new(n, x, y);
        }
    next_variant:;
    }
    checkasm_report("quantize_q8_K");
}

/* ---- qgemv / qgemm --------------------------------------------------------- */

static const size_t Ks_k[] = { 0, 256, 512, 768, 1280, 2304 };
static const size_t Ks_h[] = { 0, 32, 64, 96, 160, 576, 1536 };

void checkasm_check_kquant_gemv(void)
{
    declare_func(qgemv);
    static const size_t Ns[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 33 };
    int nN = checkasm_small() ? 9 : PG_COUNTOF(Ns);
    size_t maxN = 33;
    for (int t = 0; t < PG_COUNTOF(wtypes); t++) {
        int wtype = wtypes[t], atype = pg_qgemv_act_type(wtype), kq = atype == PG_GGML_Q8_K;
        const pg_kernel_family *op = pg_qgemv_family(wtype);
        const size_t *Ks = kq ? Ks_k : Ks_h;
        int nK = kq ? (checkasm_small() ? 4 : PG_COUNTOF(Ks_k)) : (checkasm_small() ? 6 : PG_COUNTOF(Ks_h));
        size_t maxK = kq ? 2304 : 1536;
        size_t wrow = maxK / wblock(wtype) * wbytes(wtype) + 64;
        uint8_t *W = checkasm_alloc(maxN * wrow), *x = checkasm_alloc(act_bytes(atype, maxK) + 4);
        float *y_ref = checkasm_alloc_f32(maxN), *tol = checkasm_alloc_f32(maxN);
        for (int v = 0; v < op->count; v++) {
            if (!checkasm_check_variant(op, v))
                continue;
            checkasm_set_funcs(op, v);
            for (int ni = 0; ni < nN; ni++) {
                size_t N = Ns[ni];
                float *y_new = checkasm_alloc_f32(N);
                for (int ki = 0; ki < nK; ki++) {
                    size_t K = Ks[ki];
                    for (int mode = 0; mode < 2; mode++) {
                        size_t ldw = K / wblock(wtype) * wbytes(wtype) + (mode ? 1 + checkasm_rand() % 63 : 0);
                        fill_weights(wtype, W, N, K, ldw, mode);
                        fill_acts(atype, x, 1, K, 0, mode);
                        for (size_t n = 0; n < N; n++) {
                            y_ref[n] = y_new[n] = NAN;
                            tol[n] = tol_of(wtype, W + n * ldw, x, K);
                        }
                        call_ref(N, K, W, ldw, x, y_ref);
                        call_new(N, K, W, ldw, x, y_new);
                        if (!checkasm_check_f32_tol("y", y_ref, y_new, N, tol)) {
                            checkasm_fail("  %s at N=%zu K=%zu ldw=%zu, %s values",
                                          pg_ggml_traits(wtype)->name, N, K, ldw,
                                          mode ? "extreme" : "normal");
                            goto next_variant;
                        }
                    }
                }
            }
            if (checkasm_bench_enabled()) {
                /* a 1B-class model's attention/MLP shapes */
                static const size_t shapes[][2] = { { 2048, 2048 }, { 8192, 2048 }, { 2048, 8192 } };
                for (int s = 0; s < 3; s++) {
                    size_t N = shapes[s][0], K = shapes[s][1], ldw = K / wblock(wtype) * wbytes(wtype);
                    uint8_t *Wb = checkasm_alloc(N * ldw), *xb = checkasm_alloc(act_bytes(atype, K));
                    float *yb = checkasm_alloc_f32(N);
                    fill_weights(wtype, Wb, N, K, ldw, 0);
                    fill_acts(atype, xb, 1, K, 0, 0);
                    checkasm_bench_label("%s N=%zu K=%zu", pg_ggml_traits(wtype)->name, N, K);
                    checkasm_bench_work(2.0 * N * K, (double)N * ldw);
                    bench_new(N, K, Wb, ldw, xb, yb);
                }
            }
        next_variant:;
        }
    }
    checkasm_report("kquant_gemv");
}

void checkasm_check_kquant_gemm(void)
{
    declare_func(qgemm);
    static const size_t Ms[] = { 1, 2, 3, 4, 5, 8, 9, 17 };
    static const size_t Ns[] = { 1, 2, 3, 5, 8, 9, 70 };
    int nM = checkasm_small() ? 6 : PG_COUNTOF(Ms);
    size_t maxM = 17, maxN = 70, maxldc = maxN + 8;
    for (int t = 0; t < PG_COUNTOF(wtypes); t++) {
        int wtype = wtypes[t], atype = pg_qgemv_act_type(wtype), kq = atype == PG_GGML_Q8_K;
        const pg_kernel_family *op = pg_qgemm_family(wtype);
        const size_t *Ks = kq ? Ks_k : Ks_h;
        int nK = kq ? 4 : 6;
        size_t maxK = kq ? 1280 : 576;
        size_t wrow = maxK / wblock(wtype) * wbytes(wtype) + 64, xrow = act_bytes(atype, maxK) + 64;
        uint8_t *W = checkasm_alloc(maxN * wrow), *X = checkasm_alloc(maxM * xrow);
        float *C_ref = checkasm_alloc_f32(maxM * maxldc), *tol = checkasm_alloc_f32(maxM * maxldc);
        for (int v = 0; v < op->count; v++) {
            if (!checkasm_check_variant(op, v))
                continue;
            checkasm_set_funcs(op, v);
            for (int mi = 0; mi < nM; mi++) {
                size_t M = Ms[mi];
                float *C_new = checkasm_alloc_f32(M * maxldc);
                for (int ni = 0; ni < PG_COUNTOF(Ns); ni++) {
                    size_t N = Ns[ni];
                    for (int ki = 0; ki < nK; ki++) {
                        size_t K = Ks[ki];
                        for (int mode = 0; mode < 2; mode++) {
                            size_t pad = mode ? 4 * (1 + checkasm_rand() % 15) : 0;
                            size_t ldw = K / wblock(wtype) * wbytes(wtype) + pad;
                            size_t ldx = act_bytes(atype, K) + pad;
                            size_t ldc = N + (mode ? 1 + checkasm_rand() % 8 : 0);
                            fill_weights(wtype, W, N, K, ldw, mode);
                            fill_acts(atype, X, M, K, ldx, mode);
                            for (size_t i = 0; i < M * ldc; i++) {
                                size_t m = i / ldc, n = i % ldc;
                                C_ref[i] = C_new[i] = n < N ? NAN : 1234.5f;
                                tol[i] = n < N ? tol_of(wtype, W + n * ldw, X + m * ldx, K) : 0;
                            }
                            call_ref(M, N, K, W, ldw, X, ldx, C_ref, ldc);
                            call_new(M, N, K, W, ldw, X, ldx, C_new, ldc);
                            if (!checkasm_check_f32_tol("C", C_ref, C_new, M * ldc, tol)) {
                                checkasm_fail("  %s at M=%zu N=%zu K=%zu ldw=%zu ldx=%zu ldc=%zu",
                                              pg_ggml_traits(wtype)->name, M, N, K, ldw, ldx, ldc);
                                goto next_variant;
                            }
                        }
                    }
                }
            }
            if (checkasm_bench_enabled()) {
                size_t M = 64, N = 2048, K = 2048, ldw = K / wblock(wtype) * wbytes(wtype);
                size_t ldx = act_bytes(atype, K);
                uint8_t *Wb = checkasm_alloc(N * ldw), *Xb = checkasm_alloc(M * ldx);
                float *Cb = checkasm_alloc_f32(M * N);
                fill_weights(wtype, Wb, N, K, ldw, 0);
                fill_acts(atype, Xb, M, K, ldx, 0);
                checkasm_bench_label("%s M=%zu N=%zu K=%zu", pg_ggml_traits(wtype)->name, M, N, K);
                checkasm_bench_work(2.0 * M * N * K, 0);
                bench_new(M, N, K, Wb, ldw, Xb, ldx, Cb, N);
            }
        next_variant:;
        }
    }
    checkasm_report("kquant_gemm");
}

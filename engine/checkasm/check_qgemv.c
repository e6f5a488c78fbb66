/* check_qgemv.c - the quantised kernels against their C references:
 * the activation quantisers (quantize_q8_0 / quantize_q8_1), qgemv and
 * qgemm for q4_0, q4_1 and q8_0 weights.
 *
 * Quantisers: byte-exact (the same f32 operations, f16 rounding to nearest
 * even, round-half-away of x / d), on random rows, zero blocks, blocks of
 * exact ties (max 127 so d = 1 and x = k + 0.5), huge and tiny values.
 *
 * Products: random blocks (every nibble / byte value of the weights, -128
 * included; int8 activations in [-127, 127] as the quantisers make them) with ordinary f16 scales and
 * with extreme ones (0, subnormal, 65504, negative), K from 32 (one block)
 * up, N 1..9 (the four-row groups and the 1..3 left over) and larger,
 * padded row strides whose padding is junk, outputs guarded.
 *
 * Tolerance: the integer part is exact in every variant - a block's sum
 * of 32 products is at most 32 * 127 * 127 < 2^24 in magnitude, so the
 * int32 partial sums and their conversion to fp32 are exact - and the
 * scale d_w * d_x is one fp32 product of the same two f16 values
 * everywhere.  What differs is the fp32 rounding of (scale x partial) and
 * the order of the fp32 sum over blocks and lanes, at most
 * (blocks + 8) 2^-23 of S = sum_b (|d_w d_x| sum_j |w_j x_j| + |m_w s_x|).
 * An exact mode proves the integer part: every scale the same power of
 * two, so every term is a multiple of one power of two and, for K <= 576
 * (every partial sum below 2^24 of those units), every fp32 sum is exact
 * whatever its order - there the variants must equal the reference bit for
 * bit. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../gguf/ggml_types.h"
#include "../kernels/qdot/qdot.h"
#include "../kernels/qgemm/qgemm.h"
#include "../kernels/qgemv/qgemv.h"
#include "checkasm.h"

/* ---- random blocks ----------------------------------------------------- */

enum { SCALES_NORMAL, SCALES_EXTREME, SCALES_EXACT };

static void put16(uint8_t *p, uint16_t h)
{
    p[0] = (uint8_t)h;
    p[1] = (uint8_t)(h >> 8);
}

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* A finite f16 scale.  exact_bits: the value SCALES_EXACT uses. */
static uint16_t rand_scale(int mode, uint16_t exact_bits)
{
    uint16_t sign = (uint16_t)((checkasm_rand() & 1) << 15);
    if (mode == SCALES_EXACT)
        return exact_bits;
    if (mode == SCALES_EXTREME) {
        static const uint16_t pick[] = { 0x0000, 0x0001, 0x03ff, 0x0400, 0x7bff, 0x3c00, 0x1000 };
        uint32_t r = checkasm_rand() % 10;
        if (r < 7)
            return (uint16_t)(pick[r] | sign);
        return (uint16_t)((checkasm_rand() % 0x7c00) | sign); /* any finite */
    }
    /* 2^-12 .. 2^1, the range real weights and activations use */
    return (uint16_t)(sign | (uint16_t)((3 + checkasm_rand() % 14) << 10) |
                      (uint16_t)(checkasm_rand() & 0x3ff));
}

static int8_t rand_q8(void) { return (int8_t)((int)(checkasm_rand() % 255) - 127); }

/* N rows of K / 32 weight blocks at stride ldw; the padding is junk. */
static void fill_weights(int wtype, uint8_t *W, size_t N, size_t K, size_t ldw, int mode)
{
    size_t wb = (size_t)pg_ggml_traits(wtype)->bytes;
    for (size_t n = 0; n < N; n++) {
        uint8_t *row = W + n * ldw;
        for (size_t i = K / 32 * wb; i < ldw; i++)
            row[i] = (uint8_t)checkasm_rand();
        for (size_t b = 0; b < K / 32; b++) {
            uint8_t *blk = row + b * wb;
            put16(blk, rand_scale(mode, 0x3000)); /* exact: d = 2^-3 */
            size_t q0 = 2;
            if (wtype == PG_GGML_Q4_1) {
                put16(blk + 2, rand_scale(mode, 0x2c00)); /* exact: m = 2^-4 */
                q0 = 4;
            }
            /* any byte: q8_0 weights may even hold -128 (the kernels
             * only need the activations above -128) */
            for (int j = 0; j < (wtype == PG_GGML_Q8_0 ? 32 : 16); j++)
                blk[q0 + j] = (uint8_t)checkasm_rand();
        }
    }
}

/* M rows of K / 32 activation blocks (q8_0 or q8_1) at stride ldx. */
static void fill_acts(int atype, uint8_t *X, size_t M, size_t K, size_t ldx, int mode)
{
    size_t xb = (size_t)pg_ggml_traits(atype)->bytes, q0 = atype == PG_GGML_Q8_1 ? 4 : 2;
    for (size_t m = 0; m < M; m++) {
        uint8_t *row = X + m * ldx;
        for (size_t i = K / 32 * xb; i < ldx; i++)
            row[i] = (uint8_t)checkasm_rand();
        for (size_t b = 0; b < K / 32; b++) {
            uint8_t *blk = row + b * xb;
            put16(blk, rand_scale(mode, 0x3400)); /* exact: d = 2^-2 */
            if (atype == PG_GGML_Q8_1)
                put16(blk + 2, rand_scale(mode, 0x3800)); /* exact: s = +-2^-1 */
            for (int j = 0; j < 32; j++)
                blk[q0 + j] = (uint8_t)rand_q8();
        }
    }
}

/* S of the header for one weight row and one activation row. */
static double abs_terms(int wtype, const uint8_t *w, const uint8_t *x, size_t K)
{
    int atype = pg_qgemv_act_type(wtype);
    size_t wb = (size_t)pg_ggml_traits(wtype)->bytes, xb = (size_t)pg_ggml_traits(atype)->bytes;
    double S = 0;
    for (size_t b = 0; b < K / 32; b++, w += wb, x += xb) {
        const int8_t *xq = (const int8_t *)(x + (atype == PG_GGML_Q8_1 ? 4 : 2));
        double si = 0;
        for (int j = 0; j < 32; j++) {
            int q;
            if (wtype == PG_GGML_Q8_0)
                q = (int8_t)w[2 + j];
            else {
                const uint8_t *nib = w + (wtype == PG_GGML_Q4_1 ? 4 : 2);
                q = j < 16 ? nib[j] & 15 : nib[j - 16] >> 4;
                if (wtype == PG_GGML_Q4_0)
                    q -= 8;
            }
            si += fabs((double)q * xq[j]);
        }
        S += fabs((double)pg_f16_to_f32(get16(w)) * pg_f16_to_f32(get16(x))) * si;
        if (wtype == PG_GGML_Q4_1)
            S += fabs((double)pg_f16_to_f32(get16(w + 2)) * pg_f16_to_f32(get16(x + 2)));
    }
    return S;
}

static float tol_of(int wtype, const uint8_t *w, const uint8_t *x, size_t K, int mode)
{
    /* exact sums: 18 blocks of at most 32 * 127 * 127 stay below 2^24 units */
    if (mode == SCALES_EXACT && K <= 576)
        return 0.0f;
    return (float)(ldexp((double)(K / 32) + 8.0, -23) * abs_terms(wtype, w, x, K)) + FLT_MIN;
}

static const int wtypes[] = { PG_GGML_Q4_0, PG_GGML_Q4_1, PG_GGML_Q8_0 };
static const char *const wnames[] = { "q4_0", "q4_1", "q8_0" };

/* ---- quantisers ---------------------------------------------------------- */

static void fill_row(float *x, size_t n, int kind)
{
    checkasm_fill_f32(x, n, -1, 1);
    for (size_t b = 0; b < n / 32; b++) {
        float *blk = x + 32 * b;
        switch ((kind + b) % 6) {
        case 1: /* a zero block: d = 0 */
            memset(blk, 0, 32 * sizeof *blk);
            break;
        case 2: /* exact ties: max 127 gives d = 1, x = k + 0.5 rounds away */
            for (int j = 0; j < 32; j++)
                blk[j] = (float)((int)(checkasm_rand() % 254) - 127) + 0.5f;
            blk[checkasm_rand() % 32] = (checkasm_rand() & 1) ? 127.0f : -127.0f;
            break;
        case 3: /* huge: d beyond f16 range */
            for (int j = 0; j < 32; j++)
                blk[j] *= 1e30f;
            break;
        case 4: /* tiny: d a subnormal f16 or 0 */
            for (int j = 0; j < 32; j++)
                blk[j] *= 1e-7f;
            break;
        case 5: /* one large value among small ones */
            blk[checkasm_rand() % 32] = 1000.0f;
            break;
        default:
            break;
        }
    }
}

static void check_quantize_op(const pg_kernel_family *op, size_t block_bytes)
{
    declare_func(quantize);
    static const size_t ns[] = { 0, 32, 64, 96, 128, 192, 224, 256, 576, 1536 };
    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        checkasm_set_funcs(op, v);
        for (int i = 0; i < PG_COUNTOF(ns); i++) {
            size_t n = ns[i], bytes = n / 32 * block_bytes;
            float *x = checkasm_alloc_f32(n ? n : 1);
            uint8_t *y_ref = checkasm_alloc(bytes ? bytes : 1);
            uint8_t *y_new = checkasm_alloc(bytes ? bytes : 1);
            for (int kind = 0; kind < 6; kind++) {
                fill_row(x, n, kind);
                memset(y_ref, 0xa5, bytes);
                memset(y_new, 0x5a, bytes);
                call_ref(n, x, y_ref);
                call_new(n, x, y_new);
                if (!checkasm_guards_ok(y_new, "y"))
                    goto next_variant;
                for (size_t k = 0; k < bytes; k++) {
                    if (y_ref[k] != y_new[k]) {
                        checkasm_fail("  n=%zu: byte %zu (block %zu, offset %zu): ref %02x, got %02x",
                                      n, k, k / block_bytes, k % block_bytes, y_ref[k], y_new[k]);
                        goto next_variant;
                    }
                }
            }
        }
        if (checkasm_bench_enabled()) {
            size_t n = 4096;
            float *x = checkasm_alloc_f32(n);
            uint8_t *y = checkasm_alloc(n / 32 * block_bytes);
            checkasm_fill_f32(x, n, -1, 1);
            checkasm_bench_label("n=%zu", n);
            checkasm_bench_work(0, 4.0 * n + n / 32 * block_bytes);
            bench_new(n, x, y);
        }
    next_variant:;
    }
}

void checkasm_check_quantize_q8(void)
{
    check_quantize_op(&pg_kernels_quantize_q8_0, 34);
    check_quantize_op(&pg_kernels_quantize_q8_1, 36);
    checkasm_report("quantize_q8");
}

/* ---- qgemv --------------------------------------------------------------- */

void checkasm_check_qgemv(void)
{
    int benched = 0;
    declare_func(qgemv);
    static const size_t Ns[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 33, 64 };
    static const size_t Ks[] = { 0, 32, 64, 96, 128, 160, 256, 576, 1536 };
    int nN = checkasm_small() ? 10 : PG_COUNTOF(Ns), nK = checkasm_small() ? 7 : PG_COUNTOF(Ks);
    size_t maxN = 64, maxK = 1536;

    for (int t = 0; t < 3; t++) {
        int wtype = wtypes[t], atype = pg_qgemv_act_type(wtype);
        const pg_kernel_family *op = pg_qgemv_family(wtype);
        size_t wb = (size_t)pg_ggml_traits(wtype)->bytes, xb = (size_t)pg_ggml_traits(atype)->bytes;
        uint8_t *W = checkasm_alloc(maxN * (maxK / 32 * wb + 64));
        uint8_t *x = checkasm_alloc(maxK / 32 * xb);
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
                    for (int mode = 0; mode < 3; mode++) {
                        size_t ldw = K / 32 * wb + (mode == 1 ? 1 + checkasm_rand() % 63 : 0);
                        fill_weights(wtype, W, N, K, ldw, mode);
                        fill_acts(atype, x, 1, K, 0, mode);
                        for (size_t n = 0; n < N; n++) {
                            y_ref[n] = y_new[n] = NAN;
                            tol[n] = tol_of(wtype, W + n * ldw, x, K, mode);
                        }
                        call_ref(N, K, W, ldw, x, y_ref);
                        call_new(N, K, W, ldw, x, y_new);
                        if (!checkasm_check_f32_tol("y", y_ref, y_new, N, tol)) {
                            checkasm_fail("  %s at N=%zu K=%zu ldw=%zu, %s scales", wnames[t], N,
                                          K, ldw, mode == 0 ? "normal" : mode == 1 ? "extreme" : "exact");
                            goto next_variant;
                        }
                    }
                }
            }
            if (checkasm_bench_enabled()) {
                /* SmolLM2-135M's shapes: attention/MLP (q4_1) and the tied
                 * output matrix (q8_0, 49152 x 576) */
                static const size_t shapes[][2] = { { 1536, 576 }, { 576, 1536 }, { 49152, 576 } };
                for (int s = 0; s < 3; s++) {
                    size_t N = shapes[s][0], K = shapes[s][1], ldw = K / 32 * wb;
                    uint8_t *Wb = checkasm_alloc(N * ldw), *xbuf = checkasm_alloc(K / 32 * xb);
                    float *yb = checkasm_alloc_f32(N);
                    fill_weights(wtype, Wb, N, K, ldw, SCALES_NORMAL);
                    fill_acts(atype, xbuf, 1, K, 0, SCALES_NORMAL);
                    checkasm_bench_label("%s N=%zu K=%zu", wnames[t], N, K);
                    checkasm_bench_work(2.0 * N * K, (double)N * ldw);
                    bench_new(N, K, Wb, ldw, xbuf, yb);
                }
                benched = 1;
            }
        next_variant:;
        }
    }
    if (benched) {
        double copy = pg_measure_copy_gbps((size_t)64 << 20, 1);
        printf("   yardstick: asm copy of 64 MiB, 1 thread: %.2f GB/s (read + write)\n", copy);
    }
    checkasm_report("qgemv");
}

/* ---- qgemm --------------------------------------------------------------- */

/* q8_0's 4x6 GEMM promises the AVX-512 GEMV's arithmetic (a batch gives
 * the bits of the same rows one at a time): each row of C against the
 * GEMV on that row of X, exactly.  1 for every other variant. */
static int same_bits_as_gemv(const pg_variant *v, int wtype, size_t M, size_t N, size_t K, const uint8_t *W,
                             size_t ldw, const uint8_t *X, size_t ldx, const float *C, size_t ldc)
{
#if defined(__x86_64__)
    if (wtype != PG_GGML_Q8_0 || strcmp(v->name, "q8_0_q8_0_gemm_4x6_avx512vnni"))
        return 1;
    float y[64];
    for (size_t m = 0; m < M; m++) {
        pg_q8_0_q8_0_gemv_4row_avx512vnni(N, K, W, ldw, X + m * ldx, y);
        if (memcmp(y, C + m * ldc, N * sizeof(float)))
            return 0;
    }
#else
    (void)v; (void)wtype; (void)M; (void)N; (void)K; (void)W; (void)ldw; (void)X; (void)ldx; (void)C; (void)ldc;
#endif
    return 1;
}

void checkasm_check_qgemm(void)
{
    declare_func(qgemm);
    static const size_t Ms[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 17 };
    /* N = 33: two full 16-row panels and a partial one; K = 1088: a second
     * K chunk of the panel GEMM (kquant_panel.c, 1024 per chunk) */
    static const size_t Ns[] = { 1, 2, 3, 5, 8, 9, 33 };
    static const size_t Ks[] = { 0, 32, 64, 96, 160, 576, 1088 };
    int nM = checkasm_small() ? 9 : PG_COUNTOF(Ms), nK = checkasm_small() ? 5 : PG_COUNTOF(Ks);
    size_t maxM = 17, maxN = 33, maxK = 1088, maxldc = maxN + 8;

    for (int t = 0; t < 3; t++) {
        int wtype = wtypes[t], atype = pg_qgemv_act_type(wtype);
        const pg_kernel_family *op = pg_qgemm_family(wtype);
        size_t wb = (size_t)pg_ggml_traits(wtype)->bytes, xb = (size_t)pg_ggml_traits(atype)->bytes;
        uint8_t *W = checkasm_alloc(maxN * (maxK / 32 * wb + 64));
        uint8_t *X = checkasm_alloc(maxM * (maxK / 32 * xb + 64));
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
                        for (int mode = 0; mode < 3; mode++) {
                            size_t pad = mode == 1 ? 1 + checkasm_rand() % 63 : 0;
                            size_t ldw = K / 32 * wb + pad, ldx = K / 32 * xb + pad;
                            size_t ldc = N + (mode == 1 ? 1 + checkasm_rand() % 8 : 0);
                            fill_weights(wtype, W, N, K, ldw, mode);
                            fill_acts(atype, X, M, K, ldx, mode);
                            for (size_t i = 0; i < M * ldc; i++) {
                                size_t m = i / ldc, n = i % ldc;
                                /* padding columns must keep their value */
                                C_ref[i] = C_new[i] = n < N ? NAN : 1234.5f;
                                tol[i] = n < N ? tol_of(wtype, W + n * ldw, X + m * ldx, K, mode) : 0;
                            }
                            call_ref(M, N, K, W, ldw, X, ldx, C_ref, ldc);
                            call_new(M, N, K, W, ldw, X, ldx, C_new, ldc);
                            if (!checkasm_check_f32_tol("C", C_ref, C_new, M * ldc, tol)) {
                                checkasm_fail("  %s at M=%zu N=%zu K=%zu ldw=%zu ldx=%zu ldc=%zu, %s scales",
                                              wnames[t], M, N, K, ldw, ldx, ldc,
                                              mode == 0 ? "normal" : mode == 1 ? "extreme" : "exact");
                                goto next_variant;
                            }
                            if (!same_bits_as_gemv(&op->variants[v], wtype, M, N, K, W, ldw, X, ldx, C_new,
                                                   ldc)) {
                                checkasm_fail("  %s at M=%zu N=%zu K=%zu: not the GEMV's bits", wnames[t], M,
                                              N, K);
                                goto next_variant;
                            }
                        }
                    }
                }
            }
            if (checkasm_bench_enabled()) {
                /* a 64-token prefill through SmolLM2's MLP up projection */
                size_t M = 64, N = 1536, K = 576, ldw = K / 32 * wb, ldx = K / 32 * xb;
                uint8_t *Wb = checkasm_alloc(N * ldw), *Xb = checkasm_alloc(M * ldx);
                float *Cb = checkasm_alloc_f32(M * N);
                fill_weights(wtype, Wb, N, K, ldw, SCALES_NORMAL);
                fill_acts(atype, Xb, M, K, ldx, SCALES_NORMAL);
                checkasm_bench_label("%s M=%zu N=%zu K=%zu", wnames[t], M, N, K);
                checkasm_bench_work(2.0 * M * N * K, 0);
                bench_new(M, N, K, Wb, ldw, Xb, ldx, Cb, N);
            }
        next_variant:;
        }
    }
    checkasm_report("qgemm");
}

/* check_dwconv.c - every dwconv3x3 / dwconv5x5 / dwconv7x7 variant
 * against the C reference.
 *
 * Walks odd and edge channel counts (1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 96,
 * 100: the 8- and 16-channel tiles and the masked tail), widths 0..5 and a
 * longer row, strides 1 and 2, a pixel distance equal to C and one larger
 * (a padded copy whose extra channels hold NaN: a kernel that reads past
 * its channels poisons the result), an output step equal to C and one
 * larger (the gap holds a sentinel that must survive), and every epilogue:
 * none, clamp (ReLU, ReLU6, a narrow range) and hardswish.  Each kernel row
 * is its own guarded buffer.  The tolerance per element scales with the
 * taps and the magnitude of the products: 4 eps (1 + sqrt T) (|b| + sum
 * |w x|). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../kernels/dwconv/dwconv.h"
#include "checkasm.h"

#define SENTINEL 12345.0f

static void check_family(const pg_kernel_family *op)
{
    declare_func(dwconv);
    const pg_dwconv_params *p = op->variants[op->count - 1].params;
    int kh = p->kh, kw = p->kw;
    size_t taps = (size_t)(kh * kw);
    static const size_t chans[] = { 1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 96, 100 };
    static const size_t widths[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 19 };
    int nc = checkasm_small() ? 9 : PG_COUNTOF(chans);
    /* buffers at the largest case (the harness has a buffer budget); the
     * output's whole buffer is compared, so a write past the last pixel
     * shows as a changed sentinel */
    enum { MAXC = 100, MAXW = 19, MAXROW = (MAXW - 1) * 2 * (MAXC + 5) + 6 * (MAXC + 5) + MAXC,
           MAXOUT = (MAXW - 1) * (MAXC + 3) + MAXC };
    float *wraw = checkasm_alloc_f32(MAXC * 49), *bias = checkasm_alloc_f32(MAXC);
    float *w = checkasm_alloc_f32(pg_dwconv_packed_floats(MAXC, 7, 7));
    float *rbuf[7];
    for (int r = 0; r < kh; r++)
        rbuf[r] = checkasm_alloc_f32(MAXROW);
    float *ref = checkasm_alloc_f32(MAXOUT), *got = checkasm_alloc_f32(MAXOUT);
    float *tol = checkasm_alloc_f32(MAXOUT);

    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        checkasm_set_funcs(op, v);
        for (int ci = 0; ci < nc; ci++) {
            size_t C = chans[ci];
            checkasm_fill_f32(wraw, C * taps, -1, 1);
            checkasm_fill_f32(bias, C, -1, 1);
            pg_dwconv_pack(C, kh, kw, wraw, bias, w);
            for (int wi = 0; wi < PG_COUNTOF(widths); wi++) {
                size_t W = widths[wi];
                for (int stride = 1; stride <= 2; stride++)
                    for (int padded = 0; padded < 2; padded++) {
                        size_t pix = C + (padded ? 1 + checkasm_rand() % 5 : 0);
                        size_t in_step = (size_t)stride * pix;
                        size_t out_step = C + (padded ? 3 : 0);
                        size_t row_len = (W ? (W - 1) * in_step : 0) + (size_t)(kw - 1) * pix + C;
                        const float *rows[7];
                        for (int r = 0; r < kh; r++) {
                            for (size_t i = 0; i < row_len; i++)
                                rbuf[r][i] = i % pix < C ? checkasm_randf(-2, 2) : NAN;
                            rows[r] = rbuf[r];
                        }
                        size_t out_len = MAXOUT;
                        for (int act = 0; act < 5; act++) {
                            pg_dwconv_args a = { rows, w, ref, C, W, in_step, pix, out_step,
                                                 0.0f, INFINITY, PG_DWACT_NONE, 0 };
                            if (act == 1)
                                a.act = PG_DWACT_CLAMP;
                            else if (act == 2)
                                a.act = PG_DWACT_CLAMP, a.hi = 6.0f;
                            else if (act == 3)
                                a.act = PG_DWACT_CLAMP, a.lo = -0.5f, a.hi = 0.25f;
                            else if (act == 4)
                                a.act = PG_DWACT_HARDSWISH;
                            for (size_t i = 0; i < out_len; i++)
                                ref[i] = got[i] = SENTINEL;
                            call_ref(&a);
                            a.out = got;
                            call_new(&a);
                            double scale = 4.0 * FLT_EPSILON * (1.0 + sqrt((double)taps));
                            for (size_t i = 0; i < out_len; i++)
                                tol[i] = 0.0f;
                            for (size_t x = 0; x < W; x++)
                                for (size_t c = 0; c < C; c++) {
                                    double s = fabs(bias[c]);
                                    for (int ky = 0; ky < kh; ky++)
                                        for (int kx = 0; kx < kw; kx++)
                                            s += fabs((double)wraw[c * taps + (size_t)(ky * kw + kx)] *
                                                      rows[ky][x * in_step + (size_t)kx * pix + c]);
                                    tol[x * out_step + c] = (float)(scale * s * 2.0) + FLT_MIN;
                                }
                            if (!checkasm_check_f32_tol("out", ref, got, out_len, tol)) {
                                checkasm_fail("  at C=%zu width=%zu stride=%d pix=%zu out_step=%zu "
                                              "act=%d", C, W, stride, pix, out_step, act);
                                goto next_variant;
                            }
                        }
                    }
            }
        }
        if (checkasm_bench_enabled()) {
            /* a MobileNetV2 row: 112 pixels x 96 channels, stride 1 */
            size_t C = 96, W = 112;
            checkasm_fill_f32(wraw, C * taps, -1, 1);
            pg_dwconv_pack(C, kh, kw, wraw, NULL, w);
            const float *rows[7];
            for (int r = 0; r < kh; r++) {
                float *b = checkasm_alloc_f32((W + (size_t)kw) * C);
                checkasm_fill_f32(b, (W + (size_t)kw) * C, -1, 1);
                rows[r] = b;
            }
            float *out = checkasm_alloc_f32(W * C);
            pg_dwconv_args a = { rows, w, out, C, W, C, C, C, 0.0f, 6.0f, PG_DWACT_CLAMP, 0 };
            checkasm_bench_label("%zux%zu", W, C);
            checkasm_bench_work(2.0 * (double)(W * C * taps), 4.0 * (double)(W * C) * (double)(kh + 1));
            bench_new(&a);
        }
    next_variant:;
    }
}

void checkasm_check_dwconv(void)
{
    check_family(&pg_kernels_dwconv3x3);
    check_family(&pg_kernels_dwconv5x5);
    check_family(&pg_kernels_dwconv7x7);
    checkasm_report("dwconv");
}

/* check_conv_nchwc.c - every conv_nchwc variant against the C reference.
 *
 * Walks filter blocks 1..FB (every accumulator block of the asm), pixel
 * runs 0, 1, 2, 3, 5 (the tails), 6, 7, 12 and 13 (whole chunks and a
 * chunk plus a tail), blocked inputs (cin_blk = B) and plain NCHW ones
 * (cin_blk = 1, the first conv of a network) and a partial block
 * (cin_blk = 5: the channels past it hold NaN, so a kernel that reads
 * them poisons its result), 1 to 3 input blocks, taps 1x1, 3x3, 2x1 and
 * none (a window wholly in the padding: bias and clamp only), strides 1
 * and 2, dilation 1 and 2, every epilogue (none, ReLU, ReLU6, a narrow
 * clamp, HardSwish) with and without ACCUMULATE, and RESIDUAL (a skip tensor whose
 * blocks are 2 pixels further apart than y's, so a kernel that uses y_fb
 * for it reads the wrong values) with a clamp or HardSwish, alone and with
 * ACCUMULATE.
 * The output blocks have a gap of one pixel between them holding a
 * sentinel that must survive.  Tolerance per element: 4 eps (1 + sqrt T)
 * (|b| + |y| + |res| + sum |w x|), T the terms, twice that after
 * HardSwish (its slope reaches 1.5). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../kernels/conv_nchwc/conv_nchwc.h"
#include "checkasm.h"

#define SENTINEL 12345.0f

typedef struct shape {
    size_t cin_blk, pf, cin_blocks, kh, kw, stride, dil;
} shape;

void checkasm_check_conv_nchwc(void)
{
    const pg_kernel_family *op = &pg_kernels_conv_nchwc;
    declare_func(conv_nchwc);
    static const shape shapes[] = {
        { 16, 16, 1, 1, 1, 1, 1 }, { 16, 16, 2, 3, 3, 1, 1 }, { 16, 16, 3, 3, 3, 2, 1 },
        { 16, 16, 1, 3, 3, 1, 2 }, { 1, 1, 3, 3, 3, 2, 1 },   { 1, 1, 2, 2, 1, 1, 1 },
        { 5, 16, 2, 1, 1, 1, 1 },  { 16, 16, 2, 0, 3, 1, 1 }, { 16, 16, 1, 3, 0, 2, 1 },
    };
    static const size_t pixels[] = { 0, 1, 2, 3, 5, 6, 7, 12, 13 };
    enum { B = 16, MAXP = 13, MAXCB = 3, MAXK = 3, MAXD = 2, MAXS = 2,
           MAXIW = (MAXP - 1) * MAXS + (MAXK - 1) * MAXD + 1, MAXIH = (MAXK - 1) * MAXD + 1,
           MAXX = MAXCB * MAXIH * MAXIW * B, MAXFB = 4,
           MAXW = MAXCB * MAXK * MAXK * B * MAXFB * B, YFB = (MAXP + 1) * B, MAXY = MAXFB * YFB,
           RFB = (MAXP + 3) * B, MAXR = MAXFB * RFB };
    float *x = checkasm_alloc_f32(MAXX), *w = checkasm_alloc_f32(MAXW);
    float *bias = checkasm_alloc_f32(MAXFB * B);
    float *ref = checkasm_alloc_f32(MAXY), *got = checkasm_alloc_f32(MAXY);
    float *tol = checkasm_alloc_f32(MAXY), *y0 = checkasm_alloc_f32(MAXY);
    float *res = checkasm_alloc_f32(MAXR);

    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        const pg_conv_nchwc_params *prm = op->variants[v].params;
        if (prm->block != B) {
            checkasm_fail("%s: block %d, the check is written for %d", op->variants[v].name, prm->block, B);
            continue;
        }
        checkasm_set_funcs(op, v);
        int ns = checkasm_small() ? 5 : PG_COUNTOF(shapes);
        for (int si = 0; si < ns; si++) {
            const shape *s = &shapes[si];
            for (int fb = 1; fb <= prm->fb; fb++)
                for (int pi = 0; pi < PG_COUNTOF(pixels); pi++)
                    for (int ep = 0; ep < 9; ep++) {
                        size_t P = pixels[pi];
                        size_t IW = (P ? (P - 1) * s->stride : 0) + (s->kw ? (s->kw - 1) * s->dil : 0) + 1;
                        size_t IH = (s->kh ? (s->kh - 1) * s->dil : 0) + 1;
                        size_t nx = s->cin_blocks * IH * IW * s->pf;
                        for (size_t i = 0; i < nx; i++)
                            x[i] = i % s->pf < s->cin_blk ? checkasm_randf(-2, 2) : NAN;
                        size_t wrow = s->kw * s->cin_blk * (size_t)fb * B;
                        size_t nw = s->cin_blocks * s->kh * wrow;
                        checkasm_fill_f32(w, nw, -1, 1);
                        checkasm_fill_f32(bias, (size_t)fb * B, -1, 1);
                        for (size_t i = 0; i < MAXY; i++)
                            y0[i] = SENTINEL;
                        for (int f = 0; f < fb; f++)
                            checkasm_fill_f32(y0 + (size_t)f * YFB, P * B, -2, 2);
                        for (size_t i = 0; i < MAXR; i++)
                            res[i] = NAN;   /* only the pixels' values may be read */
                        for (int f = 0; f < fb; f++)
                            checkasm_fill_f32(res + (size_t)f * RFB, P * B, -2, 2);
                        pg_conv_nchwc_args a = {
                            x, w, ref, bias, P, (size_t)fb, s->cin_blocks, s->cin_blk, s->kh, s->kw,
                            s->stride * s->pf * 4, s->dil * s->pf * 4, s->dil * IW * s->pf * 4,
                            IH * IW * s->pf * 4, wrow * 4, s->kh * wrow * 4, YFB * 4,
                            0.0f, INFINITY, PG_CONV_NCHWC_ACT_NONE,
                            (ep == 4 || ep == 6 || ep == 8 ? PG_CONV_NCHWC_ACCUMULATE : 0) |
                                (ep == 5 || ep == 6 || ep == 8 ? PG_CONV_NCHWC_RESIDUAL : 0),
                            res, RFB * 4 };
                        if (ep == 1 || ep == 4 || ep == 5)
                            a.act = PG_CONV_NCHWC_ACT_CLAMP;
                        else if (ep == 2)
                            a.act = PG_CONV_NCHWC_ACT_CLAMP, a.hi = 6.0f;
                        else if (ep == 3 || ep == 6)
                            a.act = PG_CONV_NCHWC_ACT_CLAMP, a.lo = -0.5f, a.hi = 0.25f;
                        else if (ep >= 7)
                            a.act = PG_CONV_NCHWC_ACT_HARDSWISH;
                        memcpy(ref, y0, MAXY * sizeof(float));
                        memcpy(got, y0, MAXY * sizeof(float));
                        call_ref(&a);
                        a.y = got;
                        call_new(&a);
                        size_t terms = s->cin_blocks * s->kh * s->kw * s->cin_blk;
                        double sc = 4.0 * FLT_EPSILON * (1.0 + sqrt((double)terms));
                        for (size_t i = 0; i < MAXY; i++)
                            tol[i] = 0.0f;
                        for (size_t p = 0; p < P; p++)
                            for (int f = 0; f < fb; f++)
                                for (int l = 0; l < B; l++) {
                                    size_t yi = (size_t)f * YFB + p * B + (size_t)l;
                                    double m = fabs(bias[f * B + l]) +
                                               (a.flags & PG_CONV_NCHWC_ACCUMULATE ? fabs(y0[yi]) : 0.0) +
                                               (a.flags & PG_CONV_NCHWC_RESIDUAL
                                                    ? fabs(res[(size_t)f * RFB + p * B + (size_t)l]) : 0.0);
                                    for (size_t cb = 0; cb < s->cin_blocks; cb++)
                                        for (size_t ky = 0; ky < s->kh; ky++)
                                            for (size_t kx = 0; kx < s->kw; kx++)
                                                for (size_t ic = 0; ic < s->cin_blk; ic++) {
                                                    size_t xi = ((cb * IH + ky * s->dil) * IW + p * s->stride +
                                                                 kx * s->dil) * s->pf + ic;
                                                    size_t wi = (cb * s->kh + ky) * wrow +
                                                                (kx * s->cin_blk + ic) * (size_t)fb * B +
                                                                (size_t)f * B + (size_t)l;
                                                    m += fabs((double)x[xi] * w[wi]);
                                                }
                                    tol[yi] = (float)(sc * m * (ep >= 7 ? 4.0 : 2.0)) + FLT_MIN;
                                }
                        if (!checkasm_check_f32_tol("y", ref, got, MAXY, tol)) {
                            checkasm_fail("  at fb=%d pixels=%zu cin_blk=%zu cin_blocks=%zu k=%zux%zu "
                                          "stride=%zu dil=%zu epilogue=%d", fb, P, s->cin_blk,
                                          s->cin_blocks, s->kh, s->kw, s->stride, s->dil, ep);
                            goto next_variant;
                        }
                    }
        }
        if (checkasm_bench_enabled()) {
            /* a ResNet-18 row: 3x3, 64 -> 64 channels (4 blocks each way),
             * 56 pixels, in calls of the variant's filter group */
            enum { BP = 56, BIW = BP + 2, BCB = 4 };
            size_t FB = (size_t)prm->fb;
            float *bx = checkasm_alloc_f32(BCB * 3 * BIW * B);
            float *bw = checkasm_alloc_f32(BCB * 9 * B * 4 * B), *by = checkasm_alloc_f32(4 * BP * B);
            checkasm_fill_f32(bx, BCB * 3 * BIW * B, -1, 1);
            checkasm_fill_f32(bw, BCB * 9 * B * 4 * B, -1, 1);
            pg_conv_nchwc_args a = { bx, bw, by, bias, BP, FB, BCB, B, 3, 3, B * 4, B * 4, BIW * B * 4,
                                     3 * BIW * B * 4, 3 * B * FB * B * 4, 9 * B * FB * B * 4, BP * B * 4,
                                     0.0f, INFINITY, PG_CONV_NCHWC_ACT_CLAMP, 0, NULL, 0 };
            checkasm_bench_label("3x3 64->%zu x%d", 16 * FB, BP);
            checkasm_bench_work(2.0 * BP * 16 * FB * 64 * 9, 4.0 * (BCB * 3 * BIW * B + BCB * 9 * B * FB * B));
            bench_new(&a);
        }
    next_variant:;
    }
    checkasm_report("conv_nchwc");
}

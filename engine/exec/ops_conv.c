/* ops_conv.c - Conv and ConvTranspose, float32, NCHW.
 *
 * pg_conv_reference is Conv's plain C loop: every group count (depthwise
 * included), stride, dilation and pad, 1D to 3D (normalised to 3 spatial
 * dims, exec/cnn.h), the bias optional.  It is the oracle: simple, never
 * tuned; a bound fast path goes in front of it in pg_exec_conv.
 *
 * Both loops accumulate one weight at a time over a row of outputs (so the
 * inner loop runs along the width), reading every input before the output
 * they write: no aliasing between X and Y is allowed (the row is not
 * in-place). */
#include <string.h>

#include "../core/error.h"
#include "cnn.h"
#include "conv_fast.h"

/* The node's geometry from its descriptors (as the shape rule computed it). */
static pg_status conv_geom(pg_kctx *k, int kind, pg_win *w)
{
    const pg_tensor *x = k->in[0], *wt = k->in[1];
    return pg_win_geometry(k->node, kind, x->rank - 2, x->shape + 2, wt->shape + 2, w);
}

pg_status pg_conv_reference(pg_kctx *k, const pg_win *w)
{
    const pg_tensor *x = k->in[0], *wt = k->in[1];
    const float *X = k->x[0], *Wt = k->x[1], *B = k->n_in > 2 ? k->x[2] : NULL;
    float *Y = k->y[0];
    int64_t N = x->shape[0], C = x->shape[1], M = wt->shape[0];
    int64_t G = pg_ir_attr_int(k->node, "group", 1), Cg = C / G, Mg = M / G;
    int64_t ID = w->in[0], IH = w->in[1], IW = w->in[2];
    int64_t KD = w->k[0], KH = w->k[1], KW = w->k[2];
    int64_t OD = w->out[0], OH = w->out[1], OW = w->out[2];
    int64_t isz = ID * IH * IW, osz = OD * OH * OW, ksz = KD * KH * KW;
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++) {
            int64_t g = m / Mg;
            float *y = Y + (n * M + m) * osz;
            float b = B ? B[m] : 0.0f;
            for (int64_t o = 0; o < osz; o++) y[o] = b;
            for (int64_t c = 0; c < Cg; c++) {
                const float *xc = X + (n * C + g * Cg + c) * isz;
                const float *wc = Wt + (m * Cg + c) * ksz;
                for (int64_t kd = 0; kd < KD; kd++)
                    for (int64_t kh = 0; kh < KH; kh++)
                        for (int64_t kw = 0; kw < KW; kw++) {
                            float wv = wc[(kd * KH + kh) * KW + kw];
                            for (int64_t od = 0; od < OD; od++) {
                                int64_t id = od * w->stride[0] - w->lo[0] + kd * w->dil[0];
                                if (id < 0 || id >= ID)
                                    continue;
                                for (int64_t oh = 0; oh < OH; oh++) {
                                    int64_t ih = oh * w->stride[1] - w->lo[1] + kh * w->dil[1];
                                    if (ih < 0 || ih >= IH)
                                        continue;
                                    const float *xr = xc + (id * IH + ih) * IW;
                                    float *yr = y + (od * OH + oh) * OW;
                                    for (int64_t ow = 0; ow < OW; ow++) {
                                        int64_t iw = ow * w->stride[2] - w->lo[2] + kw * w->dil[2];
                                        if (iw >= 0 && iw < IW)
                                            yr[ow] += wv * xr[iw];
                                    }
                                }
                            }
                        }
            }
        }
    return PG_OK;
}

pg_status pg_exec_conv(pg_kctx *k)
{
    pg_win w;
    pg_status st = conv_geom(k, PG_WIN_CONV, &w);
    if (st)
        return st;
    if (k->bind->kern[0])
        return pg_conv_fast(k, &w);   /* bound to kernels (conv_fast.c) */
    return pg_conv_reference(k, &w);
}

/* ConvTranspose: each input element scatters into the outputs its kernel
 * covers (o = i * stride - pad_begin + k * dilation), the transpose of
 * Conv's gather.  W is [C, M/group, k...]. */
pg_status pg_exec_conv_transpose(pg_kctx *k)
{
    pg_win w;
    pg_status st = conv_geom(k, PG_WIN_CONV_TRANSPOSE, &w);
    if (st)
        return st;
    const pg_tensor *x = k->in[0], *wt = k->in[1];
    const float *X = k->x[0], *Wt = k->x[1], *B = k->n_in > 2 ? k->x[2] : NULL;
    float *Y = k->y[0];
    int64_t N = x->shape[0], C = x->shape[1], G = pg_ir_attr_int(k->node, "group", 1);
    int64_t Cg = C / G, Mg = wt->shape[1], M = Mg * G;
    int64_t ID = w.in[0], IH = w.in[1], IW = w.in[2];
    int64_t KD = w.k[0], KH = w.k[1], KW = w.k[2];
    int64_t OD = w.out[0], OH = w.out[1], OW = w.out[2];
    int64_t isz = ID * IH * IW, osz = OD * OH * OW, ksz = KD * KH * KW;
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++) {
            float *y = Y + (n * M + m) * osz;
            float b = B ? B[m] : 0.0f;
            for (int64_t o = 0; o < osz; o++) y[o] = b;
        }
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            int64_t g = c / Cg;
            const float *xc = X + (n * C + c) * isz;
            for (int64_t mg = 0; mg < Mg; mg++) {
                float *y = Y + (n * M + g * Mg + mg) * osz;
                const float *wc = Wt + (c * Mg + mg) * ksz;
                for (int64_t kd = 0; kd < KD; kd++)
                    for (int64_t kh = 0; kh < KH; kh++)
                        for (int64_t kw = 0; kw < KW; kw++) {
                            float wv = wc[(kd * KH + kh) * KW + kw];
                            for (int64_t id = 0; id < ID; id++) {
                                int64_t od = id * w.stride[0] - w.lo[0] + kd * w.dil[0];
                                if (od < 0 || od >= OD)
                                    continue;
                                for (int64_t ih = 0; ih < IH; ih++) {
                                    int64_t oh = ih * w.stride[1] - w.lo[1] + kh * w.dil[1];
                                    if (oh < 0 || oh >= OH)
                                        continue;
                                    const float *xr = xc + (id * IH + ih) * IW;
                                    float *yr = y + (od * OH + oh) * OW;
                                    for (int64_t iw = 0; iw < IW; iw++) {
                                        int64_t ow = iw * w.stride[2] - w.lo[2] + kw * w.dil[2];
                                        if (ow >= 0 && ow < OW)
                                            yr[ow] += wv * xr[iw];
                                    }
                                }
                            }
                        }
            }
        }
    return PG_OK;
}

/* conv_nchwc_ref.c - the C reference of the conv_nchwc family and the
 * weight packing (conv_nchwc.h): the sum written out as the header states
 * it, in double, one output element at a time. */
#include <math.h>
#include <string.h>

#include "conv_nchwc.h"

size_t pg_conv_nchwc_packed_floats(size_t M, size_t C, size_t cin_blk, int kh, int kw, int B, int FB)
{
    size_t mb = (M + (size_t)B - 1) / (size_t)B;
    size_t cb = (C + cin_blk - 1) / cin_blk;
    (void)FB;   /* the groups only order the blocks */
    return mb * cb * cin_blk * (size_t)(kh * kw) * (size_t)B;
}

void pg_conv_nchwc_pack(size_t M, size_t C, size_t cin_blk, int kh, int kw, int B, int FB,
                        const float *w, float *dst)
{
    size_t mb = (M + (size_t)B - 1) / (size_t)B, ncb = (C + cin_blk - 1) / cin_blk;
    size_t taps = (size_t)(kh * kw);
    for (size_t g0 = 0; g0 < mb; g0 += (size_t)FB) {
        size_t fb = mb - g0 < (size_t)FB ? mb - g0 : (size_t)FB;
        for (size_t cb = 0; cb < ncb; cb++)
            for (size_t t = 0; t < taps; t++)
                for (size_t ic = 0; ic < cin_blk; ic++)
                    for (size_t f = 0; f < fb; f++)
                        for (size_t l = 0; l < (size_t)B; l++) {
                            size_t m = (g0 + f) * (size_t)B + l, c = cb * cin_blk + ic;
                            *dst++ = m < M && c < C ? w[(m * C + c) * taps + t] : 0.0f;
                        }
    }
}

void pg_f32_conv_nchwc_ref(int B, const pg_conv_nchwc_args *a)
{
    const char *xb = (const char *)a->x, *wb = (const char *)a->w;
    char *yb = (char *)a->y;
    size_t fbB = a->fb * (size_t)B;
    for (size_t p = 0; p < a->pixels; p++)
        for (size_t f = 0; f < a->fb; f++)
            for (int l = 0; l < B; l++) {
                double s = a->bias[f * (size_t)B + (size_t)l];
                for (size_t cb = 0; cb < a->cin_blocks; cb++)
                    for (size_t ky = 0; ky < a->kh; ky++)
                        for (size_t kx = 0; kx < a->kw; kx++)
                            for (size_t ic = 0; ic < a->cin_blk; ic++) {
                                const float *xv = (const float *)(xb + cb * a->x_cb + ky * a->x_ky +
                                                                  kx * a->x_kx + p * a->x_pix) + ic;
                                const float *wv = (const float *)(wb + cb * a->w_cb + ky * a->w_ky) +
                                                  (kx * a->cin_blk + ic) * fbB + f * (size_t)B + (size_t)l;
                                s += (double)*xv * (double)*wv;
                            }
                float *yv = (float *)(yb + f * a->y_fb) + p * (size_t)B + l;
                float v = (float)s;
                if (a->flags & PG_CONV_NCHWC_ACCUMULATE)
                    v += *yv;
                if (a->flags & PG_CONV_NCHWC_RESIDUAL)
                    v += ((const float *)((const char *)a->res + f * a->res_fb))[p * (size_t)B + (size_t)l];
                if (a->act == PG_CONV_NCHWC_ACT_CLAMP) {
                    v = v < a->lo ? a->lo : v;
                    v = v > a->hi ? a->hi : v;
                } else if (a->act == PG_CONV_NCHWC_ACT_HARDSWISH) {
                    float r = v + 3.0f;
                    r = r < 0.0f ? 0.0f : r > 6.0f ? 6.0f : r;
                    v = v * (r * (1.0f / 6.0f));
                }
                *yv = v;
            }
}

void pg_f32_conv_nchwc16_c(const pg_conv_nchwc_args *a) { pg_f32_conv_nchwc_ref(16, a); }

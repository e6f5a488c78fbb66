/* dwconv_ref.c - the reference depthwise convolution (the oracle) and the
 * weight packing (see dwconv.h). */
#include <math.h>
#include <string.h>

#include "dwconv.h"

size_t pg_dwconv_packed_floats(size_t C, int kh, int kw)
{
    size_t groups = (C + PG_DWCONV_GROUP - 1) / PG_DWCONV_GROUP;
    return groups * (size_t)(1 + kh * kw) * PG_DWCONV_GROUP;
}

void pg_dwconv_pack(size_t C, int kh, int kw, const float *w, const float *bias, float *dst)
{
    size_t taps = (size_t)(kh * kw);
    memset(dst, 0, pg_dwconv_packed_floats(C, kh, kw) * sizeof(float));
    for (size_t c = 0; c < C; c++) {
        float *g = dst + c / PG_DWCONV_GROUP * (1 + taps) * PG_DWCONV_GROUP + c % PG_DWCONV_GROUP;
        g[0] = bias ? bias[c] : 0.0f;
        for (size_t t = 0; t < taps; t++)
            g[(1 + t) * PG_DWCONV_GROUP] = w[c * taps + t];
    }
}

static float act_ref(const pg_dwconv_args *a, float x)
{
    switch (a->act) {
    case PG_DWACT_CLAMP:
        x = x < a->lo ? a->lo : x;
        return x > a->hi ? a->hi : x;
    case PG_DWACT_HARDSWISH: {
        float r = x + 3.0f;
        r = r < 0.0f ? 0.0f : r > 6.0f ? 6.0f : r;
        return x * (r * (1.0f / 6.0f));
    }
    default:
        return x;
    }
}

void pg_f32_dwconv_ref(int kh, int kw, const pg_dwconv_args *a)
{
    size_t taps = (size_t)(kh * kw);
    for (size_t x = 0; x < a->width; x++)
        for (size_t c = 0; c < a->channels; c++) {
            const float *g = a->w + c / PG_DWCONV_GROUP * (1 + taps) * PG_DWCONV_GROUP +
                             c % PG_DWCONV_GROUP;
            float s = g[0];
            for (int ky = 0; ky < kh; ky++)
                for (int kx = 0; kx < kw; kx++)
                    s += g[(size_t)(1 + ky * kw + kx) * PG_DWCONV_GROUP] *
                         a->rows[ky][x * a->in_step + (size_t)kx * a->pix + c];
            a->out[x * a->out_step + c] = act_ref(a, s);
        }
}

void pg_f32_dwconv3x3_c(const pg_dwconv_args *a) { pg_f32_dwconv_ref(3, 3, a); }
void pg_f32_dwconv5x5_c(const pg_dwconv_args *a) { pg_f32_dwconv_ref(5, 5, a); }
void pg_f32_dwconv7x7_c(const pg_dwconv_args *a) { pg_f32_dwconv_ref(7, 7, a); }

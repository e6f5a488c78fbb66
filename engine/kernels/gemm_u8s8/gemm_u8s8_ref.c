/* gemm_u8s8_ref.c - the C references of gemm_u8s8 and quantize_u8: plain
 * loops, never tuned (the oracle checkasm and the self-check compare every
 * variant against). */
#include <math.h>
#include <string.h>

#include "gemm_u8s8.h"

void pg_u8s8_epilogue_ref(const pg_u8s8_epilogue *ep, size_t i, size_t j, int32_t acc,
                          void *crow)
{
    int32_t q = acc - ep->a_zero[i] * ep->col_sum[j];
    if (ep->b_zero)
        q -= ep->b_zero[j] * ep->row_corr[i];
    if (ep->out_mode == PG_U8S8_OUT_I32) {
        ((int32_t *)crow)[j] = q;
        return;
    }
    float s = ep->a_scale[i] * ep->b_scale[j];
    float y = (float)q * s;
    if (ep->bias)
        y += ep->bias[j];
    if (ep->out_mode == PG_U8S8_OUT_F32) {
        ((float *)crow)[j] = y;
        return;
    }
    float t = rintf(y * ep->out_inv_scale);
    /* clamp in float first: no int overflow for huge t (NaN: the top) */
    if (!(t <= 1e9f)) t = 1e9f;
    if (t < -1e9f) t = -1e9f;
    int32_t v = (int32_t)t + ep->out_zero;
    if (ep->out_mode == PG_U8S8_OUT_U8)
        ((uint8_t *)crow)[j] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    else
        ((int8_t *)crow)[j] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
}

static size_t out_size(int mode) { return mode == PG_U8S8_OUT_U8 || mode == PG_U8S8_OUT_S8 ? 1 : 4; }

/* The tile kernel of the table's last entry (MR 4, NR 32). */
void pg_u8s8_gemm_4x32_c(size_t mr, size_t nr, size_t k, const uint8_t *a, size_t lda,
                         const int8_t *b, void *c, size_t ldc, const pg_u8s8_epilogue *ep)
{
    size_t es = out_size(ep->out_mode);
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++) {
            int32_t acc = 0;
            for (size_t p = 0; p < k; p++)
                acc += (int32_t)a[i * lda + p] *
                       (int32_t)b[(p / PG_U8S8_KG) * PG_U8S8_NR * PG_U8S8_KG + j * PG_U8S8_KG +
                                  p % PG_U8S8_KG];
            pg_u8s8_epilogue_ref(ep, i, j, acc, (char *)c + i * ldc * es);
        }
}

void pg_quant_u8_apply(size_t n, const float *x, float inv_scale, int32_t zero, uint8_t *y)
{
    for (size_t i = 0; i < n; i++) {
        float t = rintf(x[i] * inv_scale);
        if (!(t <= 1e9f)) t = 1e9f;
        if (t < -1e9f) t = -1e9f;
        int32_t v = (int32_t)t + zero;
        y[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
}

void pg_quant_u8_span_c(size_t n, const float *x, float scale, int32_t zero, uint8_t *y)
{
    const float magic = 12582912.0f;   /* 1.5 * 2^23: (v + magic) - magic = rint(v), |v| < 2^22 */
    for (size_t i = 0; i < n; i++) {
        float v = x[i] / scale;
        int32_t q = (int32_t)((v + magic) - magic) + zero;
        y[i] = (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
    }
}

void pg_minmax_keys_c(size_t n, const float *x, int32_t *out)
{
    int32_t mn = 0, mx = 0, bad = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t u;
        memcpy(&u, &x[i], sizeof u);
        bad |= (u & 0x7f800000) == 0x7f800000;
        int32_t key = u ^ ((u >> 31) & 0x7fffffff);
        mn = key < mn ? key : mn;
        mx = key > mx ? key : mx;
    }
    out[0] = mn;
    out[1] = mx;
    out[2] = bad;
}

void pg_quant_u8_row_c(size_t n, const float *x, uint8_t *y, float *scale, int32_t *zero, int qmax)
{
    float lo = 0.0f, hi = 0.0f, q = (float)qmax;
    for (size_t i = 0; i < n; i++) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    float s = (hi - lo) / q;
    if (!(s > 0.0f))
        s = 1.0f;
    float inv = 1.0f / s;
    float z = rintf(-lo * inv);
    int32_t zp = z < 0.0f ? 0 : z > q ? qmax : (int32_t)z;
    *scale = s;
    *zero = zp;
    pg_quant_u8_apply(n, x, inv, zp, y);
    for (size_t i = 0; i < n; i++)
        y[i] = y[i] > qmax ? (uint8_t)qmax : y[i];
}

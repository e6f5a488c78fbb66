/* kquant_ref.c - the C references of the k-quant and 16-bit float weight
 * types (the oracle: plain, never tuned), written from ggml's block
 * layouts (kquant.h): the q8_K activation quantiser and one dot product
 * per weight type, with the gemv / gemm forms as loops over it. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../../gguf/ggml_types.h"
#include "kquant.h"

static float get_f16(const uint8_t *p) { return pg_f16_to_f32((uint16_t)(p[0] | p[1] << 8)); }
static float get_bf16(const uint8_t *p) { return pg_bf16_to_f32((uint16_t)(p[0] | p[1] << 8)); }

static float get_f32(const uint8_t *p)
{
    float f;
    memcpy(&f, p, 4);
    return f;
}

static int get_i16(const uint8_t *p) { return (int16_t)(uint16_t)(p[0] | p[1] << 8); }

void pg_quantize_row_q8_K_c(size_t n, const float *x, void *y)
{
    uint8_t *out = y;
    for (size_t b = 0; b < n / 256; b++, x += 256, out += 292) {
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < 256; j++)
            if (fabsf(x[j]) > amax) {
                amax = fabsf(x[j]);
                max = x[j];
            }
        memset(out, 0, 292);
        if (amax == 0.0f)
            continue;
        float iscale = -127.0f / max, d = 1.0f / iscale;
        int8_t q[256];
        for (int j = 0; j < 256; j++) {
            int v = (int)rintf(iscale * x[j]);    /* round half to even, as ggml's nearest_int */
            q[j] = (int8_t)(v < 127 ? v : 127);
        }
        memcpy(out, &d, 4);
        memcpy(out + 4, q, 256);
        for (int g = 0; g < 16; g++) {
            int s = 0;
            for (int j = 0; j < 16; j++)
                s += q[16 * g + j];
            out[260 + 2 * g] = (uint8_t)(s & 0xff);
            out[261 + 2 * g] = (uint8_t)((s >> 8) & 0xff);
        }
    }
}

/* The 6-bit scale and min of sub-block j of q4_K / q5_K (kquant.h). */
static void scale_min(int j, const uint8_t *s, int *sc, int *m)
{
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4);
        *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

/* q4_K (five_bit 0) and q5_K (1): per super-block the int32 sums of
 * sc_j * q . x over the sub-blocks and of m_j * (x's two bsums). */
static void dot_q45_K(int five_bit, size_t n, const uint8_t *w, const uint8_t *a, float *s)
{
    size_t wb = five_bit ? 176 : 144;
    float sum = 0.0f;
    for (size_t b = 0; b < n / 256; b++, w += wb, a += 292) {
        const uint8_t *sc = w + 4, *qh = w + 16, *qs = w + (five_bit ? 48 : 16);
        const int8_t *xq = (const int8_t *)(a + 4);
        int32_t isum = 0, msum = 0;
        for (int j = 0; j < 8; j++) {
            int scj, mj;
            scale_min(j, sc, &scj, &mj);
            int chunk = j / 2, hi = j % 2;
            int32_t dot = 0;
            for (int l = 0; l < 32; l++) {
                int q = hi ? qs[32 * chunk + l] >> 4 : qs[32 * chunk + l] & 0x0f;
                if (five_bit && (qh[l] >> j) & 1)
                    q += 16;
                dot += q * xq[32 * j + l];
            }
            isum += scj * dot;
            msum += mj * (get_i16(a + 260 + 4 * j) + get_i16(a + 262 + 4 * j));
        }
        float dx = get_f32(a);
        sum += get_f16(w) * dx * (float)isum - get_f16(w + 2) * dx * (float)msum;
    }
    *s = sum;
}

void pg_vec_dot_q4_K_q8_K_c(size_t n, const void *w, const void *a, float *s)
{
    dot_q45_K(0, n, w, a, s);
}

void pg_vec_dot_q5_K_q8_K_c(size_t n, const void *w, const void *a, float *s)
{
    dot_q45_K(1, n, w, a, s);
}

void pg_vec_dot_q6_K_q8_K_c(size_t n, const void *w, const void *a, float *s)
{
    const uint8_t *x = w, *y = a;
    float sum = 0.0f;
    for (size_t b = 0; b < n / 256; b++, x += 210, y += 292) {
        const uint8_t *ql = x, *qh = x + 128;
        const int8_t *sc = (const int8_t *)(x + 192), *yq = (const int8_t *)(y + 4);
        int32_t isum = 0;
        for (int e = 0; e < 256; e += 16) {
            int32_t dot = 0;
            for (int i = e; i < e + 16; i++) {
                int h = i / 128, k = (i % 128) / 32, l = i % 32;
                int lo = ql[64 * h + 32 * (k & 1) + l];
                lo = k < 2 ? lo & 0x0f : lo >> 4;
                int q = (lo | ((qh[32 * h + l] >> (2 * k)) & 3) << 4) - 32;
                dot += q * yq[i];
            }
            isum += sc[e / 16] * dot;
        }
        sum += get_f16(x + 208) * get_f32(y) * (float)isum;
    }
    *s = sum;
}

void pg_vec_dot_f16_f32_c(size_t n, const void *w, const void *a, float *s)
{
    const uint8_t *x = w;
    const float *y = a;
    float sum = 0.0f;
    for (size_t i = 0; i < n; i++)
        sum += get_f16(x + 2 * i) * y[i];
    *s = sum;
}

void pg_vec_dot_bf16_f32_c(size_t n, const void *w, const void *a, float *s)
{
    const uint8_t *x = w;
    const float *y = a;
    float sum = 0.0f;
    for (size_t i = 0; i < n; i++)
        sum += get_bf16(x + 2 * i) * y[i];
    *s = sum;
}

#define KQ_REF(t)                                                                            \
    void pg_##t##_gemv_c(size_t N, size_t K, const void *W, size_t ldw, const void *x,       \
                         float *y)                                                           \
    {                                                                                        \
        for (size_t n = 0; n < N; n++)                                                       \
            pg_vec_dot_##t##_c(K, (const uint8_t *)W + n * ldw, x, &y[n]);                   \
    }                                                                                        \
    void pg_##t##_gemm_c(size_t M, size_t N, size_t K, const void *W, size_t ldw,            \
                         const void *X, size_t ldx, float *C, size_t ldc)                    \
    {                                                                                        \
        for (size_t m = 0; m < M; m++)                                                       \
            for (size_t n = 0; n < N; n++)                                                   \
                pg_vec_dot_##t##_c(K, (const uint8_t *)W + n * ldw,                          \
                                   (const uint8_t *)X + m * ldx, &C[m * ldc + n]);           \
    }

KQ_REF(q4_K_q8_K)
KQ_REF(q5_K_q8_K)
KQ_REF(q6_K_q8_K)
KQ_REF(f16_f32)
KQ_REF(bf16_f32)

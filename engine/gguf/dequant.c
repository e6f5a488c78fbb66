/* dequant.c - ggml's tensor types expanded to f32: the C reference.
 *
 * Plain loops, one per block layout, written from ggml's block formats
 * (ggml-common.h); never tuned, they are the oracle the quantised kernels
 * are checked against.  Bytes are read one at a time, so blocks may sit at
 * any address (a GGUF tensor is only 32-byte aligned, a row of a 34-byte
 * q8_0 block not even that). */
#include <string.h>

#include "../core/error.h"
#include "ggml_types.h"

static uint16_t u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static float f16(const uint8_t *p) { return pg_f16_to_f32(u16(p)); }

static float f32(const uint8_t *p)
{
    uint32_t b = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    float f;
    memcpy(&f, &b, 4);
    return f;
}

/* q4_0: f16 d, 16 bytes; element j is the low nibble of byte j, element
 * j + 16 the high nibble; value (q - 8) * d. */
static void dq_q4_0(const uint8_t *b, float *y)
{
    float d = f16(b);
    for (int j = 0; j < 16; j++) {
        y[j] = (float)((b[2 + j] & 0x0f) - 8) * d;
        y[j + 16] = (float)((b[2 + j] >> 4) - 8) * d;
    }
}

/* q4_1: f16 d, f16 m, 16 bytes; value q * d + m. */
static void dq_q4_1(const uint8_t *b, float *y)
{
    float d = f16(b), m = f16(b + 2);
    for (int j = 0; j < 16; j++) {
        y[j] = (float)(b[4 + j] & 0x0f) * d + m;
        y[j + 16] = (float)(b[4 + j] >> 4) * d + m;
    }
}

/* q5_0: f16 d, uint32 qh (fifth bits), 16 nibble bytes; value (q - 16) * d. */
static void dq_q5_0(const uint8_t *b, float *y)
{
    float d = f16(b);
    uint32_t qh = (uint32_t)b[2] | (uint32_t)b[3] << 8 | (uint32_t)b[4] << 16 | (uint32_t)b[5] << 24;
    for (int j = 0; j < 16; j++) {
        int lo = (b[6 + j] & 0x0f) | (int)(((qh >> j) & 1) << 4);
        int hi = (b[6 + j] >> 4) | (int)(((qh >> (j + 16)) & 1) << 4);
        y[j] = (float)(lo - 16) * d;
        y[j + 16] = (float)(hi - 16) * d;
    }
}

/* q5_1: f16 d, f16 m, uint32 qh, 16 nibble bytes; value q * d + m. */
static void dq_q5_1(const uint8_t *b, float *y)
{
    float d = f16(b), m = f16(b + 2);
    uint32_t qh = (uint32_t)b[4] | (uint32_t)b[5] << 8 | (uint32_t)b[6] << 16 | (uint32_t)b[7] << 24;
    for (int j = 0; j < 16; j++) {
        int lo = (b[8 + j] & 0x0f) | (int)(((qh >> j) & 1) << 4);
        int hi = (b[8 + j] >> 4) | (int)(((qh >> (j + 16)) & 1) << 4);
        y[j] = (float)lo * d + m;
        y[j + 16] = (float)hi * d + m;
    }
}

/* q8_0: f16 d, 32 int8; value q * d. */
static void dq_q8_0(const uint8_t *b, float *y)
{
    float d = f16(b);
    for (int j = 0; j < 32; j++)
        y[j] = (float)(int8_t)b[2 + j] * d;
}

/* q8_1: f16 d, f16 s (= d * sum q, for dot products), 32 int8. */
static void dq_q8_1(const uint8_t *b, float *y)
{
    float d = f16(b);
    for (int j = 0; j < 32; j++)
        y[j] = (float)(int8_t)b[4 + j] * d;
}

/* q2_K: scales[16] (low nibble scale, high nibble min), qs[64] (2-bit),
 * f16 d, f16 dmin.  Two halves of 128; in each, four shifts of 2 bits over
 * 32 bytes, each shift giving two groups of 16 with their own scale. */
static void dq_q2_K(const uint8_t *b, float *y)
{
    const uint8_t *sc = b, *q = b + 16;
    float d = f16(b + 80), dmin = f16(b + 82);
    int is = 0;
    for (int half = 0; half < 2; half++, q += 32) {
        for (int shift = 0; shift < 8; shift += 2) {
            for (int g = 0; g < 2; g++, is++) {
                float dl = d * (float)(sc[is] & 0x0f), ml = dmin * (float)(sc[is] >> 4);
                for (int l = 0; l < 16; l++)
                    *y++ = dl * (float)((q[16 * g + l] >> shift) & 3) - ml;
            }
        }
    }
}

/* q3_K: hmask[32] (third bits), qs[64] (2-bit), scales[12] (sixteen 6-bit
 * scales, biased by 32), f16 d.  Scale j = 4a + b takes its low nibble from
 * byte b (a even) or 4 + b (a odd), low or high nibble by a >= 2, and its top
 * two bits from byte 8 + b, bits 2a.  Elements go as in q2_K; the hmask bit
 * (one bit position per group of 32, across both halves) clear means -4. */
static void dq_q3_K(const uint8_t *b, float *y)
{
    const uint8_t *hm = b, *q = b + 32, *s = b + 96;
    float d = f16(b + 108);
    int is = 0, m = 1;
    for (int half = 0; half < 2; half++, q += 32) {
        for (int shift = 0; shift < 8; shift += 2, m <<= 1) {
            for (int g = 0; g < 2; g++, is++) {
                int a = is / 4, bb = is % 4;
                int lo = ((a & 1 ? s[4 + bb] : s[bb]) >> (a & 2 ? 4 : 0)) & 0x0f;
                int hi = (s[8 + bb] >> (2 * a)) & 3;
                float dl = d * (float)((lo | hi << 4) - 32);
                for (int l = 0; l < 16; l++) {
                    int k = 16 * g + l;
                    *y++ = dl * (float)(((q[k] >> shift) & 3) - ((hm[k] & m) ? 0 : 4));
                }
            }
        }
    }
}

/* The 6-bit scale and min of sub-block j (0..7) of q4_K / q5_K, packed in
 * 12 bytes: j < 4 in the low 6 bits of bytes j and j + 4; j >= 4 in the
 * nibbles of byte j + 4 with their top 2 bits in the high bits of bytes
 * j - 4 and j. */
static void scale_min_k4(int j, const uint8_t *s, int *sc, int *m)
{
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4);
        *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

/* q4_K: f16 d, f16 dmin, scales[12], qs[128].  Four chunks of 64: 32
 * bytes, low nibbles with one scale/min, high nibbles with the next. */
static void dq_q4_K(const uint8_t *b, float *y)
{
    float d = f16(b), dmin = f16(b + 2);
    const uint8_t *s = b + 4, *q = b + 16;
    for (int chunk = 0; chunk < 4; chunk++, q += 32) {
        int sc, m;
        scale_min_k4(2 * chunk, s, &sc, &m);
        float d1 = d * (float)sc, m1 = dmin * (float)m;
        scale_min_k4(2 * chunk + 1, s, &sc, &m);
        float d2 = d * (float)sc, m2 = dmin * (float)m;
        for (int l = 0; l < 32; l++)
            *y++ = d1 * (float)(q[l] & 0x0f) - m1;
        for (int l = 0; l < 32; l++)
            *y++ = d2 * (float)(q[l] >> 4) - m2;
    }
}

/* q5_K: f16 d, f16 dmin, scales[12], qh[32], qs[128]: q4_K plus a fifth
 * bit, taken from qh bit 2*chunk (low nibbles) and 2*chunk+1 (high). */
static void dq_q5_K(const uint8_t *b, float *y)
{
    float d = f16(b), dmin = f16(b + 2);
    const uint8_t *s = b + 4, *qh = b + 16, *q = b + 48;
    for (int chunk = 0; chunk < 4; chunk++, q += 32) {
        int sc, m;
        scale_min_k4(2 * chunk, s, &sc, &m);
        float d1 = d * (float)sc, m1 = dmin * (float)m;
        scale_min_k4(2 * chunk + 1, s, &sc, &m);
        float d2 = d * (float)sc, m2 = dmin * (float)m;
        int u1 = 1 << (2 * chunk), u2 = 2 << (2 * chunk);
        for (int l = 0; l < 32; l++)
            *y++ = d1 * (float)((q[l] & 0x0f) + ((qh[l] & u1) ? 16 : 0)) - m1;
        for (int l = 0; l < 32; l++)
            *y++ = d2 * (float)((q[l] >> 4) + ((qh[l] & u2) ? 16 : 0)) - m2;
    }
}

/* q6_K: ql[128] (low 4 bits), qh[64] (high 2 bits), int8 scales[16], f16 d.
 * Two halves of 128; in each, element l + 32k (k = 0..3) takes its low
 * nibble from ql[l] or ql[l + 32] (low, then high nibble) and its top bits
 * from qh[l] >> 2k; one scale per 16 elements; value d * scale * (q - 32). */
static void dq_q6_K(const uint8_t *b, float *y)
{
    const uint8_t *ql = b, *qh = b + 128;
    const int8_t *sc = (const int8_t *)(b + 192);
    float d = f16(b + 208);
    for (int half = 0; half < 2; half++, y += 128, ql += 64, qh += 32, sc += 8) {
        for (int l = 0; l < 32; l++) {
            int is = l / 16;
            int q1 = ((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
            int q2 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
            int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            y[l] = d * (float)sc[is] * (float)q1;
            y[l + 32] = d * (float)sc[is + 2] * (float)q2;
            y[l + 64] = d * (float)sc[is + 4] * (float)q3;
            y[l + 96] = d * (float)sc[is + 6] * (float)q4;
        }
    }
}

/* q8_K: f32 d, int8 qs[256], int16 bsums[16] (sums for dot products). */
static void dq_q8_K(const uint8_t *b, float *y)
{
    float d = f32(b);
    for (int j = 0; j < 256; j++)
        y[j] = d * (float)(int8_t)b[4 + j];
}

typedef void (*block_fn)(const uint8_t *b, float *y);

static block_fn block_dequantizer(int type)
{
    switch (type) {
    case PG_GGML_Q4_0: return dq_q4_0;
    case PG_GGML_Q4_1: return dq_q4_1;
    case PG_GGML_Q5_0: return dq_q5_0;
    case PG_GGML_Q5_1: return dq_q5_1;
    case PG_GGML_Q8_0: return dq_q8_0;
    case PG_GGML_Q8_1: return dq_q8_1;
    case PG_GGML_Q2_K: return dq_q2_K;
    case PG_GGML_Q3_K: return dq_q3_K;
    case PG_GGML_Q4_K: return dq_q4_K;
    case PG_GGML_Q5_K: return dq_q5_K;
    case PG_GGML_Q6_K: return dq_q6_K;
    case PG_GGML_Q8_K: return dq_q8_K;
    default: return NULL;
    }
}

/* Plain (one-element) types. */
static int dq_plain(int type, const uint8_t *p, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        switch (type) {
        case PG_GGML_F32: y[i] = f32(p + 4 * i); break;
        case PG_GGML_F16: y[i] = f16(p + 2 * i); break;
        case PG_GGML_BF16: y[i] = pg_bf16_to_f32(u16(p + 2 * i)); break;
        case PG_GGML_I8: y[i] = (float)(int8_t)p[i]; break;
        case PG_GGML_I16: y[i] = (float)(int16_t)u16(p + 2 * i); break;
        case PG_GGML_I32: {
            uint32_t b = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
                (uint32_t)p[4 * i + 3] << 24;
            y[i] = (float)(int32_t)b;
            break;
        }
        case PG_GGML_F64: {
            uint64_t b = 0;
            double v;
            for (int k = 7; k >= 0; k--)
                b = (b << 8) | p[8 * i + k];
            memcpy(&v, &b, 8);
            y[i] = (float)v;
            break;
        }
        default: return 0;
        }
    }
    return 1;
}

pg_status pg_dequantize_row(int type, const void *src, float *dst, int64_t n)
{
    const pg_ggml_type_traits *tt = pg_ggml_traits(type);
    if (!tt)
        return pg_fail(PG_ERR_DTYPE, "dequantize: unknown ggml type %d", type);
    if (!src || !dst)
        return pg_fail(PG_ERR_INVALID_ARG, "dequantize: src or dst is NULL");
    if (n < 0 || n % tt->block)
        return pg_fail(PG_ERR_SHAPE, "dequantize: %lld elements is not a whole number of %s "
                       "blocks (%lld each)", (long long)n, tt->name, (long long)tt->block);
    if (!tt->dequant)
        return pg_fail(PG_ERR_UNSUPPORTED, "dequantize: type %s cannot be expanded to f32 yet", tt->name);
    const uint8_t *p = src;
    if (tt->block == 1) {
        dq_plain(type, p, dst, n);
        return PG_OK;
    }
    block_fn fn = block_dequantizer(type);
    for (int64_t i = 0; i < n / tt->block; i++)
        fn(p + i * tt->bytes, dst + i * tt->block);
    return PG_OK;
}

/* attn_ggml_ref.c - the C references of attn_kq_ggml and attn_pv_ggml
 * (attn_ggml.h): ggml's order written out in plain loops. */
#include "attn_ggml.h"

/* the 16 lanes of s folded 8+8, 4+4, then (0+1)+(2+3) */
static float fold16(const float *s)
{
    float t8[8], t4[4];
    for (int l = 0; l < 8; l++)
        t8[l] = s[l] + s[l + 8];
    for (int l = 0; l < 4; l++)
        t4[l] = t8[l] + t8[l + 4];
    return (t4[0] + t4[1]) + (t4[2] + t4[3]);
}

static float dot_ggml(size_t n, const float *q, const float *k)
{
    size_t np = n & ~(size_t)63;
    double sum = 0.0;
    if (np) {
        float acc[64], s[16];
        for (int l = 0; l < 64; l++)
            acc[l] = q[l] * k[l];
        for (size_t j0 = 64; j0 < np; j0 += 64)
            for (int l = 0; l < 64; l++)
                acc[l] += q[j0 + (size_t)l] * k[j0 + (size_t)l];
        for (int l = 0; l < 16; l++)
            s[l] = (acc[l] + acc[l + 32]) + (acc[l + 16] + acc[l + 48]);
        sum = fold16(s);
    }
    for (size_t j = np; j < n; j++)
        sum += (double)(q[j] * k[j]);
    return (float)sum;
}

void pg_f32_attn_kq_ggml_c(size_t n, size_t hd, const float *q, const float *k, size_t ldk, float *s)
{
    for (size_t j = 0; j < n; j++)
        s[j] = dot_ggml(hd, q, k + j * ldk);
}

void pg_f32_attn_pv_ggml_c(size_t n, size_t hd, const float *p, const float *v, size_t ldv, float *acc,
                           float *out)
{
    size_t np = n & ~(size_t)63;
    double sum[PG_ATTN_MAX_HD];
    for (size_t d = 0; d < hd; d++)
        sum[d] = 0.0;
    if (np) {
        for (size_t r = 0; r < 64; r++)
            for (size_t d = 0; d < hd; d++)
                acc[r * hd + d] = v[r * ldv + d] * p[r];
        for (size_t j0 = 64; j0 < np; j0 += 64)
            for (size_t r = 0; r < 64; r++) {
                const float *vr = v + (j0 + r) * ldv;
                float pr = p[j0 + r], *a = acc + r * hd;
                for (size_t d = 0; d < hd; d++)
                    a[d] += vr[d] * pr;
            }
        for (size_t d = 0; d < hd; d++) {
            float s[16];
            for (size_t l = 0; l < 16; l++)
                s[l] = (acc[l * hd + d] + acc[(l + 32) * hd + d]) + (acc[(l + 16) * hd + d] + acc[(l + 48) * hd + d]);
            sum[d] = fold16(s);
        }
    }
    for (size_t j = np; j < n; j++)
        for (size_t d = 0; d < hd; d++)
            sum[d] += (double)(v[j * ldv + d] * p[j]);
    for (size_t d = 0; d < hd; d++)
        out[d] = (float)sum[d];
}

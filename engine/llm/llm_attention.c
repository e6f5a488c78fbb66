/* llm_attention.c - RoPE, the KV cache and grouped-query attention.
 *
 * RoPE in ggml's two orderings, as llama.cpp picks them per architecture:
 * "normal" (llama: adjacent pairs (x[2i], x[2i+1]) of each head; the GGUF
 * converter permuted the Q and K rows so that this equals the checkpoint's
 * rotate-half form) and "NeoX" (qwen2/3, gemma, phi3: pairs (x[i],
 * x[i + n_rot/2])).  Only the first n_rot dims of a head rotate (partial
 * rotary); pair i turns by pos * base^(-2i/n_rot), divided by Llama 3's
 * rope_freqs[i] where the file has them and times the linear scaling's
 * 1/factor.  The angle table is built at load the way ggml builds its cache
 * (theta starts at pos and is multiplied by base^(-2/n_rot) per pair, in
 * float), so the rotations are the same numbers llama.cpp uses.
 *
 * Query head h reads KV head h / (n_head / n_head_kv) (ggml's broadcast;
 * n_head_kv = 1 is MQA).  Keys and values are kept in f32,
 * [layer][pos][n_head_kv * head_dim].  A windowed layer (gemma2's even
 * layers, phi3's) lets the query at p see keys p - n_swa < j <= p; gemma2's
 * scores are capped to c tanh(s / c) before the softmax. */
#include <math.h>
#include <string.h>

#include "../core/threadpool.h"
#include "../kernels/softmax/softmax.h"
#include "llm.h"

void llm_rope_table(pg_llm *m)
{
    const llm_hparams *hp = &m->hp;
    int half = hp->n_rot / 2;
    float theta_scale = powf(hp->rope_base, -2.0f / (float)hp->n_rot);
    for (int p = 0; p < m->n_ctx; p++) {
        float theta = (float)p;
        for (int i = 0; i < half; i++) {
            float ff = m->rope_freqs ? m->rope_freqs[i] : 1.0f;
            float t = hp->rope_freq_scale * (theta / ff);
            m->rope_cos[(size_t)p * half + i] = cosf(t);
            m->rope_sin[(size_t)p * half + i] = sinf(t);
            theta *= theta_scale;
        }
    }
}

/* Rotates the first n_rot dims of every head of x (heads of hd). */
static void rope_row(float *x, int heads, int hd, int n_rot, int neox, const float *c,
                     const float *s)
{
    int half = n_rot / 2;
    size_t step = neox ? (size_t)half : 1, stride = neox ? 1 : 2;
    for (int h = 0; h < heads; h++) {
        float *v = x + (size_t)h * hd;
        for (int i = 0; i < half; i++) {
            float *a = v + (size_t)i * stride, *b = a + step;
            float x0 = *a, x1 = *b;
            *a = x0 * c[i] - x1 * s[i];
            *b = x0 * s[i] + x1 * c[i];
        }
    }
}

/* Keys, values, queries and attention weights are rounded to f16 where
 * llama.cpp holds them in f16 (its default KV cache; Q and the softmax
 * are converted to f16 for the products with K and V), so the decoder
 * computes the numbers llama.cpp computes; the cache itself stays f32 so
 * the inner loops read plain floats. */
static float round_f16_1(float x)
{
    float a = fabsf(x);
    if (!(a < 65520.0f))                      /* NaN stays, the rest overflows */
        return a != a ? x : copysignf(INFINITY, x);
    if (a < 6.103515625e-05f)                 /* f16 subnormals: multiples of 2^-24 */
        return copysignf((x + 0.75f) - 0.75f, x);
    uint32_t u;                               /* normal: 10 mantissa bits, to nearest even */
    memcpy(&u, &x, sizeof u);
    u = (u + 0x0FFFu + ((u >> 13) & 1u)) & ~0x1FFFu;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* x -> the f16 value nearest x, as f32: equal to pg_f16_to_f32(pg_f32_to_f16(x))
 * for every float (checked over all 2^32 bit patterns), without the format
 * change. */
static void round_f16(float *dst, const float *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = round_f16_1(src[i]);
}

void llm_round_f16(float *dst, const float *src, size_t n) { round_f16(dst, src, n); }

/* Q times q_scale (gemma, phi3: after RoPE, in f32, as llama.cpp scales Q),
 * then rounded to f16 as the K.Q product sees it. */
static void scale_round_f16(float *x, size_t n, float scale)
{
    for (size_t i = 0; i < n; i++)
        x[i] = round_f16_1(x[i] * scale);
}

void llm_scale_round_f16(float *dst, const float *src, size_t n, float scale)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = round_f16_1(scale != 0.0f ? src[i] * scale : src[i]);
}

void llm_rope_rows(float *x, size_t ld, int n, int pos, int heads, int hd, int n_rot, int neox,
                   const float *cos_tab, const float *sin_tab)
{
    size_t half = (size_t)n_rot / 2;
    for (int i = 0; i < n; i++)
        rope_row(x + (size_t)i * ld, heads, hd, n_rot, neox, cos_tab + (size_t)(pos + i) * half,
                 sin_tab + (size_t)(pos + i) * half);
}

void llm_rope_store(pg_llm *m, int layer)
{
    const llm_hparams *hp = &m->hp;
    size_t qd = (size_t)hp->q_dim, kd = (size_t)hp->kv_dim;
    int half = hp->n_rot / 2;
    float *kc = m->k_cache + (size_t)(m->kv_f16 ? 0 : layer) * m->n_ctx * kd;
    float *vc = m->v_cache + (size_t)(m->kv_f16 ? 0 : layer) * m->n_ctx * kd;
    for (int i = 0; i < m->run_n; i++) {
        size_t pos = (size_t)(m->run_pos + i);
        const float *c = m->rope_cos + pos * half, *s = m->rope_sin + pos * half;
        rope_row(m->q + i * qd, hp->n_head, hp->head_dim, hp->n_rot, hp->rope_neox, c, s);
        rope_row(m->k + i * kd, hp->n_head_kv, hp->head_dim, hp->n_rot, hp->rope_neox, c, s);
        if (m->kv_f16) {   /* the f16 cache: the same values, half the bytes */
            size_t at = ((size_t)layer * m->n_ctx + pos) * kd;
            m->kern[LLM_K_CVT_F32_F16]->fn.quantize(kd, m->k + i * kd, m->k_cache16 + at);
            m->kern[LLM_K_CVT_F32_F16]->fn.quantize(kd, m->v + i * kd, m->v_cache16 + at);
        } else {
            round_f16(kc + pos * kd, m->k + i * kd, kd);
            round_f16(vc + pos * kd, m->v + i * kd, kd);
        }
        if (hp->q_scale != 0.0f)
            scale_round_f16(m->q + i * qd, qd, hp->q_scale);
        else
            round_f16(m->q + i * qd, m->q + i * qd, qd);
    }
}

#define MAX_HD 256           /* llm_arch.c refuses wider heads */

/* The two attention products in the order ggml's CPU backend sums them
 * (ggml_vec_dot_f16 built for AVX-512: four accumulators of 16 lanes over
 * steps of 64, folded 0+2, 1+3, then 0+1, then the 16 lanes by halves;
 * a tail past the last full step added one by one in double).  Every
 * operand is an f16 value here, so each product is exact in f32 and only
 * the order of the additions can differ: keeping ggml's order keeps the
 * scores and the head outputs on llama.cpp's numbers.  The lane loops
 * are plain elementwise C the compiler vectorises. */
static float fold16(const float *s)
{
    float t8[8], t4[4];
    for (int l = 0; l < 8; l++)
        t8[l] = s[l] + s[l + 8];
    for (int l = 0; l < 4; l++)
        t4[l] = t8[l] + t8[l + 4];
    return (t4[0] + t4[1]) + (t4[2] + t4[3]);
}

/* q . k over one head of n (16 <= n <= MAX_HD). */
static float dot_ggml(int n, const float *q, const float *k)
{
    int np = n & ~63;
    double sum = 0.0;
    if (np) {
        float acc[64], s[16];
        for (int l = 0; l < 64; l++)
            acc[l] = q[l] * k[l];
        for (int j0 = 64; j0 < np; j0 += 64)
            for (int l = 0; l < 64; l++)
                acc[l] += q[j0 + l] * k[j0 + l];
        for (int l = 0; l < 16; l++)
            s[l] = (acc[l] + acc[l + 32]) + (acc[l + 16] + acc[l + 48]);
        sum = fold16(s);
    }
    for (int j = np; j < n; j++)
        sum += (double)(q[j] * k[j]);
    return (float)sum;
}

/* out[d] = sum_j p[j] v[j * ldv + d], d < hd: acc holds, per lane, the hd
 * outputs (acc[(16 a + l) * hd + d], accumulator a, lane l); every loop
 * runs over d, so it vectorises, and the folds follow ggml's order. */
static void pv_ggml(int n, int hd, const float *p, const float *v, size_t ldv, float *acc,
                    float *out)
{
    int np = n & ~63;
    double sum[MAX_HD];
    for (int d = 0; d < hd; d++)
        sum[d] = 0.0;
    if (np) {
        for (int r = 0; r < 64; r++)
            for (int d = 0; d < hd; d++)
                acc[r * hd + d] = v[(size_t)r * ldv + d] * p[r];
        for (int j0 = 64; j0 < np; j0 += 64)
            for (int r = 0; r < 64; r++) {
                const float *vr = v + (size_t)(j0 + r) * ldv;
                float pr = p[j0 + r];
                float *a = acc + r * hd;
                for (int d = 0; d < hd; d++)
                    a[d] += vr[d] * pr;
            }
        float s[16][MAX_HD];
        for (int l = 0; l < 16; l++)
            for (int d = 0; d < hd; d++)
                s[l][d] = (acc[l * hd + d] + acc[(l + 32) * hd + d]) +
                          (acc[(l + 16) * hd + d] + acc[(l + 48) * hd + d]);
        for (int l = 0; l < 8; l++)
            for (int d = 0; d < hd; d++)
                s[l][d] += s[l + 8][d];
        for (int l = 0; l < 4; l++)
            for (int d = 0; d < hd; d++)
                s[l][d] += s[l + 4][d];
        for (int d = 0; d < hd; d++)
            sum[d] = (s[0][d] + s[1][d]) + (s[2][d] + s[3][d]);
    }
    for (int j = np; j < n; j++)
        for (int d = 0; d < hd; d++)
            sum[d] += (double)(v[(size_t)j * ldv + d] * p[j]);
    for (int d = 0; d < hd; d++)
        out[d] = (float)sum[d];
}

/* One query head over every row of the batch. */
static void att_task(void *p, size_t h)
{
    const llm_att_args *a = p;
    int hd = a->head_dim;
    size_t kd = a->kd;
    size_t kvh = h / (size_t)(a->n_head / a->n_head_kv);
    float *sc = a->scores + h * (size_t)a->n_ctx;
    float cap = a->softcap, inv_cap = cap != 0.0f ? 1.0f / cap : 0.0f;
    float scale = cap != 0.0f ? cap * a->kq_scale : a->kq_scale;
    for (int i = 0; i < a->n; i++) {
        int n_kv = a->pos + i + 1;
        int j0 = a->window && n_kv > a->window ? n_kv - a->window : 0;
        const float *q = a->q + (size_t)i * a->ldq + h * hd;
        if (cap != 0.0f) {
            /* ggml: s / c, tanh, then c * (the softmax's scale) */
            for (int j = j0; j < n_kv; j++)
                sc[j] = dot_ggml(hd, q, a->kc + (size_t)j * kd + kvh * hd) * inv_cap;
            a->tanh((size_t)(n_kv - j0), sc + j0, sc + j0);
        } else {
            for (int j = j0; j < n_kv; j++)
                sc[j] = dot_ggml(hd, q, a->kc + (size_t)j * kd + kvh * hd);
        }
        for (int j = 0; j < j0; j++)
            sc[j] = -INFINITY;   /* outside the window: exp gives 0, as ggml's mask */
        a->softmax((size_t)n_kv, sc, scale, NULL, sc);
        round_f16(sc, sc, (size_t)n_kv);
        pv_ggml(n_kv, hd, sc, a->vc + kvh * hd, kd, a->acc + h * 64 * (size_t)hd,
                a->out + (size_t)i * a->ldo + h * hd);
    }
}

void llm_attend(const llm_att_args *a)
{
    pg_parallel_for((size_t)a->n_head, att_task, (void *)a, a->threads);
}

void llm_attention(pg_llm *m, int layer)
{
    const llm_hparams *hp = &m->hp;
    size_t kd = (size_t)hp->kv_dim;
    if (m->kv_f16) {   /* widen the layer's cached positions into the f32 copy */
        size_t n = (size_t)(m->run_pos + m->run_n) * kd, at = (size_t)layer * m->n_ctx * kd;
        m->kern[LLM_K_CVT_F16_F32]->fn.widen(n, m->k_cache16 + at, m->k_cache);
        m->kern[LLM_K_CVT_F16_F32]->fn.widen(n, m->v_cache16 + at, m->v_cache);
    }
    size_t at = (size_t)(m->kv_f16 ? 0 : layer) * m->n_ctx * kd;
    llm_att_args a = { hp->n_head, hp->n_head_kv, hp->head_dim, m->n_ctx, hp->kq_scale,
                       hp->attn_softcap, m->layers[layer].swa ? hp->n_swa : 0, m->run_n,
                       m->run_pos, m->q, (size_t)hp->q_dim, m->k_cache + at, m->v_cache + at, kd,
                       m->att, (size_t)hp->q_dim, m->scores, m->att_acc,
                       m->kern[LLM_K_SOFTMAX]->fn.softmax, m->kern[LLM_K_TANH]->fn.unary,
                       m->threads };
    llm_attend(&a);
}

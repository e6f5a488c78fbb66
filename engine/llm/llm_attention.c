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
#include "../kernels/round_f16/round_f16.h"
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

/* The two products (q . k_j, sum_j p[j] v_j) run on the attn_kq_ggml /
 * attn_pv_ggml kernels: ggml's order of the additions, so the scores and
 * the head outputs are llama.cpp's numbers (kernels/attn_ggml/attn_ggml.h). */

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
        a->kq((size_t)(n_kv - j0), (size_t)hd, q, a->kc + (size_t)j0 * kd + kvh * hd, kd, sc + j0);
        if (cap != 0.0f) {
            /* ggml: s / c, tanh, then c * (the softmax's scale) */
            for (int j = j0; j < n_kv; j++)
                sc[j] *= inv_cap;
            a->tanh((size_t)(n_kv - j0), sc + j0, sc + j0);
        }
        for (int j = 0; j < j0; j++)
            sc[j] = -INFINITY;   /* outside the window: exp gives 0, as ggml's mask */
        a->softmax((size_t)n_kv, sc, scale, NULL, sc);
        a->round((size_t)n_kv, sc, 0.0f, sc);
        a->pv((size_t)n_kv, (size_t)hd, sc, a->vc + kvh * hd, kd, a->acc + h * 64 * (size_t)hd,
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
                       m->kern[LLM_K_ATTN_KQ]->fn.attn_kq, m->kern[LLM_K_ATTN_PV]->fn.attn_pv,
                       pg_f32_round_f16_c,
                       m->threads };
    llm_attend(&a);
}

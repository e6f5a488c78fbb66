/* llm_attention.c - the RoPE angle tables and grouped-query attention over
 * the KV cache (the graph's LLMRotary, KVCacheWrite and CachedAttention,
 * exec/ops_llm.c, run them).
 *
 * RoPE in ggml's two orderings, as llama.cpp picks them per architecture
 * (the rope_ggml kernels): "normal" (llama: adjacent pairs (x[2i], x[2i+1])
 * of each head; the GGUF converter permuted the Q and K rows so that this
 * equals the checkpoint's rotate-half form) and "NeoX" (qwen2/3, gemma,
 * phi3: pairs (x[i], x[i + n_rot/2])).  Only the first n_rot dims of a head
 * rotate (partial rotary); pair i turns by pos * base^(-2i/n_rot), divided
 * by Llama 3's rope_freqs[i] where the file has them and times the linear
 * scaling's 1/factor.  The angle table is built at load the way ggml builds
 * its cache (theta starts at pos and is multiplied by base^(-2/n_rot) per
 * pair, in float), so the rotations are the same numbers llama.cpp uses.
 *
 * Query head h reads KV head h / (n_head / n_head_kv) (ggml's broadcast;
 * n_head_kv = 1 is MQA).  Keys, values, queries and the attention weights
 * are rounded to f16 (the round_f16 kernels) where llama.cpp holds them in
 * f16 (its default KV cache; Q and the softmax are converted to f16 for the
 * products with K and V), so the decoder computes llama.cpp's numbers; an
 * f32 cache keeps those values as floats, an f16 one as halves.  A windowed
 * layer (gemma2's even layers, phi3's) lets the query at p see keys
 * p - n_swa < j <= p; gemma2's scores are capped to c tanh(s / c) before
 * the softmax. */
#include <math.h>

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

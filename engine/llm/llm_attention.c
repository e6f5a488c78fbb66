/* llm_attention.c - RoPE, the KV cache and grouped-query attention.
 *
 * RoPE is ggml's "normal" mode (LLAMA_ROPE_TYPE_NORM), the one llama.cpp
 * uses for the llama architecture: adjacent pairs (x[2i], x[2i+1]) of each
 * head rotate by pos * base^(-2i/d).  The GGUF converter permuted the Q and
 * K weight rows so that this pairing equals the Hugging Face "rotate half"
 * form of the original checkpoint; the rows are used as stored.  The angle
 * table is built at load the way ggml builds its cache (theta starts at pos
 * and is multiplied by base^(-2/d) per pair, in float), so the rotations are
 * the same numbers llama.cpp uses.
 *
 * Query head h reads KV head h / (n_head / n_head_kv) (ggml's broadcast).
 * Keys and values are kept in f32, [layer][pos][n_head_kv * head_dim]. */
#include <math.h>
#include <string.h>

#include "../core/threadpool.h"
#include "../kernels/softmax/softmax.h"
#include "llm.h"

void llm_rope_table(pg_llm *m)
{
    int half = m->hp.head_dim / 2;
    float theta_scale = powf(m->hp.rope_base, -2.0f / (float)m->hp.head_dim);
    for (int p = 0; p < m->n_ctx; p++) {
        float theta = (float)p;
        for (int i = 0; i < half; i++) {
            m->rope_cos[(size_t)p * half + i] = cosf(theta);
            m->rope_sin[(size_t)p * half + i] = sinf(theta);
            theta *= theta_scale;
        }
    }
}

static void rope_row(float *x, int heads, int hd, const float *c, const float *s)
{
    for (int h = 0; h < heads; h++) {
        float *v = x + (size_t)h * hd;
        for (int i = 0; i < hd / 2; i++) {
            float x0 = v[2 * i], x1 = v[2 * i + 1];
            v[2 * i] = x0 * c[i] - x1 * s[i];
            v[2 * i + 1] = x0 * s[i] + x1 * c[i];
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

void llm_rope_store(pg_llm *m, int layer)
{
    const llm_hparams *hp = &m->hp;
    size_t qd = (size_t)hp->n_head * hp->head_dim, kd = (size_t)hp->n_head_kv * hp->head_dim;
    int half = hp->head_dim / 2;
    float *kc = m->k_cache + (size_t)layer * m->n_ctx * kd;
    float *vc = m->v_cache + (size_t)layer * m->n_ctx * kd;
    for (int i = 0; i < m->run_n; i++) {
        size_t pos = (size_t)(m->run_pos + i);
        const float *c = m->rope_cos + pos * half, *s = m->rope_sin + pos * half;
        rope_row(m->q + i * qd, hp->n_head, hp->head_dim, c, s);
        rope_row(m->k + i * kd, hp->n_head_kv, hp->head_dim, c, s);
        round_f16(kc + pos * kd, m->k + i * kd, kd);
        round_f16(vc + pos * kd, m->v + i * kd, kd);
        round_f16(m->q + i * qd, m->q + i * qd, qd);
    }
}

typedef struct att_ctx {
    pg_llm *m;
    const float *kc, *vc;
    pg_f32_softmax_fn softmax;
    float *acc;              /* per head: 64 x 64 accumulator lanes */
} att_ctx;

/* The two attention products in the order ggml's CPU backend sums them
 * (ggml_vec_dot_f16 built for AVX-512: four accumulators of 16 lanes over
 * steps of 64, folded 0+2, 1+3, then 0+1, then the 16 lanes by halves;
 * a tail past the last full step added one by one in double).  Every
 * operand is an f16 value here, so each product is exact in f32 and only
 * the order of the additions can differ: keeping ggml's order keeps the
 * scores and the head outputs bit-equal to llama.cpp's.  The lane loops
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

/* q . k over one head of 64 (one full step). */
static float dot64_ggml(const float *q, const float *k)
{
    float s[16];
    for (int l = 0; l < 16; l++)
        s[l] = (q[l] * k[l] + q[l + 32] * k[l + 32]) + (q[l + 16] * k[l + 16] + q[l + 48] * k[l + 48]);
    return fold16(s);
}

/* out[d] = sum_j p[j] v[j * ldv + d], d < 64: acc holds, per lane, the 64
 * outputs (acc[(16 a + l) * 64 + d], accumulator a, lane l); every loop
 * runs over d, so it vectorises, and the folds follow ggml's order. */
static void pv_ggml(int n, const float *p, const float *v, size_t ldv, float *acc, float *out)
{
    int np = n & ~63;
    double sum[64];
    for (int d = 0; d < 64; d++)
        sum[d] = 0.0;
    if (np) {
        for (int r = 0; r < 64; r++)
            for (int d = 0; d < 64; d++)
                acc[r * 64 + d] = v[(size_t)r * ldv + d] * p[r];
        for (int j0 = 64; j0 < np; j0 += 64)
            for (int r = 0; r < 64; r++) {
                const float *vr = v + (size_t)(j0 + r) * ldv;
                float pr = p[j0 + r];
                float *a = acc + r * 64;
                for (int d = 0; d < 64; d++)
                    a[d] += vr[d] * pr;
            }
        float s[16][64];
        for (int l = 0; l < 16; l++)
            for (int d = 0; d < 64; d++)
                s[l][d] = (acc[l * 64 + d] + acc[(l + 32) * 64 + d]) +
                          (acc[(l + 16) * 64 + d] + acc[(l + 48) * 64 + d]);
        for (int l = 0; l < 8; l++)
            for (int d = 0; d < 64; d++)
                s[l][d] += s[l + 8][d];
        for (int l = 0; l < 4; l++)
            for (int d = 0; d < 64; d++)
                s[l][d] += s[l + 4][d];
        for (int d = 0; d < 64; d++)
            sum[d] = (s[0][d] + s[1][d]) + (s[2][d] + s[3][d]);
    }
    for (int j = np; j < n; j++)
        for (int d = 0; d < 64; d++)
            sum[d] += (double)(v[(size_t)j * ldv + d] * p[j]);
    for (int d = 0; d < 64; d++)
        out[d] = (float)sum[d];
}

/* One query head over every token of the batch. */
static void att_task(void *p, size_t h)
{
    const att_ctx *c = p;
    pg_llm *m = c->m;
    const llm_hparams *hp = &m->hp;
    int hd = hp->head_dim;
    size_t qd = (size_t)hp->n_head * hd, kd = (size_t)hp->n_head_kv * hd;
    size_t kvh = h / (size_t)(hp->n_head / hp->n_head_kv);
    float *sc = m->scores + h * (size_t)m->n_ctx;
    float scale = 1.0f / sqrtf((float)hd);
    for (int i = 0; i < m->run_n; i++) {
        int n_kv = m->run_pos + i + 1;
        const float *q = m->q + i * qd + h * hd;
        for (int j = 0; j < n_kv; j++)
            sc[j] = dot64_ggml(q, c->kc + (size_t)j * kd + kvh * hd);
        c->softmax((size_t)n_kv, sc, scale, NULL, sc);
        round_f16(sc, sc, (size_t)n_kv);
        pv_ggml(n_kv, sc, c->vc + kvh * hd, kd, c->acc + h * 64 * 64,
                m->att + i * qd + h * hd);
    }
}

void llm_attention(pg_llm *m, int layer)
{
    size_t kd = (size_t)m->hp.n_head_kv * m->hp.head_dim;
    att_ctx c = { m, m->k_cache + (size_t)layer * m->n_ctx * kd,
                  m->v_cache + (size_t)layer * m->n_ctx * kd,
                  m->kern[LLM_K_SOFTMAX]->fn.softmax, m->att_acc };
    pg_parallel_for((size_t)m->hp.n_head, att_task, &c, m->threads);
}

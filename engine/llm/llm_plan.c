/* llm_plan.c - the decoder's forward pass as a fixed list of steps.
 *
 * Built once at load: every step names its weights and its buffers (fixed
 * offsets of the arena), so a run is a walk over the list with the batch
 * size and the start position as its only inputs.  Per layer (the steps in
 * brackets only where the architecture has them, llm_arch.c):
 *
 *   xn = rmsnorm(x) * attn_norm; act = quant(xn)
 *   q, k, v = Wq act, Wk act, Wv act   [+ bq, bk, bv]   [q, k: rmsnorm per head]
 *   rope(q, k); cache <- k, v
 *   att = softmax(q K^T / sqrt(d)) V        (causal, grouped-query, [window], [cap])
 *   xn = Wo quant(att)   [xn = rmsnorm(xn) * attn_post_norm];   x += xn
 *   xn = rmsnorm(x) * ffn_norm; act = quant(xn)
 *   g, u = Wgate act, Wup act;  g = silu(g) * u   (gemma: gelu_tanh(g) * u)
 *   xn = Wdown quant(g)   [xn = rmsnorm(xn) * ffn_post_norm];   x += xn
 *
 * then xn = rmsnorm(x) * output_norm and the logits of the rows asked for
 * ([capped]); the embedding rows are [scaled] first.  A llama file gets
 * exactly the 18 steps per layer it always had. */
#include "../core/alloc.h"
#include "../core/error.h"
#include "llm.h"

#define STEPS_PER_LAYER 25   /* 18 + 3 biases + 2 head norms + 2 post norms */

static llm_step *add(pg_llm *m, llm_step_kind kind, int layer)
{
    llm_step *s = &m->steps[m->n_steps++];
    s->kind = kind;
    s->layer = layer;
    return s;
}

static void norm(pg_llm *m, int layer, const float *gamma, float *in, float *out)
{
    llm_step *s = add(m, LLM_RMSNORM, layer);
    s->gamma = gamma;
    s->in = in;
    s->out = out;
    s->cols = (size_t)m->hp.n_embd;
}

static void quant(pg_llm *m, int layer, const llm_weight *w, float *in)
{
    llm_step *s = add(m, LLM_QUANT, layer);
    s->in = in;
    s->act = m->act;
    s->act_type = w->act_type;
    s->cols = w->K;
}

static void matmul(pg_llm *m, int layer, const llm_weight *w, float *out)
{
    llm_step *s = add(m, LLM_MATMUL, layer);
    s->w = w;
    s->act = m->act;
    s->out = out;
    s->cols = w->N;
}

static void bias(pg_llm *m, int layer, const float *b, float *out, size_t cols)
{
    if (!b)
        return;
    llm_step *s = add(m, LLM_BIAS, layer);
    s->gamma = b;
    s->out = out;
    s->cols = cols;
}

static void headnorm(pg_llm *m, int layer, const float *gamma, float *out, size_t cols)
{
    if (!gamma)
        return;
    llm_step *s = add(m, LLM_HEADNORM, layer);
    s->gamma = gamma;
    s->out = out;
    s->cols = cols;
}

static void binary(pg_llm *m, llm_step_kind kind, int layer, float *in, float *out, size_t cols)
{
    llm_step *s = add(m, kind, layer);
    s->in = in;
    s->out = out;
    s->cols = cols;
}

pg_status llm_plan(pg_llm *m)
{
    int L = m->hp.n_layer;
    m->steps = pg_calloc((size_t)(L * STEPS_PER_LAYER + 4), sizeof(llm_step));
    if (!m->steps)
        return pg_fail(PG_ERR_NOMEM, "llm: out of memory for the step list");
    m->n_steps = 0;
    size_t E = (size_t)m->hp.n_embd, F = (size_t)m->hp.n_ff;
    size_t QD = (size_t)m->hp.q_dim, KV = (size_t)m->hp.kv_dim;
    llm_step *e = add(m, LLM_EMBED, -1);
    e->w = &m->tok_embd;
    e->out = m->x;
    e->cols = E;
    if (m->hp.embd_scale != 0.0f) {
        for (size_t i = 0; i < E; i++)
            m->embd_scale[i] = m->hp.embd_scale;
        llm_step *s = add(m, LLM_SCALE, -1);
        s->gamma = m->embd_scale;
        s->out = m->x;
        s->cols = E;
    }
    if (m->hp.final_softcap != 0.0f)
        for (int i = 0; i < m->hp.n_vocab; i++) {
            m->cap_inv[i] = 1.0f / m->hp.final_softcap;
            m->cap[i] = m->hp.final_softcap;
        }
    for (int l = 0; l < L; l++) {
        const llm_layer *ly = &m->layers[l];
        norm(m, l, ly->attn_norm, m->x, m->xn);
        quant(m, l, &ly->wq, m->xn);
        matmul(m, l, &ly->wq, m->q);
        matmul(m, l, &ly->wk, m->k);
        matmul(m, l, &ly->wv, m->v);
        bias(m, l, ly->bq, m->q, QD);
        bias(m, l, ly->bk, m->k, KV);
        bias(m, l, ly->bv, m->v, KV);
        headnorm(m, l, ly->q_norm, m->q, QD);
        headnorm(m, l, ly->k_norm, m->k, KV);
        add(m, LLM_ROPE_STORE, l);
        add(m, LLM_ATTENTION, l)->out = m->att;
        quant(m, l, &ly->wo, m->att);
        matmul(m, l, &ly->wo, m->xn);
        if (ly->attn_post_norm)
            norm(m, l, ly->attn_post_norm, m->xn, m->xn);
        binary(m, LLM_ADD, l, m->xn, m->x, E);
        norm(m, l, ly->ffn_norm, m->x, m->xn);
        quant(m, l, &ly->gate, m->xn);
        matmul(m, l, &ly->gate, m->ff_gate);
        matmul(m, l, &ly->up, m->ff_up);
        binary(m, m->hp.ffn_gelu ? LLM_GEGLU : LLM_SWIGLU, l, m->ff_up, m->ff_gate, F);
        quant(m, l, &ly->down, m->ff_gate);
        matmul(m, l, &ly->down, m->xn);
        if (ly->ffn_post_norm)
            norm(m, l, ly->ffn_post_norm, m->xn, m->xn);
        binary(m, LLM_ADD, l, m->xn, m->x, E);
    }
    norm(m, -1, m->output_norm, m->x, m->xn);
    llm_step *h = add(m, LLM_HEAD, -1);
    h->w = &m->output;
    h->in = m->xn;
    h->act = m->act;
    h->act_type = m->output.act_type;
    h->cols = E;
    return PG_OK;
}

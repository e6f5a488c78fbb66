/* llm_plan.c - the decoder's forward pass as a fixed list of steps.
 *
 * Built once at load: every step names its weights and its buffers (fixed
 * offsets of the arena), so a run is a walk over the list with the batch
 * size and the start position as its only inputs.  Per layer:
 *
 *   xn = rmsnorm(x) * attn_norm; act = quant(xn)
 *   q, k, v = Wq act, Wk act, Wv act; rope(q, k); cache <- k, v
 *   att = softmax(q K^T / sqrt(d)) V        (causal, grouped-query)
 *   x += Wo quant(att)
 *   xn = rmsnorm(x) * ffn_norm; act = quant(xn)
 *   g, u = Wgate act, Wup act;  g = silu(g) * u
 *   x += Wdown quant(g)
 *
 * then xn = rmsnorm(x) * output_norm and the logits of the rows asked for. */
#include "../core/alloc.h"
#include "../core/error.h"
#include "llm.h"

#define STEPS_PER_LAYER 18

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
    m->steps = pg_calloc((size_t)(L * STEPS_PER_LAYER + 3), sizeof(llm_step));
    if (!m->steps)
        return pg_fail(PG_ERR_NOMEM, "llm: out of memory for the step list");
    m->n_steps = 0;
    size_t E = (size_t)m->hp.n_embd, F = (size_t)m->hp.n_ff;
    llm_step *e = add(m, LLM_EMBED, -1);
    e->w = &m->tok_embd;
    e->out = m->x;
    e->cols = E;
    for (int l = 0; l < L; l++) {
        const llm_layer *ly = &m->layers[l];
        norm(m, l, ly->attn_norm, m->x, m->xn);
        quant(m, l, &ly->wq, m->xn);
        matmul(m, l, &ly->wq, m->q);
        matmul(m, l, &ly->wk, m->k);
        matmul(m, l, &ly->wv, m->v);
        add(m, LLM_ROPE_STORE, l);
        add(m, LLM_ATTENTION, l)->out = m->att;
        quant(m, l, &ly->wo, m->att);
        matmul(m, l, &ly->wo, m->xn);
        binary(m, LLM_ADD, l, m->xn, m->x, E);
        norm(m, l, ly->ffn_norm, m->x, m->xn);
        quant(m, l, &ly->gate, m->xn);
        matmul(m, l, &ly->gate, m->ff_gate);
        matmul(m, l, &ly->up, m->ff_up);
        binary(m, LLM_SWIGLU, l, m->ff_up, m->ff_gate, F);
        quant(m, l, &ly->down, m->ff_gate);
        matmul(m, l, &ly->down, m->xn);
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

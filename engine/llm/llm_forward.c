/* llm_forward.c - runs the planned step list over a batch of tokens, and
 * the public evaluation calls built on it.
 *
 * A batch of n tokens (1 <= n <= max_batch) at positions n_past.. goes
 * through every step at once: the matrix products see n rows (the GEMM
 * form; the GEMV form when n = 1) and attention reads the cache up to each
 * token's own position (causal).  Longer inputs run as several batches.
 * Nothing here allocates. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "../core/error.h"
#include "../kernels/silu/silu.h"
#include "../kernels/vadd/vadd.h"
#include "../kernels/vmul/vmul.h"
#include "llm.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* RMSNorm with llama.cpp's rounding points: squares in float summed in
 * double, scale = 1 / sqrtf(mean + eps) in float, y = (x * scale) * gamma.
 * The activations are quantised to 8 bits right after, and a one-ulp
 * difference here flips the rounding of some of them, which then spreads
 * through the layers; following ggml's order keeps the decoder on
 * llama.cpp's numbers.  576-wide rows: not worth a kernel. */
static void rmsnorm_row(size_t n, const float *x, const float *gamma, float eps, float *y)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += (double)(x[i] * x[i]);
    float scale = 1.0f / sqrtf((float)(sum / (double)n) + eps);
    for (size_t i = 0; i < n; i++)
        y[i] = (x[i] * scale) * gamma[i];
}

static void run_step(pg_llm *m, const llm_step *s, pg_f32_silu_fn silu, pg_f32_vadd_fn vadd,
                     pg_f32_vmul_fn vmul)
{
    size_t n = (size_t)m->run_n;
    const llm_hparams *hp = &m->hp;
    switch (s->kind) {
    case LLM_EMBED:
        for (size_t i = 0; i < n; i++)
            pg_dequantize(s->w->type, s->w->data + (size_t)m->ids[i] * s->w->row_bytes,
                          s->out + i * s->cols, (int64_t)s->cols);
        break;
    case LLM_RMSNORM:
        for (size_t i = 0; i < n; i++)
            rmsnorm_row(s->cols, s->in + i * s->cols, s->gamma, hp->norm_eps,
                        s->out + i * s->cols);
        break;
    case LLM_QUANT:
        llm_quantize_rows(m, s->act_type, n, s->cols, s->in, s->act);
        break;
    case LLM_MATMUL:
        llm_matmul(m, s->w, n, s->act, s->out, s->cols);
        break;
    case LLM_ROPE_STORE:
        llm_rope_store(m, s->layer);
        break;
    case LLM_ATTENTION:
        llm_attention(m, s->layer);
        break;
    case LLM_ADD:
        vadd(n * s->cols, s->out, s->in, s->out);
        break;
    case LLM_SWIGLU:
        silu(n * s->cols, s->out, s->out);
        vmul(n * s->cols, s->out, s->in, s->out);
        break;
    case LLM_HEAD: {
        if (!m->run_logits)
            break;
        size_t r0 = (size_t)m->run_head_row0;
        llm_quantize_rows(m, s->act_type, n - r0, s->cols, s->in + r0 * s->cols, s->act);
        llm_matmul(m, s->w, n - r0, s->act, m->run_logits, s->w->N);
        if (hp->final_softcap != 0.0f) {
            /* gemma2: c tanh(logit / c), in ggml's three roundings */
            pg_f32_unary_fn tanh_fn = m->kern[LLM_K_TANH]->fn.unary;
            size_t V = s->w->N;
            for (size_t r = 0; r < n - r0; r++) {
                float *row = m->run_logits + r * V;
                vmul(V, row, m->cap_inv, row);
                tanh_fn(V, row, row);
                vmul(V, row, m->cap, row);
            }
        }
        break;
    }
    case LLM_SCALE:
        for (size_t i = 0; i < n; i++)
            vmul(s->cols, s->out + i * s->cols, s->gamma, s->out + i * s->cols);
        break;
    case LLM_BIAS:
        for (size_t i = 0; i < n; i++)
            vadd(s->cols, s->out + i * s->cols, s->gamma, s->out + i * s->cols);
        break;
    case LLM_HEADNORM: {
        size_t hd = (size_t)hp->head_dim;
        for (size_t i = 0; i < n * s->cols; i += hd)
            rmsnorm_row(hd, s->out + i, s->gamma, hp->norm_eps, s->out + i);
        break;
    }
    case LLM_GEGLU: {
        pg_f32_unary_fn gelu = m->kern[LLM_K_GELU_TANH]->fn.unary;
        gelu(n * s->cols, s->out, s->out);
        vmul(n * s->cols, s->out, s->in, s->out);
        break;
    }
    }
}

/* One batch through every step. */
static void forward(pg_llm *m)
{
    pg_f32_silu_fn silu = m->kern[LLM_K_SILU]->fn.unary;
    pg_f32_vadd_fn vadd = m->kern[LLM_K_VADD]->fn.binary;
    pg_f32_vmul_fn vmul = m->kern[LLM_K_VMUL]->fn.binary;
    for (int i = 0; i < m->n_steps; i++)
        run_step(m, &m->steps[i], silu, vadd, vmul);
}

static pg_status eval_once(pg_llm *m, const int32_t *ids, size_t n, float *logits, int all);

/* One evaluation at a time per model (its KV cache and arena are shared
 * state): a second thread gets a clear error, never mixed caches. */
pg_status pg_llm_eval(pg_llm *m, const int32_t *ids, size_t n, float *logits, int all)
{
    pg_clear_error();
    if (!m)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_llm_eval: m is NULL");
    if (atomic_exchange(&m->busy, 1))
        return pg_fail(PG_ERR_INVALID_ARG, "pg_llm_eval: the model is already evaluating on "
                       "another thread (load one per thread, or serialise the calls)");
    pg_status st = eval_once(m, ids, n, logits, all);
    atomic_store(&m->busy, 0);
    return st;
}

static pg_status eval_once(pg_llm *m, const int32_t *ids, size_t n, float *logits, int all)
{
    if (!m || (!ids && n))
        return pg_fail(PG_ERR_INVALID_ARG, "pg_llm_eval: m or ids is NULL");
    if (n == 0)
        return PG_OK;
    if (n > (size_t)(m->n_ctx - m->n_past))
        return pg_fail(PG_ERR_SHAPE, "pg_llm_eval: %zu tokens after %d do not fit the context "
                       "of %d", n, m->n_past, m->n_ctx);
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= m->hp.n_vocab)
            return pg_fail(PG_ERR_INVALID_ARG, "pg_llm_eval: token %zu is %d, outside the "
                           "vocabulary of %d", i, ids[i], m->hp.n_vocab);
    size_t V = (size_t)m->hp.n_vocab;
    double t0 = now_s();
    for (size_t done = 0; done < n;) {
        size_t b = n - done < (size_t)m->max_batch ? n - done : (size_t)m->max_batch;
        int last = done + b == n;
        memcpy(m->ids, ids + done, b * sizeof(int32_t));
        m->run_n = (int)b;
        m->run_pos = m->n_past;
        if (all && logits) {
            m->run_logits = logits + done * V;
            m->run_head_row0 = 0;
        } else {
            m->run_logits = last ? m->logits : NULL;
            m->run_head_row0 = (int)b - 1;
        }
        if (m->graph) {
            pg_status st = llm_graph_forward(m);
            if (st)
                return st;
        } else {
            forward(m);
        }
        m->n_past += (int)b;
        done += b;
    }
    if (all && logits)
        memcpy(m->logits, logits + (n - 1) * V, V * sizeof(float));
    else if (logits)
        memcpy(logits, m->logits, V * sizeof(float));
    double dt = now_s() - t0;
    if (n == 1) {
        m->t_decode_s += dt;
        m->n_decode += 1;
    } else {
        m->t_prefill_s += dt;
        m->n_prefill += (int64_t)n;
    }
    return PG_OK;
}

const float *pg_llm_logits(const pg_llm *m) { return m ? m->logits : NULL; }

pg_status pg_llm_reset(pg_llm *m)
{
    if (!m)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_llm_reset: m is NULL");
    m->n_past = 0;
    m->t_prefill_s = m->t_decode_s = 0.0;
    m->n_prefill = m->n_decode = 0;
    return PG_OK;
}

pg_status pg_llm_decode_next(pg_llm *m, pg_sampler *s, int32_t *token)
{
    if (!m || !s || !token)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_llm_decode_next: m, s or token is NULL");
    if (m->n_past == 0)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_llm_decode_next: nothing evaluated yet "
                       "(prefill the prompt first)");
    pg_status st = pg_sample(s, m->logits, token);
    if (!st)
        st = pg_sampler_accept(s, *token);
    if (!st)
        st = pg_llm_eval(m, token, 1, NULL, 0);
    return st;
}

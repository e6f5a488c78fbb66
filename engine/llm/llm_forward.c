/* llm_forward.c - the public evaluation calls: a batch of tokens through
 * the compiled decoder (llm_graph.c).
 *
 * A batch of n tokens (1 <= n <= max_batch) at positions n_past.. runs
 * through the prefill graph (n > 1: the products in their GEMM form) or the
 * decode graph (n = 1: GEMV); attention reads the cache up to each token's
 * own position (causal).  Longer inputs run as several batches.  Nothing
 * here allocates. */
#include <string.h>
#include <time.h>

#include "../core/error.h"
#include "llm.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
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
        pg_status st = llm_graph_forward(m);
        if (st)
            return st;
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

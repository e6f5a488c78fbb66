/* sampler.c - picking the next token from logits, as llama.cpp's default
 * chain does: repetition penalty, top-k, top-p, temperature, draw.
 *
 * Everything the sampler needs for a vocabulary (candidate ids and values,
 * a mark per token for the penalty, the history ring) is allocated once in
 * pg_sampler_new; pg_sample allocates nothing.
 *
 * Random numbers: splitmix64 (Steele, Lea and Flood 2014; the generator
 * that seeds xoshiro), one 64-bit output per draw turned into a uniform
 * double in [0, 1) from its top 53 bits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "peregrine.h"

struct pg_sampler {
    pg_sampler_params p;
    int32_t n_vocab;
    uint64_t rng;
    int32_t *hist;           /* ring of the last repeat_last_n accepted tokens */
    int hist_len, hist_pos;
    uint8_t *seen;           /* n_vocab marks, zero between calls */
    struct cand *cand;       /* n_vocab (value, id) pairs */
};

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double uniform01(uint64_t *state)
{
    return (double)(splitmix64(state) >> 11) * (1.0 / 9007199254740992.0);
}

void pg_sampler_default_params(pg_sampler_params *p)
{
    if (!p)
        return;
    p->temperature = 0.8f;
    p->top_k = 40;
    p->top_p = 0.95f;
    p->repeat_penalty = 1.0f;
    p->repeat_last_n = 64;
    p->seed = 0;
}

pg_status pg_sampler_new(const pg_sampler_params *p, int32_t n_vocab, pg_sampler **out)
{
    pg_clear_error();
    if (!p || !out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_sampler_new: params or out is NULL");
    *out = NULL;
    if (n_vocab <= 0)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_sampler_new: n_vocab = %d", n_vocab);
    if (p->repeat_last_n < 0 || !(p->repeat_penalty > 0.0f) || isnan(p->temperature) ||
        isnan(p->top_p))
        return pg_fail(PG_ERR_INVALID_ARG, "pg_sampler_new: repeat_last_n must be >= 0, "
                       "repeat_penalty > 0, temperature and top_p numbers");
    pg_sampler *s = pg_calloc(1, sizeof(*s));
    if (!s)
        return pg_fail(PG_ERR_NOMEM, "pg_sampler_new: out of memory");
    s->p = *p;
    s->n_vocab = n_vocab;
    s->hist = pg_calloc((size_t)p->repeat_last_n + 1, sizeof(int32_t));
    s->seen = pg_calloc((size_t)n_vocab, 1);
    s->cand = pg_calloc((size_t)n_vocab, 2 * sizeof(float));
    if (!s->hist || !s->seen || !s->cand) {
        pg_sampler_free(s);
        return pg_fail(PG_ERR_NOMEM, "pg_sampler_new: out of memory for %d candidates", n_vocab);
    }
    pg_sampler_reset(s);
    *out = s;
    return PG_OK;
}

void pg_sampler_free(pg_sampler *s)
{
    if (!s)
        return;
    pg_free(s->hist);
    pg_free(s->seen);
    pg_free(s->cand);
    pg_free(s);
}

pg_status pg_sampler_reset(pg_sampler *s)
{
    if (!s)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_sampler_reset: s is NULL");
    s->rng = s->p.seed;
    s->hist_len = s->hist_pos = 0;
    return PG_OK;
}

pg_status pg_sampler_accept(pg_sampler *s, int32_t token)
{
    if (!s)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_sampler_accept: s is NULL");
    if (token < 0 || token >= s->n_vocab)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_sampler_accept: token %d outside the vocabulary",
                       token);
    int n = s->p.repeat_last_n;
    if (n == 0)
        return PG_OK;
    s->hist[s->hist_pos] = token;
    s->hist_pos = (s->hist_pos + 1) % n;
    if (s->hist_len < n)
        s->hist_len++;
    return PG_OK;
}

typedef struct cand { float v; int32_t id; } cand;

/* a ranks before b: the larger value, then the lower id. */
static int better(const cand *a, const cand *b)
{
    return a->v > b->v || (a->v == b->v && a->id < b->id);
}

static int cand_cmp(const void *a, const void *b)
{
    return better(a, b) ? -1 : better(b, a) ? 1 : 0;
}

/* Sift-down in a min-heap of the k best so far (the worst on top). */
static void heap_down(cand *c, int n, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, w = i;
        if (l < n && better(&c[w], &c[l]))
            w = l;
        if (r < n && better(&c[w], &c[r]))
            w = r;
        if (w == i)
            return;
        cand t = c[i]; c[i] = c[w]; c[w] = t;
        i = w;
    }
}

/* Keeps the k best of the n candidates (a heap: O(n log k)), sorted best first. */
static int top_k_sorted(cand *c, int n, int k)
{
    if (k < n) {
        for (int i = k / 2 - 1; i >= 0; i--)
            heap_down(c, k, i);
        for (int i = k; i < n; i++)
            if (better(&c[i], &c[0])) {
                c[0] = c[i];
                heap_down(c, k, 0);
            }
        n = k;
    }
    qsort(c, (size_t)n, sizeof(cand), cand_cmp);
    return n;
}

pg_status pg_sample(pg_sampler *s, const float *logits, int32_t *token)
{
    if (!s || !logits || !token)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_sample: s, logits or token is NULL");
    int V = s->n_vocab;
    cand *c = s->cand;
    for (int i = 0; i < V; i++) {
        c[i].id = i;
        c[i].v = logits[i];
    }
    /* repetition penalty, once per distinct token of the window */
    if (s->p.repeat_penalty != 1.0f && s->hist_len) {
        for (int i = 0; i < s->hist_len; i++) {
            int32_t t = s->hist[i];
            if (s->seen[t])
                continue;
            s->seen[t] = 1;
            c[t].v = c[t].v <= 0.0f ? c[t].v * s->p.repeat_penalty : c[t].v / s->p.repeat_penalty;
        }
        for (int i = 0; i < s->hist_len; i++)
            s->seen[s->hist[i]] = 0;
    }
    if (!(s->p.temperature > 0.0f)) {
        int best = 0;
        for (int i = 1; i < V; i++)
            if (c[i].v > c[best].v)
                best = i;
        *token = best;
        return PG_OK;
    }
    int n = V;
    int k = s->p.top_k > 0 && s->p.top_k < V ? s->p.top_k : V;
    n = top_k_sorted(c, n, k);
    /* top-p over the softmax of the (penalised) logits */
    if (s->p.top_p < 1.0f) {
        double sum = 0.0, cum = 0.0;
        for (int i = 0; i < n; i++)
            sum += exp((double)(c[i].v - c[0].v));
        int keep = n;
        for (int i = 0; i < n; i++) {
            cum += exp((double)(c[i].v - c[0].v)) / sum;
            if (cum >= s->p.top_p) {
                keep = i + 1;
                break;
            }
        }
        n = keep;
    }
    /* temperature, softmax, draw */
    double sum = 0.0;
    float t = s->p.temperature;
    for (int i = 0; i < n; i++)
        sum += exp((double)(c[i].v - c[0].v) / t);
    double u = uniform01(&s->rng) * sum, cum = 0.0;
    int pick = n - 1;
    for (int i = 0; i < n; i++) {
        cum += exp((double)(c[i].v - c[0].v) / t);
        if (u < cum) {
            pick = i;
            break;
        }
    }
    *token = c[pick].id;
    return PG_OK;
}

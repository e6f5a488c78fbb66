/* llm_load.c - a GGUF decoder file -> a runnable, compiled decoder.
 *
 * Reads the hyper-parameters from the metadata (llm_arch.c), checks every
 * tensor's type and shape, keeps views into the mapping (no weight is
 * copied), allocates the RoPE tables, the logits and the batch's ids, and
 * compiles the decoder's graph (llm_graph.c), whose plans hold the
 * activations and the KV cache. */
#include <stdio.h>
#include <math.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/threadpool.h"
#include "../exec/model.h"
#include "llm.h"

/* A tensor's info, checked for dims (K, N) (N = 1: a vector) and a type we run. */
static pg_status get_tensor(const pg_llm *m, const char *name, int64_t K, int64_t N,
                            int optional, pg_gguf_tensor_info *ti)
{
    int64_t idx = pg_gguf_find_tensor(m->gguf, name);
    if (idx < 0) {
        if (optional) {
            pg_clear_error();
            ti->data = NULL;
            return PG_OK;
        }
        return pg_fail(PG_ERR_FORMAT, "llm: the file has no tensor %s", name);
    }
    pg_status st = pg_gguf_tensor_info_get(m->gguf, idx, ti);
    if (st)
        return st;
    if (ti->dims[0] != K || ti->dims[1] != N || ti->dims[2] != 1 || ti->dims[3] != 1)
        return pg_fail(PG_ERR_FORMAT, "llm: %s is [%lld, %lld], expected [%lld, %lld]", name,
                       (long long)ti->dims[0], (long long)ti->dims[1], (long long)K,
                       (long long)N);
    return PG_OK;
}

static pg_status get_matrix(pg_llm *m, const char *name, int64_t K, int64_t N, int optional,
                            llm_weight *w)
{
    pg_gguf_tensor_info ti;
    pg_status st = get_tensor(m, name, K, N, optional, &ti);
    if (st)
        return st;
    memset(w, 0, sizeof(*w));
    if (!ti.data)
        return PG_OK;
    if ((st = llm_weight_accept(name, ti.type, (size_t)K, (size_t)N, ti.data, &w->act_type)))
        return st;
    w->data = ti.data;
    w->type = ti.type;
    w->K = (size_t)K;
    w->N = (size_t)N;
    w->row_bytes = (size_t)(K / pg_ggml_type_block_size(ti.type)) *
                   (size_t)pg_ggml_type_block_bytes(ti.type);
    return PG_OK;
}

/* For llm_arch.c, which reads each architecture's tensors. */
pg_status llm_get_matrix(pg_llm *m, const char *name, int64_t K, int64_t N, int optional,
                         llm_weight *w)
{
    return get_matrix(m, name, K, N, optional, w);
}

/* Carve the arena: every buffer 64-byte aligned at a fixed offset (the
 * activations and the KV cache are the compiled graphs', llm_graph.c). */
static pg_status plan_arena(pg_llm *m)
{
    const llm_hparams *hp = &m->hp;
    size_t half_rot = (size_t)m->n_ctx * (size_t)hp->n_rot / 2;
    struct { void **p; size_t bytes; } bufs[] = {
        { (void **)&m->logits, (size_t)hp->n_vocab * 4 },
        { (void **)&m->rope_cos, half_rot * 4 },
        { (void **)&m->rope_sin, half_rot * 4 },
        { (void **)&m->ids, (size_t)m->max_batch * 4 },
    };
    size_t total = 0;
    for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
        total += pg_align_up(bufs[i].bytes);
    m->arena = pg_calloc(1, total);
    if (!m->arena)
        return pg_fail(PG_ERR_NOMEM, "llm: out of memory for a %zu-byte arena "
                       "(n_ctx %d, max_batch %d)", total, m->n_ctx, m->max_batch);
    m->arena_bytes = total;
    size_t off = 0;
    for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++) {
        *bufs[i].p = m->arena + off;
        off += pg_align_up(bufs[i].bytes);
    }
    return PG_OK;
}

pg_status pg_llm_load(const char *path, const pg_llm_options *options, pg_llm **out)
{
    pg_clear_error();
    if (!path || !out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_llm_load: path or out is NULL");
    *out = NULL;
    pg_llm_options o = { 0, 0, 0, 0 };
    if (options)
        o = *options;
    if (o.threads < 0 || o.n_ctx < 0 || o.max_batch < 0)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_llm_load: negative threads, n_ctx or max_batch");
    pg_llm *m = pg_calloc(1, sizeof(pg_llm));
    if (!m)
        return pg_fail(PG_ERR_NOMEM, "pg_llm_load: out of memory");
    pg_status st = pg_gguf_open(path, &m->gguf);
    if (!st)
        st = llm_read_hparams(m);
    if (!st)
        st = pg_tokenizer_from_gguf(m->gguf, &m->tok);
    if (!st) {
        m->hp.n_vocab = pg_tokenizer_vocab_size(m->tok);
        st = llm_read_weights(m);
    }
    if (!st) {
        int def_ctx = m->hp.n_ctx_train < 2048 ? m->hp.n_ctx_train : 2048;
        m->n_ctx = o.n_ctx ? o.n_ctx : def_ctx;
        m->max_batch = o.max_batch ? o.max_batch : 256;
        if (m->max_batch > m->n_ctx)
            m->max_batch = m->n_ctx;
        m->threads = pg_threads_resolve(o.threads);
        m->kv_f16 = o.kv_f16 != 0;
        st = plan_arena(m);
    }
    if (!st) {
        llm_rope_table(m);
        llm_bind(m);
        st = llm_graph_compile(m);
    }
    if (st) {
        pg_llm_free(m);
        return st;
    }
    *out = m;
    return PG_OK;
}

void pg_llm_free(pg_llm *m)
{
    if (!m)
        return;
    llm_graph_free(m);
    pg_free(m->arena);
    pg_free(m->layers);
    pg_tokenizer_free(m->tok);
    pg_gguf_close(m->gguf);
    pg_free(m);
}

static uint64_t weight_bytes(const llm_weight *w) { return (uint64_t)w->N * w->row_bytes; }

pg_status pg_llm_get_info(const pg_llm *m, pg_llm_info *out)
{
    if (!m || !out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_llm_get_info: m or out is NULL");
    memset(out, 0, sizeof(*out));
    out->arch = m->hp.arch_name;
    out->name = "";
    int64_t i = pg_gguf_find_key(m->gguf, "general.name");
    static _Thread_local char name[128];
    const char *s; uint64_t n;
    if (i >= 0 && pg_gguf_get_string(m->gguf, i, &s, &n) == PG_OK) {
        snprintf(name, sizeof(name), "%.*s", (int)(n < 127 ? n : 127), s);
        out->name = name;
    }
    const llm_hparams *hp = &m->hp;
    out->n_layer = hp->n_layer;
    out->n_embd = hp->n_embd;
    out->n_ff = hp->n_ff;
    out->n_head = hp->n_head;
    out->n_head_kv = hp->n_head_kv;
    out->head_dim = hp->head_dim;
    out->n_vocab = hp->n_vocab;
    out->n_ctx = m->n_ctx;
    out->n_ctx_train = hp->n_ctx_train;
    out->max_batch = m->max_batch;
    out->threads = m->threads;
    out->n_past = m->n_past;
    out->rope_base = hp->rope_base;
    out->norm_eps = hp->norm_eps;
    out->bos = pg_tokenizer_bos(m->tok);
    out->eos = pg_tokenizer_eos(m->tok);
    uint64_t wb = weight_bytes(&m->output);
    for (int l = 0; l < hp->n_layer; l++) {
        const llm_layer *L = &m->layers[l];
        wb += weight_bytes(&L->wq) + weight_bytes(&L->wk) + weight_bytes(&L->wv) +
              weight_bytes(&L->wo) + weight_bytes(&L->gate) + weight_bytes(&L->up) +
              weight_bytes(&L->down);
    }
    out->weight_bytes = wb;
    out->arena_bytes = m->arena_bytes + m->gpersist_bytes;   /* + the graphs' arenas */
    for (int i = 0; i < 2; i++)
        if (m->gm[i])
            out->arena_bytes += m->gm[i]->plan.arena_bytes;
    out->n_steps = m->gm[0]->n_steps;
    out->prefill_tps = m->t_prefill_s > 0 ? (double)m->n_prefill / m->t_prefill_s : 0.0;
    out->decode_tps = m->t_decode_s > 0 ? (double)m->n_decode / m->t_decode_s : 0.0;
    return PG_OK;
}

int32_t pg_llm_vocab(const pg_llm *m) { return m ? m->hp.n_vocab : 0; }

const pg_tokenizer *pg_llm_tokenizer(const pg_llm *m) { return m ? m->tok : NULL; }

/* llm_load.c - a Llama-architecture GGUF file -> a runnable decoder.
 *
 * Reads the hyper-parameters from the metadata (llama.*), checks every
 * tensor's type and shape, keeps views into the mapping (no weight is
 * copied), then allocates the one arena every run uses: the KV cache, the
 * RoPE table and the activations of the largest batch. */
#include <stdio.h>
#include <math.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/threadpool.h"
#include "llm.h"

static pg_status meta_int(const pg_gguf *g, const char *key, int required, int64_t def,
                          int64_t *out)
{
    int64_t i = pg_gguf_find_key(g, key);
    if (i < 0) {
        if (required)
            return pg_fail(PG_ERR_FORMAT, "llm: the file has no %s", key);
        *out = def;
        return PG_OK;
    }
    return pg_gguf_get_int(g, i, out);
}

static pg_status meta_float(const pg_gguf *g, const char *key, double def, float *out)
{
    int64_t i = pg_gguf_find_key(g, key);
    double v = def;
    if (i >= 0) {
        pg_status st = pg_gguf_get_float(g, i, &v);
        if (st)
            return st;
    }
    *out = (float)v;
    return PG_OK;
}

static pg_status read_hparams(pg_llm *m)
{
    const pg_gguf *g = m->gguf;
    int64_t i = pg_gguf_find_key(g, "general.architecture");
    const char *arch = NULL;
    uint64_t len = 0;
    if (i < 0 || pg_gguf_get_string(g, i, &arch, &len) != PG_OK)
        return pg_fail(PG_ERR_FORMAT, "llm: the file has no general.architecture");
    if (len != 5 || memcmp(arch, "llama", 5))
        return pg_fail(PG_ERR_UNSUPPORTED, "llm: architecture '%.*s' is not supported (llama is)",
                       (int)len, arch);
    int64_t v[6];
    static const char *keys[6] = { "llama.block_count", "llama.embedding_length",
                                   "llama.feed_forward_length", "llama.attention.head_count",
                                   "llama.attention.head_count_kv", "llama.context_length" };
    for (int k = 0; k < 6; k++) {
        pg_status st = meta_int(g, keys[k], k != 4, -1, &v[k]);
        if (st)
            return st;
        if (k != 4 && (v[k] <= 0 || v[k] > (1 << 20)))
            return pg_fail(PG_ERR_FORMAT, "llm: %s = %lld is out of range", keys[k],
                           (long long)v[k]);
    }
    llm_hparams *hp = &m->hp;
    hp->n_layer = (int)v[0];
    hp->n_embd = (int)v[1];
    hp->n_ff = (int)v[2];
    hp->n_head = (int)v[3];
    hp->n_head_kv = v[4] > 0 ? (int)v[4] : hp->n_head;
    hp->n_ctx_train = (int)v[5];
    if (hp->n_embd % hp->n_head || hp->n_head % hp->n_head_kv)
        return pg_fail(PG_ERR_FORMAT, "llm: %d heads over %d KV heads do not divide width %d",
                       hp->n_head, hp->n_head_kv, hp->n_embd);
    hp->head_dim = hp->n_embd / hp->n_head;
    int64_t rope_dims;
    pg_status st = meta_int(g, "llama.rope.dimension_count", 0, hp->head_dim, &rope_dims);
    if (st)
        return st;
    if (hp->head_dim != 64)
        return pg_fail(PG_ERR_UNSUPPORTED, "llm: head size %d (the attention is written for 64)",
                       hp->head_dim);
    if (rope_dims != hp->head_dim || hp->head_dim % 2)
        return pg_fail(PG_ERR_UNSUPPORTED, "llm: partial RoPE (%lld of %d dims) is not supported",
                       (long long)rope_dims, hp->head_dim);
    if ((st = meta_float(g, "llama.rope.freq_base", 10000.0, &hp->rope_base)) ||
        (st = meta_float(g, "llama.attention.layer_norm_rms_epsilon", 1e-5, &hp->norm_eps)))
        return st;
    if (pg_gguf_find_key(g, "llama.rope.scaling.type") >= 0) {
        const char *s; uint64_t n;
        if (pg_gguf_get_string(g, pg_gguf_find_key(g, "llama.rope.scaling.type"), &s, &n) ==
                PG_OK && !(n == 4 && !memcmp(s, "none", 4)))
            return pg_fail(PG_ERR_UNSUPPORTED, "llm: RoPE scaling '%.*s' is not supported",
                           (int)n, s);
    }
    return PG_OK;
}

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

/* GGUF has no checksums; what a load can still catch of a damaged file:
 * a block scale (f16, and q4_1's min) or a norm weight that is NaN or Inf,
 * which would only show up later as NaN logits or nonsense text. */
static pg_status check_block_scales(const char *name, const uint8_t *data, size_t blocks,
                                    size_t block_bytes, int n_halves)
{
    for (size_t b = 0; b < blocks; b++)
        for (int h = 0; h < n_halves; h++) {
            const uint8_t *p = data + b * block_bytes + 2 * (size_t)h;
            uint16_t v = (uint16_t)(p[0] | p[1] << 8);
            if ((v & 0x7C00) == 0x7C00)
                return pg_fail(PG_ERR_FORMAT, "llm: %s: block %zu has a NaN or infinite %s "
                               "(the file is damaged)", name, b, h ? "minimum" : "scale");
        }
    return PG_OK;
}

static pg_status get_norm(pg_llm *m, const char *name, const float **out)
{
    pg_gguf_tensor_info ti;
    pg_status st = get_tensor(m, name, m->hp.n_embd, 1, 0, &ti);
    if (st)
        return st;
    if (ti.type != PG_GGML_F32)
        return pg_fail(PG_ERR_UNSUPPORTED, "llm: %s is %s, only f32 norms are supported", name,
                       pg_ggml_type_name(ti.type));
    if ((uintptr_t)ti.data % sizeof(float))
        return pg_fail(PG_ERR_FORMAT, "llm: %s is not 4-byte aligned in the file", name);
    for (int64_t i = 0; i < m->hp.n_embd; i++)
        if (!isfinite(((const float *)ti.data)[i]))
            return pg_fail(PG_ERR_FORMAT, "llm: %s[%lld] is %f (the file is damaged)", name,
                           (long long)i, (double)((const float *)ti.data)[i]);
    *out = ti.data;
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
    if (ti.type == PG_GGML_Q4_1)
        w->act_type = PG_GGML_Q8_1;
    else if (ti.type == PG_GGML_Q8_0)
        w->act_type = PG_GGML_Q8_0;
    else
        return pg_fail(PG_ERR_UNSUPPORTED, "llm: %s is %s; the decoder runs q4_1 and q8_0 weights",
                       name, pg_ggml_type_name(ti.type));
    w->data = ti.data;
    w->type = ti.type;
    w->K = (size_t)K;
    w->N = (size_t)N;
    w->row_bytes = (size_t)(K / pg_ggml_type_block_size(ti.type)) *
                   (size_t)pg_ggml_type_block_bytes(ti.type);
    /* q4_1 blocks start with the f16 scale and minimum, q8_0 with the scale */
    return check_block_scales(name, w->data, (size_t)N * (size_t)(K / pg_ggml_type_block_size(ti.type)),
                              (size_t)pg_ggml_type_block_bytes(ti.type), ti.type == PG_GGML_Q4_1 ? 2 : 1);
}

static pg_status read_weights(pg_llm *m)
{
    const llm_hparams *hp = &m->hp;
    int64_t E = hp->n_embd, F = hp->n_ff, KV = (int64_t)hp->n_head_kv * hp->head_dim;
    pg_status st;
    if (E % 32 || F % 32)
        return pg_fail(PG_ERR_UNSUPPORTED, "llm: widths %lld and %lld must be multiples of 32",
                       (long long)E, (long long)F);
    if ((st = get_matrix(m, "token_embd.weight", E, hp->n_vocab, 0, &m->tok_embd)) ||
        (st = get_matrix(m, "output.weight", E, hp->n_vocab, 1, &m->output)) ||
        (st = get_norm(m, "output_norm.weight", &m->output_norm)))
        return st;
    if (!m->output.data)
        m->output = m->tok_embd;   /* tied embedding */
    m->layers = pg_calloc((size_t)hp->n_layer, sizeof(llm_layer));
    if (!m->layers)
        return pg_fail(PG_ERR_NOMEM, "llm: out of memory for %d layers", hp->n_layer);
    for (int l = 0; l < hp->n_layer; l++) {
        llm_layer *L = &m->layers[l];
        char name[64];
#define NAME(s) (snprintf(name, sizeof(name), "blk.%d." s ".weight", l), name)
        if ((st = get_norm(m, NAME("attn_norm"), &L->attn_norm)) ||
            (st = get_norm(m, NAME("ffn_norm"), &L->ffn_norm)) ||
            (st = get_matrix(m, NAME("attn_q"), E, E, 0, &L->wq)) ||
            (st = get_matrix(m, NAME("attn_k"), E, KV, 0, &L->wk)) ||
            (st = get_matrix(m, NAME("attn_v"), E, KV, 0, &L->wv)) ||
            (st = get_matrix(m, NAME("attn_output"), E, E, 0, &L->wo)) ||
            (st = get_matrix(m, NAME("ffn_gate"), E, F, 0, &L->gate)) ||
            (st = get_matrix(m, NAME("ffn_up"), E, F, 0, &L->up)) ||
            (st = get_matrix(m, NAME("ffn_down"), F, E, 0, &L->down)))
            return st;
#undef NAME
        if (L->wq.act_type != L->wk.act_type || L->wq.act_type != L->wv.act_type ||
            L->gate.act_type != L->up.act_type)
            return pg_fail(PG_ERR_UNSUPPORTED, "llm: layer %d mixes weight types that share an "
                           "input (q/k/v or gate/up)", l);
    }
    return PG_OK;
}

/* Carve the arena: every buffer 64-byte aligned at a fixed offset. */
static pg_status plan_arena(pg_llm *m)
{
    const llm_hparams *hp = &m->hp;
    size_t B = (size_t)m->max_batch, E = (size_t)hp->n_embd, F = (size_t)hp->n_ff;
    size_t KV = (size_t)hp->n_head_kv * hp->head_dim, C = (size_t)m->n_ctx;
    size_t act_rb = llm_act_row_bytes(PG_GGML_Q8_1, F > E ? F : E);  /* q8_1 is the larger */
    struct { void **p; size_t bytes; } bufs[] = {
        { (void **)&m->x, B * E * 4 },       { (void **)&m->xn, B * E * 4 },
        { (void **)&m->q, B * E * 4 },       { (void **)&m->k, B * KV * 4 },
        { (void **)&m->v, B * KV * 4 },      { (void **)&m->att, B * E * 4 },
        { (void **)&m->ff_gate, B * F * 4 }, { (void **)&m->ff_up, B * F * 4 },
        { (void **)&m->act, B * act_rb },    { (void **)&m->logits, (size_t)hp->n_vocab * 4 },
        { (void **)&m->k_cache, (size_t)hp->n_layer * C * KV * 4 },
        { (void **)&m->v_cache, (size_t)hp->n_layer * C * KV * 4 },
        { (void **)&m->rope_cos, C * (size_t)hp->head_dim / 2 * 4 },
        { (void **)&m->rope_sin, C * (size_t)hp->head_dim / 2 * 4 },
        { (void **)&m->scores, (size_t)hp->n_head * C * 4 },
        { (void **)&m->att_acc, (size_t)hp->n_head * 64 * 64 * 4 },
        { (void **)&m->ids, B * 4 },
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
    pg_llm_options o = { 0, 0, 0 };
    if (options)
        o = *options;
    if (o.threads < 0 || o.n_ctx < 0 || o.max_batch < 0)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_llm_load: negative threads, n_ctx or max_batch");
    pg_llm *m = pg_calloc(1, sizeof(pg_llm));
    if (!m)
        return pg_fail(PG_ERR_NOMEM, "pg_llm_load: out of memory");
    pg_status st = pg_gguf_open(path, &m->gguf);
    if (!st)
        st = read_hparams(m);
    if (!st)
        st = pg_tokenizer_from_gguf(m->gguf, &m->tok);
    if (!st) {
        m->hp.n_vocab = pg_tokenizer_vocab_size(m->tok);
        st = read_weights(m);
    }
    if (!st) {
        int def_ctx = m->hp.n_ctx_train < 2048 ? m->hp.n_ctx_train : 2048;
        m->n_ctx = o.n_ctx ? o.n_ctx : def_ctx;
        m->max_batch = o.max_batch ? o.max_batch : 256;
        if (m->max_batch > m->n_ctx)
            m->max_batch = m->n_ctx;
        m->threads = pg_threads_resolve(o.threads);
        st = plan_arena(m);
    }
    if (!st) {
        llm_rope_table(m);
        llm_bind(m);
        st = llm_plan(m);
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
    pg_free(m->steps);
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
    out->arch = "llama";
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
    out->arena_bytes = m->arena_bytes;
    out->n_steps = m->n_steps;
    out->prefill_tps = m->t_prefill_s > 0 ? (double)m->n_prefill / m->t_prefill_s : 0.0;
    out->decode_tps = m->t_decode_s > 0 ? (double)m->n_decode / m->t_decode_s : 0.0;
    return PG_OK;
}

int32_t pg_llm_vocab(const pg_llm *m) { return m ? m->hp.n_vocab : 0; }

const pg_tokenizer *pg_llm_tokenizer(const pg_llm *m) { return m ? m->tok : NULL; }

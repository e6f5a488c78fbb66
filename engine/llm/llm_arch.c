/* llm_arch.c - the decoder architectures a GGUF file may name, and what each
 * one reads from it.
 *
 * One row per general.architecture: how RoPE pairs the dims, which extra
 * tensors a layer has, how attention is scaled and capped, which layers
 * attend through a sliding window.  The rows follow what llama.cpp's graph
 * builds for the same string (the peer the tests compare with):
 *
 *   llama   RoPE "normal" (pairs 2i, 2i+1); optional Q/K/V biases; Llama 3's
 *           rope_freqs.weight divisors; linear RoPE scaling; tied head when
 *           output.weight is absent
 *   qwen2   RoPE NeoX (pairs i, i + n_rot/2); Q/K/V biases; tied if no output
 *   qwen3   NeoX; RMSNorm of every Q and K head (attn_q_norm / attn_k_norm)
 *           before RoPE; head size from attention.key_length
 *   gemma   NeoX; embeddings times sqrt(n_embd); Q times 1/sqrt(head size)
 *           after RoPE (softmax scale 1); GELU-tanh gate; always tied.  The
 *           norms are Gemma's (1 + w): llama.cpp's converter stores w + 1 in
 *           the file, so the weights are used as stored, like every RMSNorm
 *   gemma2  gemma plus post-attention / post-FFN norms, attention logits
 *           capped by c tanh(s / c) (attn_logit_softcapping, default 50),
 *           final logits likewise (final_logit_softcapping, default 30),
 *           a sliding window on the even layers (0, 2, ...)
 *   phi3    NeoX, partial rotary when rope.dimension_count < head size;
 *           fused attn_qkv (rows Q | K | V) and ffn_up (rows gate | up),
 *           used as row views, nothing copied; Q times 1/sqrt(head size);
 *           a sliding window on every layer when the file gives one (llama.cpp
 *           ignores phi3's window today: the two agree below it)
 *
 * Anything a file has that this does not run is refused by name: another
 * architecture, a RoPE scaling other than none / linear, mixture-of-experts
 * keys, and any tensor no row reads (rope_factors_long, an output bias...). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "llm.h"

typedef struct arch_desc {
    const char *name;
    llm_arch arch;
    int rope_neox;
    int qkv_bias;       /* 1: optional biases read, 0: none */
    int qk_norm;
    int post_norms;
    int ffn_gelu;
    int embd_scale;     /* embeddings times sqrt(n_embd) */
    int q_prescale;     /* Q times 1/sqrt(head size) after RoPE, softmax scale 1 */
    int fused;          /* attn_qkv (optional) and ffn_up as gate | up */
    int softcap;
    int swa_every;      /* 0: no window; 1: every layer; 2: even layers */
    int always_tied;
} arch_desc;

static const arch_desc archs[] = {
    /*  name      arch             neox bias qkn post gelu emb  qpre fuse cap  swa  tied */
    { "llama",  LLM_ARCH_LLAMA,  0,   1,   0,  0,   0,   0,   0,   0,   0,   0,   0 },
    { "qwen2",  LLM_ARCH_QWEN2,  1,   1,   0,  0,   0,   0,   0,   0,   0,   0,   0 },
    { "qwen3",  LLM_ARCH_QWEN3,  1,   0,   1,  0,   0,   0,   0,   0,   0,   0,   0 },
    { "gemma",  LLM_ARCH_GEMMA,  1,   0,   0,  0,   1,   1,   1,   0,   0,   0,   1 },
    { "gemma2", LLM_ARCH_GEMMA2, 1,   0,   0,  1,   1,   1,   1,   0,   1,   2,   1 },
    { "phi3",   LLM_ARCH_PHI3,   1,   0,   0,  0,   0,   0,   1,   1,   0,   1,   0 },
};

static const arch_desc *desc_of(const pg_llm *m)
{
    return &archs[m->hp.arch];
}

/* "<arch>.<suffix>" */
static const char *akey(const pg_llm *m, const char *suffix, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s.%s", m->hp.arch_name, suffix);
    return buf;
}

static pg_status meta_int(const pg_llm *m, const char *suffix, int required, int64_t def,
                          int64_t lo, int64_t hi, int64_t *out)
{
    char key[128];
    akey(m, suffix, key, sizeof key);
    int64_t i = pg_gguf_find_key(m->gguf, key);
    if (i < 0) {
        if (required)
            return pg_fail(PG_ERR_FORMAT, "llm: the file has no %s", key);
        *out = def;
        return PG_OK;
    }
    if (pg_gguf_kv_array_type(m->gguf, i) >= 0)
        return pg_fail(PG_ERR_UNSUPPORTED, "llm: %s is an array (per-layer values are not "
                       "supported)", key);
    pg_clear_error();
    pg_status st = pg_gguf_get_int(m->gguf, i, out);
    if (st)
        return st;
    if (*out < lo || *out > hi)
        return pg_fail(PG_ERR_FORMAT, "llm: %s = %lld is out of range [%lld, %lld]", key,
                       (long long)*out, (long long)lo, (long long)hi);
    return PG_OK;
}

static pg_status meta_float(const pg_llm *m, const char *suffix, double def, float *out)
{
    char key[128];
    akey(m, suffix, key, sizeof key);
    int64_t i = pg_gguf_find_key(m->gguf, key);
    double v = def;
    if (i >= 0) {
        pg_status st = pg_gguf_get_float(m->gguf, i, &v);
        if (st)
            return st;
        if (!isfinite(v))
            return pg_fail(PG_ERR_FORMAT, "llm: %s is %f", key, v);
    }
    *out = (float)v;
    return PG_OK;
}

pg_status llm_read_hparams(pg_llm *m)
{
    const pg_gguf *g = m->gguf;
    llm_hparams *hp = &m->hp;
    int64_t i = pg_gguf_find_key(g, "general.architecture");
    const char *arch = NULL;
    uint64_t len = 0;
    if (i < 0 || pg_gguf_get_string(g, i, &arch, &len) != PG_OK)
        return pg_fail(PG_ERR_FORMAT, "llm: the file has no general.architecture");
    const arch_desc *d = NULL;
    for (size_t a = 0; a < sizeof archs / sizeof archs[0]; a++)
        if (strlen(archs[a].name) == len && !memcmp(archs[a].name, arch, len))
            d = &archs[a];
    if (!d)
        return pg_fail(PG_ERR_UNSUPPORTED, "llm: architecture '%.*s' is not supported (llama, "
                       "qwen2, qwen3, gemma, gemma2 and phi3 are)", (int)(len < 64 ? len : 64),
                       arch);
    hp->arch = d->arch;
    hp->arch_name = d->name;

    int64_t v;
    pg_status st;
#define GET(suffix, req, def, lo, hi, dst)                                                     \
    do {                                                                                       \
        if ((st = meta_int(m, suffix, req, def, lo, hi, &v)))                                  \
            return st;                                                                         \
        dst = (int)v;                                                                          \
    } while (0)
    GET("block_count", 1, 0, 1, 1 << 12, hp->n_layer);
    GET("embedding_length", 1, 0, 1, 1 << 20, hp->n_embd);
    GET("feed_forward_length", 1, 0, 1, 1 << 20, hp->n_ff);
    GET("attention.head_count", 1, 0, 1, 1 << 12, hp->n_head);
    GET("attention.head_count_kv", 0, hp->n_head, 1, hp->n_head, hp->n_head_kv);
    GET("context_length", 1, 0, 1, 1 << 24, hp->n_ctx_train);
    if (hp->n_head % hp->n_head_kv)
        return pg_fail(PG_ERR_FORMAT, "llm: %d query heads are not a multiple of %d KV heads",
                       hp->n_head, hp->n_head_kv);
    /* the head size: attention.key_length where the file has it (qwen3 and
     * gemma2 heads are not n_embd / n_head wide), else n_embd / n_head */
    int def_hd = hp->n_embd % hp->n_head ? 0 : hp->n_embd / hp->n_head;
    GET("attention.key_length", def_hd == 0, def_hd, 1, 1024, hp->head_dim);
    int vlen;
    GET("attention.value_length", 0, hp->head_dim, 1, 1024, vlen);
    if (vlen != hp->head_dim)
        return pg_fail(PG_ERR_UNSUPPORTED, "llm: %s.attention.value_length %d differs from the "
                       "key length %d", hp->arch_name, vlen, hp->head_dim);
    if (hp->head_dim % 16 || hp->head_dim > 256)
        return pg_fail(PG_ERR_UNSUPPORTED, "llm: head size %d (multiples of 16 up to 256 are "
                       "supported: 64, 80, 96, 128...)", hp->head_dim);
    GET("rope.dimension_count", 0, hp->head_dim, 2, hp->head_dim, hp->n_rot);
    if (hp->n_rot % 2)
        return pg_fail(PG_ERR_FORMAT, "llm: %s.rope.dimension_count %d is odd", hp->arch_name,
                       hp->n_rot);
    int64_t experts;
    if ((st = meta_int(m, "expert_count", 0, 0, 0, 1 << 20, &experts)))
        return st;
    if (experts > 0)
        return pg_fail(PG_ERR_UNSUPPORTED, "llm: %s.expert_count = %lld (mixture-of-experts "
                       "models are not supported)", hp->arch_name, (long long)experts);
#undef GET
    hp->q_dim = hp->n_head * hp->head_dim;
    hp->kv_dim = hp->n_head_kv * hp->head_dim;

    if ((st = meta_float(m, "rope.freq_base", 10000.0, &hp->rope_base)) ||
        (st = meta_float(m, "attention.layer_norm_rms_epsilon", 1e-5, &hp->norm_eps)))
        return st;
    if (!(hp->rope_base > 0.0f) || !(hp->norm_eps >= 0.0f))
        return pg_fail(PG_ERR_FORMAT, "llm: rope.freq_base %g / rms epsilon %g out of range",
                       (double)hp->rope_base, (double)hp->norm_eps);

    /* RoPE scaling: none or linear (positions divided by the factor) */
    char key[128];
    hp->rope_freq_scale = 1.0f;
    float factor;
    if ((st = meta_float(m, "rope.scale_linear", 0.0, &factor)))
        return st;
    int64_t ti = pg_gguf_find_key(g, akey(m, "rope.scaling.type", key, sizeof key));
    int linear = factor != 0.0f;
    if (ti >= 0) {
        const char *s;
        uint64_t n;
        if ((st = pg_gguf_get_string(g, ti, &s, &n)))
            return st;
        if (n == 6 && !memcmp(s, "linear", 6))
            linear = 1;
        else if (!(n == 4 && !memcmp(s, "none", 4)))
            return pg_fail(PG_ERR_UNSUPPORTED, "llm: %s = '%.*s' is not supported (none and "
                           "linear are)", key, (int)(n < 32 ? n : 32), s);
        if (linear && (st = meta_float(m, "rope.scaling.factor", factor, &factor)))
            return st;
    }
    if (linear && factor != 0.0f && factor != 1.0f) {
        if (!(factor > 0.0f))
            return pg_fail(PG_ERR_FORMAT, "llm: RoPE scaling factor %g", (double)factor);
        hp->rope_freq_scale = 1.0f / factor;
    }
    hp->rope_neox = d->rope_neox;

    /* attention scaling, capping and windows */
    hp->kq_scale = 1.0f / sqrtf((float)hp->head_dim);
    hp->q_scale = 0.0f;
    if (d->q_prescale) {
        /* gemma2 27B (46 layers) scales by n_embd / n_head, as llama.cpp does
         * (its query_pre_attn_scalar, which the file does not carry) */
        float qs = hp->arch == LLM_ARCH_GEMMA2 && hp->n_layer == 46
                       ? 1.0f / sqrtf((float)(hp->n_embd / hp->n_head))
                       : 1.0f / sqrtf((float)hp->head_dim);
        hp->q_scale = qs;
        hp->kq_scale = 1.0f;
    }
    hp->attn_softcap = hp->final_softcap = 0.0f;
    if (d->softcap &&
        ((st = meta_float(m, "attn_logit_softcapping", 50.0, &hp->attn_softcap)) ||
         (st = meta_float(m, "final_logit_softcapping", 30.0, &hp->final_softcap))))
        return st;
    if (hp->attn_softcap < 0.0f || hp->final_softcap < 0.0f)
        return pg_fail(PG_ERR_FORMAT, "llm: negative soft-capping");
    hp->n_swa = 0;
    if (d->swa_every) {
        int64_t w;
        if ((st = meta_int(m, "attention.sliding_window", 0, d->swa_every == 2 ? 4096 : 0, 0,
                           1 << 24, &w)))
            return st;
        hp->n_swa = (int)w;
    } else {
        int64_t w;
        if ((st = meta_int(m, "attention.sliding_window", 0, 0, 0, 1 << 24, &w)))
            return st;
        if (w > 0)
            return pg_fail(PG_ERR_UNSUPPORTED, "llm: %s.attention.sliding_window = %lld: a "
                           "window is not part of the %s architecture here", hp->arch_name,
                           (long long)w, hp->arch_name);
    }
    hp->ffn_gelu = d->ffn_gelu;
    hp->embd_scale = d->embd_scale ? sqrtf((float)hp->n_embd) : 0.0f;
    return PG_OK;
}

/* ---- tensors ----------------------------------------------------------- */

typedef struct reader {
    pg_llm *m;
    uint8_t *used;      /* per tensor of the file: read by a row */
} reader;

/* Marks name as read; 1 when the file has it. */
static int mark(reader *r, const char *name)
{
    int64_t idx = pg_gguf_find_tensor(r->m->gguf, name);
    if (idx < 0) {
        pg_clear_error();
        return 0;
    }
    r->used[idx] = 1;
    return 1;
}

/* An f32 vector of n (a norm weight, a bias, RoPE divisors). */
static pg_status vec(reader *r, const char *name, int64_t n, int optional, const float **out)
{
    *out = NULL;
    if (!mark(r, name)) {
        if (optional)
            return PG_OK;
        return pg_fail(PG_ERR_FORMAT, "llm: the file has no tensor %s", name);
    }
    pg_gguf_tensor_info ti;
    pg_status st = pg_gguf_tensor_info_get(r->m->gguf, pg_gguf_find_tensor(r->m->gguf, name), &ti);
    if (st)
        return st;
    if (ti.dims[0] != n || ti.n_elements != n)
        return pg_fail(PG_ERR_FORMAT, "llm: %s has %lld elements, expected %lld", name,
                       (long long)ti.n_elements, (long long)n);
    if (ti.type != PG_GGML_F32)
        return pg_fail(PG_ERR_UNSUPPORTED, "llm: %s is %s, only f32 vectors are supported",
                       name, pg_ggml_type_name(ti.type));
    if ((uintptr_t)ti.data % sizeof(float))
        return pg_fail(PG_ERR_FORMAT, "llm: %s is not 4-byte aligned in the file", name);
    const float *f = ti.data;
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(f[i]))
            return pg_fail(PG_ERR_FORMAT, "llm: %s[%lld] is %f (the file is damaged)", name,
                           (long long)i, (double)f[i]);
    *out = f;
    return PG_OK;
}

static pg_status mat(reader *r, const char *name, int64_t K, int64_t N, int optional,
                     llm_weight *w)
{
    memset(w, 0, sizeof *w);
    if (!mark(r, name)) {
        if (optional)
            return PG_OK;
        return pg_fail(PG_ERR_FORMAT, "llm: the file has no tensor %s", name);
    }
    return llm_get_matrix(r->m, name, K, N, 0, w);
}

/* Rows [r0, r0 + n) of w as a weight of their own. */
static llm_weight rows_of(const llm_weight *w, size_t r0, size_t n)
{
    llm_weight v = *w;
    v.data = w->data + r0 * w->row_bytes;
    v.N = n;
    return v;
}

static pg_status read_layer(reader *r, int l)
{
    pg_llm *m = r->m;
    const llm_hparams *hp = &m->hp;
    const arch_desc *d = desc_of(m);
    llm_layer *L = &m->layers[l];
    int64_t E = hp->n_embd, F = hp->n_ff, QD = hp->q_dim, KV = hp->kv_dim, HD = hp->head_dim;
    char n[96];
    pg_status st;
#define NAME(s) (snprintf(n, sizeof n, "blk.%d." s, l), n)
    if ((st = vec(r, NAME("attn_norm.weight"), E, 0, &L->attn_norm)) ||
        (st = vec(r, NAME("ffn_norm.weight"), E, 0, &L->ffn_norm)) ||
        (st = mat(r, NAME("attn_output.weight"), QD, E, 0, &L->wo)) ||
        (st = mat(r, NAME("ffn_down.weight"), F, E, 0, &L->down)))
        return st;
    llm_weight fused;
    if (d->fused && (st = mat(r, NAME("attn_qkv.weight"), E, QD + 2 * KV, 1, &fused)))
        return st;
    if (d->fused && fused.data) {
        L->wq = rows_of(&fused, 0, (size_t)QD);
        L->wk = rows_of(&fused, (size_t)QD, (size_t)KV);
        L->wv = rows_of(&fused, (size_t)(QD + KV), (size_t)KV);
    } else if ((st = mat(r, NAME("attn_q.weight"), E, QD, 0, &L->wq)) ||
               (st = mat(r, NAME("attn_k.weight"), E, KV, 0, &L->wk)) ||
               (st = mat(r, NAME("attn_v.weight"), E, KV, 0, &L->wv)))
        return st;
    if (d->fused) {
        if ((st = mat(r, NAME("ffn_up.weight"), E, 2 * F, 0, &fused)))
            return st;
        L->gate = rows_of(&fused, 0, (size_t)F);
        L->up = rows_of(&fused, (size_t)F, (size_t)F);
    } else if ((st = mat(r, NAME("ffn_gate.weight"), E, F, 0, &L->gate)) ||
               (st = mat(r, NAME("ffn_up.weight"), E, F, 0, &L->up)))
        return st;
    if (d->qkv_bias &&
        ((st = vec(r, NAME("attn_q.bias"), QD, 1, &L->bq)) ||
         (st = vec(r, NAME("attn_k.bias"), KV, 1, &L->bk)) ||
         (st = vec(r, NAME("attn_v.bias"), KV, 1, &L->bv))))
        return st;
    if (d->qk_norm &&
        ((st = vec(r, NAME("attn_q_norm.weight"), HD, 0, &L->q_norm)) ||
         (st = vec(r, NAME("attn_k_norm.weight"), HD, 0, &L->k_norm))))
        return st;
    if (d->post_norms &&
        ((st = vec(r, NAME("post_attention_norm.weight"), E, 0, &L->attn_post_norm)) ||
         (st = vec(r, NAME("post_ffw_norm.weight"), E, 0, &L->ffn_post_norm))))
        return st;
#undef NAME
    L->swa = hp->n_swa > 0 && (d->swa_every == 1 || (d->swa_every == 2 && l % 2 == 0));
    if (L->wq.act_type != L->wk.act_type || L->wq.act_type != L->wv.act_type ||
        L->gate.act_type != L->up.act_type)
        return pg_fail(PG_ERR_UNSUPPORTED, "llm: layer %d mixes weight types that share an "
                       "input (q/k/v or gate/up)", l);
    return PG_OK;
}

pg_status llm_read_weights(pg_llm *m)
{
    const llm_hparams *hp = &m->hp;
    const arch_desc *d = desc_of(m);
    int64_t E = hp->n_embd, F = hp->n_ff;
    if (E % 32 || F % 32 || hp->q_dim % 32)
        return pg_fail(PG_ERR_UNSUPPORTED, "llm: widths %lld, %lld and %d must be multiples "
                       "of 32", (long long)E, (long long)F, hp->q_dim);
    int64_t nt = pg_gguf_tensor_count(m->gguf);
    reader r = { m, pg_calloc((size_t)(nt > 0 ? nt : 1), 1) };
    if (!r.used)
        return pg_fail(PG_ERR_NOMEM, "llm: out of memory");
    pg_status st;
    if ((st = mat(&r, "token_embd.weight", E, hp->n_vocab, 0, &m->tok_embd)) ||
        (!d->always_tied && (st = mat(&r, "output.weight", E, hp->n_vocab, 1, &m->output))) ||
        (st = vec(&r, "output_norm.weight", E, 0, &m->output_norm)) ||
        (st = vec(&r, "rope_freqs.weight", hp->n_rot / 2, 1, &m->rope_freqs)))
        goto done;
    for (int i = 0; m->rope_freqs && i < hp->n_rot / 2; i++)
        if (!(m->rope_freqs[i] > 0.0f)) {
            st = pg_fail(PG_ERR_FORMAT, "llm: rope_freqs.weight[%d] is %g (a divisor of the RoPE "
                         "frequency must be positive)", i, (double)m->rope_freqs[i]);
            goto done;
        }
    if (!m->output.data)
        m->output = m->tok_embd;   /* tied embedding */
    m->layers = pg_calloc((size_t)hp->n_layer, sizeof(llm_layer));
    if (!m->layers) {
        st = pg_fail(PG_ERR_NOMEM, "llm: out of memory for %d layers", hp->n_layer);
        goto done;
    }
    for (int l = 0; l < hp->n_layer && !st; l++)
        st = read_layer(&r, l);
    for (int64_t i = 0; i < nt && !st; i++)
        if (!r.used[i]) {
            pg_gguf_tensor_info ti;
            st = pg_gguf_tensor_info_get(m->gguf, i, &ti);
            if (!st)
                st = pg_fail(PG_ERR_UNSUPPORTED, "llm: tensor %s is not supported (the %s "
                             "decoder does not read it)", ti.name, hp->arch_name);
        }
done:
    pg_free(r.used);
    return st;
}

/* llm_graph.c - the decoder as a Peregrine graph.
 *
 * The loaded weights become constants of a graph (borrowed: views into the
 * file mapping, nothing copied), the forward pass its nodes (ops in
 * graph/infer_llm.c and exec/ops_llm.c, and the ordinary RMSNorm, Add,
 * Mul, SiLU, Gelu, Tanh, Reshape), compiled by the same passes and planned
 * by the same planner as any graph.  Per layer (brackets: only where the
 * architecture has it, llm_arch.c):
 *
 *   xn = RMSNorm(x, attn_norm)
 *   q, k, v = GGUFMatMul(GGUFQuantize(xn), Wq / Wk / Wv)   [Add bias]
 *             [Reshape, RMSNorm per head, Reshape]
 *   q, k = LLMRotary(q / k, cos, sin, ctl)
 *   kc, vc = KVCacheWrite(KVCache(), k / v, ctl)            the persistent cache
 *            [KVCacheRead(kc / vc, ctl)]     an f16 cache (kv_f16): widened
 *   a = CachedAttention(q, kc, vc, ctl)
 *   o = GGUFMatMul(GGUFQuantize(a), Wo)   [RMSNorm post]   x = Add(x, o)
 *   xn = RMSNorm(x, ffn_norm)
 *   h = Mul(SiLU (gemma: Gelu tanh)(GGUFMatMul(.., gate)), GGUFMatMul(.., up))
 *   d = GGUFMatMul(GGUFQuantize(h), Wdown)   [RMSNorm post]   x = Add(x, d)
 *
 * then logits = GGUFMatMul(GGUFQuantize(RMSNorm(x, output_norm)), head,
 * tail = 1) [Mul, Tanh, Mul: the final soft-capping].  One quantisation is
 * shared by every product that reads the same rows with the same block type.
 *
 * Inputs: ids int32 [T] and ctl int32 [3] = { n, pos, row0 }: the graph is
 * compiled twice, T = 1 (decode) and T = max_batch (prefill), and a run
 * fills its first n rows.  Every KVCache output is a persistent buffer of
 * the plan; both models' persistent blocks are one allocation of the
 * decoder's (m->gpersist), so prefill and decode see one cache.
 *
 * The compile is pg_compile's without its copy of the graph (which would
 * copy the borrowed weights). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/threadpool.h"
#include "../exec/model.h"
#include "../gguf/ggml_types.h"
#include "../passes/passes.h"
#include "llm.h"

typedef struct gb {
    pg_llm *m;
    pg_graph *g;
    int T, ids, ctl, cos, sin;
    pg_status st;
    /* borrowed constants by address (a tied head reuses the embedding) */
    const void *cptr[1024];
    int cid[1024], nc;
    /* the last quantisation: (tensor, act type) -> its output */
    int q_in, q_type, q_out;
} gb;

static int fail_id(gb *b)
{
    if (!b->st)
        b->st = pg_last_status() ? pg_last_status() : PG_ERR_INTERNAL;
    return -1;
}

/* A constant whose bytes stay where they are (the mapping, the RoPE table). */
static int borrow(gb *b, const char *name, pg_dtype dt, int rank, int64_t d0, int64_t d1,
                  const void *data)
{
    if (b->st)
        return -1;
    for (int i = 0; i < b->nc; i++)
        if (b->cptr[i] == data)
            return b->cid[i];
    int64_t shape[2] = { d0, d1 };
    int id = pg_ir_add_tensor(b->g, name, dt, rank, shape);
    if (id < 0)
        return fail_id(b);
    pg_tensor *t = b->g->tensors[id];
    t->is_const = 1;
    t->data = (void *)data;
    t->data_borrowed = 1;
    t->nbytes = (size_t)(rank == 2 ? d0 * d1 : d0) * pg_dtype_size(dt);
    if (b->nc < (int)(sizeof b->cptr / sizeof b->cptr[0])) {
        b->cptr[b->nc] = data;
        b->cid[b->nc++] = id;
    }
    return id;
}

/* A node of one output named `name` (tensor and node). */
static int op(gb *b, const char *type, const char *name, const int *in, int n_in, pg_node **node)
{
    *node = NULL;
    if (b->st)
        return -1;
    char buf[96];
    if (pg_ir_find_tensor(b->g, name) >= 0)
        name = pg_ir_unique_name(b->g, name, buf, sizeof buf);
    int y = pg_ir_add_tensor(b->g, name, PG_DTYPE_UNDEFINED, -1, NULL);
    if (y < 0)
        return fail_id(b);
    int nid = pg_ir_add_node(b->g, type, name, in, n_in, &y, 1);
    if (nid < 0)
        return fail_id(b);
    *node = b->g->nodes[nid];
    return y;
}

static void set_int(gb *b, pg_node *n, const char *a, int64_t v)
{
    if (!b->st && n && pg_ir_set_attr_int(n, a, v))
        b->st = pg_last_status();
}

static void set_float(gb *b, pg_node *n, const char *a, float v)
{
    if (!b->st && n && pg_ir_set_attr_float(n, a, v))
        b->st = pg_last_status();
}

static int rmsnorm(gb *b, const char *name, int x, const float *gamma, int64_t cols)
{
    if (!gamma)
        return x;
    char gn[128];
    snprintf(gn, sizeof gn, "%s.weight", name);
    int in[2] = { x, borrow(b, gn, PG_DTYPE_FLOAT32, 1, cols, 0, gamma) };
    pg_node *n;
    int y = op(b, "RMSNorm", name, in, 2, &n);
    set_float(b, n, "epsilon", b->m->hp.norm_eps);
    /* llama.cpp's rounding order (the rmsnorm_ggml table): the activations
     * are quantised right after, where a last-bit difference can flip */
    if (n && !b->st && pg_ir_set_attr_string(n, "rounding", "ggml"))
        b->st = pg_last_status();
    return y;
}

static int binary(gb *b, const char *type, const char *name, int x, int z)
{
    int in[2] = { x, z };
    pg_node *n;
    return op(b, type, name, in, 2, &n);
}

static int quantize(gb *b, const char *name, int x, int act_type)
{
    if (act_type == PG_GGML_F32)
        return x;
    if (b->q_in == x && b->q_type == act_type)
        return b->q_out;
    int in[2] = { x, b->ctl };
    pg_node *n;
    int y = op(b, "GGUFQuantize", name, in, 2, &n);
    set_int(b, n, "act_type", act_type);
    b->q_in = x;
    b->q_type = act_type;
    b->q_out = y;
    return y;
}

static int matmul(gb *b, const char *name, int x, const llm_weight *w, int tail)
{
    char qn[128], wn[128];
    snprintf(qn, sizeof qn, "%s.act", name);
    snprintf(wn, sizeof wn, "%s.weight", name);
    int a = quantize(b, qn, x, w->act_type);
    int in[3] = { a, borrow(b, wn, PG_DTYPE_UINT8, 2, (int64_t)w->N, (int64_t)w->row_bytes, w->data),
                  b->ctl };
    pg_node *n;
    int y = op(b, "GGUFMatMul", name, in, 3, &n);
    set_int(b, n, "wtype", w->type);
    set_int(b, n, "K", (int64_t)w->K);
    set_int(b, n, "N", (int64_t)w->N);
    if (tail)
        set_int(b, n, "tail", 1);
    return y;
}

static int bias(gb *b, const char *name, int x, const float *v, int64_t cols)
{
    if (!v)
        return x;
    char bn[128];
    snprintf(bn, sizeof bn, "%s.bias", name);
    return binary(b, "Add", name, x, borrow(b, bn, PG_DTYPE_FLOAT32, 1, cols, 0, v));
}

/* RMSNorm of every head of x ([T, heads * hd] viewed as [T * heads, hd]). */
static int headnorm(gb *b, const char *name, int x, const float *gamma, int heads)
{
    if (!gamma || b->st)
        return x;
    int hd = b->m->hp.head_dim;
    char sn[128];
    int64_t two = 2, s1[2] = { (int64_t)b->T * heads, hd }, s2[2] = { b->T, (int64_t)heads * hd };
    snprintf(sn, sizeof sn, "%s.heads_shape", name);
    int c1 = pg_ir_add_const(b->g, sn, PG_DTYPE_INT64, 1, &two, s1);
    snprintf(sn, sizeof sn, "%s.rows_shape", name);
    int c2 = pg_ir_add_const(b->g, sn, PG_DTYPE_INT64, 1, &two, s2);
    if (c1 < 0 || c2 < 0)
        return fail_id(b);
    char rn[128];
    snprintf(rn, sizeof rn, "%s.heads", name);
    int r = binary(b, "Reshape", rn, x, c1);
    r = rmsnorm(b, name, r, gamma, hd);
    snprintf(rn, sizeof rn, "%s.rows", name);
    return binary(b, "Reshape", rn, r, c2);
}

static int rotary(gb *b, const char *name, int x, int heads)
{
    const llm_hparams *hp = &b->m->hp;
    int in[4] = { x, b->cos, b->sin, b->ctl };
    pg_node *n;
    int y = op(b, "LLMRotary", name, in, 4, &n);
    set_int(b, n, "heads", heads);
    set_int(b, n, "head_dim", hp->head_dim);
    set_int(b, n, "n_rot", hp->n_rot);
    set_int(b, n, "neox", hp->rope_neox);
    return y;
}

static int cache(gb *b, const char *name, int layer, int x, int which)
{
    char cn[128];
    snprintf(cn, sizeof cn, "%s_cache", name);
    pg_node *n;
    int c = op(b, "KVCache", cn, NULL, 0, &n);
    set_int(b, n, "positions", b->m->n_ctx);
    set_int(b, n, "width", b->m->hp.kv_dim);
    set_int(b, n, "layer", layer);
    set_int(b, n, "which", which);
    set_int(b, n, "f16", b->m->kv_f16);
    int in[3] = { c, x, b->ctl };
    snprintf(cn, sizeof cn, "%s_cache_written", name);
    int w = op(b, "KVCacheWrite", cn, in, 3, &n);
    if (!b->m->kv_f16)
        return w;
    /* an f16 cache: the rows attention reads, widened to f32 per run */
    int rin[2] = { w, b->ctl };
    snprintf(cn, sizeof cn, "%s_cache_read", name);
    return op(b, "KVCacheRead", cn, rin, 2, &n);
}

static void layer(gb *b, int l, int *x)
{
    const pg_llm *m = b->m;
    const llm_hparams *hp = &m->hp;
    const llm_layer *L = &m->layers[l];
    char nm[96];
#define NAME(s) (snprintf(nm, sizeof nm, "blk.%d." s, l), nm)
    int xn = rmsnorm(b, NAME("attn_norm"), *x, L->attn_norm, hp->n_embd);
    int q = matmul(b, NAME("attn_q"), xn, &L->wq, 0);
    int k = matmul(b, NAME("attn_k"), xn, &L->wk, 0);
    int v = matmul(b, NAME("attn_v"), xn, &L->wv, 0);
    q = bias(b, NAME("attn_q"), q, L->bq, hp->q_dim);
    k = bias(b, NAME("attn_k"), k, L->bk, hp->kv_dim);
    v = bias(b, NAME("attn_v"), v, L->bv, hp->kv_dim);
    q = headnorm(b, NAME("attn_q_norm"), q, L->q_norm, hp->n_head);
    k = headnorm(b, NAME("attn_k_norm"), k, L->k_norm, hp->n_head_kv);
    q = rotary(b, NAME("q_rope"), q, hp->n_head);
    k = rotary(b, NAME("k_rope"), k, hp->n_head_kv);
    int kc = cache(b, NAME("k"), l, k, 0);
    int vc = cache(b, NAME("v"), l, v, 1);
    int in[4] = { q, kc, vc, b->ctl };
    pg_node *n;
    int a = op(b, "CachedAttention", NAME("attn"), in, 4, &n);
    set_int(b, n, "n_head", hp->n_head);
    set_int(b, n, "n_head_kv", hp->n_head_kv);
    set_int(b, n, "head_dim", hp->head_dim);
    set_int(b, n, "window", L->swa ? hp->n_swa : 0);
    set_float(b, n, "softcap", hp->attn_softcap);
    set_float(b, n, "kq_scale", hp->kq_scale);
    set_float(b, n, "q_scale", hp->q_scale);
    int o = matmul(b, NAME("attn_output"), a, &L->wo, 0);
    o = rmsnorm(b, NAME("post_attention_norm"), o, L->attn_post_norm, hp->n_embd);
    *x = binary(b, "Add", NAME("attn_residual"), *x, o);
    xn = rmsnorm(b, NAME("ffn_norm"), *x, L->ffn_norm, hp->n_embd);
    int g = matmul(b, NAME("ffn_gate"), xn, &L->gate, 0);
    int u = matmul(b, NAME("ffn_up"), xn, &L->up, 0);
    int gin[1] = { g };
    if (hp->ffn_gelu) {
        g = op(b, "Gelu", NAME("ffn_gelu"), gin, 1, &n);
        if (n && pg_ir_set_attr_string(n, "approximate", "tanh") && !b->st)
            b->st = pg_last_status();
    } else {
        g = op(b, "SiLU", NAME("ffn_silu"), gin, 1, &n);
    }
    int h = binary(b, "Mul", NAME("ffn_gated"), g, u);
    int d = matmul(b, NAME("ffn_down"), h, &L->down, 0);
    d = rmsnorm(b, NAME("post_ffw_norm"), d, L->ffn_post_norm, hp->n_embd);
    *x = binary(b, "Add", NAME("ffn_residual"), *x, d);
#undef NAME
}

pg_status llm_graph_build(pg_llm *m, int rows, pg_graph **out)
{
    *out = NULL;
    gb *b = pg_calloc(1, sizeof *b);
    if (!b)
        return pg_fail(PG_ERR_NOMEM, "llm: out of memory building the graph");
    const llm_hparams *hp = &m->hp;
    b->m = m;
    b->T = rows;
    b->q_in = -1;
    if (!(b->g = pg_ir_new())) {
        pg_free(b);
        return pg_last_status();
    }
    int64_t T = rows, three = 3;
    if (pg_graph_add_input(b->g, "ids", PG_DTYPE_INT32, 1, &T) ||
        pg_graph_add_input(b->g, "ctl", PG_DTYPE_INT32, 1, &three))
        b->st = pg_last_status();
    b->ids = pg_ir_find_tensor(b->g, "ids");
    b->ctl = pg_ir_find_tensor(b->g, "ctl");
    b->cos = borrow(b, "rope_cos", PG_DTYPE_FLOAT32, 2, m->n_ctx, hp->n_rot / 2, m->rope_cos);
    b->sin = borrow(b, "rope_sin", PG_DTYPE_FLOAT32, 2, m->n_ctx, hp->n_rot / 2, m->rope_sin);
    int in[3] = { b->ids, borrow(b, "token_embd.weight", PG_DTYPE_UINT8, 2, (int64_t)m->tok_embd.N,
                                 (int64_t)m->tok_embd.row_bytes, m->tok_embd.data), b->ctl };
    pg_node *n;
    int x = op(b, "GGUFEmbed", "token_embd", in, 3, &n);
    set_int(b, n, "wtype", m->tok_embd.type);
    set_int(b, n, "n_embd", hp->n_embd);
    if (hp->embd_scale != 0.0f && !b->st) {
        int64_t one = 1;
        int s = pg_ir_add_const(b->g, "embd_scale", PG_DTYPE_FLOAT32, 1, &one, &hp->embd_scale);
        x = s < 0 ? fail_id(b) : binary(b, "Mul", "token_embd_scaled", x, s);
    }
    for (int l = 0; l < hp->n_layer && !b->st; l++)
        layer(b, l, &x);
    x = rmsnorm(b, "output_norm", x, m->output_norm, hp->n_embd);
    int y = matmul(b, "output", x, &m->output, 1);
    if (hp->final_softcap != 0.0f && !b->st) {
        int64_t one = 1;
        float inv = 1.0f / hp->final_softcap;
        int ci = pg_ir_add_const(b->g, "final_softcap_inv", PG_DTYPE_FLOAT32, 1, &one, &inv);
        int cc = pg_ir_add_const(b->g, "final_softcap", PG_DTYPE_FLOAT32, 1, &one, &hp->final_softcap);
        if (ci < 0 || cc < 0) {
            fail_id(b);
        } else {
            y = binary(b, "Mul", "logits_scaled", y, ci);
            int tin[1] = { y };
            y = op(b, "Tanh", "logits_tanh", tin, 1, &n);
            y = binary(b, "Mul", "logits_capped", y, cc);
        }
    }
    if (!b->st && pg_ir_add_graph_output(b->g, y, "logits"))
        b->st = pg_last_status();
    pg_status st = b->st;
    if (st)
        pg_ir_free(b->g);
    else
        *out = b->g;
    pg_free(b);
    return st;
}

/* pg_compile without its copy of the graph: g is the model's from here. */
static pg_status compile_graph(pg_llm *m, pg_graph *g, pg_model **out)
{
    *out = NULL;
    pg_model *pm = pg_calloc(1, sizeof *pm);
    if (!pm) {
        pg_ir_free(g);
        return pg_fail(PG_ERR_NOMEM, "llm: out of memory compiling the graph");
    }
    pm->g = g;
    pm->level = 3;
    pm->threads_opt = m->threads;
    pm->threads = m->threads;
    pg_status st;
    if ((st = pg_ir_verify(g)) || (st = pg_ir_infer_shapes(g)))
        goto fail;
    if (!(pm->pass_log = pg_pass_log_new())) {
        st = pg_last_status();
        goto fail;
    }
    if ((st = pg_passes_run(g, pm->level, NULL, pm->pass_log)) ||
        (st = pg_model_bind_and_plan(pm, NULL)))
        goto fail;
    *out = pm;
    return PG_OK;
fail:
    pg_model_free(pm);
    return st;
}

/* The persistent block's buffers must sit at the same offsets in both
 * plans (the same graph, planned alike): checked, not assumed. */
static pg_status same_persistent_layout(const pg_model *a, const pg_model *b)
{
    if (a->plan.persistent_bytes != b->plan.persistent_bytes)
        return pg_fail(PG_ERR_INTERNAL, "llm: the decode and prefill plans' KV caches differ in "
                       "size");
    PG_IR_FOR_TENSORS(a->g, t) {
        const pg_plan_tensor *pa = &a->plan.t[t->id];
        if (pa->kind != PG_PLAN_PERSISTENT)
            continue;
        int id = pg_ir_find_tensor(b->g, t->name);
        const pg_plan_tensor *pb = id >= 0 ? &b->plan.t[id] : NULL;
        if (!pb || pb->kind != PG_PLAN_PERSISTENT ||
            a->plan.bufs[pa->buf].offset != b->plan.bufs[pb->buf].offset)
            return pg_fail(PG_ERR_INTERNAL, "llm: the plans place the cache '%s' apart", t->name);
    }
    return PG_OK;
}

pg_status llm_graph_compile(pg_llm *m)
{
    int shapes[2] = { 1, m->max_batch };
    for (int i = 0; i < (m->max_batch > 1 ? 2 : 1); i++) {
        pg_graph *g;
        pg_status st = llm_graph_build(m, shapes[i], &g);
        if (!st)
            st = compile_graph(m, g, &m->gm[i]);
        if (st)
            return st;
    }
    pg_status st = m->gm[1] ? same_persistent_layout(m->gm[0], m->gm[1]) : PG_OK;
    if (st)
        return st;
    m->gpersist_bytes = m->gm[0]->plan.persistent_bytes;
    if (!(m->gpersist = pg_calloc(1, m->gpersist_bytes ? m->gpersist_bytes : 64)))
        return pg_fail(PG_ERR_NOMEM, "llm: out of memory for a %zu-byte KV cache", m->gpersist_bytes);
    for (int i = 0; i < 2 && !st; i++)
        if (m->gm[i])
            st = pg_model_use_persistent(m->gm[i], m->gpersist, m->gpersist_bytes);
    return st;
}

void llm_graph_free(pg_llm *m)
{
    for (int i = 0; i < 2; i++) {
        pg_model_free(m->gm[i]);
        m->gm[i] = NULL;
    }
    pg_free(m->gpersist);
    m->gpersist = NULL;
}

pg_status llm_graph_rebind(pg_llm *m)
{
    pg_status st = PG_OK;
    for (int i = 0; i < 2 && !st; i++)
        if (m->gm[i])
            st = pg_model_rebind(m->gm[i]);
    return st;
}

pg_status llm_graph_forward(pg_llm *m)
{
    int n = m->run_n, big = n > 1 && m->gm[1];
    pg_model *pm = m->gm[big];
    int64_t T = big ? m->max_batch : 1, three = 3;
    int32_t ctl[3] = { n, m->run_pos, m->run_head_row0 };
    static const char *const names[2] = { "ids", "ctl" };
    const void *data[2] = { m->ids, ctl };
    const int ranks[2] = { 1, 1 };
    const int64_t *shapes[2] = { &T, &three };
    pg_status st = pg_model_run(pm, 2, names, data, ranks, shapes);
    if (st || !m->run_logits)
        return st;
    pg_tensor_info y;
    if ((st = pg_model_output_info(pm, 0, &y)))
        return st;
    size_t V = (size_t)m->hp.n_vocab, r0 = (size_t)m->run_head_row0;
    memcpy(m->run_logits, (const float *)y.data + r0 * V, ((size_t)n - r0) * V * sizeof(float));
    return PG_OK;
}

pg_model *pg_llm_model(const pg_llm *m, int prefill)
{
    if (!m) {
        pg_fail(PG_ERR_INVALID_ARG, "pg_llm_model: m is NULL");
        return NULL;
    }
    return m->gm[prefill && m->gm[1] ? 1 : 0];
}

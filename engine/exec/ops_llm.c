/* ops_llm.c - executors, kernel binding and scratch of the GGUF decoder's
 * graph ops (shapes and attributes: graph/infer_llm.c; the graph:
 * engine/llm/llm_graph.c).
 *
 * Every kernel comes from a variant table, bound here at compile (so a mask
 * change reaches them through a rebind): the products through the qgemv /
 * qgemm variants of the weight's type and the activation quantiser of the
 * type it pairs with, RoPE (rope_ggml) from the load-time angle tables, the
 * f16 rounding of the cache, Q and the weights (round_f16), and
 * llama.cpp-ordered causal grouped-query attention (engine/llm/
 * llm_attention.c) with the softmax, tanh and attn_ggml variants.
 *
 * A run carries n <= T tokens (ctl = { n, pos, row0 }, infer_llm.c): every
 * op here works on the first n rows only, and the ops whose outputs other
 * ops read row by row (the embedding, the products, attention) zero rows
 * n..T-1, so the elementwise ops after them see zeros there rather than
 * stale numbers (no NaN or subnormal slow paths). */
#include <string.h>

#include "../core/error.h"
#include "../gguf/ggml_types.h"
#include "../kernels/kquant/kquant.h"
#include "../kernels/qdot/qdot.h"
#include "../kernels/qgemm/qgemm.h"
#include "../kernels/qgemv/qgemv.h"
#include "../kernels/softmax/softmax.h"
#include "../kernels/tanh/tanh.h"
#include "../kernels/attn_ggml/attn_ggml.h"
#include "../kernels/cvt_f16/cvt_f16.h"
#include "../kernels/rope_ggml/rope_ggml.h"
#include "../kernels/round_f16/round_f16.h"
#include "../llm/llm.h"
#include "ops.h"

/* The run's rows and position from ctl (slot), checked against the
 * compiled rows and, for ops that touch the cache, its positions. */
static pg_status read_ctl(const pg_kctx *k, int slot, int64_t positions, int *n, int *pos, int *row0)
{
    const int32_t *c = k->x[slot];
    int64_t T = k->out[0]->shape[0];
    if (k->node->op == PG_OP_KV_CACHE_WRITE)
        T = k->in[1]->shape[0];
    if (c[0] < 1 || c[0] > T || c[1] < 0 || c[2] < 0 || c[2] >= c[0])
        return pg_fail(PG_ERR_SHAPE, "node '%s': ctl {%d, %d, %d} is not {rows 1..%lld, position "
                       ">= 0, first logits row < rows}", k->node->name, c[0], c[1], c[2], (long long)T);
    if (positions >= 0 && (int64_t)c[1] + c[0] > positions)
        return pg_fail(PG_ERR_SHAPE, "node '%s': %d rows at position %d overrun the cache of %lld "
                       "positions", k->node->name, c[0], c[1], (long long)positions);
    *n = c[0];
    *pos = c[1];
    if (row0)
        *row0 = c[2];
    return PG_OK;
}

static void zero_tail(const pg_kctx *k, int n)
{
    int64_t T = k->out[0]->shape[0], cols = k->out[0]->shape[1];
    if (n < T)
        memset((float *)k->y[0] + (size_t)n * (size_t)cols, 0, (size_t)(T - n) * (size_t)cols * 4);
}

static int64_t attr(const pg_kctx *k, const char *name)
{
    return pg_ir_attr_int(k->node, name, 0);
}

/* ---- GGUFEmbed ------------------------------------------------------------ */

pg_status pg_exec_gguf_embed(pg_kctx *k)
{
    int n = 0, pos = 0;
    pg_status st = read_ctl(k, 2, -1, &n, &pos, NULL);
    if (st)
        return st;
    const int32_t *ids = k->x[0];
    int64_t V = k->in[1]->shape[0], rb = k->in[1]->shape[1], E = k->out[0]->shape[1];
    int type = (int)attr(k, "wtype");
    for (int i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= V)
            return pg_fail(PG_ERR_INVALID_ARG, "node '%s': token %d is %d, outside the vocabulary "
                           "of %lld", k->node->name, i, ids[i], (long long)V);
        if ((st = pg_dequantize_row(type, (const uint8_t *)k->x[1] + (size_t)ids[i] * (size_t)rb,
                                    (float *)k->y[0] + (size_t)i * (size_t)E, E)))
            return st;
    }
    zero_tail(k, n);
    return PG_OK;
}

/* ---- GGUFQuantize --------------------------------------------------------- */

pg_status pg_bind_gguf_quantize(const pg_node *n, const pg_tensor *const *in,
                                const pg_tensor *const *out, pg_binding *b)
{
    (void)in; (void)out;
    int at = (int)pg_ir_attr_int(n, "act_type", -1);
    const pg_kernel_family *f = at == PG_GGML_Q8_1 ? &pg_kernels_quantize_q8_1
                              : at == PG_GGML_Q8_K ? &pg_kernels_quantize_q8_K
                              : &pg_kernels_quantize_q8_0;
    if (!(b->kern[0] = pg_kernel_select(f)))
        return pg_fail(PG_ERR_UNSUPPORTED, "node '%s': no %s kernel runs here", n->name, f->name);
    return PG_OK;
}

pg_status pg_exec_gguf_quantize(pg_kctx *k)
{
    int n = 0, pos = 0;
    pg_status st = read_ctl(k, 1, -1, &n, &pos, NULL);
    if (st)
        return st;
    size_t K = (size_t)k->in[0]->shape[1], rb = (size_t)k->out[0]->shape[1];
    pg_quantize_row_fn q = k->bind->kern[0]->fn.quantize;
    for (int r = 0; r < n; r++)
        q(K, (const float *)k->x[0] + (size_t)r * K, (uint8_t *)k->y[0] + (size_t)r * rb);
    return PG_OK;
}

/* ---- GGUFMatMul ----------------------------------------------------------- */

pg_status pg_bind_gguf_matmul(const pg_node *n, const pg_tensor *const *in,
                              const pg_tensor *const *out, pg_binding *b)
{
    (void)in; (void)out;
    int wt = (int)pg_ir_attr_int(n, "wtype", -1);
    const pg_kernel_family *gv = pg_qgemv_family(wt), *gm = pg_qgemm_family(wt);
    b->kern[0] = gv ? pg_kernel_select(gv) : NULL;
    b->kern[1] = gm ? pg_kernel_select(gm) : NULL;
    if (!b->kern[0] || !b->kern[1])
        return pg_fail(PG_ERR_UNSUPPORTED, "node '%s': no qgemv / qgemm kernel for weight type %d",
                       n->name, wt);
    return PG_OK;
}

pg_status pg_exec_gguf_matmul(pg_kctx *k)
{
    int n = 0, pos = 0, row0 = 0;
    pg_status st = read_ctl(k, 2, -1, &n, &pos, &row0);
    if (st)
        return st;
    int tail = attr(k, "tail") != 0;
    llm_weight W = { k->x[1], (int)attr(k, "wtype"), 0, (size_t)attr(k, "N"), (size_t)attr(k, "K"),
                     (size_t)k->in[1]->shape[1] };
    W.act_type = pg_qgemv_act_type(W.type);
    size_t arb = (size_t)k->in[0]->shape[1] * pg_dtype_size(k->in[0]->dtype);
    int r0 = tail ? row0 : 0;
    llm_matmul_with(&W, (size_t)(n - r0), (const uint8_t *)k->x[0] + (size_t)r0 * arb,
                    (float *)k->y[0] + (size_t)r0 * W.N, W.N, k->bind->kern[0]->fn.qgemv,
                    k->bind->kern[1]->fn.qgemm, k->threads);
    if (!tail)
        zero_tail(k, n);
    return PG_OK;
}

/* ---- LLMRotary ------------------------------------------------------------ */

pg_status pg_bind_llm_rotary(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                             pg_binding *b)
{
    (void)in; (void)out;
    if (!(b->kern[0] = pg_kernel_select(&pg_kernels_rope_ggml)))
        return pg_fail(PG_ERR_UNSUPPORTED, "node '%s': no rope_ggml kernel runs here", n->name);
    return PG_OK;
}

/* Rows 0..n-1 at positions pos..: row i's angles are row pos + i of the
 * [P, n_rot / 2] tables. */
pg_status pg_exec_llm_rotary(pg_kctx *k)
{
    int n = 0, pos = 0;
    pg_status st = read_ctl(k, 3, k->in[1]->shape[0], &n, &pos, NULL);
    if (st)
        return st;
    size_t cols = (size_t)k->out[0]->shape[1], half = (size_t)k->in[1]->shape[1];
    if (k->y[0] != k->x[0])
        memcpy(k->y[0], k->x[0], (size_t)n * cols * 4);
    k->bind->kern[0]->fn.rope((size_t)n, cols, (size_t)attr(k, "heads"), (size_t)attr(k, "head_dim"),
                              (size_t)attr(k, "n_rot"), (int)attr(k, "neox"),
                              (const float *)k->x[1] + (size_t)pos * half,
                              (const float *)k->x[2] + (size_t)pos * half, half, k->y[0]);
    return PG_OK;
}

/* ---- KVCache, KVCacheWrite ------------------------------------------------ */

/* The cache's bytes are the plan's persistent buffer: nothing to compute. */
pg_status pg_exec_kv_cache(pg_kctx *k)
{
    (void)k;
    return PG_OK;
}

pg_status pg_bind_kv_write(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                           pg_binding *b)
{
    (void)out;
    const pg_kernel_family *f = in[0]->dtype == PG_DTYPE_FLOAT16 ? &pg_kernels_cvt_f32_f16
                                                                 : &pg_kernels_round_f16;
    if (!(b->kern[0] = pg_kernel_select(f)))
        return pg_fail(PG_ERR_UNSUPPORTED, "node '%s': no %s kernel runs here", n->name, f->name);
    return PG_OK;
}

pg_status pg_bind_kv_read(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                          pg_binding *b)
{
    (void)in; (void)out;
    if (!(b->kern[0] = pg_kernel_select(&pg_kernels_cvt_f16_f32)))
        return pg_fail(PG_ERR_UNSUPPORTED, "node '%s': no cvt_f16_f32 kernel runs here", n->name);
    return PG_OK;
}

/* Rows pos..pos+n-1 of the cache <- x rounded to f16 (the numbers
 * llama.cpp's f16 cache holds): as f32 values, or as f16 (the f16 cache,
 * the same values in half the bytes). */
pg_status pg_exec_kv_write(pg_kctx *k)
{
    int n = 0, pos = 0;
    pg_status st = read_ctl(k, 2, k->in[0]->shape[0], &n, &pos, NULL);
    if (st)
        return st;
    size_t W = (size_t)k->in[0]->shape[1], es = pg_dtype_size(k->in[0]->dtype);
    if (k->y[0] != k->x[0])
        memcpy(k->y[0], k->x[0], (size_t)k->in[0]->shape[0] * W * es);
    if (k->in[0]->dtype == PG_DTYPE_FLOAT16) {
        k->bind->kern[0]->fn.quantize((size_t)n * W, k->x[1], (uint16_t *)k->y[0] + (size_t)pos * W);
        return PG_OK;
    }
    k->bind->kern[0]->fn.round_f16((size_t)n * W, k->x[1], 0.0f, (float *)k->y[0] + (size_t)pos * W);
    return PG_OK;
}

/* Rows 0..pos+n-1 of an f16 cache widened to f32 (the rows attention reads). */
pg_status pg_exec_kv_read(pg_kctx *k)
{
    int n = 0, pos = 0;
    pg_status st = read_ctl(k, 1, k->in[0]->shape[0], &n, &pos, NULL);
    if (st)
        return st;
    k->bind->kern[0]->fn.widen((size_t)(pos + n) * (size_t)k->in[0]->shape[1], k->x[0], k->y[0]);
    return PG_OK;
}

/* ---- CachedAttention ------------------------------------------------------ */

pg_status pg_bind_cached_attention(const pg_node *n, const pg_tensor *const *in,
                                   const pg_tensor *const *out, pg_binding *b)
{
    (void)in; (void)out;
    b->kern[0] = pg_kernel_select(&pg_kernels_softmax);
    b->kern[1] = pg_kernel_select(&pg_kernels_tanh);
    b->kern[2] = pg_kernel_select(&pg_kernels_attn_kq_ggml);
    b->kern[3] = pg_kernel_select(&pg_kernels_attn_pv_ggml);
    b->kern[4] = pg_kernel_select(&pg_kernels_round_f16);
    if (!b->kern[0] || !b->kern[1] || !b->kern[2] || !b->kern[3] || !b->kern[4])
        return pg_fail(PG_ERR_UNSUPPORTED, "node '%s': no softmax / tanh / attn_ggml / round_f16 "
                       "kernel runs here",
                       n->name);
    return PG_OK;
}

/* q rounded to f16 (after q_scale) | scores per head | ggml-order accumulators per head */
size_t pg_scratch_cached_attention(const pg_node *n, const pg_tensor *const *in,
                                   const pg_tensor *const *out, int threads, const pg_binding *b)
{
    (void)threads; (void)b;
    size_t H = (size_t)pg_ir_attr_int(n, "n_head", 0), hd = (size_t)pg_ir_attr_int(n, "head_dim", 0);
    size_t T = (size_t)out[0]->shape[0], P = (size_t)in[1]->shape[0];
    return (T * H * hd + H * P + H * 64 * hd) * sizeof(float) + 3 * 64;
}

static float *aligned(char *p) { return (float *)(((uintptr_t)p + 63) & ~(uintptr_t)63); }

pg_status pg_exec_cached_attention(pg_kctx *k)
{
    int n = 0, pos = 0;
    pg_status st = read_ctl(k, 3, k->in[1]->shape[0], &n, &pos, NULL);
    if (st)
        return st;
    int H = (int)attr(k, "n_head"), hd = (int)attr(k, "head_dim");
    size_t qd = (size_t)H * (size_t)hd, P = (size_t)k->in[1]->shape[0];
    size_t T = (size_t)k->out[0]->shape[0];
    float *q = aligned(k->scratch);
    float *scores = aligned((char *)(q + T * qd));
    float *acc = aligned((char *)(scores + (size_t)H * P));
    pg_f32_round_f16_fn round = k->bind->kern[4]->fn.round_f16;
    round((size_t)n * qd, k->x[0], pg_ir_attr_float(k->node, "q_scale", 0.0f), q);
    llm_att_args a = { H, (int)attr(k, "n_head_kv"), hd, (int)P,
                       pg_ir_attr_float(k->node, "kq_scale", 1.0f),
                       pg_ir_attr_float(k->node, "softcap", 0.0f), (int)attr(k, "window"), n, pos,
                       q, qd, k->x[1], k->x[2], (size_t)k->in[1]->shape[1], k->y[0], qd, scores,
                       acc, k->bind->kern[0]->fn.softmax, k->bind->kern[1]->fn.unary,
                       k->bind->kern[2]->fn.attn_kq, k->bind->kern[3]->fn.attn_pv, round,
                       k->threads };
    llm_attend(&a);
    zero_tail(k, n);
    return PG_OK;
}

/* infer_llm.c - the shape rules of the GGUF decoder's graph ops (the graph
 * engine/llm/llm_graph.c builds from a GGUF file; executors in
 * exec/ops_llm.c).
 *
 * Every op that depends on how many tokens a run carries reads the `ctl`
 * input, int32 [3] = { n, pos, row0 }: the graph is compiled for T rows
 * (1 for decode, max_batch for prefill) and a run fills the first n <= T
 * of them with the tokens at positions pos.. (row0: the first row that
 * gets logits).  Shapes below use T for the compiled rows.
 *
 *   GGUFEmbed(ids int32 [T], table uint8 [V, rb], ctl) -> float32 [T, n_embd]
 *       attrs wtype (the table's ggml type), n_embd; rb = its row bytes
 *   GGUFQuantize(x float32 [T, K], ctl) -> uint8 [T, act row bytes]
 *       attr act_type (q8_0, q8_1 or q8_K: the blocks a weight's product takes)
 *   GGUFMatMul(act, W uint8 [N, rb], ctl) -> float32 [T, N]
 *       act: GGUFQuantize's output for act_type, or float32 [T, K] for f16 /
 *       bf16 weights; attrs wtype, K, N, tail (1: only rows row0..n-1, the
 *       logits)
 *   LLMRotary(x float32 [T, heads * head_dim], cos, sin float32 [P, n_rot/2], ctl)
 *       -> x's shape; attrs heads, head_dim, n_rot, neox
 *   KVCache() -> float32 (float16 with attr f16 = 1) [positions, width]: a
 *       persistent buffer (planner), attrs positions, width, layer, which
 *       ("k" / "v"), f16
 *   KVCacheWrite(cache [P, W], x float32 [T, W], ctl) -> [P, W], a view of
 *       the cache (either dtype) with rows pos..pos+n-1 written
 *   KVCacheRead(cache float16 [P, W], ctl) -> float32 [P, W], rows
 *       0..pos+n-1 widened (what attention reads of an f16 cache)
 *   CachedAttention(q float32 [T, n_head * head_dim], k_cache, v_cache [P, n_head_kv *
 *       head_dim], ctl) -> q's shape; attrs n_head, n_head_kv, head_dim, window,
 *       softcap, kq_scale, q_scale */
#include <stdint.h>
#include <string.h>

#include "../gguf/ggml_types.h"
#include "../kernels/qgemv/qgemv.h"
#include "infer.h"

#define FAIL PG_INFER_FAIL

static int64_t row_bytes(int type, int64_t K)
{
    const pg_ggml_type_traits *t = pg_ggml_traits(type);
    if (!t || t->block <= 0 || t->bytes <= 0 || K % t->block || K / t->block > INT64_MAX / t->bytes)
        return -1;
    return K / t->block * t->bytes;
}

static pg_status need_ctl(pg_infer_ctx *c, int slot)
{
    const pg_tensor *t = c->in[slot];
    if (t->dtype != PG_DTYPE_INT32 || t->rank != 1 || t->shape[0] != 3)
        return FAIL(PG_ERR_SHAPE, "ctl '%s' must be int32 [3] (rows, position, first logits row)",
                    t->name);
    return PG_OK;
}

static pg_status need_rows(pg_infer_ctx *c, int slot, pg_dtype dt, int64_t cols)
{
    const pg_tensor *t = c->in[slot];
    if (t->dtype != dt || t->rank != 2 || (cols >= 0 && t->shape[1] != cols)) {
        char s[64];
        pg_infer_shape_str(t, s, sizeof s);
        return FAIL(PG_ERR_SHAPE, "input '%s' is %s %s; expected %s [rows, %lld]", t->name,
                    pg_dtype_name(t->dtype), s, pg_dtype_name(dt), (long long)cols);
    }
    return PG_OK;
}

static int64_t attr_pos(pg_infer_ctx *c, const char *name)
{
    return pg_ir_attr_int(c->n, name, -1);
}

pg_status pg_infer_gguf_embed(pg_infer_ctx *c)
{
    pg_status st;
    int64_t E = attr_pos(c, "n_embd"), wt = attr_pos(c, "wtype");
    int64_t rb = row_bytes((int)wt, E);
    if (E <= 0 || rb < 0)
        return FAIL(PG_ERR_SHAPE, "n_embd %lld does not fit type %lld's blocks", (long long)E,
                    (long long)wt);
    const pg_tensor *ids = c->in[0];
    if (ids->dtype != PG_DTYPE_INT32 || ids->rank != 1)
        return FAIL(PG_ERR_SHAPE, "ids '%s' must be int32 [rows]", ids->name);
    if ((st = need_rows(c, 1, PG_DTYPE_UINT8, rb)) || (st = need_ctl(c, 2)))
        return st;
    int64_t shape[2] = { ids->shape[0], E };
    pg_infer_set_out(c, 0, PG_DTYPE_FLOAT32, 2, shape);
    return PG_OK;
}

pg_status pg_infer_gguf_quantize(pg_infer_ctx *c)
{
    pg_status st;
    int64_t at = attr_pos(c, "act_type");
    if (at != PG_GGML_Q8_0 && at != PG_GGML_Q8_1 && at != PG_GGML_Q8_K)
        return FAIL(PG_ERR_UNSUPPORTED, "act_type %lld is not q8_0, q8_1 or q8_K", (long long)at);
    if ((st = need_rows(c, 0, PG_DTYPE_FLOAT32, -1)) || (st = need_ctl(c, 1)))
        return st;
    int64_t rb = row_bytes((int)at, c->in[0]->shape[1]);
    if (rb < 0)
        return FAIL(PG_ERR_SHAPE, "rows of %lld do not fit %s blocks", (long long)c->in[0]->shape[1],
                    pg_ggml_traits((int)at)->name);
    int64_t shape[2] = { c->in[0]->shape[0], rb };
    pg_infer_set_out(c, 0, PG_DTYPE_UINT8, 2, shape);
    return PG_OK;
}

pg_status pg_infer_gguf_matmul(pg_infer_ctx *c)
{
    pg_status st;
    int64_t K = attr_pos(c, "K"), N = attr_pos(c, "N"), wt = attr_pos(c, "wtype");
    if (!pg_qgemv_family((int)wt))
        return FAIL(PG_ERR_UNSUPPORTED, "weight type %lld has no qgemv kernels", (long long)wt);
    int64_t rb = row_bytes((int)wt, K);
    if (K <= 0 || N <= 0 || rb < 0 || K % (int64_t)pg_qweights_k_multiple((int)wt))
        return FAIL(PG_ERR_SHAPE, "K %lld, N %lld do not fit type %s", (long long)K, (long long)N,
                    pg_ggml_traits((int)wt)->name);
    int at = pg_qgemv_act_type((int)wt);
    if (at == PG_GGML_F32)
        st = need_rows(c, 0, PG_DTYPE_FLOAT32, K);
    else
        st = need_rows(c, 0, PG_DTYPE_UINT8, row_bytes(at, K));
    if (st || (st = need_rows(c, 1, PG_DTYPE_UINT8, rb)) || (st = need_ctl(c, 2)))
        return st;
    if (c->in[1]->shape[0] != N)
        return FAIL(PG_ERR_SHAPE, "weight '%s' has %lld rows, N is %lld", c->in[1]->name,
                    (long long)c->in[1]->shape[0], (long long)N);
    int64_t shape[2] = { c->in[0]->shape[0], N };
    pg_infer_set_out(c, 0, PG_DTYPE_FLOAT32, 2, shape);
    return PG_OK;
}

pg_status pg_infer_llm_rotary(pg_infer_ctx *c)
{
    pg_status st;
    int64_t H = attr_pos(c, "heads"), hd = attr_pos(c, "head_dim"), nr = attr_pos(c, "n_rot");
    if (H <= 0 || hd <= 0 || nr <= 0 || nr % 2 || nr > hd)
        return FAIL(PG_ERR_SHAPE, "heads %lld, head_dim %lld, n_rot %lld: n_rot must be even and "
                    "at most head_dim", (long long)H, (long long)hd, (long long)nr);
    if ((st = need_rows(c, 0, PG_DTYPE_FLOAT32, H * hd)) ||
        (st = need_rows(c, 1, PG_DTYPE_FLOAT32, nr / 2)) ||
        (st = need_rows(c, 2, PG_DTYPE_FLOAT32, nr / 2)) || (st = need_ctl(c, 3)))
        return st;
    if (c->in[1]->shape[0] != c->in[2]->shape[0])
        return FAIL(PG_ERR_SHAPE, "cos '%s' and sin '%s' differ in positions", c->in[1]->name,
                    c->in[2]->name);
    pg_infer_set_out(c, 0, PG_DTYPE_FLOAT32, 2, c->in[0]->shape);
    return PG_OK;
}

pg_status pg_infer_kv_cache(pg_infer_ctx *c)
{
    int64_t P = attr_pos(c, "positions"), W = attr_pos(c, "width");
    if (P <= 0 || W <= 0)
        return FAIL(PG_ERR_SHAPE, "positions %lld and width %lld must be positive", (long long)P,
                    (long long)W);
    int64_t shape[2] = { P, W };
    pg_infer_set_out(c, 0, pg_ir_attr_int(c->n, "f16", 0) ? PG_DTYPE_FLOAT16 : PG_DTYPE_FLOAT32, 2, shape);
    return PG_OK;
}

pg_status pg_infer_kv_write(pg_infer_ctx *c)
{
    pg_status st;
    pg_dtype dt = c->in[0]->dtype == PG_DTYPE_FLOAT16 ? PG_DTYPE_FLOAT16 : PG_DTYPE_FLOAT32;
    if ((st = need_rows(c, 0, dt, -1)) || (st = need_rows(c, 1, PG_DTYPE_FLOAT32, c->in[0]->shape[1])) ||
        (st = need_ctl(c, 2)))
        return st;
    if (c->in[1]->shape[0] > c->in[0]->shape[0])
        return FAIL(PG_ERR_SHAPE, "%lld rows do not fit a cache of %lld positions",
                    (long long)c->in[1]->shape[0], (long long)c->in[0]->shape[0]);
    pg_infer_set_out(c, 0, dt, 2, c->in[0]->shape);
    return PG_OK;
}

pg_status pg_infer_kv_read(pg_infer_ctx *c)
{
    pg_status st;
    if ((st = need_rows(c, 0, PG_DTYPE_FLOAT16, -1)) || (st = need_ctl(c, 1)))
        return st;
    pg_infer_set_out(c, 0, PG_DTYPE_FLOAT32, 2, c->in[0]->shape);
    return PG_OK;
}

pg_status pg_infer_cached_attention(pg_infer_ctx *c)
{
    pg_status st;
    int64_t H = attr_pos(c, "n_head"), Hk = attr_pos(c, "n_head_kv"), hd = attr_pos(c, "head_dim");
    if (H <= 0 || Hk <= 0 || H % Hk || hd < 16 || hd > 256)
        return FAIL(PG_ERR_SHAPE, "n_head %lld, n_head_kv %lld, head_dim %lld: n_head must be a "
                    "multiple of n_head_kv, head_dim 16..256", (long long)H, (long long)Hk,
                    (long long)hd);
    if ((st = need_rows(c, 0, PG_DTYPE_FLOAT32, H * hd)) ||
        (st = need_rows(c, 1, PG_DTYPE_FLOAT32, Hk * hd)) ||
        (st = need_rows(c, 2, PG_DTYPE_FLOAT32, Hk * hd)) || (st = need_ctl(c, 3)))
        return st;
    if (c->in[1]->shape[0] != c->in[2]->shape[0])
        return FAIL(PG_ERR_SHAPE, "the K and V caches differ in positions");
    pg_infer_set_out(c, 0, PG_DTYPE_FLOAT32, 2, c->in[0]->shape);
    return PG_OK;
}

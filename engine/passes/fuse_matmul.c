/* fuse_matmul.c - MatMul epilogues and QKV projections.
 *
 * matmul_epilogue_fusion:
 *   MatMul(A, W) -> Add(bias) [-> Relu | Gelu | Sigmoid | Tanh | SiLU]
 *   -> FusedMatMul(A, W, bias) with activation
 * when W is a constant 2-D float32 [K, N] and the bias a constant of N
 * elements applying per column (shape [N], [1, N], ...).  A MatMul with a
 * constant weight followed directly by an activation fuses the same way
 * without a bias.  Every intermediate must be read only by the next node.
 *
 *   Gemm(A [M,K], B constant, C constant per column | none) [-> activation]
 *   -> FusedMatMul(A, W, bias)
 * with transA = 0 and any transB, alpha, beta: W = alpha * op(B) [K, N] and
 * bias = beta * C are new constants made here when they differ from B and C
 * (a transB = 1 weight is transposed once now; weight_prepack then packs
 * it, instead of the Gemm executor re-packing B^T on every run).
 *
 * qkv_fusion:
 *   three MatMul / FusedMatMul reading the same A with constant [K, Ni]
 *   weights (the same K, the same activation and alpha)
 *   -> one QKVMatMul(A, [Wq | Wk | Wv], [bq | bk | bv]) whose three outputs
 *      are the old ones (the planner lays them out as views of one block).
 * A missing bias next to present ones becomes zeros.  When an input feeds
 * more than three such products (rare), the first three in node order are
 * taken.  One product of [K, Nq+Nk+Nv] read only by a Split of its last
 * axis into three (GPT-2's c_attn) becomes a QKVMatMul the same way.  An
 * MLP's gate/up pair, Mul(act(A Wg + bg), A Wu + bu), becomes one
 * FusedMatMul(A, [Wg | Wu], [bg | bu]) with gated = 1 (try_gate_up).
 *
 * Also in matmul_epilogue_fusion: a FusedMatMul on rows flattened by a
 * Reshape and unflattened by another (Gemm on [B*S, K]) takes the rows
 * unflattened, and an activation after it then joins its epilogue. */
#include <stdio.h>
#include <string.h>

#include "../core/alloc.h"
#include "../exec/weight_cache.h"
#include "match.h"
#include "pass.h"

/* W is a constant 2-D float32 row-major weight: its [K, N]. */
static int const_weight(const pg_graph *g, int w, int64_t *K, int64_t *N)
{
    const pg_tensor *t = pm_tensor(g, w);
    if (!pm_const_f32(g, w) || t->rank != 2)
        return 0;
    *K = t->shape[0];
    *N = t->shape[1];
    return 1;
}

/* bias: a float32 constant of N elements, all in its last dim. */
static int col_bias(const pg_graph *g, int b, int64_t N)
{
    const pg_tensor *t = pm_tensor(g, b);
    if (!pm_const_f32(g, b) || t->rank < 1 || t->shape[t->rank - 1] != N ||
        pg_tensor_numel(t) != N)
        return 0;
    return 1;
}

static const char *act_name(const pg_node *n)
{
    switch (n->op) {
    case PG_OP_RELU: return "relu";
    case PG_OP_SIGMOID: return "sigmoid";
    case PG_OP_TANH: return "tanh";
    case PG_OP_SILU: return "silu";
    case PG_OP_GELU: {
        const char *a = pg_ir_attr_string(n, "approximate", "none");
        return !strcmp(a, "tanh") ? "gelu_tanh" : !strcmp(a, "none") ? "gelu" : NULL;
    }
    default: return NULL;
    }
}

static int try_epilogue(pg_graph *g, pg_pass_ctx *c, pg_node *mm)
{
    int64_t K, N;
    if (mm->n_inputs != 2 || !const_weight(g, mm->inputs[1], &K, &N))
        return 0;
    const pg_tensor *a = pm_tensor(g, mm->inputs[0]);
    if (!a || a->rank < 2 || a->dtype != PG_DTYPE_FLOAT32)
        return 0;
    int nodes[3] = { mm->id }, n = 1, out = mm->outputs[0], bias = -1;
    pg_node *add = pm_sole_consumer(g, out, PG_OP_ADD);
    if (add) {
        int b = pm_other_input(add, out);
        /* the Add must not broadcast the product up to a bigger shape */
        if (col_bias(g, b, N) && g->tensors[b]->rank <= g->tensors[add->outputs[0]]->rank &&
            pm_same_shape(g->tensors[out], g->tensors[add->outputs[0]])) {
            bias = b;
            nodes[n++] = add->id;
            out = add->outputs[0];
        }
    }
    const char *act = "none";
    pg_node *an = pm_sole_consumer(g, out, PG_OP_UNKNOWN);
    if (an && an->n_inputs == 1 && act_name(an)) {
        act = act_name(an);
        nodes[n++] = an->id;
        out = an->outputs[0];
    }
    if (n == 1)
        return 0;   /* nothing to fuse */
    int ins[3] = { mm->inputs[0], mm->inputs[1], bias };
    int f = pg_pass_fuse(c, g, nodes, n, "FusedMatMul", "fmm", ins, bias >= 0 ? 3 : 2, &out, 1);
    if (f < 0)
        return -1;
    pg_ir_set_attr_string(g->nodes[f], "activation", act);
    return 1;
}

/* A new float32 constant named after `like` holding `data` (copied). */
static int new_const(pg_graph *g, const char *like, const char *suffix, int rank, const int64_t *shape,
                     const float *data, size_t count)
{
    char base[96], name[96];
    snprintf(base, sizeof base, "%s_%s", like, suffix);
    pg_ir_unique_name(g, base, name, sizeof name);
    int t = pg_ir_add_const(g, name, PG_DTYPE_FLOAT32, rank, shape, NULL);
    if (t >= 0)
        memcpy(g->tensors[t]->data, data, sizeof(float) * count);
    return t;
}

static int try_gemm(pg_graph *g, pg_pass_ctx *c, pg_node *gm)
{
    int64_t R, Cc;
    if (gm->n_inputs < 2 || gm->n_inputs > 3 || pg_ir_attr_int(gm, "transA", 0) ||
        !const_weight(g, gm->inputs[1], &R, &Cc))
        return 0;
    const pg_tensor *a = pm_tensor(g, gm->inputs[0]), *y = pm_tensor(g, gm->outputs[0]);
    if (!a || a->rank != 2 || a->dtype != PG_DTYPE_FLOAT32 || !y || y->rank != 2)
        return 0;
    int tb = pg_ir_attr_int(gm, "transB", 0) != 0;
    int64_t K = tb ? Cc : R, N = tb ? R : Cc;
    float alpha = pg_ir_attr_float(gm, "alpha", 1.0f), beta = pg_ir_attr_float(gm, "beta", 1.0f);
    int cin = gm->n_inputs > 2 ? gm->inputs[2] : -1;
    if (cin >= 0 && (!col_bias(g, cin, N) || g->tensors[cin]->rank > 2))
        return 0;   /* a C varying along the rows is no per-column bias */
    if (a->shape[1] != K || y->shape[1] != N)
        return 0;
    /* the activation after it, read only by it */
    int nodes[2] = { gm->id }, n = 1, out = gm->outputs[0];
    const char *act = "none";
    pg_node *an = pm_sole_consumer(g, out, PG_OP_UNKNOWN);
    if (an && an->n_inputs == 1 && act_name(an)) {
        act = act_name(an);
        nodes[n++] = an->id;
        out = an->outputs[0];
    }
    int w = gm->inputs[1], bias = cin >= 0 && beta != 0.0f ? cin : -1;
    const pg_tensor *bt = g->tensors[w];
    if (tb || alpha != 1.0f) {
        size_t cnt = (size_t)(K * N);
        float *tmp = pg_malloc(sizeof(float) * (cnt ? cnt : 1));
        if (!tmp)
            return pg_fail(PG_ERR_NOMEM, "out of memory transposing Gemm weight '%s'", bt->name), -1;
        const float *src = bt->data;
        for (int64_t k = 0; k < K; k++)
            for (int64_t j = 0; j < N; j++)
                tmp[k * N + j] = alpha * (tb ? src[j * K + k] : src[k * N + j]);
        int64_t shape[2] = { K, N };
        w = new_const(g, bt->name, tb ? "t" : "scaled", 2, shape, tmp, cnt);
        pg_free(tmp);
        if (w < 0)
            return -1;
    }
    if (bias >= 0 && beta != 1.0f) {
        const pg_tensor *ct = g->tensors[bias];
        float *tmp = pg_malloc(sizeof(float) * (size_t)(N ? N : 1));
        if (!tmp)
            return pg_fail(PG_ERR_NOMEM, "out of memory scaling Gemm bias '%s'", ct->name), -1;
        for (int64_t j = 0; j < N; j++)
            tmp[j] = beta * ((const float *)ct->data)[j];
        bias = new_const(g, ct->name, "scaled", 1, &N, tmp, (size_t)N);
        pg_free(tmp);
        if (bias < 0)
            return -1;
    }
    char gname[96];
    snprintf(gname, sizeof gname, "%s", gm->name);
    int ins[3] = { gm->inputs[0], w, bias };
    int f = pg_pass_fuse(c, g, nodes, n, "FusedMatMul", "fmm", ins, bias >= 0 ? 3 : 2, &out, 1);
    if (f < 0)
        return -1;
    pg_ir_set_attr_string(g->nodes[f], "activation", act);
    if (tb || alpha != 1.0f || (bias >= 0 && beta != 1.0f))
        pg_pass_note(c, g, PG_PASS_REWRITTEN, f, 1,
                     "Gemm '%s' (transB=%d, alpha=%g, beta=%g): weight '%s' [%lld x %lld] made once "
                     "at compile time%s, so it can be packed", gname, tb, (double)alpha, (double)beta,
                     g->tensors[w]->name, (long long)K, (long long)N,
                     tb ? " as B^T" : "");
    return 1;
}

/* FusedMatMul(Reshape(X [d0..dr-2, K] -> [M, K]), W) -> Reshape [d0..dr-2, N]
 * (a Gemm or a Conv1D-style MatMul on the flattened rows, as GPT-2 and the
 * TorchScript exporter write a Linear) -> FusedMatMul(X, W) with the output
 * [d0..dr-2, N] straight away: the product reads the same rows either way,
 * and an activation after the second Reshape can then join the epilogue.
 * The leading Reshape goes too when only the product reads it. */
static int try_unflatten(pg_graph *g, pg_pass_ctx *c, pg_node *fm)
{
    int64_t K, N;
    if (fm->n_inputs < 2 || !const_weight(g, fm->inputs[1], &K, &N))
        return 0;
    int a = fm->inputs[0];
    pg_node *r1 = pm_producer(g, a, PG_OP_RESHAPE);
    pg_node *r2 = pm_sole_consumer(g, fm->outputs[0], PG_OP_RESHAPE);
    if (!r1 || !r2 || r2->inputs[0] != fm->outputs[0])
        return 0;
    const pg_tensor *x = pm_tensor(g, r1->inputs[0]), *at = pm_tensor(g, a),
                    *y = pm_tensor(g, r2->outputs[0]);
    if (!x || !at || !y || x->dtype != PG_DTYPE_FLOAT32 || x->rank < 3 || at->rank != 2 ||
        y->rank != x->rank || x->shape[x->rank - 1] != K || y->shape[y->rank - 1] != N)
        return 0;
    int64_t M = 1;
    for (int d = 0; d < x->rank - 1; d++) {
        if (x->shape[d] < 0 || x->shape[d] != y->shape[d])
            return 0;
        M *= x->shape[d];
    }
    if (at->shape[0] != M || at->shape[1] != K)
        return 0;
    int nodes[3], n = 0;
    if (pm_uses(g, a) == 1)
        nodes[n++] = r1->id;
    nodes[n++] = fm->id;
    nodes[n++] = r2->id;
    char act[32];
    snprintf(act, sizeof act, "%s", pg_ir_attr_string(fm, "activation", "none"));
    float alpha = pg_ir_attr_float(fm, "alpha", 1.0f);
    int ins[3] = { x->id, fm->inputs[1], fm->n_inputs > 2 ? fm->inputs[2] : -1 }, out = y->id;
    int f = pg_pass_fuse(c, g, nodes, n, "FusedMatMul", "fmm", ins, ins[2] >= 0 ? 3 : 2, &out, 1);
    if (f < 0)
        return -1;
    pg_ir_set_attr_string(g->nodes[f], "activation", act);
    if (alpha != 1.0f)
        pg_ir_set_attr_float(g->nodes[f], "alpha", alpha);
    return 1;
}

/* FusedMatMul(activation none) -> activation, read only by it: the
 * activation joins the epilogue (after a Gemm or an unflattened product). */
static int try_late_act(pg_graph *g, pg_pass_ctx *c, pg_node *fm)
{
    if (strcmp(pg_ir_attr_string(fm, "activation", "none"), "none") ||
        pg_ir_attr_float(fm, "alpha", 1.0f) != 1.0f)
        return 0;
    pg_node *an = pm_sole_consumer(g, fm->outputs[0], PG_OP_UNKNOWN);
    if (!an || an->n_inputs != 1 || !act_name(an))
        return 0;
    const char *act = act_name(an);
    int nodes[2] = { fm->id, an->id }, out = an->outputs[0];
    int ins[3] = { fm->inputs[0], fm->inputs[1], fm->n_inputs > 2 ? fm->inputs[2] : -1 };
    int f = pg_pass_fuse(c, g, nodes, 2, "FusedMatMul", "fmm", ins, ins[2] >= 0 ? 3 : 2, &out, 1);
    if (f < 0)
        return -1;
    pg_ir_set_attr_string(g->nodes[f], "activation", act);
    return 1;
}

static pg_status run_epilogue(pg_graph *g, pg_pass_ctx *c)
{
    pg_status st = pg_pass_need_shapes(g, c);
    if (st)
        return st;
    int n0 = g->n_nodes;
    for (int id = 0; id < n0; id++)
        if (g->nodes[id] && g->nodes[id]->op == PG_OP_MATMUL && try_epilogue(g, c, g->nodes[id]) < 0)
            return pg_last_status();
    for (int id = 0; id < n0; id++)
        if (g->nodes[id] && g->nodes[id]->op == PG_OP_GEMM && try_gemm(g, c, g->nodes[id]) < 0)
            return pg_last_status();
    if ((st = pg_pass_need_shapes(g, c)))
        return st;
    n0 = g->n_nodes;
    for (int id = 0; id < n0; id++)
        if (g->nodes[id] && g->nodes[id]->op == PG_OP_FUSED_MATMUL &&
            try_unflatten(g, c, g->nodes[id]) < 0)
            return pg_last_status();
    if ((st = pg_pass_need_shapes(g, c)))
        return st;
    n0 = g->n_nodes;
    for (int id = 0; id < n0; id++)
        if (g->nodes[id] && g->nodes[id]->op == PG_OP_FUSED_MATMUL &&
            try_late_act(g, c, g->nodes[id]) < 0)
            return pg_last_status();
    return PG_OK;
}

/* ---- QKV ----------------------------------------------------------------- */

typedef struct proj {
    pg_node *n;
    int64_t  K, N;
    int      bias;   /* tensor id or -1 */
} proj;

static int as_proj(const pg_graph *g, pg_node *n, int a, proj *p)
{
    if (n->op != PG_OP_MATMUL && n->op != PG_OP_FUSED_MATMUL)
        return 0;
    if (n->n_inputs < 2 || n->inputs[0] != a || n->inputs[1] == a || n->n_outputs != 1)
        return 0;
    if (!const_weight(g, n->inputs[1], &p->K, &p->N))
        return 0;
    p->n = n;
    p->bias = n->n_inputs > 2 ? n->inputs[2] : -1;
    if (p->bias >= 0 && !col_bias(g, p->bias, p->N))
        return 0;
    return 1;
}

static int same_epilogue(const pg_node *a, const pg_node *b)
{
    return !strcmp(pg_ir_attr_string(a, "activation", "none"),
                   pg_ir_attr_string(b, "activation", "none")) &&
           pg_ir_attr_float(a, "alpha", 1.0f) == pg_ir_attr_float(b, "alpha", 1.0f);
}

/* The origin key (exec/weight_cache.h) of the weight that puts the
 * [K, N_i] weights of the products p[0..n) side by side, or 0 unless each
 * has one. */
static uint64_t side_by_side_key(const pg_graph *g, const proj *p, int n, int64_t K)
{
    uint64_t h = pg_key_mix(0x636f6e636174ull /* "concat" */, (uint64_t)K);
    for (int i = 0; i < n; i++) {
        const pg_tensor *w = g->tensors[p[i].n->inputs[1]];
        if (!w->origin)
            return 0;
        h = pg_key_mix(pg_key_mix(h, w->origin), (uint64_t)p[i].N);
    }
    return h;
}

static int try_qkv(pg_graph *g, pg_pass_ctx *c, int a)
{
    const pg_tensor *at = pm_tensor(g, a);
    if (!at || at->dtype != PG_DTYPE_FLOAT32 || at->rank < 2)
        return 0;
    proj p[3];
    int np = 0;
    /* the projections are among a's readers (in node-id order) */
    const pg_tensor *tt = g->tensors[a];
    for (int u = 0; u < tt->n_users && np < 3; u++) {
        if (u && tt->users[u] == tt->users[u - 1])
            continue;
        pg_node *n = g->nodes[tt->users[u]];
        proj q;
        if (!as_proj(g, n, a, &q))
            continue;
        if (np && (q.K != p[0].K || !same_epilogue(p[0].n, q.n)))
            continue;
        p[np++] = q;
    }
    if (np < 3)
        return 0;
    int64_t K = p[0].K, Nt = p[0].N + p[1].N + p[2].N;
    char wname[96], bname[96];
    pg_ir_unique_name(g, "qkv_weight", wname, sizeof wname);
    int64_t wshape[2] = { K, Nt };
    int w = pg_ir_add_const(g, wname, PG_DTYPE_FLOAT32, 2, wshape, NULL);
    if (w < 0)
        return -1;
    float *wd = g->tensors[w]->data;
    int64_t c0 = 0;
    for (int i = 0; i < 3; i++) {
        const float *src = g->tensors[p[i].n->inputs[1]]->data;
        for (int64_t k = 0; k < K; k++)
            memcpy(wd + k * Nt + c0, src + k * p[i].N, sizeof(float) * (size_t)p[i].N);
        c0 += p[i].N;
    }
    g->tensors[w]->origin = side_by_side_key(g, p, 3, K);
    int b = -1;
    if (p[0].bias >= 0 || p[1].bias >= 0 || p[2].bias >= 0) {
        pg_ir_unique_name(g, "qkv_bias", bname, sizeof bname);
        b = pg_ir_add_const(g, bname, PG_DTYPE_FLOAT32, 1, &Nt, NULL);   /* zero-filled */
        if (b < 0)
            return -1;
        float *bd = g->tensors[b]->data;
        c0 = 0;
        for (int i = 0; i < 3; i++) {
            if (p[i].bias >= 0)
                memcpy(bd + c0, g->tensors[p[i].bias]->data, sizeof(float) * (size_t)p[i].N);
            c0 += p[i].N;
        }
    }
    char act[32];
    snprintf(act, sizeof act, "%s", pg_ir_attr_string(p[0].n, "activation", "none"));
    float alpha = pg_ir_attr_float(p[0].n, "alpha", 1.0f);
    int nodes[3] = { p[0].n->id, p[1].n->id, p[2].n->id };
    int outs[3] = { p[0].n->outputs[0], p[1].n->outputs[0], p[2].n->outputs[0] };
    int64_t splits[3] = { p[0].N, p[1].N, p[2].N };
    int ins[3] = { a, w, b };
    int f = pg_pass_fuse(c, g, nodes, 3, "QKVMatMul", "qkv", ins, b >= 0 ? 3 : 2, outs, 3);
    if (f < 0)
        return -1;
    pg_ir_set_attr_ints(g->nodes[f], "splits", splits, 3);
    pg_ir_set_attr_string(g->nodes[f], "activation", act);
    if (alpha != 1.0f)
        pg_ir_set_attr_float(g->nodes[f], "alpha", alpha);
    return 1;
}

/* MatMul / FusedMatMul(A, W [K, N]) -> Split(last axis, 3 parts), the
 * product read only by the Split (GPT-2's c_attn: one Conv1D for Q, K and
 * V) -> QKVMatMul(A, W, b) with the Split's outputs: no weight copy, and
 * the three parts come out as separate tensors instead of being cut from
 * one. */
static int try_split_qkv(pg_graph *g, pg_pass_ctx *c, pg_node *sp)
{
    if (sp->n_outputs != 3)
        return 0;
    int y = sp->inputs[0];
    pg_node *mm = pm_producer(g, y, PG_OP_UNKNOWN);
    const pg_tensor *yt = pm_tensor(g, y);
    if (!mm || !yt || (mm->op != PG_OP_MATMUL && mm->op != PG_OP_FUSED_MATMUL) ||
        pm_uses(g, y) != 1 || yt->rank < 2)
        return 0;
    int64_t axis = pg_ir_attr_int(sp, "axis", 0);
    if (axis != -1 && axis != yt->rank - 1)
        return 0;
    proj p;
    if (!as_proj(g, mm, mm->inputs[0], &p))
        return 0;
    int64_t splits[3], sum = 0;
    for (int i = 0; i < 3; i++) {
        const pg_tensor *o = pm_tensor(g, sp->outputs[i]);
        if (!o || o->rank != yt->rank)
            return 0;
        for (int d = 0; d < yt->rank - 1; d++)
            if (o->shape[d] != yt->shape[d])
                return 0;
        splits[i] = o->shape[o->rank - 1];
        if (splits[i] <= 0)
            return 0;
        sum += splits[i];
    }
    if (sum != p.N)
        return 0;
    char act[32];
    snprintf(act, sizeof act, "%s", pg_ir_attr_string(mm, "activation", "none"));
    float alpha = pg_ir_attr_float(mm, "alpha", 1.0f);
    int nodes[2] = { mm->id, sp->id };
    int outs[3] = { sp->outputs[0], sp->outputs[1], sp->outputs[2] };
    int ins[3] = { mm->inputs[0], mm->inputs[1], p.bias };
    int f = pg_pass_fuse(c, g, nodes, 2, "QKVMatMul", "qkv", ins, p.bias >= 0 ? 3 : 2, outs, 3);
    if (f < 0)
        return -1;
    pg_ir_set_attr_ints(g->nodes[f], "splits", splits, 3);
    pg_ir_set_attr_string(g->nodes[f], "activation", act);
    if (alpha != 1.0f)
        pg_ir_set_attr_float(g->nodes[f], "alpha", alpha);
    return 1;
}

/* Mul(act(A Wg + bg), A Wu + bu) - an MLP's gate and up projections
 * (Llama / Qwen2: down(silu(gate(x)) * up(x))), the gate a FusedMatMul
 * with an activation, the up product with none, both of the same A with
 * constant [K, F] weights and read only by the Mul, whose output has their
 * shape -> one FusedMatMul(A, [Wg | Wu], [bg | bu]) with gated = 1: one
 * packed product of 2F columns instead of two, the Mul in its epilogue. */
static int try_gate_up(pg_graph *g, pg_pass_ctx *c, pg_node *mul)
{
    if (mul->n_inputs != 2 || mul->n_outputs != 1 || mul->inputs[0] == mul->inputs[1])
        return 0;
    const pg_tensor *yt = pm_tensor(g, mul->outputs[0]);
    if (!yt || yt->dtype != PG_DTYPE_FLOAT32)
        return 0;
    proj p[2];   /* gate, up */
    int have[2] = { 0, 0 };
    for (int i = 0; i < 2; i++) {
        int t = mul->inputs[i];
        pg_node *n = pm_producer(g, t, PG_OP_UNKNOWN);
        if (!n || pm_uses(g, t) != 1 || !pm_same_shape(pm_tensor(g, t), yt) ||
            pg_ir_attr_int(n, "gated", 0) || pg_ir_attr_float(n, "alpha", 1.0f) != 1.0f)
            return 0;
        proj q;
        if (!as_proj(g, n, n->n_inputs > 0 ? n->inputs[0] : -1, &q))
            return 0;
        int gate = strcmp(pg_ir_attr_string(n, "activation", "none"), "none") != 0;
        if (have[!gate])
            return 0;
        p[!gate] = q;
        have[!gate] = 1;
    }
    if (!have[0] || !have[1] || p[0].n->inputs[0] != p[1].n->inputs[0] || p[0].K != p[1].K ||
        p[0].N != p[1].N)
        return 0;
    int a = p[0].n->inputs[0];
    const pg_tensor *at = pm_tensor(g, a);
    if (!at || at->dtype != PG_DTYPE_FLOAT32)
        return 0;
    int64_t K = p[0].K, F = p[0].N, N2 = 2 * F;
    char wname[96], bname[96];
    pg_ir_unique_name(g, "gate_up_weight", wname, sizeof wname);
    int64_t wshape[2] = { K, N2 };
    int w = pg_ir_add_const(g, wname, PG_DTYPE_FLOAT32, 2, wshape, NULL);
    if (w < 0)
        return -1;
    float *wd = g->tensors[w]->data;
    for (int i = 0; i < 2; i++) {
        const float *src = g->tensors[p[i].n->inputs[1]]->data;
        for (int64_t k = 0; k < K; k++)
            memcpy(wd + k * N2 + i * F, src + k * F, sizeof(float) * (size_t)F);
    }
    g->tensors[w]->origin = side_by_side_key(g, p, 2, K);
    int b = -1;
    if (p[0].bias >= 0 || p[1].bias >= 0) {
        pg_ir_unique_name(g, "gate_up_bias", bname, sizeof bname);
        b = pg_ir_add_const(g, bname, PG_DTYPE_FLOAT32, 1, &N2, NULL);   /* zero-filled */
        if (b < 0)
            return -1;
        float *bd = g->tensors[b]->data;
        for (int i = 0; i < 2; i++)
            if (p[i].bias >= 0)
                memcpy(bd + i * F, g->tensors[p[i].bias]->data, sizeof(float) * (size_t)F);
    }
    char act[32];
    snprintf(act, sizeof act, "%s", pg_ir_attr_string(p[0].n, "activation", "none"));
    int nodes[3] = { p[0].n->id, p[1].n->id, mul->id };
    int ins[3] = { a, w, b };
    int out = mul->outputs[0];
    int f = pg_pass_fuse(c, g, nodes, 3, "FusedMatMul", "gate_up", ins, b >= 0 ? 3 : 2, &out, 1);
    if (f < 0)
        return -1;
    pg_ir_set_attr_string(g->nodes[f], "activation", act);
    pg_ir_set_attr_int(g->nodes[f], "gated", 1);
    return 1;
}

static pg_status run_qkv(pg_graph *g, pg_pass_ctx *c)
{
    pg_status st = pg_pass_need_shapes(g, c);
    if (st)
        return st;
    /* candidate inputs: the A of every product, once each */
    int nt = g->n_tensors;
    for (int t = 0; t < nt; t++) {
        if (!g->tensors[t])
            continue;
        int r;
        /* an input may feed several triples (e.g. 6 products): repeat */
        while ((r = try_qkv(g, c, t)) == 1)
            ;
        if (r < 0)
            return pg_last_status();
    }
    int n0 = g->n_nodes;
    for (int id = 0; id < n0; id++)
        if (g->nodes[id] && g->nodes[id]->op == PG_OP_SPLIT && try_split_qkv(g, c, g->nodes[id]) < 0)
            return pg_last_status();
    n0 = g->n_nodes;
    for (int id = 0; id < n0; id++)
        if (g->nodes[id] && g->nodes[id]->op == PG_OP_MUL && try_gate_up(g, c, g->nodes[id]) < 0)
            return pg_last_status();
    return PG_OK;
}

const pg_pass_def pg_pass_matmul_epilogue_fusion = {
    "matmul_epilogue_fusion", 2,
    "MatMul(A, const W) + per-column bias (+ Relu/Gelu/...), Gemm(A, const B, C) -> FusedMatMul",
    run_epilogue,
};

const pg_pass_def pg_pass_qkv_fusion = {
    "qkv_fusion", 2,
    "three projections of one input with constant weights -> one QKVMatMul over [Wq|Wk|Wv]; "
    "an MLP's gate/up pair Mul(act(A Wg), A Wu) -> one gated FusedMatMul over [Wg|Wu]",
    run_qkv,
};

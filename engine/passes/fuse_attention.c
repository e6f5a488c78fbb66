/* fuse_attention.c - scaled dot-product attention collapsed into one
 * FusedAttention node (BERT, as torch.onnx.export writes it):
 *
 *   Q [B,H,Sq,D]    K [B,H,Sk,D] -> Transpose(0,1,3,2) -> K^T     (or K^T
 *        \                                 /                     straight from
 *         +-------- MatMul ---------------+                      a head-split
 *                     |                                          Transpose
 *          Div(c) | Mul(c) | nothing                             0,2,3,1)
 *                     |
 *              Add(mask) | nothing
 *                     |
 *                 Softmax(-1)         V [B,H,Sk,Dv]
 *                     \                  /
 *                      +---- MatMul ----+ -> O [B,H,Sq,Dv]
 *
 *   -> FusedAttention(Q, K, V, mask) with scale = 1/c (or c), k_transposed
 *      1 when K^T came ready-made, and num_heads = H for the record.
 *
 * A Mul of Q by a constant read only by the product (the pre-scaled query
 * some exporters write) is absorbed into the scale too, and so is one of
 * K^T (transformers 5 scales both sides by sqrt(1/sqrt(D))).
 *
 * The forms transformers 5 exports (TorchScript and dynamo) add:
 *   - K^T as Reshape [B*H,S,D] -> Transpose(0,2,1) -> Reshape [B,H,D,S]
 *     (dynamo), taken as the swap of K's last two dims;
 *   - Where(IsNaN(P), 0, P) after the softmax -> nan_to_zero = 1;
 *   - repeat_kv for grouped-query attention, Unsqueeze(2) -> Expand ->
 *     Reshape of K and V from Hkv to H heads: the fused node reads the Hkv
 *     heads (the executor maps query head h to K/V head h / (H/Hkv));
 *   - the head merge straight to [B*Sq, H*Dv] rows (GPT-2's c_proj input):
 *     the fused node writes [B,Sq,H*Dv] and the Reshape stays, a view.
 * The additive mask is whatever the graph computes (padding, a folded
 * causal triangle, both combined by Where(.., 0, finfo.min)): it stays
 * outside, as the fused node's mask input.  Two additive terms in a row
 * (MPNet's relative position bias, then the padding mask:
 * Add(Add(scores, bias), mask)) become one, an Add(bias, mask) left
 * outside as the fused node's mask, when their sum broadcasts to the
 * scores without growing them.
 *
 * The head split and merge around it go too when all four are there:
 *
 *   X [B,S,H*D] -> Reshape [B,S,H,D] -> Transpose(0,2,1,3) -> Q, V
 *                                       (0,2,3,1 for a K^T, 0,2,1,3 for K)
 *   O -> Transpose(0,2,1,3) -> Reshape [B,Sq,H*Dv] -> Y
 *
 *   -> FusedAttention(Xq, Xk, Xv, mask) -> Y with qkv_layout = "bshd":
 *      the executor reads head h of each row at column h*D of the unsplit
 *      rows (a row stride of H*D) and writes O the same way, so the four
 *      Transposes (each a copy of a whole activation) never run.  Only all
 *      four together: a partial match keeps the head layout.
 * Preconditions: every intermediate read once; the mask a float32 or bool
 * tensor broadcasting to [B,H,Sq,Sk] without growing the scores. */
#include <math.h>
#include <stdio.h>

#include "match.h"
#include "pass.h"

static int is_swap_last2(const pg_graph *g, const pg_node *tr)
{
    const pg_tensor *x = pm_tensor(g, tr->inputs[0]);
    int np = 0;
    const int64_t *p = pg_ir_attr_ints(tr, "perm", &np);
    if (!x || x->rank != 4 || !p || np != 4)
        return 0;
    return p[0] == 0 && p[1] == 1 && p[2] == 3 && p[3] == 2;
}

static int perm_is(const pg_node *tr, int a, int b, int c, int d)
{
    int np = 0;
    const int64_t *p = pg_ir_attr_ints(tr, "perm", &np);
    return p && np == 4 && p[0] == a && p[1] == b && p[2] == c && p[3] == d;
}

/* t = Transpose(perm)(Reshape(X [B,S,H*D] -> [B,S,H,D])), both read once:
 * X in *src, the two nodes (data order) in nodes. */
static int head_split(const pg_graph *g, int t, int p3, int p4, int *src, int nodes[2])
{
    pg_node *tr = pm_producer(g, t, PG_OP_TRANSPOSE);
    if (!tr || pm_uses(g, t) != 1 || !perm_is(tr, 0, 2, p3, p4))
        return 0;
    int r4 = tr->inputs[0];
    pg_node *rs = pm_producer(g, r4, PG_OP_RESHAPE);
    if (!rs || pm_uses(g, r4) != 1)
        return 0;
    const pg_tensor *x = pm_tensor(g, rs->inputs[0]), *y = pm_tensor(g, r4);
    if (!x || !y || x->rank != 3 || y->rank != 4 || x->dtype != PG_DTYPE_FLOAT32 ||
        x->shape[0] != y->shape[0] || x->shape[1] != y->shape[1] ||
        x->shape[2] != y->shape[2] * y->shape[3])
        return 0;
    *src = x->id;
    nodes[0] = rs->id;
    nodes[1] = tr->id;
    return 1;
}

/* O -> Transpose(0,2,1,3) -> Reshape [B,Sq,H*Dv], each read once: the
 * Reshape's output in *dst.  A Reshape straight to [B*Sq, H*Dv] (GPT-2's
 * c_proj takes flattened rows) merges the same way but stays, reading the
 * fused output: *flat_reshape is then that Reshape's node id (else -1). */
static int head_merge(const pg_graph *g, int o, int *dst, int nodes[2], int *flat_reshape)
{
    *flat_reshape = -1;
    pg_node *tr = pm_sole_consumer(g, o, PG_OP_TRANSPOSE);
    if (!tr || !perm_is(tr, 0, 2, 1, 3))
        return 0;
    pg_node *rs = pm_sole_consumer(g, tr->outputs[0], PG_OP_RESHAPE);
    if (!rs || rs->inputs[0] != tr->outputs[0])
        return 0;
    const pg_tensor *x = pm_tensor(g, tr->outputs[0]), *y = pm_tensor(g, rs->outputs[0]);
    if (!x || !y || x->rank != 4)
        return 0;
    if (y->rank == 2 && x->shape[0] >= 0 && x->shape[1] >= 0 &&
        y->shape[0] == x->shape[0] * x->shape[1] && y->shape[1] == x->shape[2] * x->shape[3]) {
        *dst = -1;
        *flat_reshape = rs->id;
        nodes[0] = tr->id;
        nodes[1] = -1;
        return 1;
    }
    if (y->rank != 3 || y->shape[0] != x->shape[0] ||
        y->shape[1] != x->shape[1] || y->shape[2] != x->shape[2] * x->shape[3])
        return 0;
    *dst = y->id;
    nodes[0] = tr->id;
    nodes[1] = rs->id;
    return 1;
}

/* KT = Reshape(Transpose(0,2,1)(Reshape(K [B,H,S,D] -> [B*H,S,D]))) ->
 * [B,H,D,S] (the dynamo exporter's K^T), each read once: K in *k, the
 * three nodes (data order) in nodes. */
static int swap_last2_chain(const pg_graph *g, int kt, int *k, int nodes[3])
{
    pg_node *r2 = pm_producer(g, kt, PG_OP_RESHAPE);
    if (!r2 || pm_uses(g, kt) != 1)
        return 0;
    int t3 = r2->inputs[0];
    pg_node *tr = pm_producer(g, t3, PG_OP_TRANSPOSE);
    int np = 0;
    const int64_t *p = tr ? pg_ir_attr_ints(tr, "perm", &np) : NULL;
    if (!tr || pm_uses(g, t3) != 1 || !p || np != 3 || p[0] != 0 || p[1] != 2 || p[2] != 1)
        return 0;
    int t1 = tr->inputs[0];
    pg_node *r1 = pm_producer(g, t1, PG_OP_RESHAPE);
    if (!r1 || pm_uses(g, t1) != 1)
        return 0;
    const pg_tensor *x = pm_tensor(g, r1->inputs[0]), *a = pm_tensor(g, t1),
                    *y = pm_tensor(g, kt);
    if (!x || !a || !y || (x->rank != 4 && x->rank != 5) || a->rank != 3 || y->rank != 4 ||
        x->dtype != PG_DTYPE_FLOAT32)
        return 0;
    for (int d = 0; d < x->rank; d++)
        if (x->shape[d] < 0)
            return 0;
    /* K [B,H,S,D], or [B,Hkv,g,S,D] (repeat_kv's Expand, before its Reshape) */
    int r = x->rank;
    int64_t BH = x->shape[0] * x->shape[1] * (r == 5 ? x->shape[2] : 1), S = x->shape[r - 2],
            D = x->shape[r - 1];
    if (a->shape[0] != BH || a->shape[1] != S || a->shape[2] != D || y->shape[0] != x->shape[0] ||
        y->shape[0] * y->shape[1] != BH || y->shape[2] != D || y->shape[3] != S)
        return 0;
    *k = x->id;
    nodes[0] = r1->id;
    nodes[1] = tr->id;
    nodes[2] = r2->id;
    return 1;
}

/* t = Mul(u, c) or Mul(c, u) with c a constant scalar, t read once: u, and
 * c in *cst; -1 if not. */
static int scaled_by_const(const pg_graph *g, int t, double *cst, pg_node **mul)
{
    pg_node *m = pm_producer(g, t, PG_OP_MUL);
    if (!m || pm_uses(g, t) != 1 || m->n_inputs != 2)
        return -1;
    const pg_tensor *y = pm_tensor(g, t);
    for (int side = 0; side < 2; side++) {
        const pg_tensor *u = pm_tensor(g, m->inputs[1 - side]);
        if (pm_const_scalar(g, m->inputs[side], cst) && u && pm_same_shape(u, y)) {
            *mul = m;
            return m->inputs[1 - side];
        }
    }
    return -1;
}

/* t = Reshape(Expand(Unsqueeze(X [B,Hkv,S,D] -> [B,Hkv,1,S,D])
 *            -> [B,Hkv,g,S,D]) -> [B,Hkv*g,S,D]), each read once
 * (transformers' repeat_kv: grouped-query attention's K/V heads repeated
 * g times, three copies the executor does not need).  The shapes decide it:
 * Unsqueeze and Reshape keep the element order, and Expand's input and
 * output shapes fix what it repeats.  X in *x, the group g returned (0 if
 * not), the nodes (data order) in nodes. */
static int64_t repeat_kv(const pg_graph *g, int t, int *x, int nodes[3])
{
    const pg_tensor *tt = pm_tensor(g, t);
    pg_node *rs = NULL;
    int e = t;   /* a rank-5 t: the Expand's output itself (the Reshape went with K^T) */
    if (!tt || tt->rank != 5) {
        rs = pm_producer(g, t, PG_OP_RESHAPE);
        if (!rs || pm_uses(g, t) != 1)
            return 0;
        e = rs->inputs[0];
    }
    pg_node *ex = pm_producer(g, e, PG_OP_EXPAND);
    if (!ex || pm_uses(g, e) != 1)
        return 0;
    int u = ex->inputs[0];
    pg_node *un = pm_producer(g, u, PG_OP_UNSQUEEZE);
    if (!un || pm_uses(g, u) != 1)
        return 0;
    const pg_tensor *x4 = pm_tensor(g, un->inputs[0]), *u5 = pm_tensor(g, u), *e5 = pm_tensor(g, e),
                    *r4 = pm_tensor(g, t);
    if (!x4 || !u5 || !e5 || !r4 || x4->rank != 4 || u5->rank != 5 || e5->rank != 5 ||
        (rs && r4->rank != 4) || x4->dtype != PG_DTYPE_FLOAT32)
        return 0;
    int64_t B = x4->shape[0], Hkv = x4->shape[1], S = x4->shape[2], D = x4->shape[3], grp = e5->shape[2];
    int64_t want_u[5] = { B, Hkv, 1, S, D }, want_e[5] = { B, Hkv, grp, S, D };
    for (int d = 0; d < 5; d++)
        if (u5->shape[d] != want_u[d] || e5->shape[d] != want_e[d])
            return 0;
    if (grp < 1 || (rs && (r4->shape[0] != B || r4->shape[1] != Hkv * grp || r4->shape[2] != S ||
                           r4->shape[3] != D)))
        return 0;
    *x = x4->id;
    nodes[0] = un->id;
    nodes[1] = ex->id;
    nodes[2] = rs ? rs->id : -1;
    return grp;
}

static int mask_fits(const pg_tensor *m, const pg_tensor *scores)
{
    if (!m || m->rank < 0 || m->rank > 4 ||
        (m->dtype != PG_DTYPE_FLOAT32 && m->dtype != PG_DTYPE_BOOL))
        return 0;
    for (int d = 0; d < m->rank; d++) {
        int64_t want = scores->shape[4 - m->rank + d];
        if (m->shape[d] != 1 && m->shape[d] != want)
            return 0;
    }
    return 1;
}

/* The shape of a + b (two float masks, rank <= 4) as rank 4 into shp; 1 if
 * it broadcasts and fits the scores' shape (no dim grows them). */
static int sum_shape(const pg_tensor *a, const pg_tensor *b, const pg_tensor *scores, int64_t shp[4])
{
    for (int d = 0; d < 4; d++) {
        int64_t da = d >= 4 - a->rank ? a->shape[d - (4 - a->rank)] : 1;
        int64_t db = d >= 4 - b->rank ? b->shape[d - (4 - b->rank)] : 1;
        if (da != 1 && db != 1 && da != db)
            return 0;
        shp[d] = da != 1 ? da : db;
        if (shp[d] != 1 && shp[d] != scores->shape[d])
            return 0;
    }
    return 1;
}

static int try_attention(pg_graph *g, pg_pass_ctx *c, pg_node *sm)
{
    const pg_tensor *st = pm_tensor(g, sm->inputs[0]);
    if (!st || st->rank != 4 || st->dtype != PG_DTYPE_FLOAT32)
        return 0;
    int64_t axis = pg_ir_attr_int(sm, "axis", -1);
    if (axis != -1 && axis != 3)
        return 0;
    int nodes[40], n = 0;
    /* after: Softmax [-> Where(IsNaN(P), 0, P)] -> MatMul(P, V) */
    int P = sm->outputs[0];
    pg_node *isnan = NULL, *guard = NULL;
    if (!pg_ir_is_output(g, P) && pm_uses(g, P) == 2) {
        const pg_tensor *pt = g->tensors[P];
        for (int u = 0; u < pt->n_users; u++) {
            pg_node *r = g->nodes[pt->users[u]];
            if (r->op == PG_OP_ISNAN)
                isnan = r;
        }
        if (!isnan)
            return 0;
        guard = pm_sole_consumer(g, isnan->outputs[0], PG_OP_WHERE);
        double zero;
        if (!guard || guard->inputs[0] != isnan->outputs[0] || guard->inputs[2] != P ||
            !pm_const_scalar(g, guard->inputs[1], &zero) || zero != 0.0 ||
            !pm_same_shape(pm_tensor(g, guard->outputs[0]), st))
            return 0;
        P = guard->outputs[0];
    }
    pg_node *pv = pm_sole_consumer(g, P, PG_OP_MATMUL);
    if (!pv || pv->inputs[0] != P)
        return 0;
    int V = pv->inputs[1];
    const pg_tensor *vt = pm_tensor(g, V);
    if (!vt || vt->rank != 4 || vt->dtype != PG_DTYPE_FLOAT32)
        return 0;
    /* before: [Add(mask)] <- [Add(bias)] <- [Div|Mul(c)] <- MatMul(Q, K^T) */
    int t = sm->inputs[0], mask = -1, bias = -1;
    int64_t sum_shp[4];   /* bias + mask's shape, when there is a bias */
    pg_node *pre[4];
    int npre = 0;
    for (int level = 0; level < 2; level++) {
        pg_node *add = pm_producer(g, t, PG_OP_ADD);
        if (!add || pm_uses(g, t) != 1)
            break;
        /* the scores' side: a product (or its scaling) first; at the outer
         * Add an inner Add (a second term) only if neither side is that */
        int found = -1;
        for (int inner = 0; inner < (level == 0 ? 2 : 1) && found < 0; inner++)
            for (int side = 0; side < 2 && found < 0; side++) {
                int u = add->inputs[side], m = add->inputs[1 - side];
                pg_node *p = pm_producer(g, u, PG_OP_UNKNOWN);
                if (p && (inner ? p->op == PG_OP_ADD
                                : p->op == PG_OP_MATMUL || p->op == PG_OP_DIV || p->op == PG_OP_MUL) &&
                    pm_same_shape(g->tensors[u], st) && mask_fits(pm_tensor(g, m), st)) {
                    found = m;
                    t = u;
                }
            }
        if (found < 0) {
            if (level == 0)
                return 0;
            break;
        }
        if (level == 0) {
            mask = found;
        } else {
            /* the two terms' sum must fit too (it is made below) */
            const pg_tensor *a = pm_tensor(g, mask), *b = pm_tensor(g, found);
            if (a->dtype != PG_DTYPE_FLOAT32 || b->dtype != PG_DTYPE_FLOAT32 || !sum_shape(a, b, st, sum_shp))
                break;
            bias = found;
        }
        pre[npre++] = add;
    }
    if (bias < 0 && npre == 1 && pm_producer(g, t, PG_OP_ADD))
        return 0;   /* Add(Add(..)) whose inner term is no bias: not ours */
    double scale = 1.0, cst;
    pg_node *sc = pm_producer(g, t, PG_OP_UNKNOWN);
    if (!sc || pm_uses(g, t) != 1)
        return 0;
    if (sc->op == PG_OP_DIV && pm_const_scalar(g, sc->inputs[1], &cst) && cst != 0.0) {
        scale = 1.0 / cst;
        pre[npre++] = sc;
        t = sc->inputs[0];
    } else if (sc->op == PG_OP_MUL && (pm_const_scalar(g, sc->inputs[1], &cst) ||
                                       pm_const_scalar(g, sc->inputs[0], &cst))) {
        scale = cst;
        pre[npre++] = sc;
        t = pm_const_scalar(g, sc->inputs[1], &cst) ? sc->inputs[0] : sc->inputs[1];
    }
    pg_node *qk = pm_producer(g, t, PG_OP_MATMUL);
    if (!qk || pm_uses(g, t) != 1)
        return 0;
    int Q = qk->inputs[0], KT = qk->inputs[1], K, k_transposed;
    /* a query pre-scaled by a constant */
    pg_node *qs = pm_producer(g, Q, PG_OP_MUL);
    pg_node *qscale = NULL;
    if (qs && pm_uses(g, Q) == 1) {
        if (pm_const_scalar(g, qs->inputs[1], &cst)) {
            scale *= cst;
            Q = qs->inputs[0];
            qscale = qs;
        } else if (pm_const_scalar(g, qs->inputs[0], &cst)) {
            scale *= cst;
            Q = qs->inputs[1];
            qscale = qs;
        }
    }
    /* a key pre-scaled by a constant (the sqrt-scale on both sides) */
    pg_node *kscale = NULL;
    int ku = scaled_by_const(g, KT, &cst, &kscale);
    if (ku >= 0) {
        scale *= cst;
        KT = ku;
    }
    pg_node *ktr = pm_producer(g, KT, PG_OP_TRANSPOSE);
    int kchain[3], has_chain = 0;
    if (ktr && pm_uses(g, KT) == 1 && is_swap_last2(g, ktr)) {
        K = ktr->inputs[0];
        k_transposed = 0;
    } else if (swap_last2_chain(g, KT, &K, kchain) &&
               (g->tensors[K]->rank == 4 || repeat_kv(g, K, &(int){ 0 }, (int[3]){ 0 }) > 1)) {
        ktr = NULL;
        has_chain = 1;
        k_transposed = 0;
    } else {
        ktr = NULL;
        K = KT;
        k_transposed = 1;
    }
    /* grouped-query attention: K and V repeated from fewer heads, both the
     * same way (K in rows of keys only) */
    int rk[3], rv[3], k4 = -1, v4 = -1, grouped = 0;
    if (!k_transposed) {
        int64_t gk = repeat_kv(g, K, &k4, rk), gv = gk > 1 ? repeat_kv(g, V, &v4, rv) : 0;
        if (gk > 1 && gv == gk) {
            grouped = 1;
            K = k4;
            V = v4;
            vt = pm_tensor(g, V);
        }
    }
    const pg_tensor *qt = pm_tensor(g, Q), *kt = pm_tensor(g, K);
    if (!qt || !kt || qt->rank != 4 || kt->rank != 4 || qt->dtype != PG_DTYPE_FLOAT32 ||
        kt->dtype != PG_DTYPE_FLOAT32)
        return 0;
    /* the product must not broadcast batch or heads (K/V heads: Q's, or a
     * divisor of them when repeat_kv was absorbed) */
    if (qt->shape[0] != kt->shape[0] || qt->shape[0] != vt->shape[0] || kt->shape[1] != vt->shape[1])
        return 0;
    if (grouped ? kt->shape[1] <= 0 || qt->shape[1] % kt->shape[1] : qt->shape[1] != kt->shape[1])
        return 0;
    int64_t D = qt->shape[3], Dk = kt->shape[k_transposed ? 2 : 3];
    int64_t Sk = kt->shape[k_transposed ? 3 : 2];
    if (D != Dk || vt->shape[2] != Sk)
        return 0;
    /* the head split of Q, K, V and the merge of O, all or none */
    int xq = -1, xk = -1, xv = -1, y = -1, sq[2] = { 0 }, sk[2] = { 0 }, sv[2] = { 0 }, mo[2] = { 0 };
    int flat = -1;
    int bshd = head_split(g, Q, 1, 3, &xq, sq) &&
               head_split(g, K, k_transposed ? 3 : 1, k_transposed ? 1 : 3, &xk, sk) &&
               head_split(g, V, 1, 3, &xv, sv) && head_merge(g, pv->outputs[0], &y, mo, &flat);
    if (bshd && flat >= 0) {
        /* the fused output: a new [B, Sq, H*Dv] the kept Reshape flattens */
        const pg_tensor *o4 = g->tensors[pv->outputs[0]];
        int64_t shp[3] = { o4->shape[0], o4->shape[2], o4->shape[1] * o4->shape[3] };
        char nm[96];
        pg_ir_unique_name(g, "attn_rows", nm, sizeof nm);
        if ((y = pg_ir_add_tensor(g, nm, PG_DTYPE_FLOAT32, 3, shp)) < 0)
            return -1;
    }
    /* nodes in data order */
    if (bshd) {
        int *splits[3] = { sq, sk, sv };
        for (int i = 0; i < 3; i++) {
            nodes[n++] = splits[i][0];
            nodes[n++] = splits[i][1];
        }
    }
    for (int i = 0; grouped && i < 3; i++) {
        if (rk[i] >= 0)
            nodes[n++] = rk[i];
        if (rv[i] >= 0)
            nodes[n++] = rv[i];
    }
    if (qscale)
        nodes[n++] = qscale->id;
    if (ktr)
        nodes[n++] = ktr->id;
    for (int i = 0; has_chain && i < 3; i++)
        nodes[n++] = kchain[i];
    if (kscale)
        nodes[n++] = kscale->id;
    nodes[n++] = qk->id;
    for (int i = npre - 1; i >= 0; i--)
        nodes[n++] = pre[i]->id;
    nodes[n++] = sm->id;
    if (guard) {
        nodes[n++] = isnan->id;
        nodes[n++] = guard->id;
    }
    nodes[n++] = pv->id;
    if (bshd) {
        nodes[n++] = mo[0];
        if (mo[1] >= 0)
            nodes[n++] = mo[1];
    }
    if (bias >= 0) {
        /* the two additive terms as one mask: Add(bias, mask), outside */
        char nm[96];
        int sum = pg_ir_add_tensor(g, pg_ir_unique_name(g, "attn_mask", nm, sizeof nm), PG_DTYPE_FLOAT32, 4,
                                   sum_shp);
        int two[2] = { bias, mask };
        if (sum < 0 || pg_ir_add_node(g, "Add", pg_ir_unique_name(g, "attn_mask_add", nm, sizeof nm), two, 2,
                                      &sum, 1) < 0)
            return -1;
        mask = sum;
    }
    int ins[4] = { Q, K, V, mask }, out = pv->outputs[0];
    if (bshd) {
        ins[0] = xq;
        ins[1] = xk;
        ins[2] = xv;
        out = y;
    }
    int64_t H = qt->shape[1];
    int f = pg_pass_fuse(c, g, nodes, n, "FusedAttention", "attn", ins, mask >= 0 ? 4 : 3, &out, 1);
    if (f < 0)
        return -1;
    if (flat >= 0 && pg_ir_set_input(g, flat, 0, y))
        return -1;
    pg_node *fn = g->nodes[f];
    pg_ir_set_attr_float(fn, "scale", (float)scale);
    /* in bshd K is always rows of keys: its head split is absorbed whichever
     * way it pointed */
    pg_ir_set_attr_int(fn, "k_transposed", bshd ? 0 : k_transposed);
    pg_ir_set_attr_int(fn, "num_heads", H);
    if (guard)
        pg_ir_set_attr_int(fn, "nan_to_zero", 1);
    if (bshd) {
        pg_ir_set_attr_string(fn, "qkv_layout", "bshd");
        pg_pass_note(c, g, PG_PASS_REWRITTEN, f, 1,
                     "'%s' reads Q, K, V as [B,S,H*D] rows and writes [B,S,H*Dv] "
                     "(qkv_layout=bshd, %lld heads): the head split (3 Reshape + 3 Transpose) "
                     "and merge (Transpose + Reshape) are strides, not copies",
                     fn->name, (long long)H);
    }
    return 1;
}

static pg_status run_attention(pg_graph *g, pg_pass_ctx *c)
{
    pg_status st = pg_pass_need_shapes(g, c);
    if (st)
        return st;
    int n0 = g->n_nodes;
    for (int id = 0; id < n0; id++)
        if (g->nodes[id] && g->nodes[id]->op == PG_OP_SOFTMAX && try_attention(g, c, g->nodes[id]) < 0)
            return pg_last_status();
    return PG_OK;
}

const pg_pass_def pg_pass_attention_fusion = {
    "attention_fusion", 2,
    "MatMul(Q, K^T) / scale + mask -> Softmax -> MatMul(., V) -> FusedAttention "
    "(with the head split/merge Reshape+Transpose: qkv_layout=bshd)",
    run_attention,
};

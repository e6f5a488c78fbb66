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
 * some exporters write) is absorbed into the scale too.  The head split
 * before (Reshape + Transpose of Q, K, V) and the merge after (Transpose +
 * Reshape of O) stay: FusedAttention works on the head layout.
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

static int try_attention(pg_graph *g, pg_pass_ctx *c, pg_node *sm)
{
    const pg_tensor *st = pm_tensor(g, sm->inputs[0]);
    if (!st || st->rank != 4 || st->dtype != PG_DTYPE_FLOAT32)
        return 0;
    int64_t axis = pg_ir_attr_int(sm, "axis", -1);
    if (axis != -1 && axis != 3)
        return 0;
    int nodes[8], n = 0;
    /* after: Softmax -> MatMul(P, V) */
    pg_node *pv = pm_sole_consumer(g, sm->outputs[0], PG_OP_MATMUL);
    if (!pv || pv->inputs[0] != sm->outputs[0])
        return 0;
    int V = pv->inputs[1];
    const pg_tensor *vt = pm_tensor(g, V);
    if (!vt || vt->rank != 4 || vt->dtype != PG_DTYPE_FLOAT32)
        return 0;
    /* before: [Add(mask)] <- [Div|Mul(c)] <- MatMul(Q, K^T) */
    int t = sm->inputs[0], mask = -1;
    pg_node *pre[3];
    int npre = 0;
    pg_node *add = pm_producer(g, t, PG_OP_ADD);
    if (add && pm_uses(g, t) == 1) {
        for (int side = 0; side < 2 && mask < 0; side++) {
            int u = add->inputs[side], m = add->inputs[1 - side];
            pg_node *p = pm_producer(g, u, PG_OP_UNKNOWN);
            if (p && (p->op == PG_OP_MATMUL || p->op == PG_OP_DIV || p->op == PG_OP_MUL) &&
                pm_same_shape(g->tensors[u], st) && mask_fits(pm_tensor(g, m), st)) {
                mask = m;
                t = u;
            }
        }
        if (mask < 0)
            return 0;
        pre[npre++] = add;
    }
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
    pg_node *ktr = pm_producer(g, KT, PG_OP_TRANSPOSE);
    if (ktr && pm_uses(g, KT) == 1 && is_swap_last2(g, ktr)) {
        K = ktr->inputs[0];
        k_transposed = 0;
    } else {
        ktr = NULL;
        K = KT;
        k_transposed = 1;
    }
    const pg_tensor *qt = pm_tensor(g, Q), *kt = pm_tensor(g, K);
    if (!qt || !kt || qt->rank != 4 || kt->rank != 4 || qt->dtype != PG_DTYPE_FLOAT32 ||
        kt->dtype != PG_DTYPE_FLOAT32)
        return 0;
    /* the product must not broadcast batch or heads */
    for (int d = 0; d < 2; d++)
        if (qt->shape[d] != kt->shape[d] || qt->shape[d] != vt->shape[d])
            return 0;
    int64_t D = qt->shape[3], Dk = kt->shape[k_transposed ? 2 : 3];
    int64_t Sk = kt->shape[k_transposed ? 3 : 2];
    if (D != Dk || vt->shape[2] != Sk)
        return 0;
    /* nodes in data order */
    if (qscale)
        nodes[n++] = qscale->id;
    if (ktr)
        nodes[n++] = ktr->id;
    nodes[n++] = qk->id;
    for (int i = npre - 1; i >= 0; i--)
        nodes[n++] = pre[i]->id;
    nodes[n++] = sm->id;
    nodes[n++] = pv->id;
    int ins[4] = { Q, K, V, mask }, out = pv->outputs[0];
    int64_t H = qt->shape[1];
    int f = pg_pass_fuse(c, g, nodes, n, "FusedAttention", "attn", ins, mask >= 0 ? 4 : 3, &out, 1);
    if (f < 0)
        return -1;
    pg_ir_set_attr_float(g->nodes[f], "scale", (float)scale);
    pg_ir_set_attr_int(g->nodes[f], "k_transposed", k_transposed);
    pg_ir_set_attr_int(g->nodes[f], "num_heads", H);
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
    "MatMul(Q, K^T) / scale + mask -> Softmax -> MatMul(., V) -> FusedAttention",
    run_attention,
};

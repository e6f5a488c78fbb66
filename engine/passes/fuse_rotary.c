/* fuse_rotary.c - rotary position embeddings as torch.onnx.export writes
 * them (LLaMA / Qwen2 apply_rotary_pos_emb, both exporters) collapsed into
 * one Rotary node:
 *
 *   X [.., D] --> Mul(cos) ------------------------------------+
 *     |                                                         Add --> Y
 *     +--> Slice(D/2 .. end) --> Neg --+                        |
 *     |                                Concat(-1) --> Mul(sin) -+
 *     +--> Slice(0 .. D/2) ------------+
 *
 *   -> Rotary(X, cos, sin)
 *
 * cos and sin are what the cos/sin of Range/Einsum fold into at compile
 * time for the bound shape: float32 constants broadcasting to X without
 * growing it.  Preconditions, all checked: both Slices of X along its last
 * axis with step 1, the first [0, D/2), the second [D/2, D); Neg of the
 * second half first in the Concat; every intermediate read once; the Mul
 * and Add operands in either order. */
#include "match.h"
#include "pass.h"

/* Slice(x, start, .., axis, step) along the last axis of x, step 1, with
 * the given start and an output of n columns: 1 if so. */
static int half_slice(const pg_graph *g, const pg_node *s, int x, int64_t start, int64_t n)
{
    const pg_tensor *xt = pm_tensor(g, x), *yt = pm_tensor(g, s->outputs[0]);
    if (s->op != PG_OP_SLICE || s->inputs[0] != x || !xt || !yt || yt->rank != xt->rank)
        return 0;
    double st, ax, step = 1.0;
    if (s->n_inputs < 4 || !pm_const_scalar(g, s->inputs[1], &st) || !pm_const_scalar(g, s->inputs[3], &ax))
        return 0;
    if (s->n_inputs > 4 && s->inputs[4] >= 0 && !pm_const_scalar(g, s->inputs[4], &step))
        return 0;
    int r = xt->rank;
    if ((ax != -1.0 && ax != r - 1) || step != 1.0 || st != (double)start || yt->shape[r - 1] != n)
        return 0;
    for (int d = 0; d < r - 1; d++)
        if (yt->shape[d] != xt->shape[d])
            return 0;
    return 1;
}

/* A float32 constant broadcasting to x's shape (no dim above x's). */
static int fits(const pg_graph *g, int t, const pg_tensor *x)
{
    if (!pm_const_f32(g, t))
        return 0;
    const pg_tensor *w = g->tensors[t];
    if (w->rank > x->rank)
        return 0;
    for (int d = 0; d < w->rank; d++) {
        int64_t want = x->shape[x->rank - w->rank + d];
        if (w->shape[d] != 1 && w->shape[d] != want)
            return 0;
    }
    return 1;
}

static int try_rotary(pg_graph *g, pg_pass_ctx *c, pg_node *cat)
{
    if (cat->n_inputs != 2 || cat->n_outputs != 1)
        return 0;
    int rh = cat->outputs[0];
    const pg_tensor *rt = pm_tensor(g, rh);
    if (!rt || rt->rank < 1 || rt->dtype != PG_DTYPE_FLOAT32)
        return 0;
    int64_t axis = pg_ir_attr_int(cat, "axis", 0);
    if (axis != -1 && axis != rt->rank - 1)
        return 0;
    pg_node *neg = pm_producer(g, cat->inputs[0], PG_OP_NEG);
    pg_node *s1 = pm_producer(g, cat->inputs[1], PG_OP_SLICE);
    if (!neg || !s1 || pm_uses(g, cat->inputs[0]) != 1 || pm_uses(g, cat->inputs[1]) != 1)
        return 0;
    pg_node *s2 = pm_producer(g, neg->inputs[0], PG_OP_SLICE);
    if (!s2 || pm_uses(g, neg->inputs[0]) != 1)
        return 0;
    int X = s1->inputs[0];
    const pg_tensor *x = pm_tensor(g, X);
    if (!x || x->dtype != PG_DTYPE_FLOAT32 || !pm_same_shape(x, rt))
        return 0;
    int64_t D = x->shape[x->rank - 1], h = D / 2;
    if (D <= 0 || D % 2 || !half_slice(g, s1, X, 0, h) || !half_slice(g, s2, X, h, h))
        return 0;
    /* Mul(rh, sin) -> Add(Mul(X, cos), .) */
    pg_node *ms = pm_sole_consumer(g, rh, PG_OP_MUL);
    int sin_t = ms ? pm_other_input(ms, rh) : -1;
    if (!ms || !fits(g, sin_t, x) || !pm_same_shape(pm_tensor(g, ms->outputs[0]), x))
        return 0;
    pg_node *add = pm_sole_consumer(g, ms->outputs[0], PG_OP_ADD);
    if (!add)
        return 0;
    int a = pm_other_input(add, ms->outputs[0]);
    pg_node *mc = pm_producer(g, a, PG_OP_MUL);
    if (!mc || pm_uses(g, a) != 1 || pm_other_input(mc, X) < 0)
        return 0;
    int cos_t = pm_other_input(mc, X);
    const pg_tensor *ct = pm_tensor(g, cos_t), *st = pm_tensor(g, sin_t);
    if (!fits(g, cos_t, x) || !pm_same_shape(pm_tensor(g, a), x) || !pm_same_shape(ct, st) ||
        !pm_same_shape(pm_tensor(g, add->outputs[0]), x))
        return 0;
    int nodes[7] = { mc->id, s1->id, s2->id, neg->id, cat->id, ms->id, add->id };
    int ins[3] = { X, cos_t, sin_t }, out = add->outputs[0];
    return pg_pass_fuse(c, g, nodes, 7, "Rotary", "rotary", ins, 3, &out, 1) < 0 ? -1 : 1;
}

static pg_status run_rotary(pg_graph *g, pg_pass_ctx *c)
{
    pg_status st = pg_pass_need_shapes(g, c);
    if (st)
        return st;
    int n0 = g->n_nodes;
    for (int id = 0; id < n0; id++)
        if (g->nodes[id] && g->nodes[id]->op == PG_OP_CONCAT && try_rotary(g, c, g->nodes[id]) < 0)
            return pg_last_status();
    return PG_OK;
}

const pg_pass_def pg_pass_rotary_fusion = {
    "rotary_fusion", 2,
    "X*cos + Concat(-X[..,D/2:], X[..,:D/2])*sin (Slice/Neg/Concat/Mul/Add) -> Rotary",
    run_rotary,
};

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
 * and Add operands in either order.
 *
 * When X is the head split of projected rows, Transpose(0,2,1,3) of
 * Reshape(P [B,S,H*D] -> [B,S,H,D]) read only by the pattern, and cos/sin
 * do not vary by head, the rotation runs before the Transpose instead
 * (cos/sin re-shaped to [.., S, 1, D], the same data):
 *
 *   Rotary(Reshape(P)) -> Reshape [B,S,H*D] -> Reshape [B,S,H,D]
 *                      -> Transpose(0,2,1,3) -> Y
 *
 * so that attention_fusion finds the head split it absorbs (Transpose of a
 * Reshape of [B,S,H*D] rows) and reads the rotated rows in place; the two
 * Reshapes are views. */
#include <stdio.h>
#include <string.h>

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

/* An int64 constant vector. */
static int shape_const(pg_graph *g, const int64_t *v, int64_t n)
{
    char nm[96];
    pg_ir_unique_name(g, "rotary_shape", nm, sizeof nm);
    int t = pg_ir_add_const(g, nm, PG_DTYPE_INT64, 1, &n, NULL);
    if (t >= 0)
        for (int64_t i = 0; i < n; i++)
            ((int64_t *)g->tensors[t]->data)[i] = v[i];
    return t;
}

/* cos/sin [.., c1, c2, c3] (right-aligned to rank 4, c1 the head dim = 1)
 * as [c0', c2, 1, c3]: the same data, broadcasting over [B, S, H, D]. */
static int rows_const(pg_graph *g, int t)
{
    const pg_tensor *w = g->tensors[t];
    int64_t s4[4] = { 1, 1, 1, 1 };
    for (int d = 0; d < w->rank; d++)
        s4[4 - w->rank + d] = w->shape[d];
    if (s4[1] != 1)
        return -2;
    int64_t ns[4] = { s4[0], s4[2], 1, s4[3] };
    char nm[96];
    snprintf(nm, sizeof nm, "%s_rows", w->name);
    char un[96];
    pg_ir_unique_name(g, nm, un, sizeof un);
    int r = pg_ir_add_const(g, un, PG_DTYPE_FLOAT32, 4, ns, NULL);
    if (r >= 0)
        memcpy(g->tensors[r]->data, g->tensors[t]->data, sizeof(float) * (size_t)pg_tensor_numel(w));
    return r;
}

/* X = Transpose(0,2,1,3)(R4 = Reshape(P [B,S,H*D] -> [B,S,H,D])), X read only
 * by the pattern's three nodes, R4 only by the Transpose: the Transpose. */
static pg_node *head_split_of(const pg_graph *g, int X)
{
    pg_node *tr = pm_producer(g, X, PG_OP_TRANSPOSE);
    int np = 0;
    const int64_t *p = tr ? pg_ir_attr_ints(tr, "perm", &np) : NULL;
    if (!tr || !p || np != 4 || p[0] != 0 || p[1] != 2 || p[2] != 1 || p[3] != 3 || pm_uses(g, X) != 3 ||
        pg_ir_is_output(g, X))
        return NULL;
    int r4 = tr->inputs[0];
    pg_node *rs = pm_producer(g, r4, PG_OP_RESHAPE);
    const pg_tensor *pt = rs ? pm_tensor(g, rs->inputs[0]) : NULL, *rt = pm_tensor(g, r4);
    if (!rs || !pt || !rt || pm_uses(g, r4) != 1 || pt->rank != 3 || rt->rank != 4 ||
        pt->shape[0] != rt->shape[0] || pt->shape[1] != rt->shape[1] ||
        pt->shape[2] != rt->shape[2] * rt->shape[3])
        return NULL;
    return tr;
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
    int nodes[8] = { mc->id, s1->id, s2->id, neg->id, cat->id, ms->id, add->id };
    int ins[3] = { X, cos_t, sin_t }, out = add->outputs[0];
    pg_node *tr = head_split_of(g, X);
    int cr = -2, sr = -2;
    if (tr && (cr = rows_const(g, cos_t)) == -1)
        return -1;
    if (tr && cr >= 0 && (sr = rows_const(g, sin_t)) == -1)
        return -1;
    if (!tr || cr < 0 || sr < 0)
        return pg_pass_fuse(c, g, nodes, 7, "Rotary", "rotary", ins, 3, &out, 1) < 0 ? -1 : 1;
    /* before the head Transpose: Rotary(R4) -> Reshape -> Reshape -> Transpose -> Y */
    int r4 = tr->inputs[0];
    const pg_tensor *r4t = g->tensors[r4];
    int64_t s4[4] = { r4t->shape[0], r4t->shape[1], r4t->shape[2], r4t->shape[3] };
    int64_t s3[3] = { s4[0], s4[1], s4[2] * s4[3] };
    char nm[96];
    int t[3];
    for (int i = 0; i < 3; i++) {
        pg_ir_unique_name(g, "rotary_rows", nm, sizeof nm);
        if ((t[i] = pg_ir_add_tensor(g, nm, PG_DTYPE_FLOAT32, i == 1 ? 3 : 4, i == 1 ? s3 : s4)) < 0)
            return -1;
    }
    int k3 = shape_const(g, s3, 3), k4 = shape_const(g, s4, 4);
    if (k3 < 0 || k4 < 0)
        return -1;
    /* data order: the Transpose first */
    for (int i = 7; i > 0; i--)
        nodes[i] = nodes[i - 1];
    nodes[0] = tr->id;
    int rins[3] = { r4, cr, sr };
    int f = pg_pass_fuse(c, g, nodes, 8, "Rotary", "rotary", rins, 3, &t[0], 1);
    if (f < 0)
        return -1;
    int a1[2] = { t[0], k3 }, a2[2] = { t[1], k4 };
    pg_ir_unique_name(g, "rotary_flat", nm, sizeof nm);
    if (pg_ir_add_node(g, "Reshape", nm, a1, 2, &t[1], 1) < 0)
        return -1;
    pg_ir_unique_name(g, "rotary_heads", nm, sizeof nm);
    if (pg_ir_add_node(g, "Reshape", nm, a2, 2, &t[2], 1) < 0)
        return -1;
    pg_ir_unique_name(g, "rotary_transpose", nm, sizeof nm);
    int tn = pg_ir_add_node(g, "Transpose", nm, &t[2], 1, &out, 1);
    if (tn < 0)
        return -1;
    int64_t perm[4] = { 0, 2, 1, 3 };
    pg_ir_set_attr_ints(g->nodes[tn], "perm", perm, 4);
    pg_pass_note(c, g, PG_PASS_REWRITTEN, f, 1,
                 "'%s' rotates the [B,S,H,D] rows before the head Transpose (cos/sin as [.., S, 1, D]), "
                 "so attention_fusion can read them in place", g->nodes[f]->name);
    return 1;
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

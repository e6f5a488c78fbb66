/* fuse_norm.c - the decomposed LayerNorm and RMSNorm patterns, as
 * torch.onnx.export writes them, collapsed into one node each.
 *
 * LayerNorm (BERT):
 *
 *     X --> ReduceMean --> Sub --> Pow(2) --> ReduceMean --> Add(eps) --> Sqrt
 *     |                    ^  \                                           |
 *     +--------------------+   +---------------------------> Div <-------+
 *                                                              |
 *                                            Mul(gamma) --> Add(beta) --> Y
 *
 * Variants matched: the Sub duplicated (older torch: one Sub for Pow, one
 * for Div), Mul(x, x) instead of Pow(2), Div written as Mul by
 * Reciprocal(Sqrt), gamma and beta on either side, no beta, no gamma and no
 * beta (elementwise_affine=False: a ones scale is made).  Preconditions:
 * both ReduceMeans over the same trailing axes with keepdims, eps a
 * constant scalar, gamma/beta constants of the normalised size, every
 * intermediate read only inside the pattern.
 *
 * RMSNorm (LLaMA):  X * Reciprocal(Sqrt(ReduceMean(Pow(X, 2)) + eps)) * w
 * with the same variants (Div by the Sqrt, Mul(x, x)), and Div(1, Sqrt) for
 * the Reciprocal (torch.rsqrt as the TorchScript exporter writes it); the
 * scale may multiply from either side.
 *
 * GroupNorm as torch exports it before opset 18 (wav2vec2's feature
 * extractor): InstanceNormalization with a ones scale and a zeros bias,
 * then Mul(gamma) and Add(beta) per channel (constants broadcasting along
 * the channel axis only; with one group per channel the reshapes around
 * the InstanceNormalization are no-ops, gone by now).  The Mul and the Add
 * (either, or both) fold into the InstanceNormalization's own scale and
 * bias: s' = s gamma, b' = b gamma + beta; two passes over the tensor
 * less (wav2vec2: 1.8 ms of its run). */
#include <math.h>
#include <stdio.h>

#include "../core/alloc.h"
#include "match.h"
#include "pass.h"

typedef struct chain {
    int nodes[16];
    int n;
} chain;

static void push(chain *ch, const pg_node *n) { ch->nodes[ch->n++] = n->id; }

/* y = x^2 as Pow(x, 2) or Mul(x, x): the node, if it squares x. */
static int is_square_of(const pg_graph *g, const pg_node *n, int x)
{
    if (n->op == PG_OP_POW)
        return n->inputs[0] == x && pm_const_is(g, n->inputs[1], 2.0, 1e-6);
    if (n->op == PG_OP_MUL)
        return n->inputs[0] == x && n->inputs[1] == x;
    return 0;
}

/* From the variance (or mean square) tensor v, the rest up to the
 * normaliser: Add(eps) -> Sqrt, then either Div(num, s) or
 * Mul(num, Reciprocal(s)).  Fills eps, the numerator tensor, the
 * normalised output; returns 0 if not matched. */
static int match_tail(const pg_graph *g, int v, chain *ch, double *eps, int *num, int *out)
{
    pg_node *add = pm_sole_consumer(g, v, PG_OP_ADD);
    if (!add || !pm_const_scalar(g, pm_other_input(add, v), eps))
        return 0;
    pg_node *sq = pm_sole_consumer(g, add->outputs[0], PG_OP_SQRT);
    if (!sq)
        return 0;
    push(ch, add);
    push(ch, sq);
    int s = sq->outputs[0];
    pg_node *div = pm_sole_consumer(g, s, PG_OP_DIV);
    pg_node *rec = NULL;
    if (div && div->inputs[1] == s && pm_const_is(g, div->inputs[0], 1.0, 1e-7) &&
        pm_same_shape(pm_tensor(g, div->outputs[0]), pm_tensor(g, s))) {
        rec = div;   /* Div(1, s): a Reciprocal (torch's rsqrt as TorchScript writes it) */
    } else if (div && div->inputs[1] == s) {
        push(ch, div);
        *num = div->inputs[0];
        *out = div->outputs[0];
        return 1;
    } else {
        rec = pm_sole_consumer(g, s, PG_OP_RECIPROCAL);
    }
    if (!rec)
        return 0;
    pg_node *mul = pm_sole_consumer(g, rec->outputs[0], PG_OP_MUL);
    if (!mul)
        return 0;
    push(ch, rec);
    push(ch, mul);
    *num = pm_other_input(mul, rec->outputs[0]);
    *out = mul->outputs[0];
    return *num >= 0;
}

/* A constant float vector applying over the normalised dims of x (from
 * axis on): its element count equals theirs and its shape, right-aligned,
 * has no other non-1 dims. */
static int fits_norm_dims(const pg_graph *g, int t, const pg_tensor *x, int axis)
{
    if (!pm_const_f32(g, t))
        return 0;
    const pg_tensor *w = g->tensors[t];
    int64_t want = pm_numel_from(x, axis);
    if (want < 0 || pg_tensor_numel(w) != want)
        return 0;
    int nd = x->rank - axis;
    for (int d = 0; d < w->rank; d++) {
        int xd = x->rank - w->rank + d;   /* right-aligned */
        if (xd < axis) {
            if (w->shape[d] != 1)
                return 0;
        } else if (w->shape[d] != x->shape[xd]) {
            return 0;
        }
    }
    return nd > 0;
}

/* Optional Mul(gamma) then Add(beta) after the normalised tensor y.  Fills
 * gamma/beta (-1 if absent) and advances *out. */
static void match_affine(const pg_graph *g, const pg_tensor *x, int axis, chain *ch, int *out,
                         int *gamma, int *beta, int want_beta)
{
    *gamma = *beta = -1;
    pg_node *mul = pm_sole_consumer(g, *out, PG_OP_MUL);
    if (mul) {
        int w = pm_other_input(mul, *out);
        if (fits_norm_dims(g, w, x, axis)) {
            push(ch, mul);
            *gamma = w;
            *out = mul->outputs[0];
        }
    }
    if (!want_beta || *gamma < 0)
        return;   /* a bias without a scale is left alone: rare, and LN wants a scale */
    pg_node *add = pm_sole_consumer(g, *out, PG_OP_ADD);
    if (add) {
        int b = pm_other_input(add, *out);
        if (fits_norm_dims(g, b, x, axis)) {
            push(ch, add);
            *beta = b;
            *out = add->outputs[0];
        }
    }
}

/* A ones vector for the normalised dims (a LayerNorm without affine). */
static int ones_for(pg_graph *g, const pg_tensor *x, int axis)
{
    int64_t n = pm_numel_from(x, axis);
    char nm[96];
    pg_ir_unique_name(g, "ln_ones", nm, sizeof nm);
    int t = pg_ir_add_const(g, nm, PG_DTYPE_FLOAT32, 1, &n, NULL);
    if (t < 0)
        return -1;
    float *p = g->tensors[t]->data;
    for (int64_t i = 0; i < n; i++)
        p[i] = 1.0f;
    return t;
}

static int try_layernorm(pg_graph *g, pg_pass_ctx *c, pg_node *rm1)
{
    int na = pm_trailing_reduce(g, rm1);
    if (!na)
        return 0;
    int X = rm1->inputs[0], m = rm1->outputs[0];
    const pg_tensor *x = g->tensors[X];
    if (x->dtype != PG_DTYPE_FLOAT32 || pg_ir_is_output(g, m))
        return 0;
    int axis = x->rank + na;
    chain ch = { .n = 0 };
    push(&ch, rm1);
    /* every reader of the mean is Sub(X, mean) */
    pg_node *subs[2];
    int nsub = 0;
    PG_IR_FOR_NODES(g, n)
        for (int i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] == m) {
                if (n->op != PG_OP_SUB || n->inputs[0] != X || n->inputs[1] != m || nsub == 2)
                    return 0;
                subs[nsub++] = n;
                break;
            }
    if (nsub == 0)
        return 0;
    /* the Sub feeding the square: its other reader (if one Sub) is the Div */
    pg_node *sq = NULL, *sub_sq = NULL;
    for (int s = 0; s < nsub && !sq; s++) {
        int d = subs[s]->outputs[0];
        if (pg_ir_is_output(g, d))
            return 0;
        PG_IR_FOR_NODES(g, n)
            if (!sq && is_square_of(g, n, d)) {
                sq = n;
                sub_sq = subs[s];
            }
    }
    if (!sq || pg_ir_is_output(g, sq->outputs[0]))
        return 0;
    push(&ch, sub_sq);
    push(&ch, sq);
    pg_node *rm2 = pm_sole_consumer(g, sq->outputs[0], PG_OP_REDUCEMEAN);
    if (!rm2 || pm_trailing_reduce(g, rm2) != na)
        return 0;
    push(&ch, rm2);
    double eps;
    int num, out;
    if (!match_tail(g, rm2->outputs[0], &ch, &eps, &num, &out))
        return 0;
    /* numerator: the same Sub (read by square and Div only), or the other Sub */
    if (nsub == 1) {
        if (num != sub_sq->outputs[0] || pm_uses(g, num) != (sq->op == PG_OP_MUL ? 3 : 2))
            return 0;
    } else {
        pg_node *other = subs[0] == sub_sq ? subs[1] : subs[0];
        if (num != other->outputs[0] || pm_uses(g, num) != 1 ||
            pm_uses(g, sub_sq->outputs[0]) != (sq->op == PG_OP_MUL ? 2 : 1))
            return 0;
        push(&ch, other);
    }
    int gamma, beta;
    match_affine(g, x, axis, &ch, &out, &gamma, &beta, 1);
    if (gamma < 0 && (gamma = ones_for(g, x, axis)) < 0)
        return -1;
    int ins[3] = { X, gamma, beta };
    int f = pg_pass_fuse(c, g, ch.nodes, ch.n, "LayerNormalization", "ln", ins, beta >= 0 ? 3 : 2,
                         &out, 1);
    if (f < 0)
        return -1;
    pg_ir_set_attr_int(g->nodes[f], "axis", axis - x->rank);
    pg_ir_set_attr_float(g->nodes[f], "epsilon", (float)eps);
    return 1;
}

static int try_rmsnorm(pg_graph *g, pg_pass_ctx *c, pg_node *sq)
{
    int X = sq->inputs[0];
    if (X < 0 || !is_square_of(g, sq, X))
        return 0;
    const pg_tensor *x = g->tensors[X];
    if (x->dtype != PG_DTYPE_FLOAT32)
        return 0;
    pg_node *rm = pm_sole_consumer(g, sq->outputs[0], PG_OP_REDUCEMEAN);
    int na = rm ? pm_trailing_reduce(g, rm) : 0;
    if (!na)
        return 0;
    int axis = x->rank + na;
    chain ch = { .n = 0 };
    push(&ch, sq);
    push(&ch, rm);
    double eps;
    int num, out;
    if (!match_tail(g, rm->outputs[0], &ch, &eps, &num, &out) || num != X)
        return 0;
    int gamma, beta;
    match_affine(g, x, axis, &ch, &out, &gamma, &beta, 0);
    if (gamma < 0)
        return 0;   /* RMSNorm without a weight: not the LLaMA pattern */
    int ins[2] = { X, gamma };
    int f = pg_pass_fuse(c, g, ch.nodes, ch.n, "RMSNorm", "rmsnorm", ins, 2, &out, 1);
    if (f < 0)
        return -1;
    pg_ir_set_attr_int(g->nodes[f], "axis", axis - x->rank);
    pg_ir_set_attr_float(g->nodes[f], "epsilon", (float)eps);
    return 1;
}

/* t is a float32 constant that broadcasts against a rank-r tensor of C
 * channels along the channel axis only (numel 1 or C, every dim but the
 * channel one 1): its value per channel into v[0..C). */
static int channel_vec(const pg_graph *g, int t, int r, int64_t C, float *v)
{
    const pg_tensor *ct = pm_tensor(g, t);
    if (!ct || !pm_const_f32(g, t) || ct->rank > r || ct->layout != PG_LAYOUT_ROW_MAJOR)
        return 0;
    int64_t n = pg_tensor_numel(ct);
    for (int d = 0; d < ct->rank; d++) {
        int axis = r - ct->rank + d;
        if (ct->shape[d] != 1 && !(axis == 1 && ct->shape[d] == C))
            return 0;
    }
    if (n != 1 && n != C)
        return 0;
    const float *p = ct->data;
    for (int64_t i = 0; i < C; i++)
        v[i] = p[n == 1 ? 0 : i];
    return 1;
}

static int try_instancenorm_affine(pg_graph *g, pg_pass_ctx *c, pg_node *in)
{
    const pg_tensor *x = pm_tensor(g, in->inputs[0]);
    if (!x || x->dtype != PG_DTYPE_FLOAT32 || x->rank < 3 || in->n_inputs < 3)
        return 0;
    int r = x->rank;
    int64_t C = x->shape[1];
    int y = in->outputs[0], last = y;
    pg_node *mul = pm_sole_consumer(g, y, PG_OP_MUL), *add = NULL;
    float *v = pg_malloc(sizeof(float) * (size_t)(4 * C + 1));
    if (!v)
        return 0;   /* a fold missed, nothing wrong */
    float *s = v, *b = v + C, *gam = v + 2 * C, *bet = v + 3 * C;
    int folded = 0, nodes[3] = { in->id, -1, -1 }, n = 1;
    if (!channel_vec(g, in->inputs[1], 2, C, s) || !channel_vec(g, in->inputs[2], 2, C, b))
        goto out;
    for (int64_t i = 0; i < C; i++)
        gam[i] = 1.0f, bet[i] = 0.0f;
    if (mul && channel_vec(g, pm_other_input(mul, y), r, C, gam)) {
        nodes[n++] = mul->id;
        last = mul->outputs[0];
        folded = 1;
    }
    add = pm_sole_consumer(g, last, PG_OP_ADD);
    if (add && channel_vec(g, pm_other_input(add, last), r, C, bet)) {
        nodes[n++] = add->id;
        last = add->outputs[0];
        folded = 1;
    }
    if (!folded || !pm_same_shape(pm_tensor(g, last), x))
        goto out;
    for (int64_t i = 0; i < C; i++) {
        b[i] = b[i] * gam[i] + bet[i];
        s[i] *= gam[i];
    }
    char nm[96];
    int64_t shp = C;
    int ts = pg_ir_add_const(g, pg_ir_unique_name(g, "instnorm_scale", nm, sizeof nm), PG_DTYPE_FLOAT32, 1, &shp, s);
    int tb = pg_ir_add_const(g, pg_ir_unique_name(g, "instnorm_bias", nm, sizeof nm), PG_DTYPE_FLOAT32, 1, &shp, b);
    float eps = pg_ir_attr_float(in, "epsilon", 1e-5f);
    int ins[3] = { in->inputs[0], ts, tb }, f = -1;
    if (ts >= 0 && tb >= 0)
        f = pg_pass_fuse(c, g, nodes, n, "InstanceNormalization", "instnorm", ins, 3, &last, 1);
    if (f >= 0)
        pg_ir_set_attr_float(g->nodes[f], "epsilon", eps);
    pg_free(v);
    return f < 0 ? -1 : 1;
out:
    pg_free(v);
    return 0;
}

static pg_status run_layernorm(pg_graph *g, pg_pass_ctx *c)
{
    pg_status st = pg_pass_need_shapes(g, c);
    if (st)
        return st;
    int n0 = g->n_nodes;
    for (int id = 0; id < n0; id++)
        if (g->nodes[id] && g->nodes[id]->op == PG_OP_REDUCEMEAN &&
            try_layernorm(g, c, g->nodes[id]) < 0)
            return pg_last_status();
    n0 = g->n_nodes;
    for (int id = 0; id < n0; id++)
        if (g->nodes[id] && g->nodes[id]->op == PG_OP_INSTANCENORM &&
            try_instancenorm_affine(g, c, g->nodes[id]) < 0)
            return pg_last_status();
    return PG_OK;
}

static pg_status run_rmsnorm(pg_graph *g, pg_pass_ctx *c)
{
    pg_status st = pg_pass_need_shapes(g, c);
    if (st)
        return st;
    int n0 = g->n_nodes;
    for (int id = 0; id < n0; id++) {
        pg_node *n = g->nodes[id];
        if (n && (n->op == PG_OP_POW || n->op == PG_OP_MUL) && try_rmsnorm(g, c, n) < 0)
            return pg_last_status();
    }
    return PG_OK;
}

const pg_pass_def pg_pass_layernorm_fusion = {
    "layernorm_fusion", 2,
    "ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add -> LayerNormalization; "
    "InstanceNormalization's per-channel Mul/Add after it -> its scale and bias",
    run_layernorm,
};

const pg_pass_def pg_pass_rmsnorm_fusion = {
    "rmsnorm_fusion", 2, "Pow/ReduceMean/Add/Sqrt/Reciprocal/Mul/Mul -> RMSNorm",
    run_rmsnorm,
};

/* fuse_act.c - activation patterns collapsed into one node.
 *
 * erf-GELU, x * 0.5 * (1 + erf(x / sqrt 2)), in the forms torch.onnx.export
 * writes (F.gelu, and the hand-written BERT gelu):
 *
 *   x -> Div(sqrt2) | Mul(1/sqrt2) -> Erf -> Add(1) -> then one of
 *        Mul(x, .) -> Mul(., 0.5)          (F.gelu)
 *        Mul(Mul(x, 0.5), .)               (x * 0.5 * (1 + erf))
 *        Mul(., 0.5) -> Mul(x, .)          (0.5 * (1 + erf) * x)
 *   -> Gelu(x)  (approximate = "none")
 * Operands of Add and Mul may come in either order.
 *
 * tanh-GELU, 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) (GPT-2's
 * gelu_new, F.gelu(approximate="tanh") exported before opset 20):
 *
 *   x^3 = Pow(x, 3) | Mul(Mul(x, x), x) -> Mul(0.044715) -> Add(x)
 *       -> Mul(sqrt(2/pi)) -> Tanh -> Add(1) -> the same three tails
 *   or, factored (BLOOM's bloom_gelu_forward),
 *   Mul(Mul(x, sqrt(2/pi)), Add(Mul(Mul(x, 0.044715), x), 1)) -> Tanh -> ...
 *   -> Gelu(x)  (approximate = "tanh", the executor's gelu_tanh kernel)
 *
 * SiLU:  Mul(x, Sigmoid(x)) -> SiLU(x). */
#include <stdio.h>

#include "match.h"
#include "pass.h"

#define SQRT2 1.4142135623730951
#define SQRT_2_OVER_PI 0.7978845608028654
#define GELU_CUBIC 0.044715
#define TOL 1e-4

/* A Mul by the constant 0.5 reading t (its sole reader): the Mul. */
static pg_node *half_of(const pg_graph *g, int t)
{
    pg_node *m = pm_sole_consumer(g, t, PG_OP_MUL);
    return m && pm_const_is(g, pm_other_input(m, t), 0.5, TOL) ? m : NULL;
}

/* The end of a GELU: add = (1 + f(x)) read once, then x * 0.5 * add in one
 * of its three forms.  Appends the tail's nodes to nodes[0..*n) (a leading
 * Mul(x, 0.5) goes first: data order) and returns the last output, or -1. */
static int gelu_tail(const pg_graph *g, int x, const pg_node *add, int *nodes, int *np)
{
    int n = *np;
    pg_node *m1 = pm_sole_consumer(g, add->outputs[0], PG_OP_MUL);
    if (!m1)
        return -1;
    int other = pm_other_input(m1, add->outputs[0]), out = -1;
    pg_node *half;
    if (other == x && (half = half_of(g, m1->outputs[0]))) {
        /* Mul(x, 1 + erf) -> Mul(., 0.5) */
        nodes[n++] = m1->id;
        nodes[n++] = half->id;
        out = half->outputs[0];
    } else if (pm_const_is(g, other, 0.5, TOL)) {
        /* Mul(1 + erf, 0.5) -> Mul(x, .) */
        pg_node *m2 = pm_sole_consumer(g, m1->outputs[0], PG_OP_MUL);
        if (!m2 || pm_other_input(m2, m1->outputs[0]) != x)
            return -1;
        nodes[n++] = m1->id;
        nodes[n++] = m2->id;
        out = m2->outputs[0];
    } else {
        /* Mul(Mul(x, 0.5), 1 + erf) */
        pg_node *hx = pm_producer(g, other, PG_OP_MUL);
        if (!hx || pm_uses(g, other) != 1 || pm_other_input(hx, x) < 0 ||
            !pm_const_is(g, pm_other_input(hx, x), 0.5, TOL))
            return -1;
        /* hx comes first in data order: list it first */
        for (int i = n; i > 0; i--)
            nodes[i] = nodes[i - 1];
        nodes[0] = hx->id;
        n++;
        nodes[n++] = m1->id;
        out = m1->outputs[0];
    }
    *np = n;
    return out;
}

static int try_gelu(pg_graph *g, pg_pass_ctx *c, pg_node *erf)
{
    pg_node *pre = pm_producer(g, erf->inputs[0], PG_OP_UNKNOWN);
    if (!pre || pm_uses(g, pre->outputs[0]) != 1)
        return 0;
    int x;
    if (pre->op == PG_OP_DIV && pm_const_is(g, pre->inputs[1], SQRT2, TOL))
        x = pre->inputs[0];
    else if (pre->op == PG_OP_MUL && pm_const_is(g, pre->inputs[1], 1.0 / SQRT2, TOL))
        x = pre->inputs[0];
    else if (pre->op == PG_OP_MUL && pm_const_is(g, pre->inputs[0], 1.0 / SQRT2, TOL))
        x = pre->inputs[1];
    else
        return 0;
    const pg_tensor *xt = pm_tensor(g, x);
    if (!xt || xt->dtype != PG_DTYPE_FLOAT32)
        return 0;
    pg_node *add = pm_sole_consumer(g, erf->outputs[0], PG_OP_ADD);
    if (!add || !pm_const_is(g, pm_other_input(add, erf->outputs[0]), 1.0, TOL))
        return 0;
    int nodes[12], n = 0;
    nodes[n++] = pre->id;
    nodes[n++] = erf->id;
    nodes[n++] = add->id;
    int out = gelu_tail(g, x, add, nodes, &n);
    if (out < 0)
        return 0;
    int f = pg_pass_fuse(c, g, nodes, n, "Gelu", "gelu", &x, 1, &out, 1);
    if (f < 0)
        return -1;
    pg_ir_set_attr_string(g->nodes[f], "approximate", "none");
    return 1;
}

/* t = x^3 read once: Pow(x, 3), Mul(Mul(x, x), x) or Mul(x, Mul(x, x)).
 * Appends its nodes (data order); 1 if it is. */
static int is_cube(const pg_graph *g, int t, int x, int *nodes, int *n)
{
    pg_node *p = pm_producer(g, t, PG_OP_UNKNOWN);
    if (!p || pm_uses(g, t) != 1)
        return 0;
    if (p->op == PG_OP_POW && p->n_inputs == 2 && p->inputs[0] == x &&
        pm_const_is(g, p->inputs[1], 3.0, 1e-6)) {
        nodes[(*n)++] = p->id;
        return 1;
    }
    if (p->op != PG_OP_MUL || pm_other_input(p, x) < 0)
        return 0;
    int sq = pm_other_input(p, x);
    pg_node *m = pm_producer(g, sq, PG_OP_MUL);
    if (!m || sq == x || pm_uses(g, sq) != 1 || m->inputs[0] != x || m->inputs[1] != x)
        return 0;
    nodes[(*n)++] = m->id;
    nodes[(*n)++] = p->id;
    return 1;
}

/* t = Mul(x, c) read once, c a constant scalar within TOL of want: x,
 * or -1. */
static int times_const(const pg_graph *g, int t, double want, pg_node **mul)
{
    pg_node *m = pm_producer(g, t, PG_OP_MUL);
    if (!m || pm_uses(g, t) != 1)
        return -1;
    *mul = m;
    return pm_const_is(g, m->inputs[1], want, TOL) ? m->inputs[0]
         : pm_const_is(g, m->inputs[0], want, TOL) ? m->inputs[1] : -1;
}

/* u = Mul(Mul(x, sqrt(2/pi)), Add(Mul(Mul(x, 0.044715), x), 1)), the
 * factored form: x, with the nodes before ms appended (data order); -1 if
 * it is not. */
static int factored_inner(const pg_graph *g, const pg_node *ms, int *nodes, int *n)
{
    for (int side = 0; side < 2; side++) {
        pg_node *sx, *ad, *q, *cx;
        int x = times_const(g, ms->inputs[side], SQRT_2_OVER_PI, &sx), k = ms->inputs[1 - side];
        if (x < 0 || !(ad = pm_producer(g, k, PG_OP_ADD)) || pm_uses(g, k) != 1)
            continue;
        int qt = pm_const_is(g, ad->inputs[0], 1.0, TOL) ? ad->inputs[1]
               : pm_const_is(g, ad->inputs[1], 1.0, TOL) ? ad->inputs[0] : -1;
        /* q = Mul(Mul(x, 0.044715), x) */
        if (qt < 0 || !(q = pm_producer(g, qt, PG_OP_MUL)) || pm_uses(g, qt) != 1 ||
            pm_other_input(q, x) < 0 || times_const(g, pm_other_input(q, x), GELU_CUBIC, &cx) != x)
            continue;
        nodes[(*n)++] = sx->id;
        nodes[(*n)++] = cx->id;
        nodes[(*n)++] = q->id;
        nodes[(*n)++] = ad->id;
        return x;
    }
    return -1;
}

static int try_gelu_tanh(pg_graph *g, pg_pass_ctx *c, pg_node *th)
{
    /* Tanh(Mul(sqrt(2/pi), inner)) */
    int u = th->inputs[0];
    pg_node *ms = pm_producer(g, u, PG_OP_MUL);
    if (!ms || pm_uses(g, u) != 1)
        return 0;
    int inner = pm_const_is(g, ms->inputs[0], SQRT_2_OVER_PI, TOL) ? ms->inputs[1]
              : pm_const_is(g, ms->inputs[1], SQRT_2_OVER_PI, TOL) ? ms->inputs[0] : -1;
    int nodes[16], n = 0, x = -1;
    if (inner < 0) {
        x = factored_inner(g, ms, nodes, &n);
    } else {
        /* inner = Add(x, Mul(0.044715, x^3)) */
        pg_node *ad = pm_producer(g, inner, PG_OP_ADD);
        if (!ad || pm_uses(g, inner) != 1)
            return 0;
        for (int side = 0; side < 2 && x < 0; side++) {
            int cand = ad->inputs[side], k = ad->inputs[1 - side];
            pg_node *mk = pm_producer(g, k, PG_OP_MUL);
            if (!mk || pm_uses(g, k) != 1)
                continue;
            int cube = pm_const_is(g, mk->inputs[0], GELU_CUBIC, TOL) ? mk->inputs[1]
                     : pm_const_is(g, mk->inputs[1], GELU_CUBIC, TOL) ? mk->inputs[0] : -1;
            n = 0;
            if (cube >= 0 && is_cube(g, cube, cand, nodes, &n)) {
                nodes[n++] = mk->id;
                x = cand;
            }
        }
        if (x >= 0)
            nodes[n++] = ad->id;
    }
    const pg_tensor *xt = pm_tensor(g, x);
    if (x < 0 || !xt || xt->dtype != PG_DTYPE_FLOAT32)
        return 0;
    nodes[n++] = ms->id;
    nodes[n++] = th->id;
    pg_node *one = pm_sole_consumer(g, th->outputs[0], PG_OP_ADD);
    if (!one || !pm_const_is(g, pm_other_input(one, th->outputs[0]), 1.0, TOL))
        return 0;
    nodes[n++] = one->id;
    int out = gelu_tail(g, x, one, nodes, &n);
    if (out < 0)
        return 0;
    int f = pg_pass_fuse(c, g, nodes, n, "Gelu", "gelu", &x, 1, &out, 1);
    if (f < 0)
        return -1;
    pg_ir_set_attr_string(g->nodes[f], "approximate", "tanh");
    return 1;
}

static int try_silu(pg_graph *g, pg_pass_ctx *c, pg_node *sig)
{
    int x = sig->inputs[0];
    const pg_tensor *xt = pm_tensor(g, x);
    if (!xt || xt->dtype != PG_DTYPE_FLOAT32)
        return 0;
    pg_node *mul = pm_sole_consumer(g, sig->outputs[0], PG_OP_MUL);
    if (!mul || pm_other_input(mul, sig->outputs[0]) != x)
        return 0;
    int nodes[2] = { sig->id, mul->id }, out = mul->outputs[0];
    return pg_pass_fuse(c, g, nodes, 2, "SiLU", "silu", &x, 1, &out, 1) < 0 ? -1 : 1;
}

static pg_status run_each(pg_graph *g, pg_pass_ctx *c, pg_opcode op,
                          int (*try_one)(pg_graph *, pg_pass_ctx *, pg_node *))
{
    pg_status st = pg_pass_need_shapes(g, c);
    if (st)
        return st;
    int n0 = g->n_nodes;
    for (int id = 0; id < n0; id++)
        if (g->nodes[id] && g->nodes[id]->op == op && try_one(g, c, g->nodes[id]) < 0)
            return pg_last_status();
    return PG_OK;
}

static pg_status run_gelu(pg_graph *g, pg_pass_ctx *c)
{
    pg_status st = run_each(g, c, PG_OP_ERF, try_gelu);
    return st ? st : run_each(g, c, PG_OP_TANH, try_gelu_tanh);
}

static pg_status run_silu(pg_graph *g, pg_pass_ctx *c)
{
    return run_each(g, c, PG_OP_SIGMOID, try_silu);
}

const pg_pass_def pg_pass_gelu_fusion = {
    "gelu_fusion", 2,
    "x * 0.5 * (1 + Erf(x / sqrt 2)) and the tanh form in their exported forms -> Gelu",
    run_gelu,
};

const pg_pass_def pg_pass_silu_fusion = {
    "silu_fusion", 2, "Mul(x, Sigmoid(x)) -> SiLU",
    run_silu,
};

/* fuse_conv.c - the CNN passes.
 *
 * conv_bn_fold: Conv (constant weight, constant or no bias) read only by an
 * inference BatchNormalization with constant scale, B, mean and var:
 *
 *     a[m]  = scale[m] / sqrt(var[m] + epsilon)
 *     W'[m] = W[m] * a[m]                   (every weight of output channel m)
 *     B'[m] = (B[m] - mean[m]) * a[m] + beta[m]   (B = 0 when absent)
 *
 * -> one Conv with W', B' (new constants: the old ones may have other
 * readers; dead ones go with dead-code removal).  a and B' in double, as
 * the BatchNormalization executor computes them.
 *
 * conv_act_fusion: Conv read only by Relu, Clip (constant or absent
 * min/max), HardSwish, SiLU, or by Sigmoid and Mul(conv, Sigmoid(conv))
 * -> FusedConv with activation relu / clip (act_min, act_max) / hardswish /
 * silu: the conv kernels apply it while the tile is in registers (SGEMM's
 * ReLU, dwconv's clamp and hardswish) or right after it is written.
 *
 * maxpool_fast: MaxPool on a float32 NCHW tensor with no Indices output
 * -> FastMaxPool (exec/pool_fast.c), same attributes.
 *
 * Layout: none to re-lay.  conv_fast.c's header has the measurement: the
 * kernels run on NCHW as the graph has it, so pools, Add, Concat and
 * Resize between convs keep their NCHW executors and no transposes are
 * inserted at the graph edges. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "match.h"
#include "pass.h"

/* A node's attributes copied out before the node is removed. */
#define MAX_SAVED 16
typedef struct saved_attr {
    char name[48];
    pg_attr_type type;
    int64_t i;
    float f;
    int64_t ints[16];
    int ni;
    char s[64];
} saved_attr;
typedef struct saved_attrs {
    int n;
    saved_attr a[MAX_SAVED];
} saved_attrs;

static int save_attrs(const pg_node *n, saved_attrs *s)
{
    s->n = 0;
    for (int i = 0; i < n->n_attrs; i++) {
        const pg_attr *at = &n->attrs[i];
        if (s->n == MAX_SAVED || strlen(at->name) >= sizeof s->a[0].name)
            return 0;
        if (!strcmp(at->name, "activation") || !strcmp(at->name, "act_min") ||
            !strcmp(at->name, "act_max"))
            continue;
        saved_attr *d = &s->a[s->n];
        memset(d, 0, sizeof *d);
        strcpy(d->name, at->name);
        d->type = at->type;
        switch (at->type) {
        case PG_ATTR_INT: d->i = at->i; break;
        case PG_ATTR_FLOAT: d->f = at->f; break;
        case PG_ATTR_INTS:
            if (at->n > 16)
                return 0;
            d->ni = at->n;
            memcpy(d->ints, at->ints, (size_t)at->n * sizeof(int64_t));
            break;
        case PG_ATTR_STRING:
            if (strlen(at->s) >= sizeof d->s)
                return 0;
            strcpy(d->s, at->s);
            break;
        default:
            return 0;
        }
        s->n++;
    }
    return 1;
}

static pg_status restore_attrs(pg_node *n, const saved_attrs *s)
{
    pg_status st = PG_OK;
    for (int i = 0; i < s->n && !st; i++) {
        const saved_attr *d = &s->a[i];
        switch (d->type) {
        case PG_ATTR_INT: st = pg_ir_set_attr_int(n, d->name, d->i); break;
        case PG_ATTR_FLOAT: st = pg_ir_set_attr_float(n, d->name, d->f); break;
        case PG_ATTR_INTS: st = pg_ir_set_attr_ints(n, d->name, d->ints, d->ni); break;
        case PG_ATTR_STRING: st = pg_ir_set_attr_string(n, d->name, d->s); break;
        default: break;
        }
    }
    return st;
}

/* A float32 constant of exactly M elements. */
static const float *vec_m(const pg_graph *g, int t, int64_t M)
{
    const pg_tensor *v = pm_tensor(g, t);
    if (!v || !pm_const_f32(g, t) || pg_tensor_numel(v) != M || v->layout != PG_LAYOUT_ROW_MAJOR)
        return NULL;
    return v->data;
}

static int try_bn(pg_graph *g, pg_pass_ctx *c, pg_node *bn)
{
    if (bn->n_inputs != 5)
        return 0;
    for (int o = 1; o < bn->n_outputs; o++)
        if (bn->outputs[o] >= 0 && pm_uses(g, bn->outputs[o]) > 0)
            return 0;   /* training outputs read */
    int y = bn->inputs[0];
    pg_node *conv = pm_producer(g, y, PG_OP_CONV);
    if (!conv || pm_uses(g, y) != 1 || conv->n_outputs != 1)
        return 0;
    const pg_tensor *wt = pm_tensor(g, conv->inputs[1]);
    if (!wt || !pm_const_f32(g, conv->inputs[1]) || wt->rank < 3 || wt->layout != PG_LAYOUT_ROW_MAJOR)
        return 0;
    int64_t M = wt->shape[0], per = pg_tensor_numel(wt) / M;
    const float *W = wt->data, *B = NULL;
    if (conv->n_inputs > 2 && conv->inputs[2] >= 0 && !(B = vec_m(g, conv->inputs[2], M)))
        return 0;
    const float *sc = vec_m(g, bn->inputs[1], M), *be = vec_m(g, bn->inputs[2], M);
    const float *mu = vec_m(g, bn->inputs[3], M), *var = vec_m(g, bn->inputs[4], M);
    if (!sc || !be || !mu || !var)
        return 0;
    double eps = pg_ir_attr_float(bn, "epsilon", 1e-5f);
    float *w2 = pg_malloc((size_t)(M * per) * sizeof(float) + 1);
    float *b2 = pg_malloc((size_t)M * sizeof(float) + 1);
    if (!w2 || !b2) {
        pg_free(w2);
        pg_free(b2);
        pg_fail(PG_ERR_NOMEM, "conv_bn_fold: out of memory folding '%s'", bn->name);
        return -1;
    }
    for (int64_t m = 0; m < M; m++) {
        double a = sc[m] / sqrt((double)var[m] + eps);
        for (int64_t i = 0; i < per; i++)
            w2[m * per + i] = (float)(W[m * per + i] * a);
        b2[m] = (float)(((B ? B[m] : 0.0) - mu[m]) * a + be[m]);
    }
    char name[96];
    int64_t bshape[1] = { M };
    int tw = pg_ir_add_const(g, pg_ir_unique_name(g, "conv_bn_w", name, sizeof name), PG_DTYPE_FLOAT32,
                             wt->rank, wt->shape, w2);
    int tb = tw < 0 ? -1 : pg_ir_add_const(g, pg_ir_unique_name(g, "conv_bn_b", name, sizeof name),
                                           PG_DTYPE_FLOAT32, 1, bshape, b2);
    pg_free(w2);
    pg_free(b2);
    saved_attrs sa;
    if (tb < 0 || !save_attrs(conv, &sa))
        return tb < 0 ? -1 : 0;
    int ins[3] = { conv->inputs[0], tw, tb }, out = bn->outputs[0];
    int nodes[2] = { conv->id, bn->id };
    int f = pg_pass_fuse(c, g, nodes, 2, "Conv", "conv_bn", ins, 3, &out, 1);
    if (f < 0 || restore_attrs(g->nodes[f], &sa))
        return -1;
    return 1;
}

/* The activation reading conv's output alone: 1 and its name / bounds /
 * the nodes to fold in (up to 2) and the last one's output. */
static int match_act(const pg_graph *g, int y, const char **act, float *lo, float *hi, int *nodes,
                     int *n, int *out)
{
    *lo = -INFINITY;
    *hi = INFINITY;
    pg_node *a = pm_sole_consumer(g, y, PG_OP_UNKNOWN);
    if (a && a->n_outputs == 1) {
        nodes[0] = a->id;
        *n = 1;
        *out = a->outputs[0];
        switch (a->op) {
        case PG_OP_RELU: *act = "relu"; return 1;
        case PG_OP_HARD_SWISH: *act = "hardswish"; return 1;
        case PG_OP_SILU: *act = "silu"; return 1;
        case PG_OP_CLIP: {
            double v;
            if (a->n_inputs > 1 && a->inputs[1] >= 0) {
                if (!pm_const_scalar(g, a->inputs[1], &v))
                    return 0;
                *lo = (float)v;
            }
            if (a->n_inputs > 2 && a->inputs[2] >= 0) {
                if (!pm_const_scalar(g, a->inputs[2], &v))
                    return 0;
                *hi = (float)v;
            }
            if (isnan(*lo) || isnan(*hi))
                return 0;
            *act = "clip";
            return 1;
        }
        default: return 0;
        }
    }
    /* Sigmoid(y) and Mul(y, Sigmoid(y)), y read by exactly those two */
    int readers[3];
    if (pg_ir_is_output(g, y) || pg_ir_consumers(g, y, readers, 3) != 2)
        return 0;
    for (int s = 0; s < 2; s++) {
        pg_node *sig = g->nodes[readers[s]], *mul = g->nodes[readers[1 - s]];
        if (sig->op != PG_OP_SIGMOID || mul->op != PG_OP_MUL || mul->n_inputs != 2)
            continue;
        if (pm_sole_consumer(g, sig->outputs[0], PG_OP_MUL) != mul || pm_other_input(mul, y) != sig->outputs[0])
            continue;
        nodes[0] = sig->id;
        nodes[1] = mul->id;
        *n = 2;
        *out = mul->outputs[0];
        *act = "silu";
        return 1;
    }
    return 0;
}

static int try_act(pg_graph *g, pg_pass_ctx *c, pg_node *conv)
{
    if (conv->n_outputs != 1)
        return 0;
    int y = conv->outputs[0];
    const pg_tensor *yt = pm_tensor(g, y);
    if (!yt || yt->dtype != PG_DTYPE_FLOAT32)
        return 0;
    const char *act = NULL;
    float lo, hi;
    int anodes[2], na = 0, out = -1;
    if (!match_act(g, y, &act, &lo, &hi, anodes, &na, &out))
        return 0;
    saved_attrs sa;
    if (!save_attrs(conv, &sa))
        return 0;
    int nodes[3] = { conv->id, anodes[0], na > 1 ? anodes[1] : -1 };
    int ins[3] = { conv->inputs[0], conv->inputs[1], conv->n_inputs > 2 ? conv->inputs[2] : -1 };
    int f = pg_pass_fuse(c, g, nodes, 1 + na, "FusedConv", "fconv", ins, ins[2] >= 0 ? 3 : 2, &out, 1);
    if (f < 0 || restore_attrs(g->nodes[f], &sa) || pg_ir_set_attr_string(g->nodes[f], "activation", act))
        return -1;
    if (!strcmp(act, "clip") &&
        (pg_ir_set_attr_float(g->nodes[f], "act_min", lo) || pg_ir_set_attr_float(g->nodes[f], "act_max", hi)))
        return -1;
    return 1;
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

/* MaxPool -> FastMaxPool (exec/pool_fast.c): float32, 2D, no Indices. */
static int try_pool(pg_graph *g, pg_pass_ctx *c, pg_node *mp)
{
    const pg_tensor *x = pm_tensor(g, mp->inputs[0]);
    if (!x || x->dtype != PG_DTYPE_FLOAT32 || x->rank != 4 || mp->n_outputs != 1 || mp->n_inputs != 1)
        return 0;
    saved_attrs sa;
    if (!save_attrs(mp, &sa))
        return 0;
    int in = mp->inputs[0], out = mp->outputs[0], nodes[1] = { mp->id };
    int f = pg_pass_fuse(c, g, nodes, 1, "FastMaxPool", "maxpool", &in, 1, &out, 1);
    if (f < 0 || restore_attrs(g->nodes[f], &sa))
        return -1;
    return 1;
}

static pg_status run_pool(pg_graph *g, pg_pass_ctx *c) { return run_each(g, c, PG_OP_MAXPOOL, try_pool); }

static pg_status run_bn(pg_graph *g, pg_pass_ctx *c) { return run_each(g, c, PG_OP_BATCHNORM, try_bn); }
static pg_status run_act(pg_graph *g, pg_pass_ctx *c) { return run_each(g, c, PG_OP_CONV, try_act); }

const pg_pass_def pg_pass_conv_bn_fold = {
    "conv_bn_fold", 2,
    "BatchNormalization after a Conv folded into the Conv's weights and bias",
    run_bn,
};

const pg_pass_def pg_pass_conv_act_fusion = {
    "conv_act_fusion", 2,
    "Conv + Relu / Clip / HardSwish / SiLU -> FusedConv (the activation in the kernel's epilogue)",
    run_act,
};

const pg_pass_def pg_pass_maxpool_fast = {
    "maxpool_fast", 2,
    "MaxPool (float32 NCHW, no Indices) -> FastMaxPool (window bounds per row and column, planes threaded)",
    run_pool,
};

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
 * nchwc_layout (level 3): the network re-laid into NCHW16c (exec/conv_nchwc.c
 * has the layout and why), where a conv_nchwc asm kernel runs (AVX-512;
 * elsewhere the graph stays NCHW on the SGEMM path).  In topological order:
 *   - Conv / FusedConv (float32 2-D, constant weights and bias, activation
 *     none / relu / clip / hardswish / silu, kept as the blocked step's
 *     epilogue; group 1, or depthwise 3x3 / 5x5 with one filter
 *     per channel) -> FusedConv nchwc = 16 on weights packed here for the
 *     kernel (conv_nchwc_pack, or dwconv_pack with the bias), a bias padded
 *     to whole blocks; a group-1 conv reads an NCHW input in place (the
 *     3-channel image), a depthwise one needs it blocked (ReorderInput);
 *   - MaxPool (no Indices), Add of two blocked tensors of one shape, Relu,
 *     Clip (constant bounds), HardSwish on a blocked input -> the same op
 *     on the blocked tensor (nchwc = 16 on MaxPool);
 *   - Concat along the channels of blocked inputs, all but the last whole
 *     blocks -> Concat of the blocked tensors along their block axis;
 *     Slice of one channel range from a block boundary to one (or to the
 *     end) -> Slice of those blocks; Resize by constant scales of 1 on N
 *     and C -> the same scales on the blocked tensor's spatial axes;
 *   - GlobalAveragePool of a blocked input -> nchwc = 16, writing the
 *     plain [N, C, 1, 1] (the network's usual exit: no reorder);
 * and a ReorderOutput wherever a blocked tensor's original is read by an
 * op left in NCHW or is a graph output: reorders only at the edges of the
 * blocked region.
 *
 * conv_winograd (level 3, before nchwc_layout): a group-1 3x3 conv at
 * stride 1 and dilation 1, pads 0 or 1, with 16 or more input and output
 * channels and at least MIN_WINO_TILES 2x2 output tiles over the batch,
 * where the Winograd transforms have asm -> attribute winograd = 1;
 * nchwc_layout then packs its weights as F(2x2, 3x3)'s 16 transformed
 * planes (pg_wino_f23_pack) if its input is blocked, else it stays direct
 * (exec/conv_winograd.c has the form and the measurement).  The weights
 * of every blocked group-1 conv go in filter groups of equal size
 * (nchwc_group), at most the kernel's FB blocks each.
 *
 * conv_residual_fusion (level 3, after nchwc_layout): a blocked conv read
 * only by the Add of a skip connection (and that only by a Relu, as in
 * ResNet) -> one FusedConv with the skip tensor as its 4th input, added
 * by the kernel while the tile is in registers (flag RESIDUAL).
 *
 * conv_prepack (level 3): a conv left on the GEMM form (NCHW: no blocked
 * kernel on this CPU, or an op the blocked region does not take) whose bias
 * rides as A's last column gets that A - W with the bias after each row -
 * made here once, as the node's tensor attribute "value" (its step's
 * state), instead of a copy per run into scratch.
 *
 * MaxPool's fast path (exec/pool_fast.c) is its own executor's choice now,
 * as Conv's is; the FastMaxPool op stays for graphs saved with it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../exec/conv_fast.h"
#include "../kernels/conv_nchwc/conv_nchwc.h"
#include "../kernels/dwconv/dwconv.h"
#include "../kernels/winograd/winograd.h"
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


/* ---- nchwc_layout ------------------------------------------------------------ */

#define NB PG_NCHWC_BLOCK

typedef struct relay {
    pg_graph *g;
    pg_pass_ctx *c;
    int *blk;       /* original tensor id -> its blocked copy's id, -1 */
    int fb;         /* the conv kernel's filter group */
    int reorders;
} relay;

static int64_t nblocks(int64_t c) { return (c + NB - 1) / NB; }

static int relay_node(relay *r, const char *op, const char *prefix, const int *ins, int nin, int out)
{
    char name[96];
    return pg_ir_add_node(r->g, op, pg_ir_unique_name(r->g, prefix, name, sizeof name), ins, nin, &out, 1);
}

/* A blocked tensor for an NCHW [N, C, H, W] shape with C' channels. */
static int blocked_tensor(relay *r, const pg_tensor *like, int64_t C, int64_t H, int64_t W)
{
    char prefix[80], name[96];
    int64_t shape[5] = { like->shape[0], nblocks(C), H, W, NB };
    snprintf(prefix, sizeof prefix, "%s_nchw16c", like->name);
    return pg_ir_add_tensor(r->g, pg_ir_unique_name(r->g, prefix, name, sizeof name), PG_DTYPE_FLOAT32, 5, shape);
}

/* x's blocked copy, made by a ReorderInput when it has none yet. */
static int blocked_input(relay *r, int x)
{
    if (r->blk[x] >= 0)
        return r->blk[x];
    const pg_tensor *t = r->g->tensors[x];
    int b = blocked_tensor(r, t, t->shape[1], t->shape[2], t->shape[3]);
    int id = b < 0 ? -1 : relay_node(r, "ReorderInput", "reorder_in", &x, 1, b);
    if (id < 0 || pg_ir_set_attr_int(r->g->nodes[id], "nchwc", NB))
        return -1;
    pg_pass_note(r->c, r->g, PG_PASS_ADDED, id, 0, "'%s' into NCHW16c at the blocked region's edge", t->name);
    r->reorders++;
    return r->blk[x] = b;
}

static int plain_f32_4d(const pg_tensor *t)
{
    return t && t->dtype == PG_DTYPE_FLOAT32 && t->rank == 4 && pg_tensor_shape_known(t);
}

/* The conv's weights re-laid for the blocked kernels: 1 converted, 0 not
 * convertible, -1 error. */
static int relay_conv(relay *r, pg_node *n)
{
    pg_graph *g = r->g;
    if (n->n_outputs != 1 || n->n_inputs < 2)
        return 0;
    const pg_tensor *x = pm_tensor(g, n->inputs[0]), *wt = pm_tensor(g, n->inputs[1]);
    const pg_tensor *y = pm_tensor(g, n->outputs[0]);
    if (!plain_f32_4d(x) || !plain_f32_4d(y) || !wt || wt->rank != 4 || !pm_const_f32(g, n->inputs[1]) ||
        wt->layout != PG_LAYOUT_ROW_MAJOR)
        return 0;
    int64_t M = wt->shape[0], C = x->shape[1], G = pg_ir_attr_int(n, "group", 1);
    int64_t KH = wt->shape[2], KW = wt->shape[3];
    /* an empty conv (no filters or no input channels: a [0, C, KH, KW]
     * weight is valid ONNX) has nothing to block, and its filter groups
     * below would divide by zero blocks: it stays in NCHW */
    if (M < 1 || C < 1)
        return 0;
    const float *B = NULL;
    if (n->n_inputs > 2 && n->inputs[2] >= 0 && !(B = vec_m(g, n->inputs[2], M)))
        return 0;
    /* every activation stays in the step (conv_nchwc.c: the kernels' clamp
     * or HardSwish, SiLU over each row as it is written); each maps 0 to
     * 0, so the padded channels stay zero */
    pg_conv_act act = pg_conv_act_from_name(pg_ir_attr_string(n, "activation", "none"));
    if (act == PG_CONVACT_INVALID)
        return 0;
    int dw = G > 1;
    if (dw && !(G == C && M == C && wt->shape[1] == 1 && KH == KW && (KH == 3 || KH == 5)))
        return 0;
    if (!dw && G != 1)
        return 0;
    int ks_n = 0;
    const int64_t *ks = pg_ir_attr_ints(n, "kernel_shape", &ks_n);
    if (ks && (ks_n != 2 || ks[0] != KH || ks[1] != KW))
        return 0;
    int in = dw ? blocked_input(r, n->inputs[0]) : r->blk[n->inputs[0]];
    if (dw && in < 0)
        return -1;
    int blocked_in = in >= 0;
    /* conv_winograd marked it, and its input is blocked: Winograd's form */
    int wino = !dw && blocked_in && pg_ir_attr_int(n, "winograd", 0) == 1;
    /* filter groups of equal size (9 blocks at FB 4: 3 + 3 + 3, not 4 + 4
     * + 1, whose last call has a quarter of the accumulators) */
    int64_t mb = nblocks(M), ng = (mb + r->fb - 1) / r->fb;
    int gfb = (int)((mb + ng - 1) / ng);
    /* the packed weights, and for the direct form the bias padded to whole blocks */
    size_t cin_blk = blocked_in ? NB : 1;
    size_t nw = dw     ? pg_dwconv_packed_floats((size_t)C, (int)KH, (int)KW)
                : wino ? PG_WINO_POINTS * pg_wino_plane_floats((size_t)M, (size_t)C, NB)
                       : pg_conv_nchwc_packed_floats((size_t)M, (size_t)C, cin_blk, (int)KH, (int)KW, NB, gfb);
    char name[96];
    int64_t wshape[1] = { (int64_t)nw }, bshape[1] = { nblocks(M) * NB };
    int tw = pg_ir_add_const(g, pg_ir_unique_name(g, "conv_nchwc_w", name, sizeof name), PG_DTYPE_FLOAT32, 1,
                             wshape, NULL);
    if (tw < 0)
        return -1;
    float *wp = g->tensors[tw]->data;
    if (dw)
        pg_dwconv_pack((size_t)C, (int)KH, (int)KW, wt->data, B, wp);
    else if (wino)
        pg_wino_f23_pack((size_t)M, (size_t)C, NB, gfb, wt->data, wp);
    else
        pg_conv_nchwc_pack((size_t)M, (size_t)C, cin_blk, (int)KH, (int)KW, NB, gfb, wt->data, wp);
    int tb = -1;
    if (!dw) {
        tb = pg_ir_add_const(g, pg_ir_unique_name(g, "conv_nchwc_b", name, sizeof name), PG_DTYPE_FLOAT32, 1,
                             bshape, NULL);
        if (tb < 0)
            return -1;
        float *bp = g->tensors[tb]->data;
        for (int64_t m = 0; m < bshape[0]; m++)
            bp[m] = B && m < M ? B[m] : 0.0f;
    }
    int out = blocked_tensor(r, y, M, y->shape[2], y->shape[3]);
    saved_attrs sa;
    if (out < 0 || !save_attrs(n, &sa))
        return out < 0 ? -1 : 0;
    float lo = pg_ir_attr_float(n, "act_min", -INFINITY), hi = pg_ir_attr_float(n, "act_max", INFINITY);
    int ins[3] = { blocked_in ? in : n->inputs[0], tw, tb };
    int id = relay_node(r, "FusedConv", "conv_nchwc", ins, dw ? 2 : 3, out);
    if (id < 0)
        return -1;
    pg_node *f = g->nodes[id];
    int64_t kshape[2] = { KH, KW };
    static const char *const act_name[] = { "none", "relu", "clip", "hardswish", "silu" };
    const char *an = act_name[act];
    if (restore_attrs(f, &sa) || pg_ir_set_attr_int(f, "nchwc", NB) || pg_ir_set_attr_int(f, "out_channels", M) ||
        pg_ir_set_attr_ints(f, "kernel_shape", kshape, 2) || pg_ir_set_attr_int(f, "nchwc_fb", r->fb) ||
        pg_ir_set_attr_int(f, "nchwc_group", gfb) ||
        pg_ir_set_attr_string(f, "activation", an) || pg_ir_set_attr_int(f, "winograd", wino) ||
        (act == PG_CONVACT_CLIP && (pg_ir_set_attr_float(f, "act_min", lo) || pg_ir_set_attr_float(f, "act_max", hi))))
        return -1;
    pg_pass_note(r->c, g, PG_PASS_ADDED, id, 1, "%s '%s' in NCHW16c (%s input, weights packed for %s)",
                 n->op_type, n->name, blocked_in ? "blocked" : "NCHW",
                 dw ? "dwconv" : wino ? "Winograd F(2x2,3x3)" : "conv_nchwc");
    r->blk[n->outputs[0]] = out;
    return 1;
}

/* inputs of a blocked Concat at most */
#define MAX_CONCAT 8

/* MaxPool, Add, Relu, Clip, HardSwish, GlobalAveragePool, Concat on blocked inputs. */
static int relay_other(relay *r, pg_node *n)
{
    pg_graph *g = r->g;
    if (n->n_outputs != 1 || n->n_inputs < 1 || n->inputs[0] < 0)
        return 0;
    int x = n->inputs[0], y = n->outputs[0];
    const pg_tensor *xt = pm_tensor(g, x), *yt = pm_tensor(g, y);
    if (r->blk[x] < 0 || !plain_f32_4d(xt) || !yt || yt->dtype != PG_DTYPE_FLOAT32)
        return 0;
    int ins[MAX_CONCAT] = { r->blk[x], -1, -1 }, nin = 1, out = -1;
    switch (n->op) {
    case PG_OP_SLICE: {
        /* one channel range from a block boundary to one or to the end:
         * the same range of blocks (new starts / ends / axes constants) */
        double st, en, ax = 0, sp = 1;
        int64_t C = xt->shape[1];
        if (n->n_inputs < 4 || !pm_const_scalar(g, n->inputs[1], &st) || !pm_const_scalar(g, n->inputs[2], &en) ||
            !pm_const_scalar(g, n->inputs[3], &ax) || (ax != 1 && ax != -3) ||
            (n->n_inputs > 4 && n->inputs[4] >= 0 && (!pm_const_scalar(g, n->inputs[4], &sp) || sp != 1)) ||
            !plain_f32_4d(yt))
            return 0;
        st = st < 0 ? st + (double)C : st;
        en = en < 0 ? en + (double)C : en;
        st = st < 0 ? 0 : st > (double)C ? (double)C : st;
        en = en < 0 ? 0 : en > (double)C ? (double)C : en;
        int64_t s0 = (int64_t)st, e0 = (int64_t)en;
        if (e0 <= s0 || s0 % NB || (e0 % NB && e0 != C) || yt->shape[1] != e0 - s0)
            return 0;
        int64_t v[3] = { s0 / NB, nblocks(e0), 1 }, one = 1;
        static const char *const what[3] = { "nchwc_starts", "nchwc_ends", "nchwc_axes" };
        for (int i = 0; i < 3; i++) {
            char nm[96];
            ins[1 + i] = pg_ir_add_const(g, pg_ir_unique_name(g, what[i], nm, sizeof nm), PG_DTYPE_INT64, 1, &one,
                                         &v[i]);
            if (ins[1 + i] < 0)
                return -1;
        }
        nin = 4;
        out = blocked_tensor(r, yt, yt->shape[1], yt->shape[2], yt->shape[3]);
        break;
    }
    case PG_OP_RESIZE: {
        /* constant scales, 1 on N and C: the same on the 5-D tensor with 1
         * on the block axis and its lanes (a scale of 1 maps each index
         * to itself under every coordinate transform and mode) */
        const pg_tensor *sc = n->n_inputs > 2 && n->inputs[2] >= 0 ? pm_tensor(g, n->inputs[2]) : NULL;
        int na = 0;
        if ((n->n_inputs > 3 && n->inputs[3] >= 0) || pg_ir_attr_ints(n, "axes", &na) || !sc || !sc->is_const ||
            !sc->data || sc->dtype != PG_DTYPE_FLOAT32 || sc->rank != 1 || sc->shape[0] != 4 ||
            ((const float *)sc->data)[0] != 1.0f || ((const float *)sc->data)[1] != 1.0f || !plain_f32_4d(yt))
            return 0;
        /* a crop's roi is per axis of the 4-D tensor: not taken */
        const pg_tensor *roi = n->n_inputs > 1 && n->inputs[1] >= 0 ? pm_tensor(g, n->inputs[1]) : NULL;
        if ((roi && pg_tensor_numel(roi) != 0) ||
            !strcmp(pg_ir_attr_string(n, "coordinate_transformation_mode", "half_pixel"), "tf_crop_and_resize"))
            return 0;
        const float *f4 = sc->data;
        float f5[5] = { 1.0f, 1.0f, f4[2], f4[3], 1.0f };
        int64_t five = 5;
        char nm[96];
        ins[1] = -1;
        ins[2] = pg_ir_add_const(g, pg_ir_unique_name(g, "nchwc_scales", nm, sizeof nm), PG_DTYPE_FLOAT32, 1, &five,
                                 f5);
        if (ins[2] < 0)
            return -1;
        nin = 3;
        out = blocked_tensor(r, yt, yt->shape[1], yt->shape[2], yt->shape[3]);
        break;
    }
    case PG_OP_CONCAT: {
        /* along the channels, every input blocked and every one but the
         * last whole blocks: the blocked output is the inputs' blocks in
         * turn (the last one's padding stays the output's) */
        int64_t axis = pg_ir_attr_int(n, "axis", 0);
        if ((axis != 1 && axis != -3) || n->n_inputs > MAX_CONCAT || !plain_f32_4d(yt))
            return 0;
        for (int i = 0; i < n->n_inputs; i++) {
            const pg_tensor *t = n->inputs[i] < 0 ? NULL : pm_tensor(g, n->inputs[i]);
            if (!t || r->blk[n->inputs[i]] < 0 || !plain_f32_4d(t) ||
                (i + 1 < n->n_inputs && t->shape[1] % NB))
                return 0;
            ins[i] = r->blk[n->inputs[i]];
        }
        nin = n->n_inputs;
        out = blocked_tensor(r, yt, yt->shape[1], yt->shape[2], yt->shape[3]);
        break;
    }
    case PG_OP_MAXPOOL:
        if (!plain_f32_4d(yt))
            return 0;
        out = blocked_tensor(r, yt, xt->shape[1], yt->shape[2], yt->shape[3]);
        break;
    case PG_OP_GLOBAL_AVERAGEPOOL:
        out = y;   /* the plain [N, C, 1, 1] */
        break;
    case PG_OP_ADD: {
        if (n->n_inputs != 2 || n->inputs[1] < 0 || r->blk[n->inputs[1]] < 0)
            return 0;
        const pg_tensor *b = pm_tensor(g, n->inputs[1]);
        if (!plain_f32_4d(b) || memcmp(b->shape, xt->shape, 4 * sizeof(int64_t)) ||
            memcmp(yt->shape, xt->shape, 4 * sizeof(int64_t)))
            return 0;
        ins[1] = r->blk[n->inputs[1]];
        nin = 2;
        out = blocked_tensor(r, yt, xt->shape[1], yt->shape[2], yt->shape[3]);
        break;
    }
    case PG_OP_CLIP:
        for (int i = 1; i < n->n_inputs && i < 3; i++) {
            double v;
            if (n->inputs[i] >= 0 && !pm_const_scalar(g, n->inputs[i], &v))
                return 0;
            ins[i] = n->inputs[i];
        }
        nin = n->n_inputs;
        /* fall through */
    case PG_OP_RELU:
    case PG_OP_HARD_SWISH:
        out = blocked_tensor(r, yt, xt->shape[1], yt->shape[2], yt->shape[3]);
        break;
    default:
        return 0;
    }
    saved_attrs sa;
    if (out < 0 || !save_attrs(n, &sa))
        return out < 0 ? -1 : 0;
    char op[32], oname[64];
    snprintf(op, sizeof op, "%s", n->op_type);
    snprintf(oname, sizeof oname, "%s", n->name);
    if (out == y)   /* the new node writes the original's output: the original goes first */
        pg_pass_remove(r->c, g, n->id, "re-laid into NCHW16c");
    int id = relay_node(r, op, "nchwc", ins, nin, out);
    if (id < 0 || restore_attrs(g->nodes[id], &sa))
        return -1;
    pg_node *f = g->nodes[id];
    if (f->op == PG_OP_CONCAT && pg_ir_set_attr_int(f, "axis", 1))   /* the blocks' axis, as 5-D */
        return -1;
    if (f->op == PG_OP_MAXPOOL || f->op == PG_OP_GLOBAL_AVERAGEPOOL) {
        if (pg_ir_set_attr_int(f, "nchwc", NB) ||
            (f->op == PG_OP_GLOBAL_AVERAGEPOOL && pg_ir_set_attr_int(f, "channels", xt->shape[1])))
            return -1;
    }
    pg_pass_note(r->c, g, PG_PASS_ADDED, id, 0, "%s '%s' on the NCHW16c tensor", op, oname);
    if (out == y)
        return 2;   /* done: nothing to remove or reorder */
    r->blk[y] = out;
    return 1;
}

static pg_status run_nchwc(pg_graph *g, pg_pass_ctx *c)
{
    const pg_variant *v = pg_kernel_select(&pg_kernels_conv_nchwc);
    const pg_conv_nchwc_params *p = v ? v->params : NULL;
    if (!p || p->block != NB || !strcmp(v->isa, "c"))
        return PG_OK;   /* no blocked asm kernel on this CPU: NCHW on the SGEMM path */
    pg_status st = pg_pass_need_shapes(g, c);
    if (st)
        return st;
    int n0 = g->n_nodes, t0 = g->n_tensors, n = 0;
    int *order = pg_malloc((size_t)(n0 + 1) * sizeof(int));
    int *done = pg_calloc((size_t)(n0 + 1), sizeof(int));
    relay r = { g, c, NULL, p->fb, 0 };
    /* the nodes converted read and write only tensors that were there
     * before the pass (ids below t0) */
    size_t cap = (size_t)t0 + 1;
    r.blk = pg_malloc(cap * sizeof(int));
    if (!order || !done || !r.blk) {
        st = pg_fail(PG_ERR_NOMEM, "nchwc_layout: out of memory");
        goto out;
    }
    for (size_t i = 0; i < cap; i++)
        r.blk[i] = -1;
    if ((st = pg_ir_topo_order(g, order, &n)))
        goto out;
    for (int i = 0; i < n; i++) {
        pg_node *nd = g->nodes[order[i]];
        if (!nd)
            continue;
        int k = nd->op == PG_OP_CONV || nd->op == PG_OP_FUSED_CONV ? relay_conv(&r, nd) : relay_other(&r, nd);
        if (k < 0) {
            st = pg_last_status();
            goto out;
        }
        done[order[i]] = k == 1;
    }
    /* the originals go; where one's output is still read in NCHW (or is a
     * graph output), a ReorderOutput makes it from the blocked copy */
    for (int i = 0; i < n; i++)
        if (done[order[i]] && g->nodes[order[i]]) {
            done[order[i]] = 1 + g->nodes[order[i]]->outputs[0];
            pg_pass_remove(c, g, order[i], "re-laid into NCHW16c");
        }
    for (int i = 0; i < n; i++) {
        int y = done[order[i]] - 1;
        if (y < 0 || r.blk[y] < 0)
            continue;   /* GlobalAveragePool: the new node writes y itself */
        if (pm_uses(g, y) == 0 && !pg_ir_is_output(g, y))
            continue;
        int ro = relay_node(&r, "ReorderOutput", "reorder_out", &r.blk[y], 1, y);
        if (ro < 0 || pg_ir_set_attr_int(g->nodes[ro], "nchwc", NB) ||
            pg_ir_set_attr_int(g->nodes[ro], "channels", g->tensors[y]->shape[1])) {
            st = pg_last_status();
            goto out;
        }
        pg_pass_note(c, g, PG_PASS_ADDED, ro, 0, "'%s' back to NCHW at the blocked region's edge",
                     g->tensors[y]->name);
        r.reorders++;
    }
    pg_ir_remove_dead(g);
    st = PG_OK;
out:
    pg_free(order);
    pg_free(done);
    pg_free(r.blk);
    return st;
}

const pg_pass_def pg_pass_nchwc_layout = {
    "nchwc_layout", 3,
    "the CNN re-laid into NCHW16c (blocked channels) for the conv_nchwc kernels; reorders only at the edges",
    run_nchwc,
};

/* ---- conv_winograd ----------------------------------------------------------- */

/* A conv_nchwc asm kernel and the Winograd transforms in asm on this CPU
 * (the C rows are the oracle, far slower than the direct kernel). */
static int winograd_here(void)
{
    const pg_variant *c = pg_kernel_select(&pg_kernels_conv_nchwc);
    const pg_variant *i = pg_kernel_select(&pg_kernels_wino_in_f23);
    const pg_variant *o = pg_kernel_select(&pg_kernels_wino_out_f23);
    return c && i && o && strcmp(c->isa, "c") && strcmp(i->isa, "c") && strcmp(o->isa, "c");
}

/* input and output channels below this: the direct form (the stem) */
#define MIN_WINO_CHANNELS 16
/* 2x2 output tiles below this (all images): the direct form.  Winograd's
 * filter transforms are 16/9 the bytes of the filters, read once per run
 * for however few tiles use them, and a plane of 4 x 4 tiles runs its 16
 * products in pixel chunks of 6 + 6 + 4.  Measured on Sapphire Rapids
 * (benchmarks/bench_cnn.py, ResNet-18, 1 thread, medians of 31): batch 1
 * with 512@7 (16 tiles) direct 0.88 - 0.89x ORT's latency, all four
 * stages Winograd 0.90 - 0.92x, 256@14 (49 tiles) direct too 0.93x; at
 * batch 8 (128 tiles on 512@7) Winograd everywhere is fastest. */
#define MIN_WINO_TILES 32

static pg_status run_winograd(pg_graph *g, pg_pass_ctx *c)
{
    if (!winograd_here())
        return PG_OK;
    pg_status st = pg_pass_need_shapes(g, c);
    if (st)
        return st;
    for (int i = 0; i < g->n_nodes; i++) {
        pg_node *n = g->nodes[i];
        if (!n || (n->op != PG_OP_CONV && n->op != PG_OP_FUSED_CONV) || n->n_inputs < 2 ||
            pg_ir_attr_int(n, "group", 1) != 1 || pg_ir_attr_int(n, "winograd", 0))
            continue;
        const pg_tensor *x = pm_tensor(g, n->inputs[0]), *wt = pm_tensor(g, n->inputs[1]);
        if (!plain_f32_4d(x) || !wt || wt->rank != 4 || wt->shape[2] != 3 || wt->shape[3] != 3 ||
            !pm_const_f32(g, n->inputs[1]))
            continue;
        if (x->shape[1] < MIN_WINO_CHANNELS || wt->shape[0] < MIN_WINO_CHANNELS)
            continue;
        int64_t sp[2] = { x->shape[2], x->shape[3] }, ks[2] = { 3, 3 };
        pg_win w;
        if (pg_win_geometry(n, PG_WIN_CONV, 2, sp, ks, &w)) {
            pg_clear_error();
            continue;
        }
        if (!pg_conv_winograd_fits(&w) ||
            x->shape[0] * ((w.out[1] + 1) / 2) * ((w.out[2] + 1) / 2) < MIN_WINO_TILES)
            continue;
        if (pg_ir_set_attr_int(n, "winograd", 1))
            return pg_last_status();
        pg_pass_note(c, g, PG_PASS_REWRITTEN, i, 0, "%s '%s': 3x3 stride 1, to run as Winograd F(2x2,3x3) "
                     "once blocked", n->op_type, n->name);
    }
    return PG_OK;
}

const pg_pass_def pg_pass_conv_winograd = {
    "conv_winograd", 3,
    "3x3 stride-1 convs marked for Winograd F(2x2,3x3) (2.25x fewer products) where nchwc_layout blocks them",
    run_winograd,
};

/* ---- conv_residual_fusion ------------------------------------------------------ */

/* y = FusedConv(x, w, b) blocked, group 1, no activation, read only by
 * z = Add(y, s) with s of y's shape, z (if read only by a Relu and not a
 * graph output) then Relu: -> one FusedConv(x, w, b, s) with the Relu as
 * its activation.  s cannot depend on y (the Add is y's only reader), so
 * the conv may read it. */
static int try_residual(pg_graph *g, pg_pass_ctx *c, pg_node *conv)
{
    if (pg_ir_attr_int(conv, "nchwc", 0) != NB || pg_nchwc_depthwise(conv) || conv->n_inputs != 3 ||
        conv->inputs[2] < 0 || conv->n_outputs != 1 ||
        strcmp(pg_ir_attr_string(conv, "activation", "none"), "none"))
        return 0;
    int y = conv->outputs[0];
    pg_node *add = pm_sole_consumer(g, y, PG_OP_ADD);
    if (!add || add->n_inputs != 2 || add->n_outputs != 1 || add->inputs[0] == add->inputs[1])
        return 0;
    int s = pm_other_input(add, y);
    const pg_tensor *yt = pm_tensor(g, y), *st = pm_tensor(g, s), *zt = pm_tensor(g, add->outputs[0]);
    if (!yt || !st || !zt || st->dtype != yt->dtype || st->rank != 5 || yt->rank != 5 || zt->rank != 5)
        return 0;
    for (int i = 0; i < 5; i++)
        if (st->shape[i] != yt->shape[i] || zt->shape[i] != yt->shape[i])
            return 0;
    int nodes[3] = { conv->id, add->id, -1 }, nn = 2, out = add->outputs[0];
    pg_node *relu = pg_ir_is_output(g, out) ? NULL : pm_sole_consumer(g, out, PG_OP_RELU);
    if (relu && relu->n_outputs == 1) {
        nodes[nn++] = relu->id;
        out = relu->outputs[0];
    }
    saved_attrs sa;
    if (!save_attrs(conv, &sa))
        return 0;
    int ins[4] = { conv->inputs[0], conv->inputs[1], conv->inputs[2], s };
    int f = pg_pass_fuse(c, g, nodes, nn, "FusedConv", "conv_res", ins, 4, &out, 1);
    if (f < 0 || restore_attrs(g->nodes[f], &sa) ||
        pg_ir_set_attr_string(g->nodes[f], "activation", nn == 3 ? "relu" : "none"))
        return -1;
    return 1;
}

static pg_status run_residual(pg_graph *g, pg_pass_ctx *c) { return run_each(g, c, PG_OP_FUSED_CONV, try_residual); }

const pg_pass_def pg_pass_conv_residual_fusion = {
    "conv_residual_fusion", 3,
    "blocked FusedConv + Add (the skip connection) [+ Relu] -> one FusedConv adding the skip tensor in its epilogue",
    run_residual,
};

/* ---- conv_prepack ------------------------------------------------------------ */

/* The GEMM-form conv whose bias rides as A's last column gets that A (W
 * with the bias after each row) made here once, as its tensor attribute
 * "value" (the executor's kctx.state), instead of a copy per run. */
static pg_status run_conv_prepack(pg_graph *g, pg_pass_ctx *c)
{
    pg_status st = pg_pass_need_shapes(g, c);
    if (st)
        return st;
    int n0 = g->n_nodes;
    for (int id = 0; id < n0; id++) {
        pg_node *n = g->nodes[id];
        if (!n || (n->op != PG_OP_CONV && n->op != PG_OP_FUSED_CONV) || n->n_inputs < 3 || n->inputs[2] < 0 ||
            pg_ir_attr(n, "value"))
            continue;
        const pg_tensor *x = pm_tensor(g, n->inputs[0]), *wt = pm_tensor(g, n->inputs[1]);
        if (!x || !wt || !pm_const_f32(g, n->inputs[1]) || wt->layout != PG_LAYOUT_ROW_MAJOR ||
            !pg_tensor_shape_known(x) || !pg_tensor_shape_known(wt))
            continue;
        int64_t M = wt->shape[0], K = pg_tensor_numel(wt) / (M ? M : 1);
        const float *B = vec_m(g, n->inputs[2], M);
        size_t Kp = pg_conv_gemm_bias_cols(n, x, wt);
        if (!B || !Kp || (int64_t)Kp != K + 1)
            continue;
        char name[96];
        int64_t shape[2] = { M, (int64_t)Kp };
        int t = pg_ir_add_const(g, pg_ir_unique_name(g, "conv_wb", name, sizeof name), PG_DTYPE_FLOAT32, 2, shape,
                                NULL);
        if (t < 0)
            return pg_last_status();
        float *d = g->tensors[t]->data;
        const float *W = g->tensors[n->inputs[1]]->data;
        for (int64_t m = 0; m < M; m++) {
            memcpy(d + m * (int64_t)Kp, W + m * K, (size_t)K * sizeof(float));
            d[m * (int64_t)Kp + K] = B[m];
        }
        if ((st = pg_ir_set_attr_tensor(n, "value", t)) || (st = pg_ir_set_attr_int(n, "value_cols", (int64_t)Kp)))
            return st;
        pg_pass_note(c, g, PG_PASS_REWRITTEN, id, 0, "'%s': W with its bias column packed once ('%s', %lld x %zu)",
                     n->name, name, (long long)M, Kp);
    }
    return PG_OK;
}

const pg_pass_def pg_pass_conv_prepack = {
    "conv_prepack", 3,
    "the GEMM-form conv's W with its bias column made once at compile (not copied per run)",
    run_conv_prepack,
};

/* fuse_quant.c - quantised products as one int8 step.
 *
 * quant_fusion rewrites the two forms ONNX Runtime's quantisation tools
 * write into QuantMatMul (ops_quant.c), the int8 product with the
 * dequantising epilogue:
 *
 *   quantize_dynamic:
 *     (xq, xs, xz) = DynamicQuantizeLinear(x)
 *     MatMulInteger(xq, Wq, xz, wz) -> Cast(to float) -> Mul(., Mul(xs, ws))
 *     [-> Add(bias)]
 *   -> QuantMatMul(xq, xs, xz, Wp [, bias])
 *   (the DynamicQuantizeLinear stays: one quantisation of x serves every
 *   product reading it - Q, K and V - and the epilogue does the Cast, Mul
 *   and Add in the same float32 order, so the step computes the very
 *   numbers the chain did.)
 *
 *   QDQ (quantize_static):
 *     MatMul(DequantizeLinear(aq, as, az), DequantizeLinear(Wq, ws, wz))
 *     [-> Add(bias)]
 *   -> QuantMatMul(aq, as, az, Wp [, bias])
 *   (the float product of the dequantised values becomes the exact int32
 *   sum times as * ws: equal up to float32 rounding.)
 *
 * Conditions: Wq a 2-D uint8/int8 constant [K, N]; ws a float32 constant
 * with one value or one per column (axis 1, no blocks); wz a constant of
 * Wq's type, shaped like ws, or absent; aq's scale and zero point one value
 * each (they may be computed at run time); a bias a float32 constant of N
 * values (through Identity nodes); every intermediate read only by the
 * next node of the chain.  A DynamicQuantizeLinear or DequantizeLinear
 * feeding several products serves them all and goes when the last one is
 * fused.
 *
 * The weight is packed once, here, into gemm_u8s8's panels (Wp, an int8
 * constant of the blob's bytes, with the column sums, scales and zero
 * points; one layout for every variant, so a CPU-mask change never
 * re-packs it): uint8 weights become int8 (W - 128, zero point - 128: the
 * same differences), so the kernel always multiplies uint8 activations by
 * int8 weights (VNNI's vpdpbusd).
 *
 * The pass is level 1 and runs right after shape inference, before
 * constant folding: folded, DequantizeLinear(Wq) would become a float32
 * weight four times the size and the int8 product would be lost (ONNX
 * Runtime keeps such DequantizeLinear nodes out of its folding likewise). */
#include <stdio.h>
#include <string.h>

#include "../core/alloc.h"
#include "../kernels/gemm_u8s8/gemm_u8s8.h"
#include "match.h"
#include "pass.h"

/* The one node reading t exactly once, t not a graph output; NULL
 * otherwise (the reader list makes this O(1)). */
static pg_node *sole_reader(const pg_graph *g, int t, pg_opcode op)
{
    const pg_tensor *x = pm_tensor(g, t);
    if (!x || x->n_users != 1 || x->n_output_refs)
        return NULL;
    pg_node *n = g->nodes[x->users[0]];
    return n && n->op == op ? n : NULL;
}

static int is_const(const pg_graph *g, int t)
{
    const pg_tensor *x = pm_tensor(g, t);
    return x && x->is_const && x->data && x->layout == PG_LAYOUT_ROW_MAJOR && x->rank >= 0;
}

/* A per-tensor or per-column (of N) constant of dtype dt. */
static int per_col_const(const pg_graph *g, int t, pg_dtype dt, int64_t N)
{
    if (!is_const(g, t))
        return 0;
    const pg_tensor *x = g->tensors[t];
    int64_t n = pg_tensor_numel(x);
    return x->dtype == dt && x->rank <= 1 && (n == 1 || n == N);
}

/* A one-value tensor (constant or not) of dtype dt. */
static int one_value(const pg_graph *g, int t, pg_dtype dt)
{
    const pg_tensor *x = pm_tensor(g, t);
    return x && x->dtype == dt && x->rank >= 0 && x->rank <= 1 && pg_tensor_numel(x) == 1;
}

static int is_q8(pg_dtype dt) { return dt == PG_DTYPE_UINT8 || dt == PG_DTYPE_INT8; }

/* t, or the constant an Identity chain above it passes through. */
static int through_identity(const pg_graph *g, int t)
{
    for (int i = 0; i < 16; i++) {
        pg_node *p = pm_producer(g, t, PG_OP_IDENTITY);
        if (!p)
            break;
        t = p->inputs[0];
    }
    return t;
}

/* The weight Wq [K, N] (scale ws, zero point wz, -1: none) packed once for
 * gemm_u8s8 (pg_u8s8_pack_s8): a new int8 constant of the blob's bytes.
 * *zero gets whether the blob keeps zero points (any nonzero). */
static int pack_weight(pg_graph *g, int wq, int ws, int wz, int *zero)
{
    const pg_tensor *w = g->tensors[wq], *s = g->tensors[ws];
    size_t K = (size_t)w->shape[0], N = (size_t)w->shape[1];
    int u8 = w->dtype == PG_DTYPE_UINT8;
    int64_t nz = wz >= 0 ? pg_tensor_numel(g->tensors[wz]) : 1, nsc = pg_tensor_numel(s);
    int8_t *b = pg_malloc(K * N + 1);
    int32_t *z = pg_malloc((size_t)nz * sizeof(int32_t) + 4);
    if (!b || !z) {
        pg_free(b);
        pg_free(z);
        return pg_fail(PG_ERR_NOMEM, "out of memory packing weight '%s'", w->name), -1;
    }
    const uint8_t *src = w->data;
    for (size_t i = 0; i < K * N; i++)
        b[i] = (int8_t)(u8 ? (int)src[i] - 128 : (int)(int8_t)src[i]);
    int any = 0;
    for (int64_t j = 0; j < nz; j++) {
        int v = wz < 0 ? 0 : u8 ? ((const uint8_t *)g->tensors[wz]->data)[j]
                                : ((const int8_t *)g->tensors[wz]->data)[j];
        z[j] = u8 ? v - 128 : v;
        any |= z[j] != 0;
    }
    int64_t bytes = (int64_t)pg_u8s8_packed_bytes(K, N, any);
    char name[160], base[120];
    snprintf(base, sizeof base, "%s_u8s8", w->name);
    int id = pg_ir_add_const(g, pg_ir_unique_name(g, base, name, sizeof name), PG_DTYPE_INT8, 1, &bytes,
                             NULL);
    if (id >= 0)
        pg_u8s8_pack_s8(K, N, b, N, g->tensors[ws]->data, nsc != 1, any ? z : NULL, nz != 1,
                        g->tensors[id]->data);
    pg_free(b);
    pg_free(z);
    *zero = any;
    return id;
}

/* The QuantMatMul replacing the matched nodes, with its attributes. */
static int add_qmm(pg_graph *g, pg_pass_ctx *c, const int *nodes, int n, const int *ins, int y,
                   int64_t K, int64_t N, int zero)
{
    int id = pg_pass_fuse(c, g, nodes, n, "QuantMatMul", "qmatmul", ins, ins[4] >= 0 ? 5 : 4, &y, 1);
    if (id < 0)
        return -1;
    pg_node *q = g->nodes[id];
    if (pg_ir_set_attr_int(q, "k", K) || pg_ir_set_attr_int(q, "n", N) ||
        pg_ir_set_attr_int(q, "zero", zero))
        return -1;
    return 1;
}

/* After the product ending in tensor y (its last node `last`): an Add of
 * a constant per-column bias read only there.  Returns the Add (and the
 * bias tensor in *bias), or NULL. */
static pg_node *bias_add(const pg_graph *g, int y, int64_t N, int *bias)
{
    pg_node *add = sole_reader(g, y, PG_OP_ADD);
    if (!add || add->n_inputs != 2)
        return NULL;
    int other = through_identity(g, pm_other_input(add, y));
    const pg_tensor *b = pm_tensor(g, other);
    if (!b || !pm_const_f32(g, other) || b->rank != 1 || b->shape[0] != N)
        return NULL;
    const pg_tensor *yt = g->tensors[y], *o = g->tensors[add->outputs[0]];
    if (!pm_same_shape(yt, o))
        return NULL;
    *bias = other;
    return add;
}

/* quantize_dynamic's chain from a MatMulInteger. */
static int fuse_dynamic(pg_graph *g, pg_pass_ctx *c, pg_node *mmi)
{
    if (mmi->n_inputs < 3 || mmi->inputs[2] < 0)
        return 0;
    pg_node *dq = pm_producer(g, mmi->inputs[0], PG_OP_DYNAMIC_QUANTIZE_LINEAR);
    if (!dq || dq->outputs[0] != mmi->inputs[0] || dq->outputs[2] != mmi->inputs[2])
        return 0;
    int wq = mmi->inputs[1], wz = mmi->n_inputs > 3 ? mmi->inputs[3] : -1;
    const pg_tensor *w = pm_tensor(g, wq);
    if (!is_const(g, wq) || !is_q8(w->dtype) || w->rank != 2)
        return 0;
    int64_t N = w->shape[1];
    if (wz >= 0 && !per_col_const(g, wz, w->dtype, N))
        return 0;
    pg_node *cast = sole_reader(g, mmi->outputs[0], PG_OP_CAST);
    if (!cast || pg_ir_attr_int(cast, "to", 0) != PG_DTYPE_FLOAT32)
        return 0;
    pg_node *mul = sole_reader(g, cast->outputs[0], PG_OP_MUL);
    if (!mul || mul->n_inputs != 2)
        return 0;
    pg_node *sm = pm_producer(g, pm_other_input(mul, cast->outputs[0]), PG_OP_MUL);
    if (!sm || sm->n_inputs != 2)
        return 0;
    int ws = pm_other_input(sm, dq->outputs[1]);
    if (ws < 0 || !per_col_const(g, ws, PG_DTYPE_FLOAT32, N))
        return 0;
    /* the scale product's shape must not change the output's */
    if (!pm_same_shape(g->tensors[mul->outputs[0]], g->tensors[mmi->outputs[0]]))
        return 0;
    int bias = -1;
    pg_node *add = bias_add(g, mul->outputs[0], N, &bias);
    int zero = 0, wp = pack_weight(g, wq, ws, wz, &zero);
    if (wp < 0)
        return -1;
    int ins[5] = { dq->outputs[0], dq->outputs[1], dq->outputs[2], wp, bias };
    int nodes[4] = { mmi->id, cast->id, mul->id, add ? add->id : -1 };
    return add_qmm(g, c, nodes, add ? 4 : 3, ins, add ? add->outputs[0] : mul->outputs[0], w->shape[0], N,
                   zero);
}

/* A DequantizeLinear per tensor (or, for the weight, per column of N,
 * axis 1) with no blocks. */
static int plain_dq(const pg_graph *g, const pg_node *dq, int rank, int64_t N)
{
    if (pg_ir_attr_int(dq, "block_size", 0) != 0 || dq->n_inputs < 2)
        return 0;
    const pg_tensor *s = pm_tensor(g, dq->inputs[1]);
    if (!s || pg_tensor_numel(s) == 1)
        return 1;
    int64_t axis = pg_ir_attr_int(dq, "axis", 1);
    return N > 0 && rank == 2 && (axis == 1 || axis == -1);
}

/* QDQ: MatMul(DQ(aq), DQ(Wq)). */
static int fuse_qdq(pg_graph *g, pg_pass_ctx *c, pg_node *mm)
{
    pg_node *da = pm_producer(g, mm->inputs[0], PG_OP_DEQUANTIZE_LINEAR);
    pg_node *dw = pm_producer(g, mm->inputs[1], PG_OP_DEQUANTIZE_LINEAR);
    if (!da || !dw || da->n_inputs < 2 || dw->n_inputs < 2)
        return 0;
    int aq = da->inputs[0], as = da->inputs[1], az = da->n_inputs > 2 ? da->inputs[2] : -1;
    const pg_tensor *at = pm_tensor(g, aq);
    if (!at || !is_q8(at->dtype) || at->rank < 1 || !plain_dq(g, da, at->rank, 0) ||
        !one_value(g, as, PG_DTYPE_FLOAT32) || (az >= 0 && !one_value(g, az, at->dtype)))
        return 0;
    int wq = dw->inputs[0], ws = dw->inputs[1], wz = dw->n_inputs > 2 ? dw->inputs[2] : -1;
    const pg_tensor *w = pm_tensor(g, wq);
    if (!is_const(g, wq) || !is_q8(w->dtype) || w->rank != 2)
        return 0;
    int64_t N = w->shape[1];
    if (!plain_dq(g, dw, 2, N) || !per_col_const(g, ws, PG_DTYPE_FLOAT32, N) ||
        (wz >= 0 && !per_col_const(g, wz, w->dtype, N)))
        return 0;
    int azp = az;
    if (azp < 0) {
        /* QuantMatMul needs the activation's zero point: a 0 of its type */
        char name[96];
        int64_t one = 1;
        uint8_t zero = 0;
        azp = pg_ir_add_const(g, pg_ir_unique_name(g, "qmatmul_zero", name, sizeof name), at->dtype, 0,
                              &one, &zero);
        if (azp < 0)
            return -1;
    }
    int bias = -1;
    pg_node *add = bias_add(g, mm->outputs[0], N, &bias);
    int zero = 0, wp = pack_weight(g, wq, ws, wz, &zero);
    if (wp < 0)
        return -1;
    int ins[5] = { aq, as, azp, wp, bias };
    int nodes[2] = { mm->id, add ? add->id : -1 };
    return add_qmm(g, c, nodes, add ? 2 : 1, ins, add ? add->outputs[0] : mm->outputs[0], w->shape[0], N,
                   zero);
}

static pg_status run_quant_fusion(pg_graph *g, pg_pass_ctx *c)
{
    pg_status st = pg_pass_need_shapes(g, c);
    if (st)
        return st;
    int fused = 0;
    int n_nodes = g->n_nodes;   /* the fused nodes appended go unvisited */
    for (int i = 0; i < n_nodes; i++) {
        pg_node *n = g->nodes[i];
        if (!n)
            continue;
        int r = 0;
        if (n->op == PG_OP_MATMUL_INTEGER)
            r = fuse_dynamic(g, c, n);
        else if (n->op == PG_OP_MATMUL && n->n_inputs == 2)
            r = fuse_qdq(g, c, n);
        if (r < 0)
            return pg_last_status();
        fused += r;
    }
    if (fused) {
        /* the DynamicQuantizeLinear, DequantizeLinear and scale products
         * nothing reads any more */
        for (int i = 0; i < g->n_nodes; i++) {
            pg_node *n = g->nodes[i];
            if (!n || (n->op != PG_OP_DYNAMIC_QUANTIZE_LINEAR && n->op != PG_OP_DEQUANTIZE_LINEAR &&
                       n->op != PG_OP_MUL))
                continue;
            int read = 0;
            for (int o = 0; o < n->n_outputs; o++) {
                const pg_tensor *t = g->tensors[n->outputs[o]];
                read |= t->n_users > 0 || t->n_output_refs > 0;
            }
            if (!read)
                pg_pass_remove(c, g, n->id, "nothing reads it after quant_fusion");
        }
        pg_ir_remove_dead(g);
    }
    return PG_OK;
}

const pg_pass_def pg_pass_quant_fusion = {
    "quant_fusion", 1,
    "quantised MatMuls (quantize_dynamic's MatMulInteger chains, QDQ DequantizeLinear -> MatMul) "
    "as one int8 QuantMatMul step",
    run_quant_fusion,
};

/* ---- quant_epilogue_fusion -------------------------------------------------
 * After gelu_fusion (level 2):
 *   QuantMatMul -> Gelu (erf, read only there)
 *   -> QuantMatMul with activation "gelu" (applied to rows in cache);
 *   QuantMatMul P -> Y (read only by) DynamicQuantizeLinear -> (yq, ys, yz)
 *   read only by one QuantMatMul C (its A, a_scale, a_zp)
 *   -> P also writes Y's min / max (output "stats") and C quantises Y
 *      itself from them (float A, input a_stats): Y is read once instead of
 *      twice and the DynamicQuantizeLinear step goes.  The quantised values
 *      are the same: the same min / max, the same rounding. */

/* A copy of a QuantMatMul with new inputs / outputs replacing the nodes
 * matched (the first is the QuantMatMul whose attributes are kept). */
static int refuse_qmm(pg_graph *g, pg_pass_ctx *c, const int *nodes, int n, const int *ins, int n_in,
                      const int *outs, int n_out, const char *act)
{
    const pg_node *q = g->nodes[nodes[0]];
    int64_t K = pg_ir_attr_int(q, "k", 0), N = pg_ir_attr_int(q, "n", 0), z = pg_ir_attr_int(q, "zero", 0);
    char a[16];
    snprintf(a, sizeof a, "%s", act ? act : pg_ir_attr_string(q, "activation", "none"));
    int id = pg_pass_fuse(c, g, nodes, n, "QuantMatMul", "qmatmul", ins, n_in, outs, n_out);
    if (id < 0)
        return -1;
    pg_node *r = g->nodes[id];
    if (pg_ir_set_attr_int(r, "k", K) || pg_ir_set_attr_int(r, "n", N) || pg_ir_set_attr_int(r, "zero", z) ||
        pg_ir_set_attr_string(r, "activation", a))
        return -1;
    return 1;
}

static int fuse_gelu(pg_graph *g, pg_pass_ctx *c, pg_node *q)
{
    if (q->n_outputs != 1 || strcmp(pg_ir_attr_string(q, "activation", "none"), "none"))
        return 0;
    pg_node *ge = sole_reader(g, q->outputs[0], PG_OP_GELU);
    if (!ge || strcmp(pg_ir_attr_string(ge, "approximate", "none"), "none"))
        return 0;
    int ins[6], n_in = q->n_inputs, y = ge->outputs[0];
    memcpy(ins, q->inputs, sizeof(int) * (size_t)n_in);
    int nodes[2] = { q->id, ge->id };
    return refuse_qmm(g, c, nodes, 2, ins, n_in, &y, 1, "gelu");
}

static int fuse_stats(pg_graph *g, pg_pass_ctx *c, pg_node *dq)
{
    int y = dq->inputs[0];
    pg_node *p = pm_producer(g, y, PG_OP_QUANT_MATMUL);
    if (!p || p->n_outputs != 1 || sole_reader(g, y, PG_OP_DYNAMIC_QUANTIZE_LINEAR) != dq)
        return 0;
    pg_node *cons = sole_reader(g, dq->outputs[0], PG_OP_QUANT_MATMUL);
    if (!cons || sole_reader(g, dq->outputs[1], PG_OP_QUANT_MATMUL) != cons ||
        sole_reader(g, dq->outputs[2], PG_OP_QUANT_MATMUL) != cons || cons->n_inputs > 5 ||
        cons->inputs[0] != dq->outputs[0] || cons->inputs[1] != dq->outputs[1] ||
        cons->inputs[2] != dq->outputs[2])
        return 0;
    char name[160], base[128];
    snprintf(base, sizeof base, "%s_stats", g->tensors[y]->name);
    int64_t three = 3;
    int stats = pg_ir_add_tensor(g, pg_ir_unique_name(g, base, name, sizeof name), PG_DTYPE_INT32, 1, &three);
    if (stats < 0)
        return -1;
    int pin[6], pn = p->n_inputs, pouts[2] = { y, stats };
    memcpy(pin, p->inputs, sizeof(int) * (size_t)pn);
    int cin[6] = { y, -1, -1, cons->inputs[3], cons->n_inputs > 4 ? cons->inputs[4] : -1, stats };
    int cout = cons->outputs[0], pid = p->id, cid = cons->id, did = dq->id;
    if (refuse_qmm(g, c, &pid, 1, pin, pn, pouts, 2, NULL) < 0)
        return -1;
    int nodes[2] = { cid, did };
    return refuse_qmm(g, c, nodes, 2, cin, 6, &cout, 1, NULL);
}

static pg_status run_quant_epilogue(pg_graph *g, pg_pass_ctx *c)
{
    pg_status st = pg_pass_need_shapes(g, c);
    if (st)
        return st;
    int n_nodes = g->n_nodes;
    for (int i = 0; i < n_nodes; i++) {
        pg_node *n = g->nodes[i];
        if (n && n->op == PG_OP_QUANT_MATMUL && fuse_gelu(g, c, n) < 0)
            return pg_last_status();
    }
    n_nodes = g->n_nodes;
    for (int i = 0; i < n_nodes; i++) {
        pg_node *n = g->nodes[i];
        if (n && n->op == PG_OP_DYNAMIC_QUANTIZE_LINEAR && fuse_stats(g, c, n) < 0)
            return pg_last_status();
    }
    return PG_OK;
}

const pg_pass_def pg_pass_quant_epilogue_fusion = {
    "quant_epilogue_fusion", 2,
    "a Gelu after a QuantMatMul into its epilogue; a DynamicQuantizeLinear between two QuantMatMuls "
    "into the second, from min / max the first computes",
    run_quant_epilogue,
};

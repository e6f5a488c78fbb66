/* infer_conv.c - shape rules of the CNN ops: Conv, ConvTranspose,
 * MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool,
 * BatchNormalization, PRelu, DepthToSpace, SpaceToDepth (exec/ops_conv.c,
 * ops_pool.c, ops_cnn_misc.c run them), and the window geometry
 * (exec/cnn.h) that the rules and the executors share.
 *
 * Layout: NCHW, as ONNX has it. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "../exec/cnn.h"
#include "../exec/conv_fast.h"
#include "../exec/elem.h"
#include "infer.h"

#define FAIL PG_INFER_FAIL

/* "node 'name' (op): message" without an infer context (the executors
 * call the geometry too). */
static pg_status node_fail(const pg_node *n, pg_status st, const char *fmt, ...) PG_PRINTF(3, 4);
static pg_status node_fail(const pg_node *n, pg_status st, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return pg_fail(st, "node '%s' (%s): %s", n->name, n->op_type, msg);
}

static int64_t floordiv2(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

/* Strides, dilations, pads, kernel dims and block sizes above this are
 * refused (no real network has them; below it no product of two overflows). */
#define ATTR_MAX ((int64_t)1 << 24)

/* An ints attribute of exactly `want` entries (absent: dflt each), each
 * at least `min`. */
static pg_status read_ints(const pg_node *n, const char *name, int want, int64_t dflt, int64_t min,
                           int64_t *out, int *given)
{
    int cnt = 0;
    const int64_t *v = pg_ir_attr_ints(n, name, &cnt);
    if (given)
        *given = v != NULL && cnt > 0;
    if (!v || cnt == 0) {
        for (int i = 0; i < want; i++) out[i] = dflt;
        return PG_OK;
    }
    if (cnt != want)
        return node_fail(n, PG_ERR_GRAPH, "attribute '%s' has %d values; the input has %d spatial dims%s",
                         name, cnt, want / (strcmp(name, "pads") ? 1 : 2),
                         strcmp(name, "pads") ? "" : " (pads needs two per dim)");
    for (int i = 0; i < want; i++) {
        if (v[i] < min || v[i] > ATTR_MAX)
            return node_fail(n, min > 0 && v[i] < min ? PG_ERR_GRAPH : PG_ERR_UNSUPPORTED,
                             "attribute '%s' value %lld is not supported (%lld to %lld)", name,
                             (long long)v[i], (long long)min, (long long)ATTR_MAX);
        out[i] = v[i];
    }
    return PG_OK;
}

enum { AP_NOTSET, AP_VALID, AP_SAME_UPPER, AP_SAME_LOWER };

pg_status pg_win_geometry(const pg_node *n, int kind, int nsp, const int64_t *in, const int64_t *k,
                          pg_win *w)
{
    if (nsp < 1 || nsp > PG_CNN_MAX_SPATIAL)
        return node_fail(n, PG_ERR_UNSUPPORTED, "%d spatial dims are not supported (1 to 3)", nsp);
    int64_t st[3], dil[3], pads[6], opad[3] = { 0, 0, 0 }, oshape[3] = { 0, 0, 0 };
    int have_pads = 0, have_oshape = 0;
    pg_status s;
    if ((s = read_ints(n, "strides", nsp, 1, 1, st, NULL)) ||
        (s = read_ints(n, "dilations", nsp, 1, 1, dil, NULL)) ||
        (s = read_ints(n, "pads", 2 * nsp, 0, 0, pads, &have_pads)))
        return s;
    const char *ap = pg_ir_attr_string(n, "auto_pad", "NOTSET");
    int apm = !strcmp(ap, "NOTSET") ? AP_NOTSET : !strcmp(ap, "VALID") ? AP_VALID
            : !strcmp(ap, "SAME_UPPER") ? AP_SAME_UPPER : !strcmp(ap, "SAME_LOWER") ? AP_SAME_LOWER : -1;
    if (apm < 0)
        return node_fail(n, PG_ERR_UNSUPPORTED, "attribute 'auto_pad' = '%s' is not supported "
                         "(NOTSET, VALID, SAME_UPPER, SAME_LOWER)", ap);
    int64_t ceil_mode = kind == PG_WIN_POOL ? pg_ir_attr_int(n, "ceil_mode", 0) : 0;
    if (ceil_mode != 0 && ceil_mode != 1)
        return node_fail(n, PG_ERR_GRAPH, "attribute 'ceil_mode' is %lld; it must be 0 or 1",
                         (long long)ceil_mode);
    if (kind == PG_WIN_CONV_TRANSPOSE) {
        if ((s = read_ints(n, "output_padding", nsp, 0, 0, opad, NULL)))
            return s;
        int cnt = 0;
        const int64_t *os = pg_ir_attr_ints(n, "output_shape", &cnt);
        if (os && cnt > 0) {
            if (cnt != nsp && cnt != nsp + 2)
                return node_fail(n, PG_ERR_GRAPH, "attribute 'output_shape' has %d values; the input "
                                 "has %d spatial dims", cnt, nsp);
            for (int i = 0; i < nsp; i++) {
                oshape[i] = os[cnt - nsp + i];
                if (oshape[i] < 1 || oshape[i] > ATTR_MAX)
                    return node_fail(n, PG_ERR_SHAPE, "attribute 'output_shape' value %lld is not positive",
                                     (long long)oshape[i]);
            }
            have_oshape = 1;
        }
    }
    int off = PG_CNN_MAX_SPATIAL - nsp;
    for (int i = 0; i < off; i++) {
        w->in[i] = w->k[i] = w->out[i] = w->stride[i] = w->dil[i] = 1;
        w->lo[i] = w->hi[i] = 0;
    }
    w->nsp = nsp;
    for (int i = 0; i < nsp; i++) {
        int j = off + i;
        int64_t eff = (k[i] - 1) * dil[i] + 1, lo = pads[i], hi = pads[nsp + i], out;
        if (k[i] < 1 || k[i] > ATTR_MAX)
            return node_fail(n, PG_ERR_SHAPE, "kernel dim %d is %lld; it must be 1 to %lld", i,
                             (long long)k[i], (long long)ATTR_MAX);
        if (in[i] < 1)
            return node_fail(n, PG_ERR_SHAPE, "spatial input dim %d is %lld; it must be positive", i,
                             (long long)in[i]);
        if (kind == PG_WIN_CONV_TRANSPOSE) {
            int64_t full = st[i] * (in[i] - 1) + opad[i] + eff;
            if (opad[i] >= st[i] && opad[i] >= dil[i])
                return node_fail(n, PG_ERR_GRAPH, "attribute 'output_padding' value %lld must be less "
                                 "than the stride or the dilation", (long long)opad[i]);
            if (have_oshape || apm == AP_SAME_UPPER || apm == AP_SAME_LOWER) {
                out = have_oshape ? oshape[i] : in[i] * st[i];
                int64_t total = full - out;
                /* SAME_UPPER puts the odd pad at the end, as the ONNX spec
                 * and its reference do (onnxruntime 1.32 puts it first) */
                if (apm == AP_SAME_UPPER) {
                    lo = floordiv2(total);
                } else if (apm == AP_SAME_LOWER) {
                    lo = total - floordiv2(total);
                } else {
                    /* output_shape with explicit (or no) pads: the ONNX
                     * reference keeps pads[begin]; onnxruntime takes half of
                     * the total.  Only where both agree. */
                    int64_t ort = total > 0 ? total / 2 : 0;
                    if (lo != ort)
                        return node_fail(n, PG_ERR_UNSUPPORTED, "attribute 'output_shape' with a total "
                                         "padding of %lld and pads begin %lld on dim %d is not supported "
                                         "(ambiguous between the ONNX reference and onnxruntime)",
                                         (long long)total, (long long)lo, i);
                }
                hi = total - lo;
            } else {
                if (apm == AP_VALID)
                    lo = hi = 0;
                out = full - lo - hi;
            }
            if (out < 1)
                return node_fail(n, PG_ERR_SHAPE, "output spatial dim %d would be %lld", i, (long long)out);
        } else if (apm == AP_SAME_UPPER || apm == AP_SAME_LOWER) {
            out = (in[i] + st[i] - 1) / st[i];
            int64_t total = (out - 1) * st[i] + eff - in[i];
            if (total < 0)
                total = 0;
            lo = apm == AP_SAME_UPPER ? total / 2 : total - total / 2;
            hi = total - lo;
        } else {
            if (apm == AP_VALID)
                lo = hi = 0;
            if (kind == PG_WIN_POOL && (lo >= eff || hi >= eff))   /* a window all in the pads */
                return node_fail(n, PG_ERR_UNSUPPORTED, "attribute 'pads' (%lld, %lld) on spatial dim %d is "
                                 "not supported: pads must be smaller than the kernel extent %lld",
                                 (long long)lo, (long long)hi, i, (long long)eff);
            int64_t num = in[i] + lo + hi - eff;
            if (num < 0)
                return node_fail(n, PG_ERR_SHAPE, "the kernel (extent %lld with dilation) is larger than "
                                 "the padded input (%lld) on spatial dim %d", (long long)eff,
                                 (long long)(in[i] + lo + hi), i);
            if (ceil_mode) {
                out = (num + st[i] - 1) / st[i] + 1;
                if ((out - 1) * st[i] >= in[i] + lo)   /* the last window would start in the end pad */
                    out--;
            } else {
                out = num / st[i] + 1;
            }
        }
        w->in[j] = in[i];
        w->k[j] = k[i];
        w->out[j] = out;
        w->stride[j] = st[i];
        w->dil[j] = dil[i];
        w->lo[j] = lo;
        w->hi[j] = hi;
    }
    return PG_OK;
}

/* X [N, C, spatial...] with 1..3 spatial dims. */
static pg_status need_nchw(pg_infer_ctx *c, int slot, int max_sp)
{
    const pg_tensor *x = c->in[slot];
    if (x->rank < 3 || x->rank > 2 + max_sp)
        return FAIL(x->rank < 3 ? PG_ERR_SHAPE : PG_ERR_UNSUPPORTED,
                    "input '%s' must be [N, C, spatial...] with 1 to %d spatial dims, not rank %d",
                    x->name, max_sp, x->rank);
    return PG_OK;
}

static void set_out_win(pg_infer_ctx *c, int i, pg_dtype dt, int64_t N, int64_t C, const pg_win *w)
{
    int64_t shape[5] = { N, C, 0, 0, 0 };
    for (int d = 0; d < w->nsp; d++)
        shape[2 + d] = w->out[PG_CNN_MAX_SPATIAL - w->nsp + d];
    pg_infer_set_out(c, i, dt, 2 + w->nsp, shape);
}

/* kernel_shape, when given, must be the weight's spatial dims. */
static pg_status check_kernel_shape(pg_infer_ctx *c, const pg_tensor *wt)
{
    int cnt = 0;
    const int64_t *ks = pg_ir_attr_ints(c->n, "kernel_shape", &cnt);
    if (!ks || !cnt)
        return PG_OK;
    if (cnt != wt->rank - 2)
        return FAIL(PG_ERR_SHAPE, "attribute 'kernel_shape' has %d values; weight '%s' has %d spatial dims",
                    cnt, wt->name, wt->rank - 2);
    for (int i = 0; i < cnt; i++)
        if (ks[i] != wt->shape[2 + i])
            return FAIL(PG_ERR_SHAPE, "attribute 'kernel_shape' [%d] = %lld, but weight '%s' has %lld there",
                        i, (long long)ks[i], wt->name, (long long)wt->shape[2 + i]);
    return PG_OK;
}

static pg_status check_bias(pg_infer_ctx *c, int64_t M)
{
    if (!pg_infer_has_in(c, 2))
        return PG_OK;
    const pg_tensor *b = c->in[2];
    pg_status st = pg_infer_need_float(c, 2);
    if (st)
        return st;
    if (b->rank != 1 || b->shape[0] != M)
        return FAIL(PG_ERR_SHAPE, "bias '%s' must be [%lld] (one per output channel)", b->name, (long long)M);
    return PG_OK;
}

/* Conv: X [N, C, in...], W [M, C/group, k...], B [M] -> [N, M, out...]. */
pg_status pg_infer_conv(pg_infer_ctx *c)
{
    const pg_tensor *x = c->in[0], *wt = c->in[1];
    pg_status st;
    if (pg_ir_attr_int(c->n, "nchwc", 0))
        return pg_infer_nchwc(c);   /* the blocked layout (exec/conv_nchwc.c) */
    if (c->n->n_inputs > 3 && c->n->inputs[3] >= 0)
        return FAIL(PG_ERR_UNSUPPORTED, "a skip input (the 4th) is taken only by the blocked (nchwc) form");
    if ((st = pg_infer_need_float(c, 0)) || (st = pg_infer_need_float(c, 1)) || (st = need_nchw(c, 0, 3)))
        return st;
    if (wt->rank != x->rank)
        return FAIL(PG_ERR_SHAPE, "weight '%s' has rank %d; input '%s' has rank %d (they must match)",
                    wt->name, wt->rank, x->name, x->rank);
    int64_t G = pg_ir_attr_int(c->n, "group", 1), C = x->shape[1], M = wt->shape[0];
    if (G < 1 || G > ATTR_MAX || (C > 0 && G > C))
        return FAIL(PG_ERR_GRAPH, "attribute 'group' is %lld; it must be 1 to the input channels (%lld)",
                    (long long)G, (long long)C);
    if (C % G || M % G)
        return FAIL(PG_ERR_SHAPE, "group = %lld must divide the input channels (%lld) and the output "
                    "channels (%lld)", (long long)G, (long long)C, (long long)M);
    if (wt->shape[1] * G != C)
        return FAIL(PG_ERR_SHAPE, "weight '%s' has %lld input channels per group (x group %lld = %lld); "
                    "input '%s' has %lld channels", wt->name, (long long)wt->shape[1], (long long)G,
                    (long long)(wt->shape[1] * G), x->name, (long long)C);
    if ((st = check_kernel_shape(c, wt)) || (st = check_bias(c, M)))
        return st;
    pg_win w;
    if ((st = pg_win_geometry(c->n, PG_WIN_CONV, x->rank - 2, x->shape + 2, wt->shape + 2, &w)))
        return st;
    set_out_win(c, 0, PG_DTYPE_FLOAT32, x->shape[0], M, &w);
    return PG_OK;
}

/* ConvTranspose: X [N, C, in...], W [C, M/group, k...], B [M]. */
pg_status pg_infer_conv_transpose(pg_infer_ctx *c)
{
    const pg_tensor *x = c->in[0], *wt = c->in[1];
    pg_status st;
    if ((st = pg_infer_need_float(c, 0)) || (st = pg_infer_need_float(c, 1)) || (st = need_nchw(c, 0, 3)))
        return st;
    if (wt->rank != x->rank)
        return FAIL(PG_ERR_SHAPE, "weight '%s' has rank %d; input '%s' has rank %d (they must match)",
                    wt->name, wt->rank, x->name, x->rank);
    int64_t G = pg_ir_attr_int(c->n, "group", 1), C = x->shape[1];
    if (G < 1 || G > ATTR_MAX || (C > 0 && G > C))
        return FAIL(PG_ERR_GRAPH, "attribute 'group' is %lld; it must be 1 to the input channels (%lld)",
                    (long long)G, (long long)C);
    if (wt->shape[0] != C)
        return FAIL(PG_ERR_SHAPE, "weight '%s' has %lld input channels (dim 0); input '%s' has %lld",
                    wt->name, (long long)wt->shape[0], x->name, (long long)C);
    if (C % G)
        return FAIL(PG_ERR_SHAPE, "group = %lld must divide the input channels (%lld)", (long long)G,
                    (long long)C);
    int64_t M = wt->shape[1] * G;
    if ((st = check_kernel_shape(c, wt)) || (st = check_bias(c, M)))
        return st;
    pg_win w;
    if ((st = pg_win_geometry(c->n, PG_WIN_CONV_TRANSPOSE, x->rank - 2, x->shape + 2, wt->shape + 2, &w)))
        return st;
    set_out_win(c, 0, PG_DTYPE_FLOAT32, x->shape[0], M, &w);
    return PG_OK;
}

/* MaxPool (float32/float64/int8/uint8; Indices int64)
 * and AveragePool (float32/float64). */
pg_status pg_infer_pool(pg_infer_ctx *c)
{
    const pg_tensor *x = c->in[0];
    if (pg_ir_attr_int(c->n, "nchwc", 0))
        return pg_infer_nchwc(c);
    int is_max = c->n->op == PG_OP_MAXPOOL;
    int dt_ok = x->dtype == PG_DTYPE_FLOAT32 || x->dtype == PG_DTYPE_FLOAT64 ||
                (is_max && (x->dtype == PG_DTYPE_INT8 || x->dtype == PG_DTYPE_UINT8));
    if (!dt_ok)
        return FAIL(PG_ERR_DTYPE, "input '%s' is %s; %s takes %s", x->name, pg_dtype_name(x->dtype),
                    c->n->op_type, is_max ? "float32, float64, int8 or uint8" : "float32 or float64");
    pg_status st = need_nchw(c, 0, 3);
    if (st)
        return st;
    int nsp = x->rank - 2, cnt = 0;
    const int64_t *ks = pg_ir_attr_ints(c->n, "kernel_shape", &cnt);
    if (!ks || cnt != nsp)
        return FAIL(PG_ERR_GRAPH, "attribute 'kernel_shape' must give %d values (one per spatial dim), "
                    "it gives %d", nsp, ks ? cnt : 0);
    if (!is_max) {
        int64_t cip = pg_ir_attr_int(c->n, "count_include_pad", 0);
        if (cip != 0 && cip != 1)
            return FAIL(PG_ERR_GRAPH, "attribute 'count_include_pad' is %lld; it must be 0 or 1", (long long)cip);
    } else {
        int64_t so = pg_ir_attr_int(c->n, "storage_order", 0);
        if (so != 0 && so != 1)
            return FAIL(PG_ERR_GRAPH, "attribute 'storage_order' is %lld; it must be 0 or 1", (long long)so);
    }
    pg_win w;
    if ((st = pg_win_geometry(c->n, PG_WIN_POOL, nsp, x->shape + 2, ks, &w)))
        return st;
    set_out_win(c, 0, x->dtype, x->shape[0], x->shape[1], &w);
    if (c->n->n_outputs > 1)
        set_out_win(c, 1, PG_DTYPE_INT64, x->shape[0], x->shape[1], &w);
    return PG_OK;
}

/* GlobalAveragePool, GlobalMaxPool: [N, C, ...] -> [N, C, 1, ...]. */
pg_status pg_infer_global_pool(pg_infer_ctx *c)
{
    const pg_tensor *x = c->in[0];
    if (pg_ir_attr_int(c->n, "nchwc", 0))
        return pg_infer_nchwc(c);
    if (!pg_dt_is_float(x->dtype))
        return FAIL(PG_ERR_DTYPE, "input '%s' is %s; %s takes float32 or float64", x->name,
                    pg_dtype_name(x->dtype), c->n->op_type);
    if (x->rank < 3)
        return FAIL(PG_ERR_SHAPE, "input '%s' must be [N, C, spatial...], not rank %d", x->name, x->rank);
    int64_t shape[PG_MAX_RANK];
    for (int d = 0; d < x->rank; d++)
        shape[d] = d < 2 ? x->shape[d] : 1;
    pg_infer_set_out(c, 0, x->dtype, x->rank, shape);
    return PG_OK;
}

/* BatchNormalization, inference form: X [N, C, ...], scale, B, mean, var
 * [C] -> Y. */
pg_status pg_infer_batchnorm(pg_infer_ctx *c)
{
    const pg_tensor *x = c->in[0];
    if (pg_ir_attr_int(c->n, "training_mode", 0) != 0)
        return FAIL(PG_ERR_UNSUPPORTED, "attribute 'training_mode' = %lld is not supported (inference "
                    "only: the running statistics are used)", (long long)pg_ir_attr_int(c->n, "training_mode", 0));
    if (c->n->n_outputs > 1)
        return FAIL(PG_ERR_UNSUPPORTED, "the running_mean / running_var outputs (training) are not supported");
    if (x->rank < 2)
        return FAIL(PG_ERR_SHAPE, "input '%s' must be [N, C, ...] (rank >= 2), not rank %d", x->name, x->rank);
    static const char *const what[5] = { "input", "scale", "bias", "mean", "var" };
    for (int s = 0; s < 5; s++) {
        pg_status st = pg_infer_need_float(c, s);
        if (st)
            return st;
        if (s && pg_tensor_numel(c->in[s]) != x->shape[1])
            return FAIL(PG_ERR_SHAPE, "%s '%s' has %lld elements; input '%s' has %lld channels", what[s],
                        c->in[s]->name, (long long)pg_tensor_numel(c->in[s]), x->name, (long long)x->shape[1]);
    }
    pg_infer_set_out(c, 0, x->dtype, x->rank, x->shape);
    return PG_OK;
}

/* PRelu: slope broadcasts to X (unidirectionally). */
pg_status pg_infer_prelu(pg_infer_ctx *c)
{
    const pg_tensor *x = c->in[0], *s = c->in[1];
    pg_status st;
    if ((st = pg_infer_need_float(c, 0)) || (st = pg_infer_need_float(c, 1)))
        return st;
    int slots[2] = { 0, 1 }, r = 0;
    int64_t shape[PG_MAX_RANK];
    if ((st = pg_infer_broadcast(c, slots, 2, &r, shape)))
        return st;
    if (r != x->rank || memcmp(shape, x->shape, sizeof(int64_t) * (size_t)r))
        return FAIL(PG_ERR_SHAPE, "slope '%s' must broadcast to the shape of input '%s'", s->name, x->name);
    pg_infer_set_out(c, 0, x->dtype, x->rank, x->shape);
    return PG_OK;
}

/* DepthToSpace / SpaceToDepth: [N, C, H, W], blocksize b, mode DCR / CRD. */
pg_status pg_infer_depth_space(pg_infer_ctx *c)
{
    const pg_tensor *x = c->in[0];
    int d2s = c->n->op == PG_OP_DEPTH_TO_SPACE;
    if (x->rank != 4)
        return FAIL(PG_ERR_SHAPE, "input '%s' must be [N, C, H, W], not rank %d", x->name, x->rank);
    if (!pg_dtype_size(x->dtype))
        return FAIL(PG_ERR_DTYPE, "input '%s' has no element size", x->name);
    int64_t b = pg_ir_attr_int(c->n, "blocksize", 0);
    if (b < 1 || b > 65536)
        return FAIL(b < 1 ? PG_ERR_GRAPH : PG_ERR_UNSUPPORTED, "attribute 'blocksize' is %lld; it must "
                    "be 1 to 65536", (long long)b);
    const char *mode = pg_ir_attr_string(c->n, "mode", "DCR");
    if (strcmp(mode, "DCR") && strcmp(mode, "CRD"))
        return FAIL(PG_ERR_UNSUPPORTED, "attribute 'mode' = '%s' is not supported (DCR, CRD)", mode);
    int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3], shape[4];
    if (d2s) {
        if (C % (b * b))
            return FAIL(PG_ERR_SHAPE, "input '%s' has %lld channels, not a multiple of blocksize^2 = %lld",
                        x->name, (long long)C, (long long)(b * b));
        int64_t s[4] = { N, C / (b * b), H * b, W * b };
        memcpy(shape, s, sizeof s);
    } else {
        if (H % b || W % b)
            return FAIL(PG_ERR_SHAPE, "input '%s' spatial dims %lldx%lld are not multiples of blocksize %lld",
                        x->name, (long long)H, (long long)W, (long long)b);
        int64_t s[4] = { N, C * b * b, H / b, W / b };
        memcpy(shape, s, sizeof s);
    }
    pg_infer_set_out(c, 0, x->dtype, 4, shape);
    return PG_OK;
}

/* Resize / Upsample: the output size from scales or sizes (exec/ops_resize.c
 * computes the same geometry). */
pg_status pg_infer_resize(pg_infer_ctx *c)
{
    const void *val[4] = { NULL, NULL, NULL, NULL };
    for (int i = 1; i < c->n_in && i < 4; i++)
        if (c->in[i])
            val[i] = pg_infer_value(c->in[i]);
    pg_resize_geom g;
    pg_status st = pg_resize_geometry(c->n, c->n_in, (const pg_tensor *const *)c->in, val, &g);
    if (st)
        return st;
    pg_infer_set_out(c, 0, c->in[0]->dtype, g.rank, g.out);
    return PG_OK;
}

/* infer_quant.c - shape rules of the quantisation ops (ops_quant.c runs
 * them): QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
 * MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv, and QuantMatMul,
 * the int8 product the quant_fusion pass makes of them (engine/passes/fuse_quant.c).
 *
 * Element types: the quantised side is uint8 or int8 (DequantizeLinear also
 * reads int32, as quantised biases are), the real side float32.  The other
 * types of the ONNX schemas (int16, 4-bit, float8, ...) are refused by name.
 *
 * Scales (and zero points, which have the scale's shape) come in three
 * forms: per tensor (one element), per axis (1-D, the size of x's `axis`
 * dim) and, with block_size > 0, blocked (x's rank, x's dims except
 * ceil(dim / block_size) on `axis`). */
#include "../exec/elem.h"
#include <string.h>

#include "../exec/cnn.h"
#include "../exec/ops.h"
#include "../kernels/gemm_u8s8/gemm_u8s8.h"
#include "infer.h"

#define FAIL PG_INFER_FAIL
/* failures that show two tensors' shapes (formatted only then) */
#define FAIL_AB(...) PG_INFER_FAIL_AB(a, sa, b, sb, __VA_ARGS__)
#define FAIL_XS(...) PG_INFER_FAIL_AB(x, sx, s, ss, __VA_ARGS__)

static int is_q8(pg_dtype dt) { return dt == PG_DTYPE_UINT8 || dt == PG_DTYPE_INT8; }

/* The scale (slot 1) and zero point (slot 2, optional) fit x (slot 0) in
 * one of the three forms. */
static pg_status check_scale(pg_infer_ctx *c, const pg_tensor *x)
{
    const pg_tensor *s = c->in[1];
    char sx[128], ss[128];
    if (s->dtype != PG_DTYPE_FLOAT32)
        return FAIL(PG_ERR_DTYPE, "scale '%s' is %s; float32 scales only", s->name, pg_dtype_name(s->dtype));
    int64_t bs = pg_ir_attr_int(c->n, "block_size", 0);
    if (bs < 0)
        return FAIL(PG_ERR_GRAPH, "block_size %lld is negative", (long long)bs);
    int64_t ns = pg_tensor_numel(s);
    if (bs == 0 && s->rank <= 1 && ns == 1) {
        /* per tensor */
    } else {
        int axis = pg_norm_axis(pg_ir_attr_int(c->n, "axis", 1), x->rank);
        if (axis < 0)
            return FAIL_XS(PG_ERR_SHAPE, "axis %lld is out of range for x %s",
                           (long long)pg_ir_attr_int(c->n, "axis", 1), sx);
        int64_t D = x->shape[axis];
        if (bs == 0) {
            if (s->rank != 1 || ns != D)
                return FAIL_XS(PG_ERR_SHAPE, "scale '%s' %s is neither one value nor %lld values "
                               "(x %s, axis %d)", s->name, ss, (long long)D, sx, axis);
        } else {
            if (s->rank != x->rank)
                return FAIL_XS(PG_ERR_SHAPE, "blocked scale '%s' %s must have x's rank (x %s)",
                               s->name, ss, sx);
            for (int d = 0; d < x->rank; d++) {
                int64_t want = d == axis ? (x->shape[d] + bs - 1) / bs : x->shape[d];
                if (s->shape[d] != want)
                    return FAIL_XS(PG_ERR_SHAPE, "blocked scale '%s' %s does not fit x %s with "
                                   "block_size %lld on axis %d", s->name, ss, sx, (long long)bs,
                                   axis);
            }
        }
    }
    if (pg_infer_has_in(c, 2)) {
        const pg_tensor *z = c->in[2];
        int same = z->rank == s->rank || (pg_tensor_numel(z) == 1 && ns == 1);
        for (int d = 0; same && z->rank == s->rank && d < z->rank; d++)
            same = z->shape[d] == s->shape[d];
        if (!same) {
            char sz[128];
            pg_infer_shape_str(z, sz, sizeof sz);
            return FAIL_XS(PG_ERR_SHAPE, "zero point '%s' %s and scale '%s' %s differ in shape",
                           z->name, sz, s->name, ss);
        }
    }
    return PG_OK;
}

pg_status pg_infer_quantize_linear(pg_infer_ctx *c)
{
    const pg_tensor *x = c->in[0];
    if (x->dtype != PG_DTYPE_FLOAT32 && x->dtype != PG_DTYPE_INT32)
        return FAIL(PG_ERR_DTYPE, "x '%s' is %s; QuantizeLinear takes float32 or int32", x->name,
                    pg_dtype_name(x->dtype));
    int64_t odt = pg_ir_attr_int(c->n, "output_dtype", 0);
    pg_dtype dt;
    if (pg_infer_has_in(c, 2)) {
        dt = c->in[2]->dtype;
        if (!is_q8(dt))
            return FAIL(PG_ERR_UNSUPPORTED, "zero point '%s' is %s; uint8 and int8 only",
                        c->in[2]->name, pg_dtype_name(dt));
        if (odt != 0 && odt != (int64_t)dt)
            return FAIL(PG_ERR_GRAPH, "output_dtype %lld differs from the zero point's type %s",
                        (long long)odt, pg_dtype_name(dt));
    } else if (odt == 0 || odt == PG_DTYPE_UINT8 || odt == PG_DTYPE_INT8) {
        dt = odt == PG_DTYPE_INT8 ? PG_DTYPE_INT8 : PG_DTYPE_UINT8;
    } else {
        return FAIL(PG_ERR_UNSUPPORTED, "output_dtype %lld is not supported (uint8 and int8 only)",
                    (long long)odt);
    }
    int64_t prec = pg_ir_attr_int(c->n, "precision", 0);
    if (prec != 0 && prec != PG_DTYPE_FLOAT32)
        return FAIL(PG_ERR_UNSUPPORTED, "precision %lld is not supported (float32 only)", (long long)prec);
    pg_status st = check_scale(c, x);
    if (st)
        return st;
    pg_infer_set_out(c, 0, dt, x->rank, x->shape);
    return PG_OK;
}

pg_status pg_infer_dequantize_linear(pg_infer_ctx *c)
{
    const pg_tensor *x = c->in[0];
    if (!is_q8(x->dtype) && x->dtype != PG_DTYPE_INT32)
        return FAIL(PG_ERR_UNSUPPORTED, "x '%s' is %s; DequantizeLinear takes uint8, int8 or int32",
                    x->name, pg_dtype_name(x->dtype));
    if (pg_infer_has_in(c, 2) && c->in[2]->dtype != x->dtype)
        return FAIL(PG_ERR_DTYPE, "zero point '%s' is %s; x is %s", c->in[2]->name,
                    pg_dtype_name(c->in[2]->dtype), pg_dtype_name(x->dtype));
    int64_t odt = pg_ir_attr_int(c->n, "output_dtype", 0);
    if (odt != 0 && odt != PG_DTYPE_FLOAT32)
        return FAIL(PG_ERR_UNSUPPORTED, "output_dtype %lld is not supported (float32 only)", (long long)odt);
    pg_status st = check_scale(c, x);
    if (st)
        return st;
    pg_infer_set_out(c, 0, PG_DTYPE_FLOAT32, x->rank, x->shape);
    return PG_OK;
}

pg_status pg_infer_dynamic_quantize_linear(pg_infer_ctx *c)
{
    pg_status st = pg_infer_need_float(c, 0);
    if (st)
        return st;
    const pg_tensor *x = c->in[0];
    pg_infer_set_out(c, 0, PG_DTYPE_UINT8, x->rank, x->shape);
    pg_infer_set_out(c, 1, PG_DTYPE_FLOAT32, 0, NULL);
    pg_infer_set_out(c, 2, PG_DTYPE_UINT8, 0, NULL);
    return PG_OK;
}

/* numpy matmul shapes of a (slot ia) and b (slot ib) -> out. */
static pg_status matmul_shape(pg_infer_ctx *c, int ia, int ib, int *rank, int64_t *shape)
{
    const pg_tensor *a = c->in[ia], *b = c->in[ib];
    char sa[128], sb[128];
    if (a->rank < 1 || b->rank < 1)
        return FAIL_AB(PG_ERR_SHAPE, "inputs must have rank >= 1 (A %s, B %s)", sa, sb);
    int64_t K = a->shape[a->rank - 1];
    int64_t Kb = b->rank == 1 ? b->shape[0] : b->shape[b->rank - 2];
    if (K != Kb)
        return FAIL_AB(PG_ERR_SHAPE, "A '%s' %s and B '%s' %s: inner dimensions %lld and %lld "
                       "differ", a->name, sa, b->name, sb, (long long)K, (long long)Kb);
    int ra = a->rank >= 2 ? a->rank - 2 : 0, rb = b->rank >= 2 ? b->rank - 2 : 0;
    int r = ra > rb ? ra : rb;
    for (int d = 0; d < r; d++) {
        int64_t da = d - (r - ra) >= 0 ? a->shape[d - (r - ra)] : 1;
        int64_t db = d - (r - rb) >= 0 ? b->shape[d - (r - rb)] : 1;
        if (da != db && da != 1 && db != 1)
            return FAIL_AB(PG_ERR_SHAPE, "batch dims of %s and %s do not broadcast", sa, sb);
        shape[d] = da == 1 ? db : da;
    }
    int o = r;
    if (a->rank >= 2)
        shape[o++] = a->shape[a->rank - 2];
    if (b->rank >= 2)
        shape[o++] = b->shape[b->rank - 1];
    *rank = o;
    return PG_OK;
}

/* An 8-bit operand (slot i) and its optional zero point (slot zi) of the
 * same type, one value or `per` values (per 0: one value only). */
static pg_status check_q8_operand(pg_infer_ctx *c, int i, int zi, int64_t per, const char *what)
{
    const pg_tensor *t = c->in[i];
    if (!is_q8(t->dtype))
        return FAIL(PG_ERR_UNSUPPORTED, "%s '%s' is %s; uint8 or int8 only", what, t->name,
                    pg_dtype_name(t->dtype));
    if (!pg_infer_has_in(c, zi))
        return PG_OK;
    const pg_tensor *z = c->in[zi];
    if (z->dtype != t->dtype)
        return FAIL(PG_ERR_DTYPE, "zero point '%s' is %s; %s '%s' is %s", z->name,
                    pg_dtype_name(z->dtype), what, t->name, pg_dtype_name(t->dtype));
    int64_t nz = pg_tensor_numel(z);
    if (z->rank > 1 || (nz != 1 && nz != per))
        return FAIL(PG_ERR_SHAPE, "zero point '%s' of %s must be one value%s (it has %lld)", z->name,
                    what, per ? " or one per row/column" : "", (long long)nz);
    return PG_OK;
}

static pg_status check_f32_scalar(pg_infer_ctx *c, int i, int64_t per, const char *what)
{
    const pg_tensor *t = c->in[i];
    if (t->dtype != PG_DTYPE_FLOAT32)
        return FAIL(PG_ERR_DTYPE, "%s '%s' is %s; float32 only", what, t->name, pg_dtype_name(t->dtype));
    int64_t n = pg_tensor_numel(t);
    if (t->rank > 1 || (n != 1 && n != per))
        return FAIL(PG_ERR_SHAPE, "%s '%s' must be one value%s (it has %lld)", what, t->name,
                    per ? " or one per column" : "", (long long)n);
    return PG_OK;
}

static int64_t rows_of(const pg_tensor *a) { return a->rank >= 2 ? a->shape[a->rank - 2] : 1; }
static int64_t cols_of(const pg_tensor *b) { return b->rank >= 2 ? b->shape[b->rank - 1] : 1; }

pg_status pg_infer_matmul_integer(pg_infer_ctx *c)
{
    pg_status st;
    if ((st = check_q8_operand(c, 0, 2, rows_of(c->in[0]), "A")) ||
        (st = check_q8_operand(c, 1, 3, cols_of(c->in[1]), "B")))
        return st;
    int r = 0;
    int64_t shape[PG_MAX_RANK];
    if ((st = matmul_shape(c, 0, 1, &r, shape)))
        return st;
    pg_infer_set_out(c, 0, PG_DTYPE_INT32, r, shape);
    return PG_OK;
}

/* a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp */
pg_status pg_infer_qlinear_matmul(pg_infer_ctx *c)
{
    for (int i = 0; i < 8; i++)
        if (i != 2 && i != 5 && i != 7 && !pg_infer_has_in(c, i))
            return FAIL(PG_ERR_GRAPH, "input %d is missing", i);
    pg_status st;
    if ((st = check_q8_operand(c, 0, 2, rows_of(c->in[0]), "a")) ||
        (st = check_q8_operand(c, 3, 5, cols_of(c->in[3]), "b")) ||
        (st = check_f32_scalar(c, 1, rows_of(c->in[0]), "a_scale")) ||
        (st = check_f32_scalar(c, 4, cols_of(c->in[3]), "b_scale")) ||
        (st = check_f32_scalar(c, 6, 0, "y_scale")))
        return st;
    pg_dtype ydt = pg_infer_has_in(c, 7) ? c->in[7]->dtype : c->in[0]->dtype;
    if (!is_q8(ydt) || (pg_infer_has_in(c, 7) && pg_tensor_numel(c->in[7]) != 1))
        return FAIL(PG_ERR_UNSUPPORTED, "y_zero_point '%s' must be one uint8 or int8 value",
                    c->in[7]->name);
    int r = 0;
    int64_t shape[PG_MAX_RANK];
    if ((st = matmul_shape(c, 0, 3, &r, shape)))
        return st;
    pg_infer_set_out(c, 0, ydt, r, shape);
    return PG_OK;
}

/* QuantMatMul: A, a_scale, a_zp, Wp, bias, a_stats -> Y, stats; attrs k,
 * n, zero, activation (ops_quant.c documents it). */
pg_status pg_infer_quant_matmul(pg_infer_ctx *c)
{
    const pg_tensor *a = c->in[0], *w = pg_infer_has_in(c, 3) ? c->in[3] : NULL;
    int64_t K = pg_ir_attr_int(c->n, "k", 0), N = pg_ir_attr_int(c->n, "n", 0);
    int64_t zero = pg_ir_attr_int(c->n, "zero", 0);
    pg_status st;
    if (K < 1 || N < 1 || K > (1 << 24) || N > (1 << 24) || (zero != 0 && zero != 1))
        return FAIL(PG_ERR_GRAPH, "attributes k %lld, n %lld (1..2^24), zero %lld (0 or 1)",
                    (long long)K, (long long)N, (long long)zero);
    if (!w || w->dtype != PG_DTYPE_INT8 || w->rank != 1 || !w->is_const ||
        (size_t)w->shape[0] != pg_u8s8_packed_bytes((size_t)K, (size_t)N, (int)zero))
        return FAIL(PG_ERR_GRAPH, "the weight (input 3) must be an int8 constant of %zu bytes "
                    "(gemm_u8s8's packing of [%lld, %lld])",
                    pg_u8s8_packed_bytes((size_t)K, (size_t)N, (int)zero), (long long)K, (long long)N);
    if (a->dtype == PG_DTYPE_FLOAT32) {
        if (pg_infer_has_in(c, 1) || pg_infer_has_in(c, 2))
            return FAIL(PG_ERR_GRAPH, "a float32 A is quantised here: a_scale and a_zp must be absent");
    } else {
        if (!pg_infer_has_in(c, 1) || !pg_infer_has_in(c, 2))
            return FAIL(PG_ERR_GRAPH, "a quantised A needs a_scale and a_zp");
        if ((st = check_q8_operand(c, 0, 2, 0, "A")) || (st = check_f32_scalar(c, 1, 0, "a_scale")))
            return st;
    }
    if (a->rank < 1 || a->shape[a->rank - 1] != K)
        return FAIL(PG_ERR_SHAPE, "A '%s' must have K = %lld in its last dim", a->name, (long long)K);
    if (pg_infer_has_in(c, 4)) {
        const pg_tensor *b = c->in[4];
        if (b->dtype != PG_DTYPE_FLOAT32 || b->rank != 1 || b->shape[0] != N)
            return FAIL(PG_ERR_GRAPH, "bias '%s' must be float32 [%lld]", b->name, (long long)N);
    }
    if (pg_infer_has_in(c, 5)) {
        const pg_tensor *t = c->in[5];
        if (a->dtype != PG_DTYPE_FLOAT32 || t->dtype != PG_DTYPE_INT32 || t->rank != 1 || t->shape[0] != 3)
            return FAIL(PG_ERR_GRAPH, "a_stats '%s' must be int32 [3], with a float32 A", t->name);
    }
    const char *act = pg_ir_attr_string(c->n, "activation", "none");
    if (strcmp(act, "none") && strcmp(act, "gelu"))
        return FAIL(PG_ERR_GRAPH, "activation '%s' (none or gelu)", act);
    if (c->n->n_outputs > 1) {
        int64_t three = 3;
        pg_infer_set_out(c, 1, PG_DTYPE_INT32, 1, &three);
    }
    int64_t shape[PG_MAX_RANK];
    for (int d = 0; d < a->rank - 1; d++)
        shape[d] = a->shape[d];
    shape[a->rank - 1] = N;
    pg_infer_set_out(c, 0, PG_DTYPE_FLOAT32, a->rank, shape);
    return PG_OK;
}

/* ---- ConvInteger, QLinearConv (NCHW, the geometry of exec/cnn.h) -------- */

/* X (slot 0) [N, C, in...] and W (slot iw) [M, C / group, k...], both 8-bit;
 * the output [N, M, out...] of dtype dt. */
static pg_status conv_shape(pg_infer_ctx *c, int iw, pg_dtype dt)
{
    const pg_tensor *x = c->in[0], *w = c->in[iw];
    if (x->rank < 3 || x->rank > 2 + PG_CNN_MAX_SPATIAL || w->rank != x->rank)
        return FAIL(PG_ERR_SHAPE, "x '%s' (rank %d) and w '%s' (rank %d) must be NCHW-like of the same "
                    "rank, 1 to 3 spatial dims", x->name, x->rank, w->name, w->rank);
    int64_t G = pg_ir_attr_int(c->n, "group", 1), C = x->shape[1], M = w->shape[0];
    if (G < 1 || (C > 0 && G > C) || C % G || M % G || w->shape[1] * G != C)
        return FAIL(PG_ERR_SHAPE, "group %lld does not fit x's %lld channels and w '%s' [%lld, %lld, ...]",
                    (long long)G, (long long)C, w->name, (long long)M, (long long)w->shape[1]);
    int cnt = 0;
    const int64_t *ks = pg_ir_attr_ints(c->n, "kernel_shape", &cnt);
    for (int i = 0; ks && i < cnt; i++)
        if (cnt != w->rank - 2 || ks[i] != w->shape[2 + i])
            return FAIL(PG_ERR_SHAPE, "attribute 'kernel_shape' does not match w '%s'", w->name);
    pg_win win;
    pg_status st = pg_win_geometry(c->n, PG_WIN_CONV, x->rank - 2, x->shape + 2, w->shape + 2, &win);
    if (st)
        return st;
    int64_t shape[PG_MAX_RANK] = { x->shape[0], M };
    for (int d = 0; d < win.nsp; d++)
        shape[2 + d] = win.out[3 - win.nsp + d];
    pg_infer_set_out(c, 0, dt, x->rank, shape);
    return PG_OK;
}

/* x, w, x_zero_point, w_zero_point (one, or one per output channel) */
pg_status pg_infer_conv_integer(pg_infer_ctx *c)
{
    pg_status st;
    if ((st = check_q8_operand(c, 0, 2, 0, "x")) || (st = check_q8_operand(c, 1, 3, c->in[1]->rank >= 1 ?
                                                                              c->in[1]->shape[0] : 0, "w")))
        return st;
    return conv_shape(c, 1, PG_DTYPE_INT32);
}

/* x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B (int32 [M], optional) */
pg_status pg_infer_qlinear_conv(pg_infer_ctx *c)
{
    for (int i = 0; i < 8; i++)
        if (i != 2 && i != 5 && i != 7 && !pg_infer_has_in(c, i))
            return FAIL(PG_ERR_GRAPH, "input %d is missing", i);
    int64_t M = c->in[3]->rank >= 1 ? c->in[3]->shape[0] : 0;
    pg_status st;
    if ((st = check_q8_operand(c, 0, 2, 0, "x")) || (st = check_q8_operand(c, 3, 5, M, "w")) ||
        (st = check_f32_scalar(c, 1, 0, "x_scale")) || (st = check_f32_scalar(c, 4, M, "w_scale")) ||
        (st = check_f32_scalar(c, 6, 0, "y_scale")))
        return st;
    pg_dtype ydt = pg_infer_has_in(c, 7) ? c->in[7]->dtype : c->in[0]->dtype;
    if (!is_q8(ydt) || (pg_infer_has_in(c, 7) && pg_tensor_numel(c->in[7]) != 1))
        return FAIL(PG_ERR_UNSUPPORTED, "y_zero_point must be one uint8 or int8 value");
    if (pg_infer_has_in(c, 8)) {
        const pg_tensor *b = c->in[8];
        if (b->dtype != PG_DTYPE_INT32 || b->rank != 1 || b->shape[0] != M)
            return FAIL(PG_ERR_GRAPH, "bias '%s' must be int32 [%lld]", b->name, (long long)M);
    }
    /* conv_shape reads w from slot 3 */
    return conv_shape(c, 3, ydt);
}

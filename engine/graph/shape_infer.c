/* shape_infer.c - dtype and shape of every node output (ONNX semantics).
 *
 * Nodes are visited in topological order.  Ops whose output shape depends
 * on a tensor's VALUE (Reshape's shape, Expand, Slice, ConstantOfShape,
 * Squeeze/Unsqueeze axes as inputs) need that value at compile time: it is a
 * constant, or the `known` value this pass computes for small int tensors by
 * running the op's own executor on the known inputs (Shape -> Gather ->
 * Concat -> Reshape chains, as exported transformer graphs have). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/limits.h"
#include "../exec/elem.h"
#include "../exec/ops.h"
#include "infer.h"
#include "opdefs.h"

#define KNOWN_MAX_ELEMS 1024

#define FAIL(st, ...) pg_infer_fail(c, st, __VA_ARGS__)

#include <stdarg.h>
pg_status pg_infer_fail(pg_infer_ctx *c, pg_status st, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return pg_fail(st, "node '%s' (%s): %s", c->n->name, c->n->op_type, msg);
}

/* Digits by hand, not snprintf: the checks format their operands' shapes
 * before they know whether they fail, thousands of times a compile, and
 * snprintf made that a fifth of a GPT-2 recompile's time (a decode loop's
 * every step).  Cut short, the string ends where it fits. */
void pg_infer_shape_str(const pg_tensor *t, char *buf, size_t cap)
{
    char tmp[24 * PG_MAX_RANK + 4];
    size_t o = 0;
    tmp[o++] = '[';
    for (int i = 0; i < t->rank && i < PG_MAX_RANK; i++) {
        if (i)
            tmp[o++] = ',';
        long long v = t->shape[i];
        unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
        char digits[24];
        int n = 0;
        do
            digits[n++] = (char)('0' + u % 10);
        while (u /= 10);
        if (v < 0)
            tmp[o++] = '-';
        while (n)
            tmp[o++] = digits[--n];
    }
    tmp[o++] = ']';
    if (!cap)
        return;
    size_t len = o < cap - 1 ? o : cap - 1;
    memcpy(buf, tmp, len);
    buf[len] = 0;
}

const void *pg_infer_value(const pg_tensor *t)
{
    return t->data ? t->data : t->known;
}

/* Reads an int tensor's compile-time value as int64. */
pg_status pg_infer_read_ints(pg_infer_ctx *c, int slot, int64_t *out, int cap, int *count)
{
    const pg_tensor *t = c->in[slot];
    const void *v = pg_infer_value(t);
    if (!v)
        return FAIL(PG_ERR_SHAPE, "input %d ('%s') must be known at compile time "
                    "(a constant or computed from shapes)", slot, t->name);
    int64_t n = pg_tensor_numel(t);
    if (n < 0 || n > cap)
        return FAIL(PG_ERR_SHAPE, "input %d ('%s') has %lld values (at most %d)", slot, t->name,
                    (long long)n, cap);
    for (int64_t i = 0; i < n; i++) {
        if (t->dtype == PG_DTYPE_INT64) out[i] = ((const int64_t *)v)[i];
        else if (t->dtype == PG_DTYPE_INT32) out[i] = ((const int32_t *)v)[i];
        else return FAIL(PG_ERR_DTYPE, "input %d ('%s') must be int64 or int32, not %s", slot,
                         t->name, pg_dtype_name(t->dtype));
    }
    *count = (int)n;
    return PG_OK;
}

/* A one-element numeric input's compile-time value, as a double (an int64
 * beyond 2^53 rounds; callers that need it exactly use read_ints). */
pg_status pg_infer_read_scalar(pg_infer_ctx *c, int slot, const char *what, double *v)
{
    const pg_tensor *t = c->in[slot];
    const void *p = pg_infer_value(t);
    if (!p)
        return FAIL(PG_ERR_SHAPE, "%s '%s' (input %d) must be known at compile time "
                    "(a constant or computed from shapes)", what, t->name, slot);
    if (pg_tensor_numel(t) != 1)
        return FAIL(PG_ERR_SHAPE, "%s '%s' must hold one value, not %lld", what, t->name,
                    (long long)pg_tensor_numel(t));
    if (!pg_dt_is_numeric(t->dtype))
        return FAIL(PG_ERR_DTYPE, "%s '%s' has dtype %s", what, t->name, pg_dtype_name(t->dtype));
    *v = pg_ld_f(t->dtype, p, 0);
    return PG_OK;
}

static int has_in(pg_infer_ctx *c, int slot) { return slot < c->n_in && c->in[slot]; }

static pg_tensor *out_t(pg_infer_ctx *c, int i) { return c->g->tensors[c->n->outputs[i]]; }

void pg_infer_set_out(pg_infer_ctx *c, int i, pg_dtype dt, int rank, const int64_t *shape)
{
    pg_tensor *t = out_t(c, i);
    t->dtype = dt;
    pg_ir_set_shape(t, rank, shape);
}

pg_status pg_infer_need_float(pg_infer_ctx *c, int slot)
{
    if (c->in[slot]->dtype != PG_DTYPE_FLOAT32)
        return FAIL(PG_ERR_DTYPE, "input %d ('%s') is %s; this op needs float32", slot,
                    c->in[slot]->name, pg_dtype_name(c->in[slot]->dtype));
    return PG_OK;
}

/* numpy broadcasting of a list of inputs */
pg_status pg_infer_broadcast(pg_infer_ctx *c, const int *slots, int k, int *rank, int64_t *shape)
{
    int r = 0;
    for (int i = 0; i < k; i++)
        if (c->in[slots[i]]->rank > r)
            r = c->in[slots[i]]->rank;
    for (int d = 0; d < r; d++)
        shape[d] = 1;
    for (int i = 0; i < k; i++) {
        const pg_tensor *t = c->in[slots[i]];
        for (int d = 0; d < t->rank; d++) {
            int64_t s = t->shape[d], *o = &shape[r - t->rank + d];
            if (s == *o || s == 1)
                continue;
            if (*o == 1) {
                *o = s;
                continue;
            }
            char a[128], b[128];
            pg_infer_shape_str(c->in[slots[0]], a, sizeof a);
            pg_infer_shape_str(t, b, sizeof b);
            return FAIL(PG_ERR_SHAPE, "shapes %s ('%s') and %s ('%s') do not broadcast",
                        a, c->in[slots[0]]->name, b, t->name);
        }
    }
    *rank = r;
    return PG_OK;
}

pg_status pg_infer_binary(pg_infer_ctx *c)
{
    pg_status st = PG_OK;
    pg_opcode op = c->n->op;
    const pg_tensor *a = c->in[0], *b = c->in[1];
    if (op != PG_OP_POW && a->dtype != b->dtype)
        return FAIL(PG_ERR_DTYPE, "inputs '%s' (%s) and '%s' (%s) have different dtypes",
                    a->name, pg_dtype_name(a->dtype), b->name, pg_dtype_name(b->dtype));
    /* the executor reads a float base's exponent as float32, int64 or int32 */
    if (op == PG_OP_POW && a->dtype != b->dtype &&
        (a->dtype != PG_DTYPE_FLOAT32 ||
         (b->dtype != PG_DTYPE_INT64 && b->dtype != PG_DTYPE_INT32)))
        return FAIL(PG_ERR_UNSUPPORTED, "Pow of a %s base with a %s exponent is not supported "
                    "(a float32 base takes a float32, int64 or int32 exponent)",
                    pg_dtype_name(a->dtype), pg_dtype_name(b->dtype));
    if ((op == PG_OP_AND || op == PG_OP_OR) && a->dtype != PG_DTYPE_BOOL)
        return FAIL(PG_ERR_DTYPE, "needs bool inputs, got %s", pg_dtype_name(a->dtype));
    if (a->dtype == PG_DTYPE_BOOL && op != PG_OP_AND && op != PG_OP_OR && op != PG_OP_EQUAL)
        return FAIL(PG_ERR_DTYPE, "does not take bool inputs");
    int slots[2] = { 0, 1 }, r = 0;
    int64_t shape[PG_MAX_RANK];
    if ((st = pg_infer_broadcast(c, slots, 2, &r, shape)))
        return st;
    int cmp = op == PG_OP_EQUAL || op == PG_OP_LESS || op == PG_OP_GREATER ||
              op == PG_OP_LESS_OR_EQUAL || op == PG_OP_GREATER_OR_EQUAL;
    pg_infer_set_out(c, 0, cmp ? PG_DTYPE_BOOL : a->dtype, r, shape);
    return PG_OK;
}

pg_status pg_infer_where(pg_infer_ctx *c)
{
    pg_status st = PG_OK;
    if (c->in[0]->dtype != PG_DTYPE_BOOL)
        return FAIL(PG_ERR_DTYPE, "condition '%s' must be bool, not %s", c->in[0]->name,
                    pg_dtype_name(c->in[0]->dtype));
    if (c->in[1]->dtype != c->in[2]->dtype)
        return FAIL(PG_ERR_DTYPE, "X (%s) and Y (%s) differ", pg_dtype_name(c->in[1]->dtype),
                    pg_dtype_name(c->in[2]->dtype));
    int slots[3] = { 0, 1, 2 }, r = 0;
    int64_t shape[PG_MAX_RANK];
    if ((st = pg_infer_broadcast(c, slots, 3, &r, shape)))
        return st;
    pg_infer_set_out(c, 0, c->in[1]->dtype, r, shape);
    return PG_OK;
}

pg_status pg_infer_unary(pg_infer_ctx *c)
{
    pg_status st = PG_OK;
    const pg_tensor *x = c->in[0];
    pg_opcode op = c->n->op;
    pg_dtype dt = x->dtype;
    if (op == PG_OP_CAST) {
        dt = (pg_dtype)pg_ir_attr_int(c->n, "to", 0);
        if (!pg_dtype_public(dt))
            return FAIL(PG_ERR_DTYPE, "attribute 'to' = %d is not a supported dtype", (int)dt);
    } else if (op == PG_OP_NOT) {
        if (dt != PG_DTYPE_BOOL)
            return FAIL(PG_ERR_DTYPE, "needs a bool input, got %s", pg_dtype_name(dt));
    } else if (op == PG_OP_NEG || op == PG_OP_ABS || op == PG_OP_RELU) {
        if (dt != PG_DTYPE_FLOAT32 && dt != PG_DTYPE_INT64 && dt != PG_DTYPE_INT32)
            return FAIL(PG_ERR_DTYPE, "does not take %s", pg_dtype_name(dt));
    } else if (op != PG_OP_IDENTITY && op != PG_OP_DROPOUT) {
        if ((st = pg_infer_need_float(c, 0)))
            return st;
    }
    pg_infer_set_out(c, 0, dt, x->rank, x->shape);
    return PG_OK;
}

pg_status pg_infer_norm(pg_infer_ctx *c)
{
    pg_status st = PG_OK;
    if ((st = pg_infer_need_float(c, 0)))
        return st;
    const pg_tensor *x = c->in[0];
    if (x->rank < 1)
        return FAIL(PG_ERR_SHAPE, "input '%s' must have rank >= 1", x->name);
    int64_t ax = pg_ir_attr_int(c->n, "axis", -1);
    int a = pg_norm_axis(ax, x->rank);
    if (a < 0)
        return FAIL(PG_ERR_SHAPE, "axis %lld is out of range for rank %d", (long long)ax, x->rank);
    if (c->n->op == PG_OP_LAYERNORM || c->n->op == PG_OP_RMSNORM) {
        int64_t inner = 1;
        for (int d = a; d < x->rank; d++)
            inner *= x->shape[d];
        for (int s = 1; s < c->n_in; s++) {
            if (!c->in[s])
                continue;
            if (c->in[s]->dtype != PG_DTYPE_FLOAT32)
                return FAIL(PG_ERR_DTYPE, "input %d ('%s') must be float32", s, c->in[s]->name);
            if (pg_tensor_numel(c->in[s]) != inner)
                return FAIL(PG_ERR_SHAPE, "input %d ('%s') has %lld elements; the normalised "
                            "axes hold %lld", s, c->in[s]->name,
                            (long long)pg_tensor_numel(c->in[s]), (long long)inner);
        }
    }
    pg_infer_set_out(c, 0, x->dtype, x->rank, x->shape);
    return PG_OK;
}

pg_status pg_infer_axes(pg_infer_ctx *c, int slot, int64_t *axes, int *n)
{
    *n = 0;
    if (has_in(c, slot))
        return pg_infer_read_ints(c, slot, axes, PG_MAX_RANK, n);
    int cnt = 0;
    const int64_t *a = pg_ir_attr_ints(c->n, "axes", &cnt);
    if (cnt > PG_MAX_RANK)
        return FAIL(PG_ERR_SHAPE, "too many axes");
    for (int i = 0; i < cnt; i++)
        axes[i] = a[i];
    *n = cnt;
    return PG_OK;
}

pg_status pg_infer_reduce(pg_infer_ctx *c)
{
    pg_status st = PG_OK;
    const pg_tensor *x = c->in[0];
    pg_opcode op = c->n->op;
    if (op == PG_OP_REDUCEMEAN || op == PG_OP_REDUCESUM) {
        if ((st = pg_infer_need_float(c, 0)))
            return st;
    } else if (!pg_reduce_dtype_ok(op, x->dtype)) {   /* ops_reduce.c */
        return FAIL(PG_ERR_DTYPE, "input '%s' is %s, which %s does not take", x->name,
                    pg_dtype_name(x->dtype), c->n->op_type);
    }
    int64_t axes[PG_MAX_RANK];
    int na = 0, keep = (int)pg_ir_attr_int(c->n, "keepdims", 1);
    if ((st = pg_infer_axes(c, 1, axes, &na)))
        return st;
    int red[PG_MAX_RANK] = { 0 };
    for (int i = 0; i < na; i++) {
        int a = pg_norm_axis(axes[i], x->rank);
        if (a < 0)
            return FAIL(PG_ERR_SHAPE, "axis %lld out of range for rank %d", (long long)axes[i], x->rank);
        red[a] = 1;
    }
    if (!na)
        for (int d = 0; d < x->rank; d++)
            red[d] = 1;
    int64_t shape[PG_MAX_RANK];
    int r = 0;
    for (int d = 0; d < x->rank; d++) {
        if (!red[d]) shape[r++] = x->shape[d];
        else if (keep) shape[r++] = 1;
    }
    pg_infer_set_out(c, 0, x->dtype, r, shape);
    return PG_OK;
}

/* a failure that shows both operands' shapes (formatted only then) */
#define FAIL_AB(...) PG_INFER_FAIL_AB(a, sa, b, sb, __VA_ARGS__)

pg_status pg_infer_matmul(pg_infer_ctx *c)
{
    pg_opcode op = c->n->op;
    pg_status st = PG_OK;
    if ((st = pg_infer_need_float(c, 0)) || (st = pg_infer_need_float(c, 1)))
        return st;
    const pg_tensor *a = c->in[0], *b = c->in[1];
    char sa[128], sb[128];
    if (op == PG_OP_GEMM) {
        if (a->rank != 2 || b->rank != 2)
            return FAIL_AB(PG_ERR_SHAPE, "A %s and B %s must be 2-D", sa, sb);
        int ta = (int)pg_ir_attr_int(c->n, "transA", 0), tb = (int)pg_ir_attr_int(c->n, "transB", 0);
        int64_t M = a->shape[ta ? 1 : 0], K = a->shape[ta ? 0 : 1];
        int64_t K2 = b->shape[tb ? 1 : 0], N = b->shape[tb ? 0 : 1];
        if (K != K2)
            return FAIL_AB(PG_ERR_SHAPE, "A %s and B %s: inner dimensions %lld and %lld differ "
                           "(transA=%d, transB=%d)", sa, sb, (long long)K, (long long)K2, ta, tb);
        int64_t shape[2] = { M, N };
        if (has_in(c, 2)) {
            const pg_tensor *bias = c->in[2];
            if ((st = pg_infer_need_float(c, 2)))   /* read as float32: another dtype overran it */
                return st;
            if (bias->rank > 2)
                return FAIL(PG_ERR_SHAPE, "C '%s' has rank %d; Gemm takes a C of rank 0..2",
                            bias->name, bias->rank);
            for (int d = 0; d < bias->rank; d++) {
                int64_t want = shape[2 - bias->rank + d];
                if (bias->shape[d] != 1 && bias->shape[d] != want)
                    return FAIL(PG_ERR_SHAPE, "C '%s' does not broadcast to [%lld,%lld]",
                                bias->name, (long long)M, (long long)N);
            }
        }
        pg_infer_set_out(c, 0, PG_DTYPE_FLOAT32, 2, shape);
        return PG_OK;
    }
    if (a->rank < 1 || b->rank < 1)
        return FAIL(PG_ERR_SHAPE, "MatMul inputs must have rank >= 1");
    if (op != PG_OP_MATMUL && b->rank != 2)
        return FAIL_AB(PG_ERR_SHAPE, "the weight '%s' %s must be 2-D", b->name, sb);
    int64_t K = a->shape[a->rank - 1];
    int64_t Kb = b->rank == 1 ? b->shape[0] : b->shape[b->rank - 2];
    int64_t N = b->rank == 1 ? 1 : b->shape[b->rank - 1];
    if (K != Kb)
        return FAIL_AB(PG_ERR_SHAPE, "A '%s' %s and B '%s' %s: inner dimensions %lld and %lld "
                       "differ", a->name, sa, b->name, sb, (long long)K, (long long)Kb);
    /* batch dims broadcast */
    int ra = a->rank >= 2 ? a->rank - 2 : 0, rb = b->rank >= 2 ? b->rank - 2 : 0;
    int r = ra > rb ? ra : rb;
    int64_t shape[PG_MAX_RANK];
    for (int d = 0; d < r; d++) {
        int64_t da = d - (r - ra) >= 0 ? a->shape[d - (r - ra)] : 1;
        int64_t db = d - (r - rb) >= 0 ? b->shape[d - (r - rb)] : 1;
        if (da != db && da != 1 && db != 1)
            return FAIL_AB(PG_ERR_SHAPE, "batch dims of %s and %s do not broadcast", sa, sb);
        shape[d] = da == 1 ? db : da;
    }
    int outr = r;
    if (a->rank >= 2)
        shape[outr++] = a->shape[a->rank - 2];
    if (b->rank >= 2)
        shape[outr++] = N;
    if (op == PG_OP_MATMUL) {
        pg_infer_set_out(c, 0, PG_DTYPE_FLOAT32, outr, shape);
        return PG_OK;
    }
    int64_t total = N;
    if (op == PG_OP_QKV_MATMUL) {
        int ns = 0;
        const int64_t *sp = pg_ir_attr_ints(c->n, "splits", &ns);
        if (ns != 3 || sp[0] + sp[1] + sp[2] != N)
            return FAIL(PG_ERR_SHAPE, "attribute 'splits' must be 3 sizes summing to N = %lld",
                        (long long)N);
        for (int i = 0; i < 3; i++) {
            shape[outr - 1] = sp[i];
            pg_infer_set_out(c, i, PG_DTYPE_FLOAT32, outr, shape);
        }
    } else {
        /* gated (qkv_fusion's gate/up pair): W = [Wg | Wu], y = act(A Wg) * (A Wu) */
        if (pg_ir_attr_int(c->n, "gated", 0)) {
            if (N % 2 || b->rank != 2)
                return FAIL_AB(PG_ERR_SHAPE, "gated: the weight %s must be 2-D with an even N", sb);
            shape[outr - 1] = N / 2;
        }
        pg_infer_set_out(c, 0, PG_DTYPE_FLOAT32, outr, shape);
    }
    if (has_in(c, 2) && pg_tensor_numel(c->in[2]) != total)
        return FAIL(PG_ERR_SHAPE, "bias '%s' must have N = %lld elements", c->in[2]->name,
                    (long long)total);
    return PG_OK;
}

/* FusedAttention with qkv_layout = "bshd": Q [B,Sq,H*D], K [B,Sk,Hkv*D],
 * V [B,Sk,Hkv*Dv] -> O [B,Sq,H*Dv] (heads side by side in each row; Hkv
 * divides H: grouped-query attention shares a K/V head among H/Hkv). */
static pg_status infer_attention_bshd(pg_infer_ctx *c)
{
    pg_status st;
    for (int i = 0; i < 3; i++) {
        if ((st = pg_infer_need_float(c, i)))
            return st;
        if (c->in[i]->rank != 3)
            return FAIL(PG_ERR_SHAPE, "input %d ('%s') must be 3-D [B,S,H*D] (qkv_layout=bshd)", i,
                        c->in[i]->name);
    }
    const pg_tensor *q = c->in[0], *k = c->in[1], *v = c->in[2];
    int64_t H = pg_ir_attr_int(c->n, "num_heads", 0);
    if (H <= 0)
        return FAIL(PG_ERR_GRAPH, "qkv_layout=bshd needs num_heads > 0");
    if (q->shape[2] % H)
        return FAIL(PG_ERR_SHAPE, "Q width %lld not a multiple of %lld heads",
                    (long long)q->shape[2], (long long)H);
    if (pg_ir_attr_int(c->n, "k_transposed", 0))
        return FAIL(PG_ERR_GRAPH, "qkv_layout=bshd takes K as rows of keys (k_transposed=0)");
    int64_t Dq = q->shape[2] / H;
    int64_t Hkv = Dq == 0 ? (k->shape[2] == 0 ? H : 0) : k->shape[2] % Dq == 0 ? k->shape[2] / Dq : 0;
    if (Hkv <= 0 || H % Hkv || v->shape[2] % Hkv)
        return FAIL(PG_ERR_SHAPE, "K width %lld / V width %lld are not a whole number of K/V heads "
                    "dividing %lld heads", (long long)k->shape[2], (long long)v->shape[2], (long long)H);
    if (v->shape[1] != k->shape[1])
        return FAIL(PG_ERR_SHAPE, "Q/K/V do not agree: width %lld vs %lld, Sk %lld vs %lld",
                    (long long)q->shape[2], (long long)k->shape[2], (long long)k->shape[1],
                    (long long)v->shape[1]);
    if (k->shape[0] != q->shape[0] || v->shape[0] != q->shape[0])
        return FAIL(PG_ERR_SHAPE, "Q, K and V must share the batch dim");
    if (has_in(c, 3)) {
        const pg_tensor *m = c->in[3];
        int64_t full[4] = { q->shape[0], H, q->shape[1], k->shape[1] };
        if (m->rank > 4)
            return FAIL(PG_ERR_SHAPE, "mask rank %d > 4", m->rank);
        for (int d = 0; d < m->rank; d++) {
            int64_t want = full[4 - m->rank + d];
            if (m->shape[d] != 1 && m->shape[d] != want)
                return FAIL(PG_ERR_SHAPE, "mask '%s' does not broadcast to [B,H,Sq,Sk]", m->name);
        }
        if (m->dtype != PG_DTYPE_FLOAT32 && m->dtype != PG_DTYPE_BOOL)
            return FAIL(PG_ERR_DTYPE, "mask must be float32 or bool");
    }
    int64_t shape[3] = { q->shape[0], q->shape[1], v->shape[2] / Hkv * H };
    pg_infer_set_out(c, 0, PG_DTYPE_FLOAT32, 3, shape);
    return PG_OK;
}

pg_status pg_infer_attention(pg_infer_ctx *c)
{
    pg_status st = PG_OK;
    const char *layout = pg_ir_attr_string(c->n, "qkv_layout", "bhsd");
    if (!strcmp(layout, "bshd"))
        return infer_attention_bshd(c);
    if (strcmp(layout, "bhsd"))
        return FAIL(PG_ERR_GRAPH, "qkv_layout '%s' is neither \"bhsd\" nor \"bshd\"", layout);
    for (int i = 0; i < 3; i++) {
        if ((st = pg_infer_need_float(c, i)))
            return st;
        if (c->in[i]->rank != 4)
            return FAIL(PG_ERR_SHAPE, "input %d ('%s') must be 4-D [B,H,S,D]", i, c->in[i]->name);
    }
    const pg_tensor *q = c->in[0], *k = c->in[1], *v = c->in[2];
    int kt = (int)pg_ir_attr_int(c->n, "k_transposed", 0);
    int64_t D = q->shape[3], Sk = k->shape[kt ? 3 : 2], Dk = k->shape[kt ? 2 : 3];
    if (Dk != D || v->shape[2] != Sk)
        return FAIL(PG_ERR_SHAPE, "Q/K/V do not agree: D %lld vs %lld, Sk %lld vs %lld",
                    (long long)D, (long long)Dk, (long long)Sk, (long long)v->shape[2]);
    /* K and V may have fewer heads, dividing Q's (grouped-query attention) */
    if (k->shape[0] != q->shape[0] || v->shape[0] != q->shape[0] || k->shape[1] != v->shape[1] ||
        (k->shape[1] <= 0 ? q->shape[1] != k->shape[1] : q->shape[1] % k->shape[1] != 0))
        return FAIL(PG_ERR_SHAPE, "Q, K and V must share the batch dim, and K/V's heads (%lld) "
                    "divide Q's (%lld)", (long long)k->shape[1], (long long)q->shape[1]);
    if (has_in(c, 3)) {
        const pg_tensor *m = c->in[3];
        int64_t full[4] = { q->shape[0], q->shape[1], q->shape[2], Sk };
        if (m->rank > 4)
            return FAIL(PG_ERR_SHAPE, "mask rank %d > 4", m->rank);
        for (int d = 0; d < m->rank; d++) {
            int64_t want = full[4 - m->rank + d];
            if (m->shape[d] != 1 && m->shape[d] != want)
                return FAIL(PG_ERR_SHAPE, "mask '%s' does not broadcast to [B,H,Sq,Sk]", m->name);
        }
        if (m->dtype != PG_DTYPE_FLOAT32 && m->dtype != PG_DTYPE_BOOL)
            return FAIL(PG_ERR_DTYPE, "mask must be float32 or bool");
    }
    int64_t shape[4] = { q->shape[0], q->shape[1], q->shape[2], v->shape[3] };
    pg_infer_set_out(c, 0, PG_DTYPE_FLOAT32, 4, shape);
    return PG_OK;
}

pg_status pg_infer_transpose(pg_infer_ctx *c)
{
    const pg_tensor *x = c->in[0];
    int np = 0;
    const int64_t *perm = pg_ir_attr_ints(c->n, "perm", &np);
    int64_t shape[PG_MAX_RANK];
    int seen[PG_MAX_RANK] = { 0 };
    if (perm && np != x->rank)
        return FAIL(PG_ERR_SHAPE, "perm has %d entries for rank %d", np, x->rank);
    for (int d = 0; d < x->rank; d++) {
        int64_t p = perm ? perm[d] : x->rank - 1 - d;
        if (p < 0 || p >= x->rank || seen[p])
            return FAIL(PG_ERR_SHAPE, "perm is not a permutation of 0..%d", x->rank - 1);
        seen[p] = 1;
        shape[d] = x->shape[p];
    }
    pg_infer_set_out(c, 0, x->dtype, x->rank, shape);
    return PG_OK;
}

pg_status pg_infer_reshape(pg_infer_ctx *c)
{
    pg_status st = PG_OK;
    const pg_tensor *x = c->in[0];
    int64_t shape[PG_MAX_RANK];
    int r = 0;
    if ((st = pg_infer_read_ints(c, 1, shape, PG_MAX_RANK, &r)))
        return st;
    int allowzero = (int)pg_ir_attr_int(c->n, "allowzero", 0), infer = -1;
    int64_t prod = 1, total = pg_tensor_numel(x);
    for (int d = 0; d < r; d++) {
        if (shape[d] == 0 && !allowzero) {
            if (d >= x->rank)
                return FAIL(PG_ERR_SHAPE, "shape[%d] = 0 copies a dim the input does not have", d);
            shape[d] = x->shape[d];
        }
        if (shape[d] == -1) {
            if (infer >= 0)
                return FAIL(PG_ERR_SHAPE, "more than one -1 in the target shape");
            infer = d;
        } else if (shape[d] < 0) {
            return FAIL(PG_ERR_SHAPE, "shape[%d] = %lld", d, (long long)shape[d]);
        } else {
            prod *= shape[d];
        }
    }
    if (infer >= 0) {
        if (prod == 0 || total % prod)
            return FAIL(PG_ERR_SHAPE, "cannot reshape %lld elements with a -1 dim and %lld others",
                        (long long)total, (long long)prod);
        shape[infer] = total / prod;
        prod = total;
    }
    if (prod != total) {
        char s[128];
        pg_infer_shape_str(x, s, sizeof s);
        return FAIL(PG_ERR_SHAPE, "cannot reshape '%s' %s (%lld elements) to %lld elements",
                    x->name, s, (long long)total, (long long)prod);
    }
    pg_infer_set_out(c, 0, x->dtype, r, shape);
    return PG_OK;
}

pg_status pg_infer_flatten(pg_infer_ctx *c)
{
    const pg_tensor *x = c->in[0];
    int64_t ax = pg_ir_attr_int(c->n, "axis", 1);
    if (ax < 0)
        ax += x->rank;
    if (ax < 0 || ax > x->rank)
        return FAIL(PG_ERR_SHAPE, "axis out of range for rank %d", x->rank);
    int64_t shape[2] = { 1, 1 };
    for (int d = 0; d < x->rank; d++)
        shape[d < ax ? 0 : 1] *= x->shape[d];
    pg_infer_set_out(c, 0, x->dtype, 2, shape);
    return PG_OK;
}

static pg_status squeeze_rule(pg_infer_ctx *c, int unsqueeze)
{
    pg_status st = PG_OK;
    const pg_tensor *x = c->in[0];
    int64_t axes[PG_MAX_RANK];
    int na = 0;
    if ((st = pg_infer_axes(c, 1, axes, &na)))
        return st;
    int64_t shape[PG_MAX_RANK];
    int r = 0;
    if (unsqueeze) {
        int orank = x->rank + na, mark[PG_MAX_RANK] = { 0 };
        if (orank > PG_MAX_RANK || !na)
            return FAIL(PG_ERR_SHAPE, "needs 1..%d axes", PG_MAX_RANK - x->rank);
        for (int i = 0; i < na; i++) {
            int a = pg_norm_axis(axes[i], orank);
            if (a < 0 || mark[a])
                return FAIL(PG_ERR_SHAPE, "axis %lld is out of range or repeated", (long long)axes[i]);
            mark[a] = 1;
        }
        for (int d = 0, s = 0; d < orank; d++)
            shape[r++] = mark[d] ? 1 : x->shape[s++];
    } else {
        int mark[PG_MAX_RANK] = { 0 };
        for (int i = 0; i < na; i++) {
            int a = pg_norm_axis(axes[i], x->rank);
            if (a < 0)
                return FAIL(PG_ERR_SHAPE, "axis %lld is out of range", (long long)axes[i]);
            if (x->shape[a] != 1)
                return FAIL(PG_ERR_SHAPE, "cannot squeeze axis %d of size %lld", a, (long long)x->shape[a]);
            mark[a] = 1;
        }
        for (int d = 0; d < x->rank; d++)
            if (!(na ? mark[d] : x->shape[d] == 1))
                shape[r++] = x->shape[d];
    }
    pg_infer_set_out(c, 0, x->dtype, r, shape);
    return PG_OK;
}

pg_status pg_infer_squeeze(pg_infer_ctx *c) { return squeeze_rule(c, 0); }
pg_status pg_infer_unsqueeze(pg_infer_ctx *c) { return squeeze_rule(c, 1); }

pg_status pg_infer_concat(pg_infer_ctx *c)
{
    const pg_tensor *x = c->in[0];
    int a = pg_norm_axis(pg_ir_attr_int(c->n, "axis", 0), x->rank);
    if (!pg_ir_attr(c->n, "axis") && x->rank > 1)
        return FAIL(PG_ERR_GRAPH, "attribute 'axis' is required");
    if (a < 0)
        return FAIL(PG_ERR_SHAPE, "axis out of range for rank %d", x->rank);
    int64_t shape[PG_MAX_RANK];
    memcpy(shape, x->shape, sizeof shape);
    shape[a] = 0;
    for (int i = 0; i < c->n_in; i++) {
        const pg_tensor *t = c->in[i];
        if (!t)
            return FAIL(PG_ERR_GRAPH, "input %d is missing", i);
        if (t->dtype != x->dtype || t->rank != x->rank)
            return FAIL(PG_ERR_SHAPE, "input %d ('%s') differs in dtype or rank from input 0", i, t->name);
        for (int d = 0; d < x->rank; d++)
            if (d != a && t->shape[d] != x->shape[d])
                return FAIL(PG_ERR_SHAPE, "input %d ('%s') dim %d is %lld, input 0 has %lld", i,
                            t->name, d, (long long)t->shape[d], (long long)x->shape[d]);
        shape[a] += t->shape[a];
    }
    pg_infer_set_out(c, 0, x->dtype, x->rank, shape);
    return PG_OK;
}

pg_status pg_infer_split(pg_infer_ctx *c)
{
    pg_status st = PG_OK;
    const pg_tensor *x = c->in[0];
    int a = pg_norm_axis(pg_ir_attr_int(c->n, "axis", 0), x->rank);
    if (a < 0)
        return FAIL(PG_ERR_SHAPE, "axis out of range");
    int no = c->n->n_outputs, ns = 0;
    int64_t sizes[64];
    if (no > 64)
        return FAIL(PG_ERR_GRAPH, "at most 64 outputs");
    if (has_in(c, 1)) {
        if ((st = pg_infer_read_ints(c, 1, sizes, 64, &ns)))
            return st;
    } else {
        const int64_t *sp = pg_ir_attr_ints(c->n, "split", &ns);
        for (int i = 0; i < ns && i < 64; i++)
            sizes[i] = sp[i];
    }
    if (!ns) {
        int64_t each = (x->shape[a] + no - 1) / no;
        for (int i = 0; i < no; i++) {
            int64_t left = x->shape[a] - each * i;
            sizes[i] = left < each ? (left > 0 ? left : 0) : each;
        }
        ns = no;
    }
    int64_t sum = 0;
    int fits = 1;   /* every size non-negative and the running sum within the dim (no overflow) */
    for (int i = 0; i < ns; i++) {
        if (sizes[i] < 0 || sizes[i] > x->shape[a] - sum)
            fits = 0;
        else
            sum += sizes[i];
    }
    if (ns != no || !fits || sum != x->shape[a])
        return FAIL(PG_ERR_SHAPE, "split sizes (%d of them, sum %lld) do not match %d outputs over "
                    "a dim of %lld", ns, (long long)sum, no, (long long)x->shape[a]);
    int64_t shape[PG_MAX_RANK];
    memcpy(shape, x->shape, sizeof shape);
    for (int i = 0; i < no; i++) {
        shape[a] = sizes[i];
        pg_infer_set_out(c, i, x->dtype, x->rank, shape);
    }
    return PG_OK;
}

/* ONNX Slice clamping: start/end clamped into the dim, per step sign. */
void pg_slice_range(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *s0, int64_t *cnt)
{
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    if (step > 0) {
        start = start < 0 ? 0 : (start > dim ? dim : start);
        end = end < 0 ? 0 : (end > dim ? dim : end);
        /* not end - start + step - 1: a step near INT64_MAX overflows it */
        *cnt = end > start ? (end - start - 1) / step + 1 : 0;
    } else {
        start = start < 0 ? -1 : (start > dim - 1 ? dim - 1 : start);
        end = end < -1 ? -1 : (end > dim - 1 ? dim - 1 : end);
        /* -step as unsigned: INT64_MIN has no negation in int64 */
        *cnt = start > end ? (int64_t)((uint64_t)(start - end - 1) / (0 - (uint64_t)step)) + 1 : 0;
    }
    *s0 = start;
}

pg_status pg_infer_slice(pg_infer_ctx *c)
{
    pg_status st = PG_OK;
    const pg_tensor *x = c->in[0];
    int64_t starts[PG_MAX_RANK], ends[PG_MAX_RANK], axes[PG_MAX_RANK], steps[PG_MAX_RANK];
    int ns, ne, na = 0, nst = 0;
    if ((st = pg_infer_read_ints(c, 1, starts, PG_MAX_RANK, &ns)) || (st = pg_infer_read_ints(c, 2, ends, PG_MAX_RANK, &ne)))
        return st;
    if (has_in(c, 3) && (st = pg_infer_read_ints(c, 3, axes, PG_MAX_RANK, &na)))
        return st;
    if (has_in(c, 4) && (st = pg_infer_read_ints(c, 4, steps, PG_MAX_RANK, &nst)))
        return st;
    if (ne != ns || (has_in(c, 3) && na != ns) || (has_in(c, 4) && nst != ns))
        return FAIL(PG_ERR_SHAPE, "starts, ends, axes and steps must have the same length");
    int64_t shape[PG_MAX_RANK];
    memcpy(shape, x->shape, sizeof shape);
    for (int i = 0; i < ns; i++) {
        int a = pg_norm_axis(has_in(c, 3) ? axes[i] : i, x->rank);
        int64_t step = has_in(c, 4) ? steps[i] : 1, s0, cnt;
        if (a < 0 || step == 0)
            return FAIL(PG_ERR_SHAPE, "bad axis or zero step at position %d", i);
        pg_slice_range(x->shape[a], starts[i], ends[i], step, &s0, &cnt);
        shape[a] = cnt;
    }
    pg_infer_set_out(c, 0, x->dtype, x->rank, shape);
    return PG_OK;
}

pg_status pg_infer_gather(pg_infer_ctx *c)
{
    const pg_tensor *x = c->in[0], *idx = c->in[1];
    int a = pg_norm_axis(pg_ir_attr_int(c->n, "axis", 0), x->rank);
    if (a < 0)
        return FAIL(PG_ERR_SHAPE, "axis out of range for rank %d", x->rank);
    if (idx->dtype != PG_DTYPE_INT64 && idx->dtype != PG_DTYPE_INT32)
        return FAIL(PG_ERR_DTYPE, "indices '%s' must be int64 or int32", idx->name);
    if (x->rank - 1 + idx->rank > PG_MAX_RANK)
        return FAIL(PG_ERR_SHAPE, "result rank too large");
    int64_t shape[PG_MAX_RANK];
    int r = 0;
    for (int d = 0; d < a; d++) shape[r++] = x->shape[d];
    for (int d = 0; d < idx->rank; d++) shape[r++] = idx->shape[d];
    for (int d = a + 1; d < x->rank; d++) shape[r++] = x->shape[d];
    pg_infer_set_out(c, 0, x->dtype, r, shape);
    return PG_OK;
}

pg_status pg_infer_expand(pg_infer_ctx *c)
{
    pg_status st = PG_OK;
    const pg_tensor *x = c->in[0];
    int64_t tgt[PG_MAX_RANK];
    int r = 0;
    if ((st = pg_infer_read_ints(c, 1, tgt, PG_MAX_RANK, &r)))
        return st;
    int orank = r > x->rank ? r : x->rank;
    int64_t shape[PG_MAX_RANK];
    for (int d = 0; d < orank; d++) {
        int64_t a = d - (orank - x->rank) >= 0 ? x->shape[d - (orank - x->rank)] : 1;
        int64_t b = d - (orank - r) >= 0 ? tgt[d - (orank - r)] : 1;
        if (b < 0)   /* a negative size made a tensor of "negative" bytes */
            return FAIL(PG_ERR_SHAPE, "shape value %lld is negative", (long long)b);
        if (a != b && a != 1 && b != 1)
            return FAIL(PG_ERR_SHAPE, "input dim %lld does not broadcast to %lld", (long long)a, (long long)b);
        shape[d] = a == 1 ? b : a;
    }
    pg_infer_set_out(c, 0, x->dtype, orank, shape);
    return PG_OK;
}

pg_status pg_infer_shape(pg_infer_ctx *c)
{
    int r = c->in[0]->rank;
    int64_t s = pg_ir_attr_int(c->n, "start", 0), e = pg_ir_attr_int(c->n, "end", r);
    if (s < 0) s += r;
    if (e < 0) e += r;
    s = s < 0 ? 0 : (s > r ? r : s);
    e = e < 0 ? 0 : (e > r ? r : e);
    int64_t len = e > s ? e - s : 0;
    pg_infer_set_out(c, 0, PG_DTYPE_INT64, 1, &len);
    return PG_OK;
}

/* Constant: the value attribute (a tensor) or value_float/_int/_floats/_ints */
pg_status pg_infer_constant(pg_infer_ctx *c)
{
    /* the value_* attributes must have the type their name says: the
     * executor reads them as that type */
    static const struct { const char *name; pg_attr_type type; } typed[] = {
        { "value_float", PG_ATTR_FLOAT }, { "value_int", PG_ATTR_INT },
        { "value_floats", PG_ATTR_FLOATS }, { "value_ints", PG_ATTR_INTS },
    };
    for (size_t i = 0; i < sizeof typed / sizeof typed[0]; i++) {
        const pg_attr *t = pg_ir_attr(c->n, typed[i].name);
        if (t && t->type != typed[i].type)
            return FAIL(PG_ERR_DTYPE, "attribute '%s' has the wrong type (%s wanted)", typed[i].name,
                        typed[i].type == PG_ATTR_FLOAT ? "a float" : typed[i].type == PG_ATTR_INT ? "an int"
                        : typed[i].type == PG_ATTR_FLOATS ? "a list of floats" : "a list of ints");
    }
    const pg_attr *a = pg_ir_attr(c->n, "value");
    if (a && a->type == PG_ATTR_TENSOR) {
        const pg_tensor *v = a->tensor >= 0 && a->tensor < c->g->n_tensors ? c->g->tensors[a->tensor] : NULL;
        if (!v || !v->data)
            return FAIL(PG_ERR_GRAPH, "attribute 'value' is not a constant tensor");
        pg_infer_set_out(c, 0, v->dtype, v->rank, v->shape);
        return PG_OK;
    }
    if ((a = pg_ir_attr(c->n, "value_float"))) { pg_infer_set_out(c, 0, PG_DTYPE_FLOAT32, 0, NULL); return PG_OK; }
    if ((a = pg_ir_attr(c->n, "value_int"))) { pg_infer_set_out(c, 0, PG_DTYPE_INT64, 0, NULL); return PG_OK; }
    if ((a = pg_ir_attr(c->n, "value_floats"))) {
        int64_t n = a->n;
        pg_infer_set_out(c, 0, PG_DTYPE_FLOAT32, 1, &n);
        return PG_OK;
    }
    if ((a = pg_ir_attr(c->n, "value_ints"))) {
        int64_t n = a->n;
        pg_infer_set_out(c, 0, PG_DTYPE_INT64, 1, &n);
        return PG_OK;
    }
    return FAIL(PG_ERR_GRAPH, "needs a 'value' attribute");
}

pg_status pg_infer_constant_of_shape(pg_infer_ctx *c)
{
    pg_status st = PG_OK;
    int64_t shape[PG_MAX_RANK];
    int r = 0;
    if ((st = pg_infer_read_ints(c, 0, shape, PG_MAX_RANK, &r)))
        return st;
    pg_dtype dt = PG_DTYPE_FLOAT32;
    const pg_attr *a = pg_ir_attr(c->n, "value");
    if (a && a->type == PG_ATTR_TENSOR && a->tensor >= 0 && a->tensor < c->g->n_tensors &&
        c->g->tensors[a->tensor])
        dt = c->g->tensors[a->tensor]->dtype;
    for (int d = 0; d < r; d++)
        if (shape[d] < 0)
            return FAIL(PG_ERR_SHAPE, "negative dim %lld", (long long)shape[d]);
    pg_infer_set_out(c, 0, dt, r, shape);
    return PG_OK;
}

/* The row's arity, then its rule. */
static pg_status infer_node(pg_infer_ctx *c, const pg_opdef *d)
{
    if (!d)
        return FAIL(PG_ERR_GRAPH, "unknown op type '%s'", c->n->op_type);
    if (c->n_in < d->in_min || c->n_in > d->in_max) {
        if (d->in_min == d->in_max)
            return FAIL(PG_ERR_GRAPH, "takes %d input(s), got %d", d->in_min, c->n_in);
        return FAIL(PG_ERR_GRAPH, "takes %d to %d inputs, got %d", d->in_min, d->in_max, c->n_in);
    }
    for (int i = 0; i < d->in_min; i++)
        if (!c->in[i])
            return FAIL(PG_ERR_GRAPH, "input %d is required", i);
    if (c->n->n_outputs < d->out_min || c->n->n_outputs > d->out_max)
        return FAIL(PG_ERR_GRAPH, "has %d outputs, expected %d..%d", c->n->n_outputs,
                    d->out_min, d->out_max);
    return d->infer(c);
}

/* Computes small int outputs at compile time by running the executor; small
 * float ones too (a Resize's scales that an exporter writes as a Concat of
 * constants, which even level 0 needs as a value). */
static pg_status compute_known(pg_infer_ctx *c, const pg_opdef *d)
{
    pg_node *n = c->n;
    if (d->flags & PG_OPF_NO_FOLD)
        return PG_OK;
    for (int i = 0; i < n->n_outputs; i++) {
        pg_tensor *t = out_t(c, i);
        int64_t ne = pg_tensor_numel(t);
        if (ne < 0 || ne > KNOWN_MAX_ELEMS ||
            (t->dtype != PG_DTYPE_INT64 && t->dtype != PG_DTYPE_INT32 && t->dtype != PG_DTYPE_BOOL &&
             t->dtype != PG_DTYPE_FLOAT32 && t->dtype != PG_DTYPE_FLOAT64))
            return PG_OK;
    }
    const void *x[64];
    for (int i = 0; i < c->n_in; i++) {
        x[i] = NULL;
        if (!c->in[i])
            continue;
        if (d->flags & PG_OPF_DESC_ONLY)
            continue;   /* Shape, Size: read only the descriptor */
        if (!(x[i] = pg_infer_value(c->in[i])))
            return PG_OK;
    }
    pg_exec_fn fn = d->exec;
    void *y[16];
    const pg_tensor *outs[16];
    if (n->n_outputs > 16)
        return PG_OK;
    for (int i = 0; i < n->n_outputs; i++) {
        pg_tensor *t = out_t(c, i);
        /* a re-inference (after each pass that changed the graph) finds the
         * value's block of the last one, of the same size: written again */
        size_t kb = (size_t)pg_tensor_numel(t) * pg_dtype_size(t->dtype) + 1;
        if (!t->known || t->known_bytes != kb) {
            pg_free(t->known);
            t->known = pg_malloc(kb);
            t->known_bytes = t->known ? kb : 0;
        }
        if (!t->known)
            return FAIL(PG_ERR_NOMEM, "out of memory");
        memset(t->known, 0, kb);
        y[i] = t->known;
        outs[i] = t;
    }
    const void *state = NULL;   /* Constant / ConstantOfShape read their value attribute */
    const pg_attr *va = pg_ir_attr(n, "value");
    if (va && va->type == PG_ATTR_TENSOR && va->tensor >= 0 && va->tensor < c->g->n_tensors &&
        c->g->tensors[va->tensor])
        state = c->g->tensors[va->tensor]->data;
    /* the executor's kernels and scratch, as constant folding gives them */
    pg_binding bind;
    pg_status st = pg_exec_bind(n, (const pg_tensor *const *)c->in, outs, &bind);
    size_t sb = st ? 0 : pg_exec_scratch_bytes(n, (const pg_tensor *const *)c->in, outs, 1, &bind);
    void *scratch = sb ? pg_malloc(sb) : NULL;
    if (st == PG_OK && sb && !scratch)
        st = FAIL(PG_ERR_NOMEM, "out of memory");
    pg_kctx k = { .node = n, .n_in = c->n_in, .n_out = n->n_outputs,
                  .in = (const pg_tensor *const *)c->in, .x = x, .out = outs, .y = y,
                  .scratch = scratch, .scratch_bytes = sb, .state = (void *)state, .bind = &bind };
    if (st == PG_OK)
        st = fn(&k);
    pg_free(scratch);
    if (st != PG_OK) {
        int fl = 0;
        for (int i = 0; i < n->n_outputs; i++) {
            fl |= out_t(c, i)->dtype == PG_DTYPE_FLOAT32 || out_t(c, i)->dtype == PG_DTYPE_FLOAT64;
            pg_free(out_t(c, i)->known);
            out_t(c, i)->known = NULL;
        }
        if (fl && st != PG_ERR_NOMEM) {   /* a float value is a bonus: left to the run, as folding does */
            pg_clear_error();
            st = PG_OK;
        }
    }
    return st;
}

/* A tensor whose byte size overflows or passes the memory limit is refused
 * here, at compile time, by name (c: the node producing it, NULL for a
 * graph input or constant). */
static pg_status check_size(const pg_tensor *t, pg_infer_ctx *c)
{
    uint64_t bytes, bytes_ext, limit = pg_memory_limit();
    char shape[160];
    if (t->rank < 0)
        return PG_OK;
    for (int d = 0; d < t->rank; d++)
        if (t->shape[d] < 0)
            return PG_OK;   /* not known yet */
    /* the extent of its nonzero dims too: an empty tensor whose other dims
     * pass 2^63 bytes is no array a caller can hold (numpy refuses it).
     * The bytes are at most that extent: one product of it settles the
     * usual tensor (inference checks every input and constant each run). */
    uint64_t fast = pg_dtype_size(t->dtype);
    int fits = t->rank <= PG_MAX_RANK;
    for (int d = 0; fits && d < t->rank; d++)
        fits = !__builtin_mul_overflow(fast, (uint64_t)(t->shape[d] ? t->shape[d] : 1), &fast);
    if (fits && fast <= limit && fast <= (uint64_t)INT64_MAX)
        return PG_OK;
    int64_t ext[PG_MAX_RANK];
    for (int d = 0; d < t->rank && d < PG_MAX_RANK; d++)
        ext[d] = t->shape[d] ? t->shape[d] : 1;
    if (pg_shape_bytes(t->rank, t->shape, pg_dtype_size(t->dtype), &bytes) ||
        (t->rank <= PG_MAX_RANK &&
         (pg_shape_bytes(t->rank, ext, pg_dtype_size(t->dtype), &bytes_ext) || bytes_ext > (uint64_t)INT64_MAX))) {
        pg_infer_shape_str(t, shape, sizeof shape);
        if (c)
            return FAIL(PG_ERR_SHAPE, "output '%s' %s has more bytes (or, empty, its other dims span more) "
                        "than a signed 64-bit count holds", t->name, shape);
        return pg_fail(PG_ERR_SHAPE, "tensor '%s' %s has more bytes (or, empty, its other dims span more) than "
                       "a signed 64-bit count holds", t->name, shape);
    }
    if (bytes > limit) {
        pg_infer_shape_str(t, shape, sizeof shape);
        if (c)
            return FAIL(PG_ERR_SHAPE, "output '%s' %s would take %llu bytes, above the memory limit "
                        "of %llu (pg_set_memory_limit)", t->name, shape, (unsigned long long)bytes,
                        (unsigned long long)limit);
        return pg_fail(PG_ERR_SHAPE, "tensor '%s' %s would take %llu bytes, above the memory limit "
                       "of %llu (pg_set_memory_limit)", t->name, shape, (unsigned long long)bytes,
                       (unsigned long long)limit);
    }
    return PG_OK;
}

pg_status pg_ir_infer_shapes(pg_graph *g)
{
    PG_IR_FOR_TENSORS(g, t)
        if ((t->is_input || t->is_const) && t->rank >= 0) {
            pg_status st = check_size(t, NULL);
            if (st)
                return st;
        }
    int *order = pg_obj_malloc(sizeof(int) * (size_t)(g->n_nodes + 1)), n = 0;
    if (!order)
        return pg_fail(PG_ERR_NOMEM, "out of memory");
    pg_status st = pg_ir_topo_order(g, order, &n);
    for (int i = 0; i < n && st == PG_OK; i++) {
        pg_infer_ctx c;
        c.g = g;
        c.n = g->nodes[order[i]];
        if (c.n->n_inputs > 64) {
            st = pg_fail(PG_ERR_GRAPH, "node '%s': more than 64 inputs", c.n->name);
            break;
        }
        c.n_in = c.n->n_inputs;
        for (int k = 0; k < c.n_in; k++) {
            int t = c.n->inputs[k];
            c.in[k] = t >= 0 ? g->tensors[t] : NULL;
            if (c.in[k] && !pg_tensor_shape_known(c.in[k]) && c.in[k]->rank != 0) {
                st = pg_infer_fail(&c, PG_ERR_SHAPE, "input %d ('%s') has no known shape", k, c.in[k]->name);
                break;
            }
        }
        if (st)
            break;
        const pg_opdef *d = pg_opdef_of(c.n->op);
        if ((st = infer_node(&c, d)))
            break;
        for (int o = 0; o < c.n->n_outputs; o++) {
            pg_tensor *t = out_t(&c, o);
            if (t->rank > PG_MAX_RANK || !pg_dtype_size(t->dtype)) {
                st = pg_infer_fail(&c, PG_ERR_SHAPE, "output '%s' has an unsupported shape or dtype", t->name);
                break;
            }
            if ((st = check_size(t, &c)))
                break;
        }
        if (st == PG_OK)
            st = compute_known(&c, d);
    }
    pg_free(order);
    return st;
}

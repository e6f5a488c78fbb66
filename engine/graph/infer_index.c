/* infer_index.c - shape rules of the indexing ops (ops_index.c runs them):
 * GatherElements, GatherND, ScatterND, OneHot, NonZero, TopK, ArgMax/Min. */
#include <math.h>
#include <string.h>

#include "../exec/elem.h"
#include "../exec/ops.h"
#include "infer.h"

#define FAIL PG_INFER_FAIL

static pg_status need_index(pg_infer_ctx *c, int slot, const char *what)
{
    const pg_tensor *t = c->in[slot];
    if (t->dtype != PG_DTYPE_INT64 && t->dtype != PG_DTYPE_INT32)
        return FAIL(PG_ERR_DTYPE, "%s '%s' must be int64 or int32, not %s", what, t->name,
                    pg_dtype_name(t->dtype));
    return PG_OK;
}

static pg_status axis_of(pg_infer_ctx *c, int64_t dflt, int rank, int *axis)
{
    int64_t ax = pg_ir_attr_int(c->n, "axis", dflt);
    *axis = pg_norm_axis(ax, rank);
    if (*axis < 0 || rank < 1)
        return FAIL(PG_ERR_SHAPE, "axis %lld is out of range for rank %d", (long long)ax, rank);
    return PG_OK;
}

pg_status pg_infer_gather_elements(pg_infer_ctx *c)
{
    pg_status st;
    const pg_tensor *x = c->in[0], *ix = c->in[1];
    int a;
    if ((st = need_index(c, 1, "indices")) || (st = axis_of(c, 0, x->rank, &a)))
        return st;
    if (ix->rank != x->rank)
        return FAIL(PG_ERR_SHAPE, "indices '%s' have rank %d; data '%s' has rank %d", ix->name,
                    ix->rank, x->name, x->rank);
    for (int d = 0; d < x->rank; d++)
        if (d != a && ix->shape[d] > x->shape[d])
            return FAIL(PG_ERR_SHAPE, "indices dim %d is %lld, past the data's %lld", d,
                        (long long)ix->shape[d], (long long)x->shape[d]);
    pg_infer_set_out(c, 0, x->dtype, ix->rank, ix->shape);
    return PG_OK;
}

pg_status pg_infer_gather_nd(pg_infer_ctx *c)
{
    pg_status st;
    const pg_tensor *x = c->in[0], *ix = c->in[1];
    if ((st = need_index(c, 1, "indices")))
        return st;
    int64_t b = pg_ir_attr_int(c->n, "batch_dims", 0);
    if (x->rank < 1 || ix->rank < 1)
        return FAIL(PG_ERR_SHAPE, "data and indices must have rank >= 1");
    int64_t m = ix->shape[ix->rank - 1];
    if (b < 0 || b >= ix->rank || b >= x->rank)
        return FAIL(PG_ERR_SHAPE, "batch_dims %lld must be below both ranks (%d, %d)", (long long)b,
                    x->rank, ix->rank);
    if (m < 1 || m > x->rank - b)
        return FAIL(PG_ERR_SHAPE, "indices' last dim %lld must be 1..%lld (data rank %d - batch_dims)",
                    (long long)m, (long long)(x->rank - b), x->rank);
    for (int d = 0; d < b; d++)
        if (x->shape[d] != ix->shape[d])
            return FAIL(PG_ERR_SHAPE, "batch dim %d differs: data %lld, indices %lld", d,
                        (long long)x->shape[d], (long long)ix->shape[d]);
    int r = 0;
    int64_t shape[PG_MAX_RANK];
    if (ix->rank - 1 + x->rank - b - m > PG_MAX_RANK)
        return FAIL(PG_ERR_SHAPE, "the result's rank is above %d", PG_MAX_RANK);
    for (int d = 0; d < ix->rank - 1; d++) shape[r++] = ix->shape[d];
    for (int d = (int)(b + m); d < x->rank; d++) shape[r++] = x->shape[d];
    pg_infer_set_out(c, 0, x->dtype, r, shape);
    return PG_OK;
}

pg_status pg_infer_scatter_nd(pg_infer_ctx *c)
{
    pg_status st;
    const pg_tensor *x = c->in[0], *ix = c->in[1], *u = c->in[2];
    if ((st = need_index(c, 1, "indices")))
        return st;
    if (u->dtype != x->dtype)
        return FAIL(PG_ERR_DTYPE, "updates '%s' are %s; data is %s", u->name, pg_dtype_name(u->dtype),
                    pg_dtype_name(x->dtype));
    const char *red = pg_ir_attr_string(c->n, "reduction", "none");
    if (strcmp(red, "none") && strcmp(red, "add") && strcmp(red, "mul") && strcmp(red, "max") &&
        strcmp(red, "min"))
        return FAIL(PG_ERR_GRAPH, "reduction '%s' is not none, add, mul, max or min", red);
    if (strcmp(red, "none") && !pg_dt_is_numeric(x->dtype))
        return FAIL(PG_ERR_DTYPE, "reduction '%s' on %s", red, pg_dtype_name(x->dtype));
    if (x->rank < 1 || ix->rank < 1)
        return FAIL(PG_ERR_SHAPE, "data and indices must have rank >= 1");
    int64_t kk = ix->shape[ix->rank - 1];
    if (kk < 1 || kk > x->rank)
        return FAIL(PG_ERR_SHAPE, "indices' last dim %lld must be 1..%d (the data's rank)", (long long)kk,
                    x->rank);
    int want = ix->rank - 1 + x->rank - (int)kk;
    int okshape = u->rank == want;
    for (int d = 0; okshape && d < ix->rank - 1; d++)
        okshape = u->shape[d] == ix->shape[d];
    for (int d = 0; okshape && d < x->rank - kk; d++)
        okshape = u->shape[ix->rank - 1 + d] == x->shape[kk + d];
    if (!okshape) {
        char su[128];
        pg_infer_shape_str(u, su, sizeof su);
        return FAIL(PG_ERR_SHAPE, "updates '%s' %s must be indices.shape[:-1] + data.shape[%lld:]",
                    u->name, su, (long long)kk);
    }
    pg_infer_set_out(c, 0, x->dtype, x->rank, x->shape);
    return PG_OK;
}

pg_status pg_infer_onehot(pg_infer_ctx *c)
{
    pg_status st;
    const pg_tensor *ix = c->in[0], *v = c->in[2];
    double depth;
    if (!pg_dt_is_numeric(ix->dtype))
        return FAIL(PG_ERR_DTYPE, "indices '%s' are %s", ix->name, pg_dtype_name(ix->dtype));
    if ((st = pg_infer_read_scalar(c, 1, "depth", &depth)))
        return st;
    if (!(depth >= 1) || depth > 1e12)
        return FAIL(PG_ERR_SHAPE, "depth %g must be a positive count", depth);
    if (pg_tensor_numel(v) != 2)
        return FAIL(PG_ERR_SHAPE, "values '%s' must hold 2 elements [off, on], not %lld", v->name,
                    (long long)pg_tensor_numel(v));
    int r = ix->rank + 1;
    if (r > PG_MAX_RANK)
        return FAIL(PG_ERR_SHAPE, "the result's rank is above %d", PG_MAX_RANK);
    int a;
    if ((st = axis_of(c, -1, r, &a)))
        return st;
    int64_t shape[PG_MAX_RANK];
    for (int d = 0, s = 0; d < r; d++)
        shape[d] = d == a ? (int64_t)depth : ix->shape[s++];
    pg_infer_set_out(c, 0, v->dtype, r, shape);
    return PG_OK;
}

pg_status pg_infer_nonzero(pg_infer_ctx *c)
{
    const pg_tensor *x = c->in[0];
    const void *v = pg_infer_value(x);
    if (!pg_dt_is_numeric(x->dtype))
        return FAIL(PG_ERR_DTYPE, "input '%s' is %s", x->name, pg_dtype_name(x->dtype));
    if (!v)
        return FAIL(PG_ERR_UNSUPPORTED, "its output size depends on data at run time: NonZero runs "
                    "only where its input '%s' is known at compile time (a constant, or computed "
                    "from shapes)", x->name);
    int64_t n = pg_tensor_numel(x), nz = 0;
    for (int64_t i = 0; i < n; i++)
        nz += pg_ld_f(x->dtype, v, i) != 0;
    int64_t shape[2] = { x->rank, nz };
    pg_infer_set_out(c, 0, PG_DTYPE_INT64, 2, shape);
    return PG_OK;
}

pg_status pg_infer_topk(pg_infer_ctx *c)
{
    pg_status st;
    const pg_tensor *x = c->in[0];
    int64_t kv[1];
    int nk = 0, a;
    if (x->dtype == PG_DTYPE_BOOL || !pg_dt_is_numeric(x->dtype))
        return FAIL(PG_ERR_DTYPE, "input '%s' is %s", x->name, pg_dtype_name(x->dtype));
    if ((st = axis_of(c, -1, x->rank, &a)) || (st = pg_infer_read_ints(c, 1, kv, 1, &nk)))
        return st;
    if (nk != 1)
        return FAIL(PG_ERR_SHAPE, "K '%s' must hold one value", c->in[1]->name);
    if (kv[0] < 0 || kv[0] > x->shape[a])
        return FAIL(PG_ERR_SHAPE, "K = %lld is outside 0..%lld (the size of axis %d)", (long long)kv[0],
                    (long long)x->shape[a], a);
    int64_t shape[PG_MAX_RANK];
    memcpy(shape, x->shape, sizeof shape);
    shape[a] = kv[0];
    pg_infer_set_out(c, 0, x->dtype, x->rank, shape);
    if (c->n->n_outputs > 1)
        pg_infer_set_out(c, 1, PG_DTYPE_INT64, x->rank, shape);
    return PG_OK;
}

pg_status pg_infer_argmax(pg_infer_ctx *c)
{
    pg_status st;
    const pg_tensor *x = c->in[0];
    int a;
    if (!pg_dt_is_numeric(x->dtype))
        return FAIL(PG_ERR_DTYPE, "input '%s' is %s", x->name, pg_dtype_name(x->dtype));
    if ((st = axis_of(c, 0, x->rank, &a)))
        return st;
    if (x->shape[a] == 0)
        return FAIL(PG_ERR_SHAPE, "axis %d of '%s' is empty: no %s", a, x->name, c->n->op_type);
    int keep = (int)pg_ir_attr_int(c->n, "keepdims", 1), r = 0;
    int64_t shape[PG_MAX_RANK];
    for (int d = 0; d < x->rank; d++) {
        if (d != a) shape[r++] = x->shape[d];
        else if (keep) shape[r++] = 1;
    }
    pg_infer_set_out(c, 0, PG_DTYPE_INT64, r, shape);
    return PG_OK;
}

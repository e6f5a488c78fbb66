/* infer_data.c - shape rules of Range, CumSum, Size, Tile, Pad and Trilu
 * (ops_seq.c and ops_pad_tile.c run them). */
#include <math.h>
#include <string.h>

#include "../exec/elem.h"
#include "../exec/ops.h"
#include "infer.h"

#define FAIL PG_INFER_FAIL
#define PG_PAD_MAX ((int64_t)1 << 40)

pg_status pg_infer_range(pg_infer_ctx *c)
{
    pg_dtype dt = c->in[0]->dtype;
    static const char *const what[3] = { "start", "limit", "delta" };
    for (int i = 0; i < 3; i++) {
        const pg_tensor *t = c->in[i];
        if (t->dtype != dt)
            return FAIL(PG_ERR_DTYPE, "start, limit and delta must share a dtype (%s is %s, start is %s)",
                        what[i], pg_dtype_name(t->dtype), pg_dtype_name(dt));
        if (pg_tensor_numel(t) != 1 || t->rank > 1)
            return FAIL(PG_ERR_SHAPE, "%s '%s' must be a scalar", what[i], t->name);
    }
    if (dt != PG_DTYPE_FLOAT32 && dt != PG_DTYPE_FLOAT64 && dt != PG_DTYPE_INT32 && dt != PG_DTYPE_INT64)
        return FAIL(PG_ERR_DTYPE, "takes float32, float64, int32 or int64, not %s", pg_dtype_name(dt));
    int64_t n = 0;
    if (pg_dt_is_float(dt)) {
        double v[3];
        for (int i = 0; i < 3; i++) {
            pg_status st = pg_infer_read_scalar(c, i, what[i], &v[i]);
            if (st)
                return st;
        }
        if (v[2] == 0 || v[0] != v[0] || v[1] != v[1] || v[2] != v[2])
            return FAIL(PG_ERR_SHAPE, "delta is zero or a value is NaN");
        double len = ceil((v[1] - v[0]) / v[2]);
        if (!(len < 9e15))
            return FAIL(PG_ERR_SHAPE, "start %g, limit %g, delta %g give too many elements", v[0], v[1], v[2]);
        n = len > 0 ? (int64_t)len : 0;
    } else {
        int64_t v[3];
        int cnt = 0;
        for (int i = 0; i < 3; i++) {
            pg_status st = pg_infer_read_ints(c, i, &v[i], 1, &cnt);
            if (st)
                return st;
        }
        if (v[2] == 0)
            return FAIL(PG_ERR_SHAPE, "delta is zero");
        /* ceil((limit - start) / delta) without overflow for any int64 */
        double span = ((double)v[1] - (double)v[0]) / (double)v[2];
        if (span > 9e15)
            return FAIL(PG_ERR_SHAPE, "start %lld, limit %lld, delta %lld give too many elements",
                        (long long)v[0], (long long)v[1], (long long)v[2]);
        if (span > 0) {   /* |limit - start| and |delta| exactly, as unsigned */
            uint64_t d = v[2] > 0 ? (uint64_t)v[1] - (uint64_t)v[0] : (uint64_t)v[0] - (uint64_t)v[1];
            uint64_t ad = v[2] > 0 ? (uint64_t)v[2] : (uint64_t)0 - (uint64_t)v[2];
            n = (int64_t)(d / ad + (d % ad != 0));
        }
    }
    pg_infer_set_out(c, 0, dt, 1, &n);
    return PG_OK;
}

pg_status pg_infer_cumsum(pg_infer_ctx *c)
{
    const pg_tensor *x = c->in[0], *ax = c->in[1];
    pg_dtype dt = x->dtype;
    if (dt != PG_DTYPE_FLOAT32 && dt != PG_DTYPE_FLOAT64 && dt != PG_DTYPE_INT32 && dt != PG_DTYPE_INT64)
        return FAIL(PG_ERR_DTYPE, "takes float32, float64, int32 or int64, not %s", pg_dtype_name(dt));
    if ((ax->dtype != PG_DTYPE_INT64 && ax->dtype != PG_DTYPE_INT32) || pg_tensor_numel(ax) != 1)
        return FAIL(PG_ERR_SHAPE, "axis '%s' must be one int64 or int32 value", ax->name);
    if (x->rank < 1)
        return FAIL(PG_ERR_SHAPE, "input '%s' must have rank >= 1", x->name);
    const void *v = pg_infer_value(ax);
    if (v && pg_norm_axis(pg_ld_i(ax->dtype, v, 0), x->rank) < 0)
        return FAIL(PG_ERR_SHAPE, "axis %lld is out of range for rank %d", (long long)pg_ld_i(ax->dtype, v, 0),
                    x->rank);
    pg_infer_set_out(c, 0, dt, x->rank, x->shape);
    return PG_OK;
}

pg_status pg_infer_size(pg_infer_ctx *c)
{
    pg_infer_set_out(c, 0, PG_DTYPE_INT64, 0, NULL);
    return PG_OK;
}

pg_status pg_infer_tile(pg_infer_ctx *c)
{
    const pg_tensor *x = c->in[0];
    int64_t rep[PG_MAX_RANK], shape[PG_MAX_RANK];
    int n = 0;
    pg_status st = pg_infer_read_ints(c, 1, rep, PG_MAX_RANK, &n);
    if (st)
        return st;
    if (n != x->rank)
        return FAIL(PG_ERR_SHAPE, "repeats has %d values for an input of rank %d", n, x->rank);
    for (int d = 0; d < n; d++) {
        if (rep[d] < 0)
            return FAIL(PG_ERR_SHAPE, "repeats[%d] = %lld is negative", d, (long long)rep[d]);
        if (rep[d] && x->shape[d] > INT64_MAX / rep[d])
            return FAIL(PG_ERR_SHAPE, "repeats[%d] = %lld overflows the dim", d, (long long)rep[d]);
        shape[d] = x->shape[d] * rep[d];
    }
    pg_infer_set_out(c, 0, x->dtype, x->rank, shape);
    return PG_OK;
}

pg_status pg_infer_pad(pg_infer_ctx *c)
{
    pg_status st;
    const pg_tensor *x = c->in[0];
    int64_t pads[2 * PG_MAX_RANK], axes[PG_MAX_RANK], lo[PG_MAX_RANK], hi[PG_MAX_RANK];
    int np = 0, na = -1;
    const char *mode = pg_ir_attr_string(c->n, "mode", "constant");
    int m = pg_pad_mode(mode);
    if (m < 0)
        return FAIL(PG_ERR_GRAPH, "mode '%s' is not constant, reflect, edge or wrap", mode);
    if ((st = pg_infer_read_ints(c, 1, pads, 2 * PG_MAX_RANK, &np)))
        return st;
    if (pg_infer_has_in(c, 3) && (st = pg_infer_read_ints(c, 3, axes, PG_MAX_RANK, &na)))
        return st;
    if (pg_pad_amounts(x->rank, pads, np, na >= 0 ? axes : NULL, na, lo, hi))
        return FAIL(PG_ERR_SHAPE, "pads (%d values) do not fit %s axes of a rank-%d input", np,
                    na >= 0 ? "the given" : "all", x->rank);
    if (pg_infer_has_in(c, 2)) {
        const pg_tensor *v = c->in[2];
        if (v->dtype != x->dtype || pg_tensor_numel(v) != 1)
            return FAIL(PG_ERR_SHAPE, "constant_value '%s' must be one %s value", v->name,
                        pg_dtype_name(x->dtype));
    }
    int64_t shape[PG_MAX_RANK];
    for (int d = 0; d < x->rank; d++) {
        if (lo[d] > PG_PAD_MAX || lo[d] < -PG_PAD_MAX || hi[d] > PG_PAD_MAX || hi[d] < -PG_PAD_MAX)
            return FAIL(PG_ERR_SHAPE, "pads %lld, %lld on axis %d are beyond +-2^40", (long long)lo[d],
                        (long long)hi[d], d);
        shape[d] = x->shape[d] + lo[d] + hi[d];
        if (shape[d] < 0)
            return FAIL(PG_ERR_SHAPE, "pads %lld, %lld on axis %d of size %lld leave a negative size",
                        (long long)lo[d], (long long)hi[d], d, (long long)x->shape[d]);
        if (m != PG_PAD_CONSTANT && x->shape[d] == 0 && shape[d] > 0)
            return FAIL(PG_ERR_SHAPE, "%s padding of the empty axis %d", mode, d);
    }
    pg_infer_set_out(c, 0, x->dtype, x->rank, shape);
    return PG_OK;
}

pg_status pg_infer_trilu(pg_infer_ctx *c)
{
    const pg_tensor *x = c->in[0];
    if (x->rank < 2)
        return FAIL(PG_ERR_SHAPE, "input '%s' must have rank >= 2", x->name);
    if (pg_infer_has_in(c, 1)) {
        const pg_tensor *kt = c->in[1];
        if ((kt->dtype != PG_DTYPE_INT64 && kt->dtype != PG_DTYPE_INT32) || pg_tensor_numel(kt) != 1)
            return FAIL(PG_ERR_SHAPE, "k '%s' must be one int64 value", kt->name);
    }
    pg_infer_set_out(c, 0, x->dtype, x->rank, x->shape);
    return PG_OK;
}

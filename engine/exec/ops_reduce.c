/* ops_reduce.c - ReduceMax, ReduceMin, ReduceProd, ReduceL2 in plain C
 * (ReduceMean and ReduceSum are in ops_norm.c).
 *
 * Each output element walks its reduced sub-space (an odometer over the
 * reduced dims) and keeps its result in double (floats) or int64, so no
 * scratch is needed.  An empty reduction gives the op's identity: -inf /
 * the dtype's minimum for Max, +inf / its maximum for Min, 1 for Prod, 0
 * for L2 (ONNX 18/20). */
#include <math.h>

#include "../core/error.h"
#include "elem.h"
#include "ops.h"

int pg_reduce_dtype_ok(pg_opcode op, pg_dtype dt)
{
    switch (op) {
    case PG_OP_REDUCEMAX: case PG_OP_REDUCEMIN: return pg_dt_is_numeric(dt);
    case PG_OP_REDUCEPROD: return pg_dt_is_float(dt) || dt == PG_DTYPE_INT32 || dt == PG_DTYPE_INT64;
    case PG_OP_REDUCEL2: return pg_dt_is_float(dt);
    default: return dt == PG_DTYPE_FLOAT32;
    }
}

static int64_t dt_min(pg_dtype dt)
{
    switch (dt) {
    case PG_DTYPE_INT32: return INT32_MIN;
    case PG_DTYPE_INT8: return INT8_MIN;
    case PG_DTYPE_UINT8: case PG_DTYPE_BOOL: return 0;
    default: return INT64_MIN;
    }
}

static int64_t dt_max(pg_dtype dt)
{
    switch (dt) {
    case PG_DTYPE_INT32: return INT32_MAX;
    case PG_DTYPE_INT8: return INT8_MAX;
    case PG_DTYPE_UINT8: return UINT8_MAX;
    case PG_DTYPE_BOOL: return 1;
    default: return INT64_MAX;
    }
}

pg_status pg_exec_reduce_ext(pg_kctx *k)
{
    const pg_tensor *x = k->in[0];
    pg_opcode op = k->node->op;
    pg_dtype dt = x->dtype;
    int r = x->rank, red[PG_MAX_RANK] = { 0 }, na = 0;
    int64_t axes[PG_MAX_RANK];
    if (k->n_in > 1 && k->x[1]) {
        na = (int)pg_tensor_numel(k->in[1]);
        for (int i = 0; i < na && i < PG_MAX_RANK; i++)
            axes[i] = pg_ld_i(k->in[1]->dtype, k->x[1], i);
    } else {
        const int64_t *a = pg_ir_attr_ints(k->node, "axes", &na);
        for (int i = 0; i < na && i < PG_MAX_RANK; i++)
            axes[i] = a[i];
    }
    for (int i = 0; i < na && i < PG_MAX_RANK; i++) {
        int a = pg_norm_axis(axes[i], r);
        if (a < 0)
            return pg_fail(PG_ERR_INVALID_ARG, "node '%s' (%s): axis %lld is out of range for rank %d",
                           k->node->name, k->node->op_type, (long long)axes[i], r);
        red[a] = 1;
    }
    if (!na)
        for (int d = 0; d < r; d++)
            red[d] = 1;
    int64_t xs[PG_MAX_RANK] = { 0 }, kd[PG_MAX_RANK], rd[PG_MAX_RANK], ks[PG_MAX_RANK], rs[PG_MAX_RANK];
    int nk = 0, nr = 0;
    pg_row_strides(x, xs);
    int64_t nout = 1, count = 1;
    for (int d = 0; d < r; d++) {
        if (red[d]) {
            rd[nr] = x->shape[d];
            rs[nr++] = xs[d];
            count *= x->shape[d];
        } else {
            kd[nk] = x->shape[d];
            ks[nk++] = xs[d];
            nout *= x->shape[d];
        }
    }
    int fl = pg_dt_is_float(dt);
    int64_t kidx[PG_MAX_RANK] = { 0 }, base = 0;
    for (int64_t o = 0; o < nout; o++) {
        double af = op == PG_OP_REDUCEMAX ? -INFINITY : op == PG_OP_REDUCEMIN ? INFINITY
                  : op == PG_OP_REDUCEPROD ? 1 : 0;
        int64_t ai = op == PG_OP_REDUCEMAX ? dt_min(dt) : op == PG_OP_REDUCEMIN ? dt_max(dt)
                   : op == PG_OP_REDUCEPROD ? 1 : 0;
        int64_t ridx[PG_MAX_RANK] = { 0 }, off = base;
        for (int64_t e = 0; e < count; e++) {
            if (fl) {
                double v = pg_ld_f(dt, k->x[0], off);
                switch (op) {
                case PG_OP_REDUCEMAX: af = v != v || af != af ? NAN : v > af ? v : af; break;
                case PG_OP_REDUCEMIN: af = v != v || af != af ? NAN : v < af ? v : af; break;
                case PG_OP_REDUCEPROD: af *= v; break;
                default: af += v * v; break;
                }
            } else {
                int64_t v = pg_ld_i(dt, k->x[0], off);
                switch (op) {
                case PG_OP_REDUCEMAX: ai = v > ai ? v : ai; break;
                case PG_OP_REDUCEMIN: ai = v < ai ? v : ai; break;
                default: ai = (int64_t)((uint64_t)ai * (uint64_t)v); break;
                }
            }
            for (int q = nr - 1; q >= 0; q--) {
                off += rs[q];
                if (++ridx[q] < rd[q]) break;
                off -= rs[q] * rd[q];
                ridx[q] = 0;
            }
        }
        if (fl)
            pg_st_f(dt, k->y[0], o, op == PG_OP_REDUCEL2 ? sqrt(af) : af);
        else
            pg_st_i(dt, k->y[0], o, ai);
        for (int q = nk - 1; q >= 0; q--) {
            base += ks[q];
            if (++kidx[q] < kd[q]) break;
            base -= ks[q] * kd[q];
            kidx[q] = 0;
        }
    }
    return PG_OK;
}

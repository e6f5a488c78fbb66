/* ops_seq.c - Range, CumSum and Size in plain C.
 *
 * Range's start/limit/delta are known at compile time (its row's value
 * inputs), so its length is fixed; the executor recomputes the values.
 * CumSum reads its axis at run time. */
#include <string.h>

#include "../core/error.h"
#include "elem.h"
#include "ops.h"

pg_status pg_exec_range(pg_kctx *k)
{
    pg_dtype dt = k->out[0]->dtype;
    int64_t n = pg_tensor_numel(k->out[0]);
    if (pg_dt_is_float(dt)) {
        double s = pg_ld_f(dt, k->x[0], 0), d = pg_ld_f(dt, k->x[2], 0);
        for (int64_t i = 0; i < n; i++)
            pg_st_f(dt, k->y[0], i, s + (double)i * d);
    } else {
        int64_t s = pg_ld_i(dt, k->x[0], 0), d = pg_ld_i(dt, k->x[2], 0);
        for (int64_t i = 0; i < n; i++)
            pg_st_i(dt, k->y[0], i, (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)d));
    }
    return PG_OK;
}

pg_status pg_exec_cumsum(pg_kctx *k)
{
    const pg_tensor *x = k->in[0];
    pg_dtype dt = x->dtype;
    int64_t axv = pg_ld_i(k->in[1]->dtype, k->x[1], 0);
    int a = pg_norm_axis(axv, x->rank);
    if (a < 0)
        return pg_fail(PG_ERR_INVALID_ARG, "node '%s' (CumSum): axis %lld is out of range for rank %d",
                       k->node->name, (long long)axv, x->rank);
    int excl = (int)pg_ir_attr_int(k->node, "exclusive", 0), rev = (int)pg_ir_attr_int(k->node, "reverse", 0);
    int64_t n = x->shape[a], outer = 1, inner = 1;
    for (int d = 0; d < a; d++) outer *= x->shape[d];
    for (int d = a + 1; d < x->rank; d++) inner *= x->shape[d];
    int fl = pg_dt_is_float(dt);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            double sf = 0;
            int64_t si = 0;
            for (int64_t e = 0; e < n; e++) {
                int64_t j = o * n * inner + (rev ? n - 1 - e : e) * inner + i;
                /* read x[j] before writing y[j]: safe in place */
                double vf = fl ? pg_ld_f(dt, k->x[0], j) : 0;
                int64_t vi = fl ? 0 : pg_ld_i(dt, k->x[0], j);
                if (!excl) {
                    sf += vf;
                    si = (int64_t)((uint64_t)si + (uint64_t)vi);
                }
                if (fl) pg_st_f(dt, k->y[0], j, sf);
                else pg_st_i(dt, k->y[0], j, si);
                if (excl) {
                    sf += vf;
                    si = (int64_t)((uint64_t)si + (uint64_t)vi);
                }
            }
        }
    return PG_OK;
}

pg_status pg_exec_size(pg_kctx *k)
{
    *(int64_t *)k->y[0] = pg_tensor_numel(k->in[0]);
    return PG_OK;
}

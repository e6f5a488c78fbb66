/* infer_einsum.c - Einsum's shape rule: the equation parsed against the
 * input shapes (exec/ops_einsum.c's parser, einsum.h) gives the output. */
#include "../exec/einsum.h"
#include "../exec/elem.h"
#include "infer.h"

#define FAIL PG_INFER_FAIL

pg_status pg_infer_einsum(pg_infer_ctx *c)
{
    pg_dtype dt = c->in[0]->dtype;
    for (int i = 0; i < c->n_in; i++) {
        const pg_tensor *t = c->in[i];
        if (!t)
            return FAIL(PG_ERR_GRAPH, "input %d is missing", i);
        if (t->dtype != dt)
            return FAIL(PG_ERR_DTYPE, "inputs '%s' (%s) and '%s' (%s) have different dtypes",
                        c->in[0]->name, pg_dtype_name(dt), t->name, pg_dtype_name(t->dtype));
    }
    if (dt != PG_DTYPE_FLOAT32 && dt != PG_DTYPE_FLOAT64 && dt != PG_DTYPE_INT32 && dt != PG_DTYPE_INT64)
        return FAIL(PG_ERR_DTYPE, "takes float32, float64, int32 or int64, not %s", pg_dtype_name(dt));
    pg_einsum e;
    pg_status st = pg_einsum_parse(c->n, (const pg_tensor *const *)c->in, c->n_in, &e);
    if (st)
        return st;
    int64_t shape[PG_MAX_RANK];
    for (int a = 0; a < e.out_rank; a++)
        shape[a] = e.dim[e.out_var[a]];
    pg_infer_set_out(c, 0, dt, e.out_rank, shape);
    return PG_OK;
}

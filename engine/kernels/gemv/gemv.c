/* gemv.c - the public entry pg_gemv: checks the arguments, picks the
 * variant once, and runs it.  The kernels take any column range, so
 * splitting N across threads is a matter of calling one per slice. */
#include <stdint.h>

#include "../../core/error.h"
#include "gemv.h"

pg_status pg_gemv(int variant, size_t N, size_t K, const float *x, const float *B, size_t ldb,
                  const float *bias, float *y)
{
    pg_clear_error();
    const pg_variant *v = pg_op_variant_checked(&pg_op_gemv, variant);
    if (!v)
        return pg_last_status();
    if (N == 0)
        return PG_OK;
    if (!y)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_gemv: y is NULL");
    if (K > 0 && (!x || !B))
        return pg_fail(PG_ERR_INVALID_ARG, "pg_gemv: %s is NULL", !x ? "x" : "B");
    if (ldb < N)
        return pg_fail(PG_ERR_SHAPE, "pg_gemv: ldb %zu is smaller than N %zu", ldb, N);
    if (K > 0 && (K - 1) > (SIZE_MAX / sizeof(float) - N) / ldb)
        return pg_fail(PG_ERR_SHAPE, "pg_gemv: B of %zu x %zu (ldb %zu) does not fit in memory",
                       K, N, ldb);
    ((pg_f32_gemv_fn)v->fn)(N, K, x, B, ldb, bias, y);
    return PG_OK;
}

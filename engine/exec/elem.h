/* elem.h - element access by dtype and a broadcasting odometer, for the
 * plain C executors that handle several dtypes with one loop (ops_math.c,
 * ops_index.c, ops_reduce.c, ...).
 *
 * Floating-point dtypes go through double (exact for float32 and float64),
 * integer ones through int64 (exact for every integer dtype the engine
 * has), so an executor writes one loop per kind instead of one per dtype. */
#ifndef PG_EXEC_ELEM_H
#define PG_EXEC_ELEM_H

#include <stdint.h>
#include <string.h>

#include "../graph/ir.h"

static inline int pg_dt_is_float(pg_dtype dt)
{
    return dt == PG_DTYPE_FLOAT32 || dt == PG_DTYPE_FLOAT64;
}

static inline int pg_dt_is_int(pg_dtype dt)
{
    return dt == PG_DTYPE_INT64 || dt == PG_DTYPE_INT32 || dt == PG_DTYPE_INT8 ||
           dt == PG_DTYPE_UINT8 || dt == PG_DTYPE_BOOL;
}

/* Any numeric dtype the engine has. */
static inline int pg_dt_is_numeric(pg_dtype dt)
{
    return pg_dt_is_float(dt) || pg_dt_is_int(dt);
}

static inline double pg_ld_f(pg_dtype dt, const void *p, int64_t i)
{
    switch (dt) {
    case PG_DTYPE_FLOAT32: return ((const float *)p)[i];
    case PG_DTYPE_FLOAT64: return ((const double *)p)[i];
    case PG_DTYPE_INT64: return (double)((const int64_t *)p)[i];
    case PG_DTYPE_INT32: return ((const int32_t *)p)[i];
    case PG_DTYPE_INT8: return ((const int8_t *)p)[i];
    case PG_DTYPE_UINT8: case PG_DTYPE_BOOL: return ((const uint8_t *)p)[i];
    default: return 0;
    }
}

static inline int64_t pg_ld_i(pg_dtype dt, const void *p, int64_t i)
{
    switch (dt) {
    case PG_DTYPE_INT64: return ((const int64_t *)p)[i];
    case PG_DTYPE_INT32: return ((const int32_t *)p)[i];
    case PG_DTYPE_INT8: return ((const int8_t *)p)[i];
    case PG_DTYPE_UINT8: case PG_DTYPE_BOOL: return ((const uint8_t *)p)[i];
    case PG_DTYPE_FLOAT32: {
        float v = ((const float *)p)[i];
        return v != v ? 0 : v >= 9.2e18f ? INT64_MAX : v <= -9.2e18f ? INT64_MIN : (int64_t)v;
    }
    case PG_DTYPE_FLOAT64: {
        double v = ((const double *)p)[i];
        return v != v ? 0 : v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)v;
    }
    default: return 0;
    }
}

static inline void pg_st_f(pg_dtype dt, void *p, int64_t i, double v)
{
    switch (dt) {
    case PG_DTYPE_FLOAT32: ((float *)p)[i] = (float)v; break;
    case PG_DTYPE_FLOAT64: ((double *)p)[i] = v; break;
    default: break;
    }
}

/* Integer dtypes wrap as a C cast to the narrower type does. */
static inline void pg_st_i(pg_dtype dt, void *p, int64_t i, int64_t v)
{
    switch (dt) {
    case PG_DTYPE_INT64: ((int64_t *)p)[i] = v; break;
    case PG_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case PG_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case PG_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case PG_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: break;
    }
}

/* ---- the broadcasting odometer ---------------------------------------------
 * Walks an output's index space in row-major order keeping each input's
 * element offset (numpy broadcasting: stride 0 on broadcast dims):
 *
 *     pg_bc it;
 *     pg_bc_init(&it, out, in, n);
 *     for (int64_t o = 0; o < it.total; o++, pg_bc_next(&it))
 *         ... it.off[i] is input i's element for output element o ...
 */
#define PG_BC_MAX_IN 64

typedef struct pg_bc {
    int     rank, n;
    int64_t total;
    int64_t shape[PG_MAX_RANK];
    int64_t idx[PG_MAX_RANK];
    int64_t st[PG_BC_MAX_IN][PG_MAX_RANK];
    int64_t off[PG_BC_MAX_IN];
} pg_bc;

void pg_broadcast_strides(int r, const int64_t *s, int orank, const int64_t *oshape,
                          int64_t *strides);

static inline void pg_bc_init(pg_bc *b, const pg_tensor *out, const pg_tensor *const *in, int n)
{
    b->rank = out->rank;
    b->n = n < PG_BC_MAX_IN ? n : PG_BC_MAX_IN;
    b->total = 1;
    for (int d = 0; d < out->rank; d++) {
        b->shape[d] = out->shape[d];
        b->idx[d] = 0;
        b->total *= out->shape[d];
    }
    for (int i = 0; i < b->n; i++) {
        b->off[i] = 0;
        if (in[i])
            pg_broadcast_strides(in[i]->rank, in[i]->shape, out->rank, out->shape, b->st[i]);
        else
            memset(b->st[i], 0, sizeof b->st[i]);
    }
}

static inline void pg_bc_next(pg_bc *b)
{
    for (int d = b->rank - 1; d >= 0; d--) {
        for (int i = 0; i < b->n; i++)
            b->off[i] += b->st[i][d];
        if (++b->idx[d] < b->shape[d])
            return;
        for (int i = 0; i < b->n; i++)
            b->off[i] -= b->st[i][d] * b->shape[d];
        b->idx[d] = 0;
    }
}

/* Row-major strides of a tensor, in elements. */
static inline void pg_row_strides(const pg_tensor *t, int64_t *st)
{
    int64_t s = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
        st[d] = s;
        s *= t->shape[d];
    }
}

#endif /* PG_EXEC_ELEM_H */

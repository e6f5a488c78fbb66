/* ops_math.c - elementwise math in plain C: unary math (Sin ... Mish),
 * Max/Min over any number of inputs, Mod, Clip.
 *
 * float32 has its own loops (the f-suffixed libm calls); float64 and the
 * integer dtypes go through double / int64 (elem.h).  Every op here reads
 * element i of its inputs before it writes element i of the output, so the
 * planner may run it in place. */
#include <math.h>

#include "../core/error.h"
#include "elem.h"
#include "ops.h"

static pg_status bad_dtype(const pg_kctx *k, pg_dtype dt)
{
    return pg_fail(PG_ERR_DTYPE, "node '%s': %s on %s", k->node->name, k->node->op_type,
                   pg_dtype_name(dt));
}

/* ---- unary ----------------------------------------------------------------- */

static float softplusf_(float x)
{
    return x > 0 ? x + log1pf(expf(-x)) : log1pf(expf(x));
}

static double softplus_(double x)
{
    return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

#define UNARY_LOOP(T, X, Y, n, EXPR)                                            \
    do {                                                                        \
        for (int64_t i = 0; i < (n); i++) {                                     \
            T v = (X)[i];                                                       \
            (Y)[i] = (EXPR);                                                    \
        }                                                                       \
    } while (0)

/* One op on float32 or float64 (F: the libm suffix, "f" or nothing). */
#define UNARY_FLOAT(T, F)                                                                    \
    do {                                                                                     \
        const T *X = k->x[0];                                                                \
        T *Y = k->y[0];                                                                      \
        switch (op) {                                                                        \
        case PG_OP_SIN: UNARY_LOOP(T, X, Y, n, sin##F(v)); break;                           \
        case PG_OP_COS: UNARY_LOOP(T, X, Y, n, cos##F(v)); break;                           \
        case PG_OP_FLOOR: UNARY_LOOP(T, X, Y, n, floor##F(v)); break;                       \
        case PG_OP_CEIL: UNARY_LOOP(T, X, Y, n, ceil##F(v)); break;                         \
        case PG_OP_ROUND: UNARY_LOOP(T, X, Y, n, nearbyint##F(v)); break; /* half to even */ \
        case PG_OP_SIGN: UNARY_LOOP(T, X, Y, n, v > 0 ? (T)1 : v < 0 ? (T)-1 : v); break;    \
        case PG_OP_LEAKY_RELU: UNARY_LOOP(T, X, Y, n, v < 0 ? (T)alpha * v : v); break;      \
        case PG_OP_HARD_SIGMOID:                                                             \
            UNARY_LOOP(T, X, Y, n, fmax##F(0, fmin##F(1, (T)alpha * v + (T)beta))); break;   \
        case PG_OP_HARD_SWISH:                                                               \
            UNARY_LOOP(T, X, Y, n, v * fmax##F(0, fmin##F(1, v / 6 + (T)0.5))); break;       \
        case PG_OP_SOFTPLUS: UNARY_LOOP(T, X, Y, n, softplus##F##_(v)); break;               \
        case PG_OP_MISH: UNARY_LOOP(T, X, Y, n, v * tanh##F(softplus##F##_(v))); break;      \
        default: return bad_dtype(k, dt);                                                    \
        }                                                                                    \
    } while (0)

pg_status pg_exec_math_unary(pg_kctx *k)
{
    pg_opcode op = k->node->op;
    pg_dtype dt = k->in[0]->dtype;
    int64_t n = pg_tensor_numel(k->out[0]);
    double alpha = pg_ir_attr_float(k->node, "alpha", op == PG_OP_LEAKY_RELU ? 0.01f : 0.2f);
    double beta = pg_ir_attr_float(k->node, "beta", 0.5f);
    if (op == PG_OP_ISNAN) {
        uint8_t *Y = k->y[0];
        for (int64_t i = 0; i < n; i++) {
            double v = pg_ld_f(dt, k->x[0], i);
            Y[i] = v != v;
        }
        return PG_OK;
    }
    if (dt == PG_DTYPE_FLOAT32) {
        UNARY_FLOAT(float, f);
    } else if (dt == PG_DTYPE_FLOAT64) {
        UNARY_FLOAT(double, );
    } else if (op == PG_OP_SIGN && pg_dt_is_int(dt)) {
        for (int64_t i = 0; i < n; i++) {
            int64_t v = pg_ld_i(dt, k->x[0], i);
            pg_st_i(dt, k->y[0], i, v > 0 ? 1 : v < 0 ? -1 : 0);
        }
    } else {
        return bad_dtype(k, dt);
    }
    return PG_OK;
}

/* ---- Max / Min --------------------------------------------------------------- */

pg_status pg_exec_variadic(pg_kctx *k)
{
    int is_max = k->node->op == PG_OP_MAX;
    pg_dtype dt = k->out[0]->dtype;
    pg_bc b;
    pg_bc_init(&b, k->out[0], k->in, k->n_in);
    if (pg_dt_is_float(dt)) {
        for (int64_t o = 0; o < b.total; o++, pg_bc_next(&b)) {
            double m = pg_ld_f(dt, k->x[0], b.off[0]);
            for (int i = 1; i < b.n; i++) {
                double v = pg_ld_f(dt, k->x[i], b.off[i]);
                if (v != v || (is_max ? v > m : v < m))   /* NaN propagates, as in numpy */
                    m = m != m ? m : v;
            }
            pg_st_f(dt, k->y[0], o, m);
        }
    } else if (pg_dt_is_int(dt)) {
        for (int64_t o = 0; o < b.total; o++, pg_bc_next(&b)) {
            int64_t m = pg_ld_i(dt, k->x[0], b.off[0]);
            for (int i = 1; i < b.n; i++) {
                int64_t v = pg_ld_i(dt, k->x[i], b.off[i]);
                if (is_max ? v > m : v < m)
                    m = v;
            }
            pg_st_i(dt, k->y[0], o, m);
        }
    } else {
        return bad_dtype(k, dt);
    }
    return PG_OK;
}

/* ---- Mod --------------------------------------------------------------------- */

/* fmod = 0: the sign of the divisor (Python's %, ONNX Mod 28 for floats). */
static double mod_floor(double a, double b)
{
    if (a != a || b != b || isinf(a) || b == 0)
        return NAN;
    double r = fmod(a, b);
    if (r != 0 && (r < 0) != (b < 0))
        r += b;
    return r == 0 ? copysign(0.0, b) : r;
}

static int64_t imod(int64_t a, int64_t b, int fmod_)
{
    if (b == 0 || b == -1)   /* x % 0 is undefined (0 here); x % -1 is 0 (and INT64_MIN % -1 traps) */
        return 0;
    int64_t r = a % b;
    if (!fmod_ && r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
}

pg_status pg_exec_mod(pg_kctx *k)
{
    int fmod_ = (int)pg_ir_attr_int(k->node, "fmod", 0);
    pg_dtype dt = k->out[0]->dtype;
    pg_bc b;
    pg_bc_init(&b, k->out[0], k->in, 2);
    if (pg_dt_is_float(dt)) {
        for (int64_t o = 0; o < b.total; o++, pg_bc_next(&b)) {
            double x = pg_ld_f(dt, k->x[0], b.off[0]), y = pg_ld_f(dt, k->x[1], b.off[1]);
            pg_st_f(dt, k->y[0], o, fmod_ ? fmod(x, y) : mod_floor(x, y));
        }
    } else if (pg_dt_is_int(dt)) {
        for (int64_t o = 0; o < b.total; o++, pg_bc_next(&b))
            pg_st_i(dt, k->y[0], o, imod(pg_ld_i(dt, k->x[0], b.off[0]), pg_ld_i(dt, k->x[1], b.off[1]), fmod_));
    } else {
        return bad_dtype(k, dt);
    }
    return PG_OK;
}

/* ---- Clip ---------------------------------------------------------------------- */

pg_status pg_exec_clip(pg_kctx *k)
{
    pg_dtype dt = k->in[0]->dtype;
    int64_t n = pg_tensor_numel(k->out[0]);
    const void *lo = k->n_in > 1 ? k->x[1] : NULL, *hi = k->n_in > 2 ? k->x[2] : NULL;
    if (dt == PG_DTYPE_FLOAT32) {
        const float *X = k->x[0];
        float *Y = k->y[0];
        float l = lo ? *(const float *)lo : -INFINITY, h = hi ? *(const float *)hi : INFINITY;
        for (int64_t i = 0; i < n; i++) {
            float v = X[i];
            v = v < l ? l : v;
            Y[i] = v > h ? h : v;
        }
    } else if (pg_dt_is_float(dt)) {
        double l = lo ? pg_ld_f(dt, lo, 0) : -INFINITY, h = hi ? pg_ld_f(dt, hi, 0) : INFINITY;
        for (int64_t i = 0; i < n; i++) {
            double v = pg_ld_f(dt, k->x[0], i);
            v = v < l ? l : v;
            pg_st_f(dt, k->y[0], i, v > h ? h : v);
        }
    } else if (pg_dt_is_int(dt)) {
        int64_t l = lo ? pg_ld_i(dt, lo, 0) : INT64_MIN, h = hi ? pg_ld_i(dt, hi, 0) : INT64_MAX;
        for (int64_t i = 0; i < n; i++) {
            int64_t v = pg_ld_i(dt, k->x[0], i);
            v = v < l ? l : v;
            pg_st_i(dt, k->y[0], i, v > h ? h : v);
        }
    } else {
        return bad_dtype(k, dt);
    }
    return PG_OK;
}

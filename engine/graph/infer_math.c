/* infer_math.c - shape rules of the elementwise math ops added beside the
 * basic arithmetic (ops_math.c runs them): unary math, Max/Min over any
 * number of inputs, Mod, Clip. */
#include "../exec/elem.h"
#include "infer.h"

#define FAIL PG_INFER_FAIL

static int is_signed_or_float(pg_dtype dt)
{
    return dt != PG_DTYPE_BOOL && pg_dt_is_numeric(dt);
}

pg_status pg_infer_math_unary(pg_infer_ctx *c)
{
    const pg_tensor *x = c->in[0];
    pg_opcode op = c->n->op;
    int ok = op == PG_OP_SIGN ? is_signed_or_float(x->dtype) : pg_dt_is_float(x->dtype);
    if (!ok)
        return FAIL(PG_ERR_DTYPE, "input '%s' is %s; %s takes %s", x->name, pg_dtype_name(x->dtype),
                    c->n->op_type, op == PG_OP_SIGN ? "numbers (not bool)" : "float32 or float64");
    pg_infer_set_out(c, 0, op == PG_OP_ISNAN ? PG_DTYPE_BOOL : x->dtype, x->rank, x->shape);
    return PG_OK;
}

/* The inputs in slots [0, n) share one numeric dtype (not bool). */
static pg_status same_numeric(pg_infer_ctx *c, int n)
{
    for (int i = 0; i < n; i++) {
        const pg_tensor *t = c->in[i];
        if (!t)
            return FAIL(PG_ERR_GRAPH, "input %d is missing", i);
        if (!is_signed_or_float(t->dtype))
            return FAIL(PG_ERR_DTYPE, "input %d ('%s') is %s; %s takes numbers (not bool)", i,
                        t->name, pg_dtype_name(t->dtype), c->n->op_type);
        if (t->dtype != c->in[0]->dtype)
            return FAIL(PG_ERR_DTYPE, "inputs '%s' (%s) and '%s' (%s) have different dtypes",
                        c->in[0]->name, pg_dtype_name(c->in[0]->dtype), t->name,
                        pg_dtype_name(t->dtype));
    }
    return PG_OK;
}

static pg_status broadcast_all(pg_infer_ctx *c, int n)
{
    int slots[64], r = 0;
    int64_t shape[PG_MAX_RANK];
    for (int i = 0; i < n; i++)
        slots[i] = i;
    pg_status st = pg_infer_broadcast(c, slots, n, &r, shape);
    if (st == PG_OK)
        pg_infer_set_out(c, 0, c->in[0]->dtype, r, shape);
    return st;
}

pg_status pg_infer_variadic(pg_infer_ctx *c)
{
    pg_status st = same_numeric(c, c->n_in);
    return st ? st : broadcast_all(c, c->n_in);
}

pg_status pg_infer_mod(pg_infer_ctx *c)
{
    pg_status st = same_numeric(c, 2);
    if (st)
        return st;
    int64_t fmod_ = pg_ir_attr_int(c->n, "fmod", 0);
    if (fmod_ != 0 && fmod_ != 1)
        return FAIL(PG_ERR_GRAPH, "attribute 'fmod' is %lld; it must be 0 or 1", (long long)fmod_);
    return broadcast_all(c, 2);
}

pg_status pg_infer_clip(pg_infer_ctx *c)
{
    const pg_tensor *x = c->in[0];
    if (!is_signed_or_float(x->dtype))
        return FAIL(PG_ERR_DTYPE, "input '%s' is %s; Clip takes numbers (not bool)", x->name,
                    pg_dtype_name(x->dtype));
    for (int i = 1; i < c->n_in; i++) {
        const pg_tensor *b = c->in[i];
        if (!b)
            continue;
        if (b->dtype != x->dtype)
            return FAIL(PG_ERR_DTYPE, "%s '%s' is %s; the input is %s", i == 1 ? "min" : "max",
                        b->name, pg_dtype_name(b->dtype), pg_dtype_name(x->dtype));
        if (pg_tensor_numel(b) != 1)
            return FAIL(PG_ERR_SHAPE, "%s '%s' must be a scalar (it has %lld elements)",
                        i == 1 ? "min" : "max", b->name, (long long)pg_tensor_numel(b));
    }
    pg_infer_set_out(c, 0, x->dtype, x->rank, x->shape);
    return PG_OK;
}

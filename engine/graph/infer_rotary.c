/* infer_rotary.c - the shape rule of Rotary (rotary position embeddings,
 * the op rotary_fusion makes; executor: exec/ops_rotary.c).
 *
 *   Rotary(X, cos, sin) = X * cos + rotate_half(X) * sin
 *   rotate_half(X) = Concat(-X[..., D/2:], X[..., :D/2]) on the last axis
 *
 * X float32 of rank >= 1 with an even last dim D; cos and sin float32 of the
 * same shape, each broadcasting to X's shape without growing it.  Y has X's
 * shape. */
#include "infer.h"

#define FAIL PG_INFER_FAIL

pg_status pg_infer_rotary(pg_infer_ctx *c)
{
    pg_status st = PG_OK;
    for (int i = 0; i < 3; i++)
        if ((st = pg_infer_need_float(c, i)))
            return st;
    const pg_tensor *x = c->in[0], *cs = c->in[1], *sn = c->in[2];
    if (x->rank < 1 || x->shape[x->rank - 1] % 2)
        return FAIL(PG_ERR_SHAPE, "X '%s' must have an even last dim (rank %d)", x->name, x->rank);
    if (cs->rank != sn->rank)
        return FAIL(PG_ERR_SHAPE, "cos '%s' and sin '%s' differ in rank", cs->name, sn->name);
    if (cs->rank > x->rank)
        return FAIL(PG_ERR_SHAPE, "cos '%s' has a higher rank than X", cs->name);
    for (int d = 0; d < cs->rank; d++) {
        int64_t want = x->shape[x->rank - cs->rank + d];
        if (cs->shape[d] != sn->shape[d])
            return FAIL(PG_ERR_SHAPE, "cos '%s' and sin '%s' differ in dim %d", cs->name, sn->name, d);
        if (cs->shape[d] != 1 && cs->shape[d] != want)
            return FAIL(PG_ERR_SHAPE, "cos '%s' does not broadcast to X '%s'", cs->name, x->name);
    }
    pg_infer_set_out(c, 0, PG_DTYPE_FLOAT32, x->rank, x->shape);
    return PG_OK;
}

/* infer_norm2.c - shape rules of InstanceNormalization and
 * GroupNormalization (exec/ops_norm2.c runs them). */
#include "infer.h"

#define FAIL PG_INFER_FAIL

/* X [N, C, ...] float32 and per-channel (or per-group) parameters. */
static pg_status check_params(pg_infer_ctx *c, int64_t C, int64_t G)
{
    static const char *const what[3] = { "input", "scale", "bias" };
    for (int s = 0; s < 3; s++) {
        pg_status st = pg_infer_need_float(c, s);
        if (st)
            return st;
    }
    for (int s = 1; s < 3; s++) {
        int64_t n = pg_tensor_numel(c->in[s]);
        if (n != C && n != G)
            return FAIL(PG_ERR_SHAPE, "%s '%s' has %lld elements; X has %lld channels%s", what[s],
                        c->in[s]->name, (long long)n, (long long)C,
                        G > 0 && G != C ? " (or give one per group)" : "");
    }
    if (pg_tensor_numel(c->in[1]) != pg_tensor_numel(c->in[2]))
        return FAIL(PG_ERR_SHAPE, "scale '%s' and bias '%s' differ in size", c->in[1]->name,
                    c->in[2]->name);
    return PG_OK;
}

pg_status pg_infer_instancenorm(pg_infer_ctx *c)
{
    const pg_tensor *x = c->in[0];
    if (x->rank < 2)
        return FAIL(PG_ERR_SHAPE, "input '%s' must be [N, C, ...] (rank >= 2), not rank %d", x->name, x->rank);
    pg_status st = check_params(c, x->shape[1], -1);
    if (st)
        return st;
    pg_infer_set_out(c, 0, x->dtype, x->rank, x->shape);
    return PG_OK;
}

pg_status pg_infer_groupnorm(pg_infer_ctx *c)
{
    const pg_tensor *x = c->in[0];
    if (x->rank < 2)
        return FAIL(PG_ERR_SHAPE, "input '%s' must be [N, C, ...] (rank >= 2), not rank %d", x->name, x->rank);
    int64_t G = pg_ir_attr_int(c->n, "num_groups", 0), C = x->shape[1];
    if (G <= 0 || C % G)
        return FAIL(PG_ERR_SHAPE, "num_groups = %lld must be positive and divide the %lld channels",
                    (long long)G, (long long)C);
    pg_status st = check_params(c, C, G);
    if (st)
        return st;
    pg_infer_set_out(c, 0, x->dtype, x->rank, x->shape);
    return PG_OK;
}

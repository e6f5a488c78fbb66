/* qdot.c - the public entries of the quantised dot products: argument
 * checks, then the variant the table picks (or the one named). */
#include "../../core/error.h"
#include "../../gguf/ggml_types.h"
#include "qdot.h"

static const pg_variant *pick(const pg_kernel_family *op, int variant)
{
    return variant < 0 ? pg_kernel_select(op) : pg_kernel_variant_checked(op, variant);
}

pg_status pg_quantize_activations(int type, const float *x, void *out, int64_t n)
{
    const pg_kernel_family *op = type == PG_GGML_Q8_0 ? &pg_kernels_quantize_q8_0
                    : type == PG_GGML_Q8_1 ? &pg_kernels_quantize_q8_1 : NULL;
    if (!op)
        return pg_fail(PG_ERR_DTYPE, "pg_quantize_activations: type %d is not q8_0 or q8_1", type);
    if (!x || !out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_quantize_activations: x or out is NULL");
    if (n < 0 || n % 32)
        return pg_fail(PG_ERR_SHAPE, "pg_quantize_activations: n = %lld is not a multiple of 32",
                       (long long)n);
    const pg_variant *v = pick(op, -1);
    v->fn.quantize((size_t)n, x, out);
    return PG_OK;
}

pg_status pg_qdot(int variant, int wtype, int64_t n, const void *w, const void *a, float *out)
{
    const pg_kernel_family *op = wtype == PG_GGML_Q8_0 ? &pg_kernels_qdot_q8_0_q8_0
                    : wtype == PG_GGML_Q4_1 ? &pg_kernels_qdot_q4_1_q8_1 : NULL;
    if (!op)
        return pg_fail(PG_ERR_DTYPE, "pg_qdot: weight type %d is not q8_0 or q4_1", wtype);
    if (!w || !a || !out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_qdot: w, a or out is NULL");
    if (n < 0 || n % 32)
        return pg_fail(PG_ERR_SHAPE, "pg_qdot: n = %lld is not a multiple of 32", (long long)n);
    const pg_variant *v = pick(op, variant);
    if (!v)
        return pg_last_status();
    v->fn.vec_dot((size_t)n, w, a, out);
    return PG_OK;
}

/* eltwise_api.c - the public entries of the elementwise and row kernels
 * (pg_kernel_unary, _binary, _softmax, _layernorm, _rmsnorm): check the
 * arguments, pick the variant once, and loop over the rows.  The kernels
 * themselves do one row (or n elements) each. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../core/error.h"
#include "gelu_erf/gelu_erf.h"
#include "gelu_tanh/gelu_tanh.h"
#include "layernorm/layernorm.h"
#include "rmsnorm/rmsnorm.h"
#include "sigmoid/sigmoid.h"
#include "silu/silu.h"
#include "softmax/softmax.h"
#include "tanh/tanh.h"
#include "vadd/vadd.h"
#include "vexp/vexp.h"
#include "vmul/vmul.h"

static const struct {
    const char *name;
    const pg_kernel_family *op;
} unary_ops[] = {
    { "vexp", &pg_kernels_vexp },       { "exp", &pg_kernels_vexp },
    { "sigmoid", &pg_kernels_sigmoid }, { "silu", &pg_kernels_silu },
    { "tanh", &pg_kernels_tanh },       { "gelu_erf", &pg_kernels_gelu_erf },
    { "gelu_tanh", &pg_kernels_gelu_tanh },
};

/* 1 if rows of cols floats at stride ld fit in the address space. */
static int rows_fit(size_t rows, size_t cols, size_t ld)
{
    if (rows == 0 || cols == 0)
        return 1;
    return (rows - 1) <= (SIZE_MAX / sizeof(float) - cols) / (ld ? ld : 1);
}

/* The checks every row call shares; returns the variant or NULL + error. */
static const pg_variant *row_args(const char *fn, const pg_kernel_family *op, int variant, size_t rows,
                                  size_t cols, const float *x, size_t ldx, float *y, size_t ldy)
{
    const pg_variant *v = pg_kernel_variant_checked(op, variant);
    if (!v)
        return NULL;
    if (rows == 0 || cols == 0)
        return v;
    if (!x || !y) {
        pg_fail(PG_ERR_INVALID_ARG, "%s: %s is NULL", fn, !x ? "x" : "y");
        return NULL;
    }
    if (ldx < cols || ldy < cols) {
        pg_fail(PG_ERR_SHAPE, "%s: %s %zu is smaller than cols %zu", fn, ldx < cols ? "ldx" : "ldy",
                ldx < cols ? ldx : ldy, cols);
        return NULL;
    }
    if (!rows_fit(rows, cols, ldx) || !rows_fit(rows, cols, ldy)) {
        pg_fail(PG_ERR_SHAPE, "%s: %zu rows of %zu do not fit in memory", fn, rows, cols);
        return NULL;
    }
    return v;
}

pg_status pg_kernel_unary(const char *op, int variant, size_t n, const float *x, float *y)
{
    pg_clear_error();
    const pg_kernel_family *o = NULL;
    for (size_t i = 0; op && i < sizeof unary_ops / sizeof unary_ops[0]; i++)
        if (!strcmp(op, unary_ops[i].name))
            o = unary_ops[i].op;
    if (!o)
        return pg_fail(PG_ERR_INVALID_ARG,
                       "pg_kernel_unary: unknown op '%s' (vexp, sigmoid, silu, tanh, gelu_erf, "
                       "gelu_tanh)", op ? op : "(null)");
    const pg_variant *v = pg_kernel_variant_checked(o, variant);
    if (!v)
        return pg_last_status();
    if (n == 0)
        return PG_OK;
    if (!x || !y)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_kernel_unary: %s is NULL", !x ? "x" : "y");
    v->fn.unary(n, x, y);
    return PG_OK;
}

pg_status pg_kernel_binary(const char *op, int variant, size_t rows, size_t cols, const float *a,
                           const float *b, size_t b_row_stride, float *y)
{
    pg_clear_error();
    const pg_kernel_family *o = op && !strcmp(op, "add") ? &pg_kernels_vadd
                   : op && !strcmp(op, "mul") ? &pg_kernels_vmul : NULL;
    if (!o)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_kernel_binary: unknown op '%s' (add, mul)",
                       op ? op : "(null)");
    const pg_variant *v = row_args("pg_kernel_binary", o, variant, rows, cols, a, cols, y, cols);
    if (!v)
        return pg_last_status();
    if (rows == 0 || cols == 0)
        return PG_OK;
    if (!b)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_kernel_binary: b is NULL");
    if (b_row_stride != 0 && b_row_stride < cols)
        return pg_fail(PG_ERR_SHAPE,
                       "pg_kernel_binary: b_row_stride %zu is neither 0 (broadcast) nor >= cols %zu",
                       b_row_stride, cols);
    if (!rows_fit(rows, cols, b_row_stride))
        return pg_fail(PG_ERR_SHAPE, "pg_kernel_binary: b of %zu rows does not fit in memory", rows);
    /* vadd and vmul share one signature */
    pg_f32_binary_fn fn = v->fn.binary;
    for (size_t r = 0; r < rows; r++)
        fn(cols, a + r * cols, b + r * b_row_stride, y + r * cols);
    return PG_OK;
}

pg_status pg_kernel_softmax(int variant, size_t rows, size_t cols, const float *x, size_t ldx,
                            float scale, const float *mask, float *y, size_t ldy)
{
    pg_clear_error();
    const pg_variant *v =
        row_args("pg_kernel_softmax", &pg_kernels_softmax, variant, rows, cols, x, ldx, y, ldy);
    if (!v)
        return pg_last_status();
    if (!isfinite(scale))
        return pg_fail(PG_ERR_INVALID_ARG, "pg_kernel_softmax: scale %g is not finite",
                       (double)scale);
    pg_f32_softmax_fn fn = v->fn.softmax;
    for (size_t r = 0; r < rows && cols; r++)
        fn(cols, x + r * ldx, scale, mask, y + r * ldy);
    return PG_OK;
}

pg_status pg_kernel_layernorm(int variant, size_t rows, size_t cols, const float *x, size_t ldx,
                              const float *gamma, const float *beta, float eps, float *y,
                              size_t ldy)
{
    pg_clear_error();
    const pg_variant *v =
        row_args("pg_kernel_layernorm", &pg_kernels_layernorm, variant, rows, cols, x, ldx, y, ldy);
    if (!v)
        return pg_last_status();
    if (!(eps >= 0.0f) || isinf(eps))
        return pg_fail(PG_ERR_INVALID_ARG, "pg_kernel_layernorm: eps %g is not >= 0 and finite",
                       (double)eps);
    if (rows == 0 || cols == 0)
        return PG_OK;
    if (!gamma)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_kernel_layernorm: gamma is NULL");
    pg_f32_layernorm_fn fn = v->fn.layernorm;
    for (size_t r = 0; r < rows; r++)
        fn(cols, x + r * ldx, gamma, beta, eps, y + r * ldy);
    return PG_OK;
}

pg_status pg_kernel_rmsnorm(int variant, size_t rows, size_t cols, const float *x, size_t ldx,
                            const float *gamma, float eps, float *y, size_t ldy)
{
    pg_clear_error();
    const pg_variant *v =
        row_args("pg_kernel_rmsnorm", &pg_kernels_rmsnorm, variant, rows, cols, x, ldx, y, ldy);
    if (!v)
        return pg_last_status();
    if (!(eps >= 0.0f) || isinf(eps))
        return pg_fail(PG_ERR_INVALID_ARG, "pg_kernel_rmsnorm: eps %g is not >= 0 and finite",
                       (double)eps);
    if (rows == 0 || cols == 0)
        return PG_OK;
    if (!gamma)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_kernel_rmsnorm: gamma is NULL");
    pg_f32_rmsnorm_fn fn = v->fn.rmsnorm;
    for (size_t r = 0; r < rows; r++)
        fn(cols, x + r * ldx, gamma, eps, y + r * ldy);
    return PG_OK;
}

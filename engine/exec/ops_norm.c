/* ops_norm.c - Softmax, LayerNormalization, RMSNorm, ReduceMean/Sum.
 *
 * The row kernels (softmax, layernorm, rmsnorm variant tables) take one
 * contiguous row; these executors split the tensor into rows.  Softmax over
 * a non-last axis (rare) is a strided loop here.  Kernels are looked up by
 * registry name so a table that is not built yet falls back to the loop. */
#include <math.h>
#include <string.h>

#include "../core/error.h"
#include "../kernels/layernorm/layernorm.h"
#include "../kernels/rmsnorm/rmsnorm.h"
#include "../kernels/softmax/softmax.h"
#include "ops.h"

static const void *kernel_fn(const char *name)
{
    const pg_op *op = pg_op_by_name(name);
    return op ? pg_op_select(op)->fn : NULL;
}

static void softmax_row_c(size_t n, const float *x, size_t stride, float *y)
{
    float m = -INFINITY;
    for (size_t i = 0; i < n; i++)
        m = x[i * stride] > m ? x[i * stride] : m;
    float s = 0;
    for (size_t i = 0; i < n; i++) {
        float e = expf(x[i * stride] - m);
        y[i * stride] = e;
        s += e;
    }
    float r = 1.0f / s;
    for (size_t i = 0; i < n; i++)
        y[i * stride] *= r;
}

pg_status pg_exec_softmax(pg_kctx *k)
{
    const pg_tensor *x = k->in[0];
    int a = pg_norm_axis(pg_ir_attr_int(k->node, "axis", -1), x->rank);
    int64_t outer = 1, n = x->shape[a], inner = 1;
    for (int d = 0; d < a; d++) outer *= x->shape[d];
    for (int d = a + 1; d < x->rank; d++) inner *= x->shape[d];
    const float *X = k->x[0];
    float *Y = k->y[0];
    pg_f32_softmax_fn fn = (pg_f32_softmax_fn)kernel_fn("softmax");
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const float *xr = X + o * n * inner + i;
            float *yr = Y + o * n * inner + i;
            if (inner == 1 && fn)
                fn((size_t)n, xr, 1.0f, NULL, yr);
            else
                softmax_row_c((size_t)n, xr, (size_t)inner, yr);
        }
    return PG_OK;
}

static void rows(const pg_kctx *k, int64_t *outer, int64_t *inner)
{
    const pg_tensor *x = k->in[0];
    int a = pg_norm_axis(pg_ir_attr_int(k->node, "axis", -1), x->rank);
    *outer = 1;
    *inner = 1;
    for (int d = 0; d < a; d++) *outer *= x->shape[d];
    for (int d = a; d < x->rank; d++) *inner *= x->shape[d];
}

pg_status pg_exec_layernorm(pg_kctx *k)
{
    int64_t outer, n;
    rows(k, &outer, &n);
    float eps = pg_ir_attr_float(k->node, "epsilon", 1e-5f);
    const float *X = k->x[0], *g = k->x[1], *b = k->n_in > 2 ? k->x[2] : NULL;
    float *Y = k->y[0];
    pg_f32_layernorm_fn fn = (pg_f32_layernorm_fn)kernel_fn("layernorm");
    for (int64_t r = 0; r < outer; r++) {
        const float *x = X + r * n;
        float *y = Y + r * n;
        if (fn) {
            fn((size_t)n, x, g, b, eps, y);
            continue;
        }
        double m = 0, v = 0;
        for (int64_t i = 0; i < n; i++) m += x[i];
        m /= (double)n;
        for (int64_t i = 0; i < n; i++) v += (x[i] - m) * (x[i] - m);
        float inv = (float)(1.0 / sqrt(v / (double)n + eps));
        for (int64_t i = 0; i < n; i++)
            y[i] = (float)(x[i] - m) * inv * g[i] + (b ? b[i] : 0.0f);
    }
    return PG_OK;
}

pg_status pg_exec_rmsnorm(pg_kctx *k)
{
    int64_t outer, n;
    rows(k, &outer, &n);
    float eps = pg_ir_attr_float(k->node, "epsilon", 1e-6f);
    const float *X = k->x[0], *g = k->x[1];
    float *Y = k->y[0];
    pg_f32_rmsnorm_fn fn = (pg_f32_rmsnorm_fn)kernel_fn("rmsnorm");
    for (int64_t r = 0; r < outer; r++) {
        const float *x = X + r * n;
        float *y = Y + r * n;
        if (fn) {
            fn((size_t)n, x, g, eps, y);
            continue;
        }
        double s = 0;
        for (int64_t i = 0; i < n; i++) s += (double)x[i] * x[i];
        float inv = (float)(1.0 / sqrt(s / (double)n + eps));
        for (int64_t i = 0; i < n; i++)
            y[i] = x[i] * inv * g[i];
    }
    return PG_OK;
}

/* Reduce over any set of axes: the output (keepdims shape) accumulates via
 * broadcast strides of the input index. */
pg_status pg_exec_reduce(pg_kctx *k)
{
    const pg_tensor *x = k->in[0];
    const float *X = k->x[0];
    float *Y = k->y[0];
    int r = x->rank;
    int red[PG_MAX_RANK] = { 0 }, na = 0;
    int64_t axes[PG_MAX_RANK];
    if (k->n_in > 1 && k->x[1]) {
        na = (int)pg_tensor_numel(k->in[1]);
        for (int i = 0; i < na && i < PG_MAX_RANK; i++)
            axes[i] = k->in[1]->dtype == PG_DTYPE_INT64 ? ((const int64_t *)k->x[1])[i]
                                                        : ((const int32_t *)k->x[1])[i];
    } else {
        const int64_t *a = pg_ir_attr_ints(k->node, "axes", &na);
        for (int i = 0; i < na && i < PG_MAX_RANK; i++) axes[i] = a[i];
    }
    for (int i = 0; i < na; i++) red[pg_norm_axis(axes[i], r)] = 1;
    if (!na)
        for (int d = 0; d < r; d++) red[d] = 1;
    /* output strides in the kept-dims layout */
    int64_t ost[PG_MAX_RANK], s = 1, count = 1;
    for (int d = r - 1; d >= 0; d--) {
        ost[d] = red[d] ? 0 : s;
        if (!red[d]) s *= x->shape[d];
        else count *= x->shape[d];
    }
    int64_t nout = pg_tensor_numel(k->out[0]), total = pg_tensor_numel(x);
    for (int64_t i = 0; i < nout; i++) Y[i] = 0;
    int64_t idx[PG_MAX_RANK] = { 0 };
    for (int64_t i = 0; i < total; i++) {
        int64_t o = 0;
        for (int d = 0; d < r; d++) o += idx[d] * ost[d];
        Y[o] += X[i];
        for (int d = r - 1; d >= 0; d--) {
            if (++idx[d] < x->shape[d]) break;
            idx[d] = 0;
        }
    }
    if (k->node->op == PG_OP_REDUCEMEAN && count > 0)
        for (int64_t i = 0; i < nout; i++) Y[i] /= (float)count;
    return PG_OK;
}

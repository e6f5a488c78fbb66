/* ops_norm.c - Softmax, LayerNormalization, RMSNorm, ReduceMean/Sum.
 *
 * Rows are independent: big tensors split them over the model's threads
 * (parallel.h), each row computed exactly as on one thread.
 *
 * The row kernels (softmax, layernorm, rmsnorm variant tables) take one
 * contiguous row; these executors split the tensor into rows.  Softmax over
 * a non-last axis (rare) is a strided loop here.  The row kernel is the
 * step's bound one (pg_bind_row); a table that is not built falls back to
 * the loop. */
#include <math.h>
#include <string.h>

#include "../core/error.h"
#include "../kernels/layernorm/layernorm.h"
#include "../kernels/rmsnorm/rmsnorm.h"
#include "../kernels/softmax/softmax.h"
#include "ops.h"
#include "parallel.h"

pg_status pg_bind_row(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                      pg_binding *b)
{
    (void)in; (void)out;
    /* RMSNorm rounding = "ggml": llama.cpp's rounding order (the GGUF decoder's norm) */
    int ggml = n->op == PG_OP_RMSNORM && !strcmp(pg_ir_attr_string(n, "rounding", ""), "ggml");
    const pg_kernel_family *f = pg_kernel_family_by_name(
        n->op == PG_OP_SOFTMAX ? "softmax" : n->op == PG_OP_LAYERNORM ? "layernorm"
        : ggml ? "rmsnorm_ggml" : "rmsnorm");
    b->kern[0] = f ? pg_kernel_select(f) : NULL;
    return PG_OK;
}

static const pg_kernel_fn *kernel_fn(const pg_kctx *k)
{
    return k->bind->kern[0] ? &k->bind->kern[0]->fn : NULL;
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

typedef struct rows_job {
    const float *X, *g, *b;
    float *Y;
    int64_t n;
    float eps;
    const pg_kernel_fn *fn;
} rows_job;

static void softmax_rows(void *ctx, int64_t r0, int64_t r1)
{
    const rows_job *j = ctx;
    for (int64_t r = r0; r < r1; r++)
        j->fn->softmax((size_t)j->n, j->X + r * j->n, 1.0f, NULL, j->Y + r * j->n);
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
    const pg_kernel_fn *fn = kernel_fn(k);
    if (inner == 1 && fn) {
        rows_job j = { X, NULL, NULL, Y, n, 0.0f, fn };
        pg_exec_parallel(k, outer, n, 1, softmax_rows, &j);
        return PG_OK;
    }
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++)
            softmax_row_c((size_t)n, X + o * n * inner + i, (size_t)inner, Y + o * n * inner + i);
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

static void layernorm_rows(void *ctx, int64_t r0, int64_t r1)
{
    const rows_job *j = ctx;
    int64_t n = j->n;
    const float *g = j->g, *b = j->b;
    for (int64_t r = r0; r < r1; r++) {
        const float *x = j->X + r * n;
        float *y = j->Y + r * n;
        if (j->fn) {
            j->fn->layernorm((size_t)n, x, g, b, j->eps, y);
            continue;
        }
        double m = 0, v = 0;
        for (int64_t i = 0; i < n; i++) m += x[i];
        m /= (double)n;
        for (int64_t i = 0; i < n; i++) v += (x[i] - m) * (x[i] - m);
        float inv = (float)(1.0 / sqrt(v / (double)n + j->eps));
        for (int64_t i = 0; i < n; i++)
            y[i] = (float)(x[i] - m) * inv * g[i] + (b ? b[i] : 0.0f);
    }
}

pg_status pg_exec_layernorm(pg_kctx *k)
{
    int64_t outer, n;
    rows(k, &outer, &n);
    rows_job j = { k->x[0], k->x[1], k->n_in > 2 ? k->x[2] : NULL, k->y[0], n,
                   pg_ir_attr_float(k->node, "epsilon", 1e-5f), kernel_fn(k) };
    pg_exec_parallel(k, outer, n, 1, layernorm_rows, &j);
    return PG_OK;
}

static void rmsnorm_rows(void *ctx, int64_t r0, int64_t r1)
{
    const rows_job *j = ctx;
    int64_t n = j->n;
    const float *g = j->g;
    for (int64_t r = r0; r < r1; r++) {
        const float *x = j->X + r * n;
        float *y = j->Y + r * n;
        if (j->fn) {
            j->fn->rmsnorm((size_t)n, x, g, j->eps, y);
            continue;
        }
        double s = 0;
        for (int64_t i = 0; i < n; i++) s += (double)x[i] * x[i];
        float inv = (float)(1.0 / sqrt(s / (double)n + j->eps));
        for (int64_t i = 0; i < n; i++)
            y[i] = x[i] * inv * g[i];
    }
}

pg_status pg_exec_rmsnorm(pg_kctx *k)
{
    int64_t outer, n;
    rows(k, &outer, &n);
    rows_job j = { k->x[0], k->x[1], NULL, k->y[0], n,
                   pg_ir_attr_float(k->node, "epsilon", 1e-6f), kernel_fn(k) };
    pg_exec_parallel(k, outer, n, 1, rmsnorm_rows, &j);
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

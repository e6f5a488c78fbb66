/* ops_norm2.c - LogSoftmax, InstanceNormalization and GroupNormalization in
 * plain C (float32, statistics in double).
 *
 * Each reads a whole row / instance / group before writing it, so running
 * in place over input 0 is safe. */
#include <math.h>

#include "../core/error.h"
#include "ops.h"

pg_status pg_exec_logsoftmax(pg_kctx *k)
{
    const pg_tensor *x = k->in[0];
    int a = pg_norm_axis(pg_ir_attr_int(k->node, "axis", -1), x->rank);
    int64_t outer = 1, n = x->shape[a], inner = 1;
    for (int d = 0; d < a; d++) outer *= x->shape[d];
    for (int d = a + 1; d < x->rank; d++) inner *= x->shape[d];
    const float *X = k->x[0];
    float *Y = k->y[0];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const float *xr = X + o * n * inner + i;
            float *yr = Y + o * n * inner + i;
            float m = -INFINITY;
            for (int64_t j = 0; j < n; j++)
                m = xr[j * inner] > m ? xr[j * inner] : m;
            double s = 0;
            for (int64_t j = 0; j < n; j++)
                s += exp((double)xr[j * inner] - m);
            double lse = m + log(s);
            for (int64_t j = 0; j < n; j++)
                yr[j * inner] = (float)(xr[j * inner] - lse);
        }
    return PG_OK;
}

/* Normalises `count` contiguous elements as one group; channel ch of the
 * group spans `spatial` of them and takes scale[pi + ch], bias[pi + ch]
 * (pstep 1) or scale[pi], bias[pi] (pstep 0). */
static void norm_group(const float *x, float *y, int64_t chans, int64_t spatial, const float *scale,
                       const float *bias, int64_t pi, int pstep, double eps)
{
    int64_t count = chans * spatial;
    double m = 0, v = 0;
    for (int64_t i = 0; i < count; i++) m += x[i];
    m = count ? m / (double)count : 0;
    for (int64_t i = 0; i < count; i++) v += (x[i] - m) * (x[i] - m);
    v = count ? v / (double)count : 0;
    double inv = 1.0 / sqrt(v + eps);
    for (int64_t ch = 0; ch < chans; ch++) {
        double g = scale[pi + ch * pstep], b = bias[pi + ch * pstep];
        for (int64_t s = 0; s < spatial; s++) {
            int64_t i = ch * spatial + s;
            y[i] = (float)((x[i] - m) * inv * g + b);
        }
    }
}

pg_status pg_exec_instancenorm(pg_kctx *k)
{
    const pg_tensor *x = k->in[0];
    int64_t N = x->shape[0], C = x->shape[1], S = 1;
    for (int d = 2; d < x->rank; d++) S *= x->shape[d];
    double eps = pg_ir_attr_float(k->node, "epsilon", 1e-5f);
    const float *X = k->x[0];
    float *Y = k->y[0];
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            norm_group(X + (n * C + c) * S, Y + (n * C + c) * S, 1, S, k->x[1], k->x[2], c, 1, eps);
    return PG_OK;
}

pg_status pg_exec_groupnorm(pg_kctx *k)
{
    const pg_tensor *x = k->in[0];
    int64_t N = x->shape[0], C = x->shape[1], S = 1, G = pg_ir_attr_int(k->node, "num_groups", 1);
    for (int d = 2; d < x->rank; d++) S *= x->shape[d];
    double eps = pg_ir_attr_float(k->node, "epsilon", 1e-5f);
    int per_channel = pg_tensor_numel(k->in[1]) == C;   /* opset 21; 18 gave one per group */
    int64_t cg = C / G;
    const float *X = k->x[0];
    float *Y = k->y[0];
    for (int64_t n = 0; n < N; n++)
        for (int64_t g = 0; g < G; g++) {
            int64_t off = (n * C + g * cg) * S;
            norm_group(X + off, Y + off, cg, S, k->x[1], k->x[2], per_channel ? g * cg : g,
                       per_channel, eps);
        }
    return PG_OK;
}

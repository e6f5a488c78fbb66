/* ops_norm2.c - LogSoftmax, InstanceNormalization and GroupNormalization
 * (float32).
 *
 * A group of InstanceNormalization / GroupNormalization (one channel, or
 * cg channels, of one image: contiguous) is one row of the layernorm kernel,
 * its per-channel scale and bias written out along the row in the step's
 * scratch (pg_scratch_groupnorm); without a bound kernel the loop below
 * (statistics in double) runs.  The double loop took 3.5 ms of a wav2vec2
 * export's 73 (its first conv's GroupNorm of 512 groups x 3199 frames).
 *
 * Each reads a whole row / instance / group before writing it, so running
 * in place over input 0 is safe. */
#include <math.h>

#include "../core/error.h"
#include "../kernels/layernorm/layernorm.h"
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

/* Elements of one group: channels per group x spatial. */
static int64_t group_len(const pg_node *n, const pg_tensor *x)
{
    int64_t C = x->shape[1], S = 1, G = n->op == PG_OP_GROUPNORM ? pg_ir_attr_int(n, "num_groups", 1) : C;
    for (int d = 2; d < x->rank; d++) S *= x->shape[d];
    return G > 0 && C % G == 0 ? C / G * S : 0;
}

pg_status pg_bind_groupnorm(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                            pg_binding *b)
{
    (void)n; (void)out;
    const pg_kernel_family *f = pg_kernel_family_by_name("layernorm");
    b->kern[0] = f && in[0]->dtype == PG_DTYPE_FLOAT32 ? pg_kernel_select(f) : NULL;
    return PG_OK;
}

size_t pg_scratch_groupnorm(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                            int threads, const pg_binding *b)
{
    (void)out; (void)threads;
    return b->kern[0] ? 2 * (size_t)group_len(n, in[0]) * sizeof(float) + 64 : 0;
}

/* One group through the layernorm kernel: the scale and bias of each of
 * its chans channels repeated over their spatial elements in g, b. */
static void kernel_group(const pg_kctx *k, const float *x, float *y, int64_t chans, int64_t spatial,
                         int64_t pi, int pstep, float eps)
{
    float *g = k->scratch, *b = g + chans * spatial;
    const float *scale = k->x[1], *bias = k->x[2];
    for (int64_t ch = 0; ch < chans; ch++)
        for (int64_t s = 0; s < spatial; s++) {
            g[ch * spatial + s] = scale[pi + ch * pstep];
            b[ch * spatial + s] = bias[pi + ch * pstep];
        }
    k->bind->kern[0]->fn.layernorm((size_t)(chans * spatial), x, g, b, eps, y);
}

static int use_kernel(const pg_kctx *k)
{
    return k->bind->kern[0] && k->scratch &&
           k->scratch_bytes >= 2 * (size_t)group_len(k->node, k->in[0]) * sizeof(float);
}

pg_status pg_exec_instancenorm(pg_kctx *k)
{
    const pg_tensor *x = k->in[0];
    int64_t N = x->shape[0], C = x->shape[1], S = 1;
    for (int d = 2; d < x->rank; d++) S *= x->shape[d];
    double eps = pg_ir_attr_float(k->node, "epsilon", 1e-5f);
    const float *X = k->x[0];
    float *Y = k->y[0];
    int kern = use_kernel(k);
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            int64_t off = (n * C + c) * S;
            if (kern)
                kernel_group(k, X + off, Y + off, 1, S, c, 1, (float)eps);
            else
                norm_group(X + off, Y + off, 1, S, k->x[1], k->x[2], c, 1, eps);
        }
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
    int kern = use_kernel(k);
    for (int64_t n = 0; n < N; n++)
        for (int64_t g = 0; g < G; g++) {
            int64_t off = (n * C + g * cg) * S;
            if (kern)
                kernel_group(k, X + off, Y + off, cg, S, per_channel ? g * cg : g, per_channel, (float)eps);
            else
                norm_group(X + off, Y + off, cg, S, k->x[1], k->x[2], per_channel ? g * cg : g,
                           per_channel, eps);
        }
    return PG_OK;
}

/* ops_cnn_misc.c - BatchNormalization (inference), PRelu, DepthToSpace and
 * SpaceToDepth in plain C, NCHW.
 *
 * BatchNormalization and PRelu are elementwise (in place over X is safe);
 * DepthToSpace / SpaceToDepth move whole elements of any dtype and never
 * run in place. */
#include <math.h>
#include <string.h>

#include "../core/error.h"
#include "ops.h"

/* y = (x - mean) / sqrt(var + epsilon) * scale + B, per channel (axis 1). */
pg_status pg_exec_batchnorm(pg_kctx *k)
{
    const pg_tensor *x = k->in[0];
    int64_t N = x->shape[0], C = x->shape[1], S = 1;
    for (int d = 2; d < x->rank; d++) S *= x->shape[d];
    double eps = pg_ir_attr_float(k->node, "epsilon", 1e-5f);
    const float *X = k->x[0], *sc = k->x[1], *bi = k->x[2], *mu = k->x[3], *var = k->x[4];
    float *Y = k->y[0];
    for (int64_t c = 0; c < C; c++) {
        double a = sc[c] / sqrt((double)var[c] + eps);
        double b = bi[c] - mu[c] * a;
        for (int64_t n = 0; n < N; n++) {
            const float *xr = X + (n * C + c) * S;
            float *yr = Y + (n * C + c) * S;
            for (int64_t s = 0; s < S; s++)
                yr[s] = (float)(xr[s] * a + b);
        }
    }
    return PG_OK;
}

/* y = x < 0 ? slope * x : x, slope broadcast to X. */
pg_status pg_exec_prelu(pg_kctx *k)
{
    const pg_tensor *x = k->in[0], *s = k->in[1];
    int r = x->rank;
    int64_t st[PG_MAX_RANK], idx[PG_MAX_RANK] = { 0 }, so = 0, n = pg_tensor_numel(x);
    pg_broadcast_strides(s->rank, s->shape, r, x->shape, st);
    const float *X = k->x[0], *S = k->x[1];
    float *Y = k->y[0];
    for (int64_t i = 0; i < n; i++) {
        float v = X[i];
        Y[i] = v < 0 ? S[so] * v : v;
        for (int d = r - 1; d >= 0; d--) {   /* the odometer over X, slope offset kept */
            so += st[d];
            if (++idx[d] < x->shape[d])
                break;
            so -= st[d] * x->shape[d];
            idx[d] = 0;
        }
    }
    return PG_OK;
}

/* DepthToSpace: out[n, c, h*b + i, w*b + j] = in[n, ch, h, w] with
 * ch = (i*b + j)*C' + c (DCR) or c*b*b + i*b + j (CRD); SpaceToDepth is
 * its inverse (the same index pairs, copied the other way). */
pg_status pg_exec_depth_space(pg_kctx *k)
{
    int d2s = k->node->op == PG_OP_DEPTH_TO_SPACE;
    const pg_tensor *deep = d2s ? k->in[0] : k->out[0], *wide = d2s ? k->out[0] : k->in[0];
    int64_t b = pg_ir_attr_int(k->node, "blocksize", 1);
    int crd = !strcmp(pg_ir_attr_string(k->node, "mode", "DCR"), "CRD");
    size_t es = pg_dtype_size(deep->dtype);
    int64_t N = wide->shape[0], C = wide->shape[1], H = deep->shape[2], W = deep->shape[3];
    int64_t WH = wide->shape[2], WW = wide->shape[3];
    const char *src = k->x[0];
    char *dst = k->y[0];
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < b; i++)
                for (int64_t j = 0; j < b; j++) {
                    int64_t ch = crd ? c * b * b + i * b + j : (i * b + j) * C + c;
                    for (int64_t h = 0; h < H; h++)
                        for (int64_t w = 0; w < W; w++) {
                            int64_t di = ((n * C * b * b + ch) * H + h) * W + w;
                            int64_t wi = ((n * C + c) * WH + h * b + i) * WW + w * b + j;
                            if (d2s)
                                memcpy(dst + (size_t)wi * es, src + (size_t)di * es, es);
                            else
                                memcpy(dst + (size_t)di * es, src + (size_t)wi * es, es);
                        }
                }
    return PG_OK;
}

/* pool_fast.c - FastMaxPool: MaxPool on float32 NCHW planes with no Indices
 * output (what the maxpool_fast pass rewrites MaxPool to).  The layout is
 * NCHW, as for the convs (conv_fast.c's header has why), so the pool runs
 * on the graph's own tensors; what makes it faster than the reference
 * loop in ops_pool.c is only that each output row and column knows its
 * valid window rows and columns up front (no per-tap bound tests, no
 * dtype dispatch per element), and planes go to the model's threads.
 *
 * Same result as MaxPool: the window's largest value; NaN never wins a
 * comparison (v > m), so a NaN is skipped as in the reference, and a
 * window with no valid value gives -inf (the pads are -inf). */
#include <math.h>

#include "../core/error.h"
#include "cnn.h"
#include "parallel.h"

typedef struct maxpool_job {
    const float *X;
    float *Y;
    pg_win w;
} maxpool_job;

static void maxpool_planes(void *ctx, int64_t begin, int64_t end)
{
    const maxpool_job *j = ctx;
    const pg_win *w = &j->w;
    int64_t IH = w->in[1], IW = w->in[2], OH = w->out[1], OW = w->out[2];
    int64_t KH = w->k[1], KW = w->k[2], sy = w->stride[1], sx = w->stride[2];
    int64_t dy = w->dil[1], dx = w->dil[2];
    for (int64_t p = begin; p < end; p++) {
        const float *x = j->X + p * IH * IW;
        float *y = j->Y + p * OH * OW;
        for (int64_t oy = 0; oy < OH; oy++) {
            int64_t y0 = oy * sy - w->lo[1];
            /* window rows ky in [ka, kb) fall inside the input */
            int64_t ka = y0 >= 0 ? 0 : (-y0 + dy - 1) / dy;
            int64_t kb = IH - y0 <= 0 ? 0 : (IH - y0 + dy - 1) / dy;
            kb = kb > KH ? KH : kb;
            for (int64_t ox = 0; ox < OW; ox++) {
                int64_t x0 = ox * sx - w->lo[2];
                int64_t la = x0 >= 0 ? 0 : (-x0 + dx - 1) / dx;
                int64_t lb = IW - x0 <= 0 ? 0 : (IW - x0 + dx - 1) / dx;
                lb = lb > KW ? KW : lb;
                float m = -INFINITY;
                for (int64_t ky = ka; ky < kb; ky++) {
                    const float *r = x + (y0 + ky * dy) * IW + x0;
                    for (int64_t kx = la; kx < lb; kx++) {
                        float v = r[kx * dx];
                        m = v > m ? v : m;
                    }
                }
                y[oy * OW + ox] = m;
            }
        }
    }
}

pg_status pg_exec_fast_maxpool(pg_kctx *k)
{
    const pg_tensor *x = k->in[0];
    if (x->dtype != PG_DTYPE_FLOAT32 || x->rank != 4 || k->n_out != 1)
        return pg_fail(PG_ERR_INTERNAL, "node '%s': FastMaxPool takes one float32 NCHW tensor and "
                       "gives one output", k->node->name);
    int cnt = 0;
    const int64_t *ks = pg_ir_attr_ints(k->node, "kernel_shape", &cnt);
    maxpool_job j = { k->x[0], k->y[0], { 0 } };
    pg_status st = pg_win_geometry(k->node, PG_WIN_POOL, 2, x->shape + 2, ks, &j.w);
    if (st)
        return st;
    int64_t planes = x->shape[0] * x->shape[1];
    pg_exec_parallel(k, planes, j.w.out[1] * j.w.out[2] * j.w.k[1] * j.w.k[2], 1, maxpool_planes, &j);
    return PG_OK;
}

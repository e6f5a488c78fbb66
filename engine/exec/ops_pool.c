/* ops_pool.c - MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool in
 * plain C, NCHW, 1D to 3D (the geometry normalised to 3 spatial dims,
 * exec/cnn.h).  Values go through double (pg_ld_f), so one loop serves
 * float32, float64, int8 and uint8.
 *
 * MaxPool skips positions in the pads and NaNs (as the ONNX reference
 * does); its optional Indices output is the flat index into X (over N, C
 * and the spatial dims; the spatial part column-major for storage_order
 * 1, as onnxruntime has it).
 * AveragePool divides by the positions inside the input
 * (count_include_pad 0) or inside the padded input (1); positions a
 * ceil_mode window reaches past the end pad are never counted. */
#include <math.h>

#include "../core/error.h"
#include "cnn.h"
#include "conv_fast.h"
#include "elem.h"

pg_status pg_exec_pool(pg_kctx *k)
{
    const pg_tensor *x = k->in[0];
    if (pg_ir_attr_int(k->node, "nchwc", 0))
        return pg_exec_pool_nchwc(k);
    /* MaxPool's fast path (pool_fast.c): float32 2-D with no Indices */
    if (k->node->op == PG_OP_MAXPOOL && x->dtype == PG_DTYPE_FLOAT32 && x->rank == 4 && k->n_out == 1)
        return pg_exec_fast_maxpool(k);
    int cnt = 0;
    const int64_t *ks = pg_ir_attr_ints(k->node, "kernel_shape", &cnt);
    pg_win w;
    pg_status st = pg_win_geometry(k->node, PG_WIN_POOL, x->rank - 2, x->shape + 2, ks, &w);
    if (st)
        return st;
    int is_max = k->node->op == PG_OP_MAXPOOL;
    int cip = (int)pg_ir_attr_int(k->node, "count_include_pad", 0);
    int col_major = is_max && pg_ir_attr_int(k->node, "storage_order", 0) == 1;
    pg_dtype dt = x->dtype;
    const void *X = k->x[0];
    void *Y = k->y[0];
    int64_t *I = is_max && k->n_out > 1 ? k->y[1] : NULL;
    int64_t NC = x->shape[0] * x->shape[1];
    int64_t isz = w.in[0] * w.in[1] * w.in[2], osz = w.out[0] * w.out[1] * w.out[2];
    for (int64_t nc = 0; nc < NC; nc++)
        for (int64_t od = 0; od < w.out[0]; od++)
            for (int64_t oh = 0; oh < w.out[1]; oh++)
                for (int64_t ow = 0; ow < w.out[2]; ow++) {
                    int64_t o = nc * osz + (od * w.out[1] + oh) * w.out[2] + ow;
                    int64_t o3[3] = { od, oh, ow };
                    double acc = is_max ? -INFINITY : 0.0, n_in = 0, n_pad = 0;
                    int64_t arg = -1;
                    for (int64_t kd = 0; kd < w.k[0]; kd++)
                        for (int64_t kh = 0; kh < w.k[1]; kh++)
                            for (int64_t kw = 0; kw < w.k[2]; kw++) {
                                int64_t k3[3] = { kd, kh, kw }, p[3];
                                int inside = 1, in_padded = 1;
                                for (int d = 0; d < 3; d++) {
                                    p[d] = o3[d] * w.stride[d] - w.lo[d] + k3[d] * w.dil[d];
                                    if (p[d] < 0 || p[d] >= w.in[d])
                                        inside = 0;
                                    if (p[d] < -w.lo[d] || p[d] >= w.in[d] + w.hi[d])
                                        in_padded = 0;
                                }
                                n_pad += in_padded;
                                if (!inside)
                                    continue;
                                int64_t xi = nc * isz + (p[0] * w.in[1] + p[1]) * w.in[2] + p[2];
                                double v = pg_ld_f(dt, X, xi);
                                n_in++;
                                if (is_max) {
                                    if (v > acc || (arg < 0 && v == acc)) {
                                        acc = v;
                                        /* storage_order 1: the spatial index column-major */
                                        arg = !col_major ? xi : nc * isz + p[0] + p[1] * w.in[0] +
                                                                p[2] * w.in[0] * w.in[1];
                                    }
                                } else {
                                    acc += v;
                                }
                            }
                    if (!is_max)
                        acc = (cip ? n_pad : n_in) > 0 ? acc / (cip ? n_pad : n_in) : 0.0;
                    if (pg_dt_is_float(dt))
                        pg_st_f(dt, Y, o, acc);
                    else   /* int8 / uint8 MaxPool: acc is one of the inputs, or the
                            * type's least value for a window all in the pads */
                        pg_st_i(dt, Y, o, arg >= 0 ? (int64_t)acc : dt == PG_DTYPE_INT8 ? -128 : 0);
                    if (I)
                        I[o] = arg;
                }
    return PG_OK;
}

pg_status pg_exec_global_pool(pg_kctx *k)
{
    const pg_tensor *x = k->in[0];
    if (pg_ir_attr_int(k->node, "nchwc", 0))
        return pg_exec_pool_nchwc(k);
    int is_max = k->node->op == PG_OP_GLOBAL_MAXPOOL;
    int64_t NC = x->shape[0] * x->shape[1], S = 1;
    for (int d = 2; d < x->rank; d++) S *= x->shape[d];
    pg_dtype dt = x->dtype;
    for (int64_t nc = 0; nc < NC; nc++) {
        double acc = is_max ? -INFINITY : 0.0;
        int nan = 0;
        for (int64_t s = 0; s < S; s++) {
            double v = pg_ld_f(dt, k->x[0], nc * S + s);
            if (is_max) {
                nan |= v != v;
                acc = v > acc ? v : acc;
            } else {
                acc += v;
            }
        }
        pg_st_f(dt, k->y[0], nc, is_max ? (nan ? NAN : acc) : acc / (double)S);
    }
    return PG_OK;
}

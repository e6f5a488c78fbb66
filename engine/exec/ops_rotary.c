/* ops_rotary.c - Rotary: Y = X * cos + rotate_half(X) * sin, over the last
 * axis of X (D even, h = D/2):
 *
 *   Y[.., c]     = X[.., c] * cos[.., c]         - X[.., c + h] * sin[.., c]
 *   Y[.., c + h] = X[.., c + h] * cos[.., c + h] + X[.., c] * sin[.., c + h]
 *
 * (the half-split "rotate_half" of LLaMA / Qwen2 / NeoX), cos and sin
 * broadcast to X.  Plain C, one pass over X instead of the seven nodes of
 * the exported pattern (two Slices, Neg, Concat, two Muls, Add).  Each
 * pair (c, c + h) is read before it is written, so Y may be X's buffer. */
#include "ops.h"

pg_status pg_exec_rotary(pg_kctx *k)
{
    const pg_tensor *x = k->in[0];
    const float *X = k->x[0], *C = k->x[1], *S = k->x[2];
    float *Y = k->y[0];
    int r = x->rank;
    int64_t D = x->shape[r - 1], h = D / 2, rows = 1;
    for (int d = 0; d < r - 1; d++)
        rows *= x->shape[d];
    if (rows == 0 || D == 0)
        return PG_OK;
    int64_t st[PG_MAX_RANK], idx[PG_MAX_RANK] = { 0 };
    pg_broadcast_strides(k->in[1]->rank, k->in[1]->shape, r, x->shape, st);
    int64_t sc = st[r - 1];   /* 1, or 0 for a cos broadcast along the row */
    for (int64_t i = 0; i < rows; i++) {
        int64_t o = 0;
        for (int d = 0; d < r - 1; d++)
            o += idx[d] * st[d];
        const float *xr = X + i * D, *cr = C + o, *sr = S + o;
        float *yr = Y + i * D;
        for (int64_t c = 0; c < h; c++) {
            float a = xr[c], b = xr[c + h];
            float lo = a * cr[c * sc] - b * sr[c * sc];
            float hi = b * cr[(c + h) * sc] + a * sr[(c + h) * sc];
            yr[c] = lo;
            yr[c + h] = hi;
        }
        for (int d = r - 2; d >= 0; d--) {
            if (++idx[d] < x->shape[d])
                break;
            idx[d] = 0;
        }
    }
    return PG_OK;
}

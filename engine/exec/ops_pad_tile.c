/* ops_pad_tile.c - Pad (constant, reflect, edge, wrap; negative pads
 * crop), Tile and Trilu in plain C.
 *
 * Pad and Tile map each output index to an input index per dim (a small
 * table per dim would need scratch; the mapping is a few integer ops), and
 * copy rows of the innermost dim where they are contiguous in the input. */
#include <string.h>

#include "../core/error.h"
#include "elem.h"
#include "ops.h"

int pg_pad_mode(const char *mode)
{
    if (!strcmp(mode, "constant")) return PG_PAD_CONSTANT;
    if (!strcmp(mode, "reflect")) return PG_PAD_REFLECT;
    if (!strcmp(mode, "edge")) return PG_PAD_EDGE;
    if (!strcmp(mode, "wrap")) return PG_PAD_WRAP;
    return -1;
}

int pg_pad_amounts(int rank, const int64_t *pads, int npads, const int64_t *axes, int naxes,
                   int64_t *lo, int64_t *hi)
{
    for (int d = 0; d < rank; d++)
        lo[d] = hi[d] = 0;
    if (!axes) {
        if (npads != 2 * rank)
            return -1;
        for (int d = 0; d < rank; d++) {
            lo[d] = pads[d];
            hi[d] = pads[rank + d];
        }
        return 0;
    }
    if (npads != 2 * naxes)
        return -1;
    for (int i = 0; i < naxes; i++) {
        int a = pg_norm_axis(axes[i], rank);
        if (a < 0)
            return -1;
        lo[a] = pads[i];
        hi[a] = pads[naxes + i];
    }
    return 0;
}

/* Input index of output index i on a dim of size n padded by lo in front;
 * -1: the constant. */
static int64_t pad_src(int mode, int64_t i, int64_t lo, int64_t n)
{
    int64_t s = i - lo;
    if (s >= 0 && s < n)
        return s;
    switch (mode) {
    case PG_PAD_EDGE: return s < 0 ? 0 : n - 1;
    case PG_PAD_WRAP: return ((s % n) + n) % n;
    case PG_PAD_REFLECT: {
        if (n == 1)
            return 0;
        int64_t p = 2 * (n - 1), m = ((s % p) + p) % p;
        return m < n ? m : p - m;
    }
    default: return -1;
    }
}

pg_status pg_exec_pad(pg_kctx *k)
{
    const pg_tensor *x = k->in[0], *y = k->out[0];
    int r = x->rank, mode = pg_pad_mode(pg_ir_attr_string(k->node, "mode", "constant"));
    int64_t pads[2 * PG_MAX_RANK], axes[PG_MAX_RANK], lo[PG_MAX_RANK], hi[PG_MAX_RANK];
    int np = (int)pg_tensor_numel(k->in[1]), na = -1;
    for (int i = 0; i < np && i < 2 * PG_MAX_RANK; i++)
        pads[i] = pg_ld_i(k->in[1]->dtype, k->x[1], i);
    if (k->n_in > 3 && k->x[3]) {
        na = (int)pg_tensor_numel(k->in[3]);
        for (int i = 0; i < na && i < PG_MAX_RANK; i++)
            axes[i] = pg_ld_i(k->in[3]->dtype, k->x[3], i);
    }
    if (mode < 0 || np > 2 * PG_MAX_RANK || na > PG_MAX_RANK ||
        pg_pad_amounts(r, pads, np, na >= 0 ? axes : NULL, na, lo, hi))
        return pg_fail(PG_ERR_INVALID_ARG, "node '%s' (Pad): bad mode, pads or axes", k->node->name);
    size_t es = pg_dtype_size(x->dtype);
    char cval[8] = { 0 };
    if (k->n_in > 2 && k->x[2])
        memcpy(cval, k->x[2], es);
    int64_t xs[PG_MAX_RANK], idx[PG_MAX_RANK] = { 0 }, total = pg_tensor_numel(y);
    pg_row_strides(x, xs);
    const char *X = k->x[0];
    char *Y = k->y[0];
    if (r == 0 || total == 0) {
        if (total)
            memcpy(Y, X, es);
        return PG_OK;
    }
    int64_t inner = y->shape[r - 1];
    for (int64_t o = 0; o < total; o += inner) {
        int64_t off = 0, outside = 0;
        for (int d = 0; d < r - 1; d++) {
            int64_t s = pad_src(mode, idx[d], lo[d], x->shape[d]);
            if (s < 0) outside = 1;
            else off += s * xs[d];
        }
        /* the row's columns inside the input (j - lo in [0, n)) are one
         * run: a memcpy; the padding either side goes element by element
         * (Swin's window padding took 9% of its run one element at a time) */
        int64_t n = x->shape[r - 1], j0 = 0, j1 = 0;
        if (!outside) {
            j0 = lo[r - 1] < 0 ? 0 : lo[r - 1] > inner ? inner : lo[r - 1];
            j1 = lo[r - 1] + n < j0 ? j0 : lo[r - 1] + n > inner ? inner : lo[r - 1] + n;
        }
        for (int64_t j = 0; j < inner; j++) {
            if (j == j0 && j1 > j0) {
                memcpy(Y + (size_t)(o + j) * es, X + (size_t)(off + j - lo[r - 1]) * es, (size_t)(j1 - j0) * es);
                j = j1 - 1;
                continue;
            }
            int64_t s = outside ? -1 : pad_src(mode, j, lo[r - 1], n);
            memcpy(Y + (size_t)(o + j) * es, s < 0 ? cval : X + (size_t)(off + s) * es, es);
        }
        for (int d = r - 2; d >= 0; d--) {
            if (++idx[d] < y->shape[d]) break;
            idx[d] = 0;
        }
    }
    return PG_OK;
}

pg_status pg_exec_tile(pg_kctx *k)
{
    const pg_tensor *x = k->in[0], *y = k->out[0];
    int r = x->rank;
    int64_t xs[PG_MAX_RANK], idx[PG_MAX_RANK] = { 0 }, total = pg_tensor_numel(y);
    pg_row_strides(x, xs);
    size_t es = pg_dtype_size(x->dtype);
    const char *X = k->x[0];
    char *Y = k->y[0];
    if (r == 0 || total == 0) {
        if (total)
            memcpy(Y, X, es);
        return PG_OK;
    }
    int64_t inner = y->shape[r - 1], n = x->shape[r - 1];
    for (int64_t o = 0; o < total; o += inner) {
        int64_t off = 0;
        for (int d = 0; d < r - 1; d++)
            off += (idx[d] % x->shape[d]) * xs[d];
        for (int64_t j = 0; j < inner; j += n)   /* whole input rows */
            memcpy(Y + (size_t)(o + j) * es, X + (size_t)off * es, (size_t)n * es);
        for (int d = r - 2; d >= 0; d--) {
            if (++idx[d] < y->shape[d]) break;
            idx[d] = 0;
        }
    }
    return PG_OK;
}

pg_status pg_exec_trilu(pg_kctx *k)
{
    const pg_tensor *x = k->in[0];
    int r = x->rank, upper = (int)pg_ir_attr_int(k->node, "upper", 1);
    int64_t kk = k->n_in > 1 && k->x[1] ? pg_ld_i(k->in[1]->dtype, k->x[1], 0) : 0;
    int64_t R = x->shape[r - 2], C = x->shape[r - 1], mats = R * C > 0 ? pg_tensor_numel(x) / (R * C) : 0;
    size_t es = pg_dtype_size(x->dtype);
    const char *X = k->x[0];
    char *Y = k->y[0];
    if (R * C == 0)
        return PG_OK;
    for (int64_t m = 0; m < mats; m++)
        for (int64_t i = 0; i < R; i++)
            for (int64_t j = 0; j < C; j++) {
                size_t e = (size_t)((m * R + i) * C + j) * es;
                int keep = upper ? j - i >= kk : j - i <= kk;
                if (!keep)
                    memset(Y + e, 0, es);
                else if (Y != X)
                    memcpy(Y + e, X + e, es);
            }
    return PG_OK;
}

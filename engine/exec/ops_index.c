/* ops_index.c - indexing ops in plain C: GatherElements, GatherND,
 * ScatterND, OneHot, NonZero, TopK, ArgMax/ArgMin.
 *
 * An index outside its dim (after adding the dim to a negative one) is an
 * error naming the node, never a read or write out of bounds.  Elements are
 * moved as bytes; comparisons and reductions go through double (floats) or
 * int64 (integers), elem.h.  TopK keeps its heap in planner scratch
 * (pg_scratch_topk). */
#include <math.h>
#include <string.h>

#include "../core/error.h"
#include "elem.h"
#include "ops.h"

static pg_status bad_index(const pg_kctx *k, int64_t j, int64_t dim)
{
    return pg_fail(PG_ERR_INVALID_ARG, "node '%s' (%s): index %lld is out of range for a dim of %lld",
                   k->node->name, k->node->op_type, (long long)j, (long long)dim);
}

/* ---- GatherElements ---------------------------------------------------------- */

pg_status pg_exec_gather_elements(pg_kctx *k)
{
    const pg_tensor *x = k->in[0], *ix = k->in[1];
    int a = pg_norm_axis(pg_ir_attr_int(k->node, "axis", 0), x->rank), r = x->rank;
    int64_t xs[PG_MAX_RANK], idx[PG_MAX_RANK] = { 0 }, n = pg_tensor_numel(ix);
    pg_row_strides(x, xs);
    size_t es = pg_dtype_size(x->dtype);
    const char *X = k->x[0];
    char *Y = k->y[0];
    for (int64_t o = 0; o < n; o++) {
        int64_t j = pg_ld_i(ix->dtype, k->x[1], o), jj = j < 0 ? j + x->shape[a] : j;
        if (jj < 0 || jj >= x->shape[a])
            return bad_index(k, j, x->shape[a]);
        int64_t off = 0;
        for (int d = 0; d < r; d++)
            off += (d == a ? jj : idx[d]) * xs[d];
        memcpy(Y + (size_t)o * es, X + (size_t)off * es, es);
        for (int d = r - 1; d >= 0; d--) {
            if (++idx[d] < ix->shape[d]) break;
            idx[d] = 0;
        }
    }
    return PG_OK;
}

/* ---- GatherND / ScatterND ------------------------------------------------------ */

/* Element offset in x of index tuple t (m values at `tuple`, for dims
 * [first, first + m)); -1 after setting the error if one is out of range. */
static int64_t tuple_offset(const pg_kctx *k, const pg_tensor *x, const pg_tensor *ix, const void *I,
                            int64_t t, int64_t m, int first, const int64_t *xs)
{
    int64_t off = 0;
    for (int64_t q = 0; q < m; q++) {
        int64_t dim = x->shape[first + q], j = pg_ld_i(ix->dtype, I, t * m + q), jj = j < 0 ? j + dim : j;
        if (jj < 0 || jj >= dim) {
            bad_index(k, j, dim);
            return -1;
        }
        off += jj * xs[first + q];
    }
    return off;
}

pg_status pg_exec_gather_nd(pg_kctx *k)
{
    const pg_tensor *x = k->in[0], *ix = k->in[1];
    int b = (int)pg_ir_attr_int(k->node, "batch_dims", 0);
    int64_t m = ix->shape[ix->rank - 1], xs[PG_MAX_RANK], B = 1, T = 1, slice = 1, xb = 1;
    pg_row_strides(x, xs);
    for (int d = 0; d < b; d++) B *= ix->shape[d];
    for (int d = b; d < ix->rank - 1; d++) T *= ix->shape[d];
    for (int d = b + (int)m; d < x->rank; d++) slice *= x->shape[d];
    for (int d = b; d < x->rank; d++) xb *= x->shape[d];
    size_t es = pg_dtype_size(x->dtype), chunk = (size_t)slice * es;
    const char *X = k->x[0];
    char *Y = k->y[0];
    for (int64_t bi = 0; bi < B; bi++)
        for (int64_t t = 0; t < T; t++) {
            int64_t off = tuple_offset(k, x, ix, k->x[1], bi * T + t, m, b, xs);
            if (off < 0)
                return pg_last_status();
            memcpy(Y + (size_t)(bi * T + t) * chunk, X + (size_t)(bi * xb + off) * es, chunk);
        }
    return PG_OK;
}

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

static double red_f(int red, double a, double b)
{
    switch (red) {
    case RED_ADD: return a + b;
    case RED_MUL: return a * b;
    case RED_MAX: return a > b ? a : b;
    case RED_MIN: return a < b ? a : b;
    default: return b;
    }
}

static int64_t red_i(int red, int64_t a, int64_t b)
{
    switch (red) {
    case RED_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
    case RED_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    case RED_MAX: return a > b ? a : b;
    case RED_MIN: return a < b ? a : b;
    default: return b;
    }
}

pg_status pg_exec_scatter_nd(pg_kctx *k)
{
    const pg_tensor *x = k->in[0], *ix = k->in[1], *y = k->out[0];
    const char *rs = pg_ir_attr_string(k->node, "reduction", "none");
    int red = !strcmp(rs, "add") ? RED_ADD : !strcmp(rs, "mul") ? RED_MUL : !strcmp(rs, "max") ? RED_MAX
            : !strcmp(rs, "min") ? RED_MIN : RED_NONE;
    int64_t m = ix->shape[ix->rank - 1], xs[PG_MAX_RANK], T = 1, slice = 1;
    pg_row_strides(x, xs);
    for (int d = 0; d < ix->rank - 1; d++) T *= ix->shape[d];
    for (int d = (int)m; d < x->rank; d++) slice *= x->shape[d];
    size_t es = pg_dtype_size(x->dtype);
    pg_dtype dt = y->dtype;
    if (k->y[0] != k->x[0])
        memmove(k->y[0], k->x[0], (size_t)pg_tensor_numel(y) * es);
    const char *U = k->x[2];
    char *Y = k->y[0];
    for (int64_t t = 0; t < T; t++) {
        int64_t off = tuple_offset(k, x, ix, k->x[1], t, m, 0, xs);
        if (off < 0)
            return pg_last_status();
        if (red == RED_NONE) {
            memcpy(Y + (size_t)off * es, U + (size_t)(t * slice) * es, (size_t)slice * es);
            continue;
        }
        for (int64_t e = 0; e < slice; e++) {
            if (pg_dt_is_float(dt))
                pg_st_f(dt, Y, off + e, red_f(red, pg_ld_f(dt, Y, off + e), pg_ld_f(dt, U, t * slice + e)));
            else
                pg_st_i(dt, Y, off + e, red_i(red, pg_ld_i(dt, Y, off + e), pg_ld_i(dt, U, t * slice + e)));
        }
    }
    return PG_OK;
}

/* ---- OneHot ------------------------------------------------------------------- */

pg_status pg_exec_onehot(pg_kctx *k)
{
    const pg_tensor *ix = k->in[0], *y = k->out[0];
    int a = pg_norm_axis(pg_ir_attr_int(k->node, "axis", -1), y->rank);
    int64_t depth = y->shape[a], outer = 1, inner = 1, total = pg_tensor_numel(y);
    for (int d = 0; d < a; d++) outer *= ix->shape[d];
    for (int d = a; d < ix->rank; d++) inner *= ix->shape[d];
    size_t es = pg_dtype_size(y->dtype);
    const char *V = k->x[2];
    char *Y = k->y[0];
    for (int64_t i = 0; i < total; i++)
        memcpy(Y + (size_t)i * es, V, es);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            double v = pg_ld_f(ix->dtype, k->x[0], o * inner + i);
            if (v != v)
                continue;   /* NaN: no class */
            int64_t cls = pg_ld_i(ix->dtype, k->x[0], o * inner + i);   /* floats truncate, clamped */
            if (cls < 0)
                cls += depth;
            if (cls < 0 || cls >= depth)
                continue;   /* out of range: a row of `off` values */
            memcpy(Y + (size_t)((o * depth + cls) * inner + i) * es, V + es, es);
        }
    return PG_OK;
}

/* ---- NonZero -------------------------------------------------------------------- */

pg_status pg_exec_nonzero(pg_kctx *k)
{
    const pg_tensor *x = k->in[0];
    int r = x->rank;
    int64_t n = pg_tensor_numel(x), nz = k->out[0]->shape[1], j = 0, idx[PG_MAX_RANK] = { 0 };
    int64_t *Y = k->y[0];
    for (int64_t i = 0; i < n; i++) {
        if (pg_ld_f(x->dtype, k->x[0], i) != 0) {
            if (j >= nz)
                return pg_fail(PG_ERR_INVALID_ARG, "node '%s' (NonZero): more nonzero elements than "
                               "the %lld counted at compile time", k->node->name, (long long)nz);
            for (int d = 0; d < r; d++)
                Y[d * nz + j] = idx[d];
            j++;
        }
        for (int d = r - 1; d >= 0; d--) {
            if (++idx[d] < x->shape[d]) break;
            idx[d] = 0;
        }
    }
    if (j != nz)
        return pg_fail(PG_ERR_INVALID_ARG, "node '%s' (NonZero): %lld nonzero elements, %lld counted "
                       "at compile time", k->node->name, (long long)j, (long long)nz);
    return PG_OK;
}

/* ---- TopK, ArgMax, ArgMin ---------------------------------------------------------- */

typedef struct line {
    pg_dtype dt;
    const void *x;
    int64_t base, stride;   /* element e of the line is x[base + e * stride] */
    int largest;
} line;

/* Compares elements i and j of a line by value: > 0 if i ranks first
 * (larger, or smaller when !largest), < 0 if j does, 0 if equal.  NaN ranks
 * beyond every number. */
static int cmp_val(const line *l, int64_t i, int64_t j)
{
    if (pg_dt_is_float(l->dt)) {
        double a = pg_ld_f(l->dt, l->x, l->base + i * l->stride);
        double b = pg_ld_f(l->dt, l->x, l->base + j * l->stride);
        int na = a != a, nb = b != b;
        if (na || nb)
            return na - nb;
        return a == b ? 0 : (a > b) == !!l->largest ? 1 : -1;
    }
    int64_t a = pg_ld_i(l->dt, l->x, l->base + i * l->stride);
    int64_t b = pg_ld_i(l->dt, l->x, l->base + j * l->stride);
    return a == b ? 0 : (a > b) == !!l->largest ? 1 : -1;
}

/* 1 if element i ranks before element j: by value, ties by the lower index. */
static int before(const line *l, int64_t i, int64_t j)
{
    int c = cmp_val(l, i, j);
    return c ? c > 0 : i < j;
}

/* A heap of element numbers whose root ranks last. */
static void sift_down(const line *l, int64_t *h, int64_t n, int64_t p)
{
    for (;;) {
        int64_t c = 2 * p + 1;
        if (c >= n)
            return;
        if (c + 1 < n && before(l, h[c], h[c + 1]))
            c++;
        if (!before(l, h[p], h[c]))
            return;
        int64_t t = h[p]; h[p] = h[c]; h[c] = t;
        p = c;
    }
}

static void sift_up(const line *l, int64_t *h, int64_t p)
{
    while (p > 0) {
        int64_t q = (p - 1) / 2;
        if (!before(l, h[q], h[p]))
            return;
        int64_t t = h[p]; h[p] = h[q]; h[q] = t;
        p = q;
    }
}

size_t pg_scratch_topk(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                       int threads, const pg_binding *b)
{
    (void)in; (void)threads; (void)b;
    int a = pg_norm_axis(pg_ir_attr_int(n, "axis", -1), out[0]->rank);
    return (size_t)(a >= 0 ? out[0]->shape[a] + 1 : 1) * sizeof(int64_t);
}

pg_status pg_exec_topk(pg_kctx *k)
{
    const pg_tensor *x = k->in[0], *y = k->out[0];
    int a = pg_norm_axis(pg_ir_attr_int(k->node, "axis", -1), x->rank);
    int64_t K = y->shape[a], n = x->shape[a], outer = 1, inner = 1;
    for (int d = 0; d < a; d++) outer *= x->shape[d];
    for (int d = a + 1; d < x->rank; d++) inner *= x->shape[d];
    if (K > 0 && (!k->scratch || k->scratch_bytes < (size_t)K * sizeof(int64_t)))
        return pg_fail(PG_ERR_INTERNAL, "node '%s' (TopK): no scratch for K = %lld", k->node->name,
                       (long long)K);
    int64_t *h = k->scratch;
    size_t es = pg_dtype_size(x->dtype);
    const char *X = k->x[0];
    char *V = k->y[0];
    int64_t *I = k->n_out > 1 ? k->y[1] : NULL;
    line l = { x->dtype, X, 0, inner, (int)pg_ir_attr_int(k->node, "largest", 1) };
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            l.base = o * n * inner + i;
            int64_t m = 0;
            for (int64_t e = 0; e < n && K > 0; e++) {
                if (m < K) {
                    h[m] = e;
                    sift_up(&l, h, m++);
                } else if (before(&l, e, h[0])) {
                    h[0] = e;
                    sift_down(&l, h, K, 0);
                }
            }
            for (int64_t s = m - 1; s > 0; s--) {   /* heap sort: the last-ranked goes to the end */
                int64_t t = h[0]; h[0] = h[s]; h[s] = t;
                sift_down(&l, h, s, 0);
            }
            for (int64_t j = 0; j < K; j++) {
                int64_t oo = (o * K + j) * inner + i;
                memcpy(V + (size_t)oo * es, X + (size_t)(l.base + h[j] * inner) * es, es);
                if (I)
                    I[oo] = h[j];
            }
        }
    return PG_OK;
}

pg_status pg_exec_argmax(pg_kctx *k)
{
    const pg_tensor *x = k->in[0];
    int a = pg_norm_axis(pg_ir_attr_int(k->node, "axis", 0), x->rank);
    int last = (int)pg_ir_attr_int(k->node, "select_last_index", 0);
    int64_t n = x->shape[a], outer = 1, inner = 1;
    for (int d = 0; d < a; d++) outer *= x->shape[d];
    for (int d = a + 1; d < x->rank; d++) inner *= x->shape[d];
    line l = { x->dtype, k->x[0], 0, inner, k->node->op == PG_OP_ARGMAX };
    int64_t *Y = k->y[0];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            l.base = o * n * inner + i;
            int64_t best = 0;
            for (int64_t e = 1; e < n; e++) {
                int c = cmp_val(&l, e, best);
                if (c > 0 || (last && c == 0))
                    best = e;
            }
            Y[o * inner + i] = best;
        }
    return PG_OK;
}

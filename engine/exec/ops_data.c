/* ops_data.c - data movement and shape ops: plain C loops, no kernels.
 * Reshape/Flatten/Squeeze/Unsqueeze/Identity are views: the planner gives
 * them their input's buffer and the copy below is then skipped. */
#include <string.h>

#include "../core/error.h"
#include "../kernels/transpose/transpose.h"
#include "elem.h"
#include "ops.h"
#include "parallel.h"

void pg_slice_range(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *s0, int64_t *cnt);

static size_t nbytes_of(const pg_tensor *t)
{
    return (size_t)pg_tensor_numel(t) * pg_dtype_size(t->dtype);
}

pg_status pg_exec_copy(pg_kctx *k)
{
    if (k->y[0] != k->x[0])
        memmove(k->y[0], k->x[0], nbytes_of(k->out[0]));
    return PG_OK;
}

/* A strided gather: output element (i_0 .. i_r-1), row-major in Y, is
 * input element X + sum i_d * st[d] (elements; a stride may be 0, a
 * broadcast, or negative).  Transpose permutes the input's strides, Slice
 * scales them by its steps from its start, Expand zeroes the broadcast
 * ones: all three copy rows of the output (its innermost dimension), a
 * memcpy each where the row is contiguous in the input.  (Slice and
 * Expand went element by element: a GPT-NeoX export's QKV slices took 13%
 * of its run.) */
typedef struct gather_job {
    int r;
    size_t es;
    int64_t shape[PG_MAX_RANK], st[PG_MAX_RANK];
    const char *X;
    char *Y;
} gather_job;

/* Rows [r0, r1) of the output. */
static void gather_rows(void *ctx, int64_t r0, int64_t r1)
{
    const gather_job *j = ctx;
    int r = j->r;
    size_t es = j->es;
    int64_t inner = j->shape[r - 1], is = j->st[r - 1], idx[PG_MAX_RANK] = { 0 };
    for (int64_t q = r0, d = r - 2; d >= 0; d--) {   /* the odometer at row r0 */
        idx[d] = q % j->shape[d];
        q /= j->shape[d];
    }
    for (int64_t row = r0; row < r1; row++) {
        int64_t off = 0, o = row * inner;
        for (int d = 0; d < r - 1; d++) off += idx[d] * j->st[d];
        if (is == 1) {   /* contiguous in the input: a row copy */
            memcpy(j->Y + (size_t)o * es, j->X + (size_t)off * es, (size_t)inner * es);
        } else if (es == 4) {
            const uint32_t *src = (const uint32_t *)j->X + off;
            uint32_t *dst = (uint32_t *)j->Y + o;
            for (int64_t c = 0; c < inner; c++) dst[c] = src[c * is];
        } else {
            for (int64_t c = 0; c < inner; c++)
                memcpy(j->Y + (size_t)(o + c) * es, j->X + (size_t)(off + c * is) * es, es);
        }
        for (int d = r - 2; d >= 0; d--) {
            if (++idx[d] < j->shape[d]) break;
            idx[d] = 0;
        }
    }
}

/* Runs j over its output (total elements, j->r >= 1): output dims of one
 * element are dropped and neighbours contiguous in the input as in the
 * output are merged first, so that the rows are as long as they can be
 * (a Slice that keeps the inner dims whole, an Expand of a leading dim). */
static void run_gather(const pg_kctx *k, gather_job *j, int64_t total)
{
    int r = 0;
    int64_t sh[PG_MAX_RANK], st[PG_MAX_RANK];
    for (int d = 0; d < j->r; d++) {
        if (j->shape[d] == 1)
            continue;
        if (r > 0 && st[r - 1] == j->st[d] * j->shape[d]) {
            sh[r - 1] *= j->shape[d];
            st[r - 1] = j->st[d];
        } else {
            sh[r] = j->shape[d];
            st[r++] = j->st[d];
        }
    }
    if (r == 0) {   /* one element */
        sh[0] = 1;
        st[0] = 1;
        r = 1;
    }
    j->r = r;
    memcpy(j->shape, sh, sizeof(int64_t) * (size_t)r);
    memcpy(j->st, st, sizeof(int64_t) * (size_t)r);
    int64_t inner = sh[r - 1];
    pg_exec_parallel(k, total / inner, inner * 2, 1, gather_rows, j);
}

/* 4-byte elements where the output's innermost dimension is not the
 * input's (a gather with a long stride, e.g. K [B,S,H,D] -> K^T [B,H,D,S]):
 * each "plane" - output dims p (the one the input's contiguous dimension
 * went to) and r-1, every other index fixed - is a 2-D transpose, done in
 * TILE x TILE blocks so that the strided side stays within a few cache
 * lines.  Planes [p0, p1). */
#define TILE 16
typedef struct plane_job {
    const gather_job *t;
    int p;
    int64_t ost[PG_MAX_RANK];   /* output row-major strides */
    pg_f32_transpose_fn tr;     /* the bound transpose kernel, or NULL */
    int64_t tile;               /* its tile */
} plane_job;

/* Y[yo + a ops + c] = X[xo + a + c is] for a in [a0, a1), c in [c0, c1),
 * in TILE x TILE blocks. */
static void copy_block(const uint32_t *X, uint32_t *Y, int64_t is, int64_t ops, int64_t a0, int64_t a1,
                       int64_t c0, int64_t c1)
{
    for (int64_t b0 = a0; b0 < a1; b0 += TILE)
        for (int64_t d0 = c0; d0 < c1; d0 += TILE) {
            int64_t b1 = b0 + TILE < a1 ? b0 + TILE : a1, d1 = d0 + TILE < c1 ? d0 + TILE : c1;
            for (int64_t c = d0; c < d1; c++)
                for (int64_t a = b0; a < b1; a++)
                    Y[a * ops + c] = X[a + c * is];
        }
}

/* Planes [p0, p1): the bound kernel's whole tiles (the plane's rows and
 * columns rounded down to its tile), then the edges past them in C. */
static void transpose_planes(void *ctx, int64_t p0, int64_t p1)
{
    const plane_job *pj = ctx;
    const gather_job *j = pj->t;
    int r = j->r, p = pj->p;
    int64_t P = j->shape[p], L = j->shape[r - 1], is = j->st[r - 1], ops = pj->ost[p];
    const uint32_t *X = (const uint32_t *)j->X;
    uint32_t *Y = (uint32_t *)j->Y;
    for (int64_t pl = p0; pl < p1; pl++) {
        int64_t q = pl, xo = 0, yo = 0;
        for (int d = r - 2; d >= 0; d--) {
            if (d == p)
                continue;
            int64_t i = q % j->shape[d];
            q /= j->shape[d];
            xo += i * j->st[d];
            yo += i * pj->ost[d];
        }
        int64_t Pt = 0, Lt = 0;
        if (pj->tr && P >= pj->tile && L >= pj->tile) {
            /* the kernel's src rows are the plane's c, its columns a */
            Pt = P / pj->tile * pj->tile;
            Lt = L / pj->tile * pj->tile;
            pj->tr((size_t)Lt, (size_t)Pt, (const float *)(X + xo), (size_t)is, (float *)(Y + yo), (size_t)ops);
        }
        copy_block(X + xo, Y + yo, is, ops, 0, P, Lt, L);
        copy_block(X + xo, Y + yo, is, ops, Pt, P, 0, Lt);
    }
}

/* 4-byte elements: the transpose kernels for the planes' whole tiles */
pg_status pg_bind_transpose(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                            pg_binding *b)
{
    (void)n; (void)out;
    b->kern[0] = pg_dtype_size(in[0]->dtype) == 4 ? pg_kernel_select(&pg_kernels_transpose) : NULL;
    return PG_OK;
}

pg_status pg_exec_transpose(pg_kctx *k)
{
    const pg_tensor *x = k->in[0], *y = k->out[0];
    int r = x->rank, np = 0;
    const int64_t *perm = pg_ir_attr_ints(k->node, "perm", &np);
    gather_job j = { .r = r, .es = pg_dtype_size(x->dtype), .X = k->x[0], .Y = k->y[0] };
    int64_t xs[PG_MAX_RANK], s = 1;
    for (int d = r - 1; d >= 0; d--) {
        xs[d] = s;
        s *= x->shape[d];
    }
    for (int d = 0; d < r; d++) {
        j.st[d] = xs[perm ? perm[d] : r - 1 - d];   /* input stride of output dim d */
        j.shape[d] = y->shape[d];
    }
    int64_t total = pg_tensor_numel(y);
    if (r == 0 || total == 0) {
        memcpy(j.Y, j.X, j.es * (size_t)total);
        return PG_OK;
    }
    int64_t inner = y->shape[r - 1];
    int p = -1;
    for (int d = 0; d < r - 1; d++)
        if (j.st[d] == 1)
            p = d;
    if (j.es == 4 && p >= 0 && j.st[r - 1] != 1 && j.shape[p] > 1) {
        plane_job pj = { &j, p, { 0 }, NULL, 0 };
        if (k->bind && k->bind->kern[0]) {
            pj.tr = k->bind->kern[0]->fn.transpose;
            pj.tile = ((const pg_transpose_params *)k->bind->kern[0]->params)->tile;
        }
        int64_t s2 = 1;
        for (int d = r - 1; d >= 0; d--) {
            pj.ost[d] = s2;
            s2 *= y->shape[d];
        }
        int64_t planes = total / (inner * y->shape[p]);
        pg_exec_parallel(k, planes, inner * y->shape[p] * 2, 1, transpose_planes, &pj);
        return PG_OK;
    }
    if (inner > 0)
        run_gather(k, &j, total);
    return PG_OK;
}

/* outer x (chunk along axis x inner) blocks */
static void axis_split(const pg_tensor *t, int a, int64_t *outer, int64_t *inner)
{
    *outer = 1;
    *inner = 1;
    for (int d = 0; d < a; d++) *outer *= t->shape[d];
    for (int d = a + 1; d < t->rank; d++) *inner *= t->shape[d];
}

pg_status pg_exec_concat(pg_kctx *k)
{
    const pg_tensor *y = k->out[0];
    int a = pg_norm_axis(pg_ir_attr_int(k->node, "axis", 0), y->rank);
    size_t es = pg_dtype_size(y->dtype);
    int64_t outer, inner;
    axis_split(y, a, &outer, &inner);
    char *Y = k->y[0];
    size_t yrow = (size_t)(y->shape[a] * inner) * es, off = 0;
    for (int i = 0; i < k->n_in; i++) {
        size_t row = (size_t)(k->in[i]->shape[a] * inner) * es;
        const char *X = k->x[i];
        for (int64_t o = 0; o < outer; o++)
            memcpy(Y + (size_t)o * yrow + off, X + (size_t)o * row, row);
        off += row;
    }
    return PG_OK;
}

pg_status pg_exec_split(pg_kctx *k)
{
    const pg_tensor *x = k->in[0];
    int a = pg_norm_axis(pg_ir_attr_int(k->node, "axis", 0), x->rank);
    size_t es = pg_dtype_size(x->dtype);
    int64_t outer, inner;
    axis_split(x, a, &outer, &inner);
    const char *X = k->x[0];
    size_t xrow = (size_t)(x->shape[a] * inner) * es, off = 0;
    for (int i = 0; i < k->n_out; i++) {
        size_t row = (size_t)(k->out[i]->shape[a] * inner) * es;
        char *Y = k->y[i];
        for (int64_t o = 0; o < outer; o++)
            memcpy(Y + (size_t)o * row, X + (size_t)o * xrow + off, row);
        off += row;
    }
    return PG_OK;
}

static int64_t int_at(const pg_tensor *t, const void *p, int64_t i)
{
    return t->dtype == PG_DTYPE_INT64 ? ((const int64_t *)p)[i] : ((const int32_t *)p)[i];
}

pg_status pg_exec_slice(pg_kctx *k)
{
    const pg_tensor *x = k->in[0], *y = k->out[0];
    int r = x->rank;
    int64_t start[PG_MAX_RANK], step[PG_MAX_RANK];
    for (int d = 0; d < r; d++) {
        start[d] = 0;
        step[d] = 1;
    }
    int64_t n = pg_tensor_numel(k->in[1]);
    for (int64_t i = 0; i < n; i++) {
        int a = pg_norm_axis(k->n_in > 3 && k->x[3] ? int_at(k->in[3], k->x[3], i) : i, r);
        int64_t st = k->n_in > 4 && k->x[4] ? int_at(k->in[4], k->x[4], i) : 1, s0, cnt;
        pg_slice_range(x->shape[a], int_at(k->in[1], k->x[1], i), int_at(k->in[2], k->x[2], i), st, &s0, &cnt);
        start[a] = s0;
        step[a] = st;
    }
    size_t es = pg_dtype_size(x->dtype);
    int64_t total = pg_tensor_numel(y), xs[PG_MAX_RANK], base = 0;
    if (total == 0)
        return PG_OK;
    if (r == 0) {
        memcpy(k->y[0], k->x[0], es);
        return PG_OK;
    }
    pg_row_strides(x, xs);
    gather_job j = { .r = r, .es = es, .Y = k->y[0] };
    for (int d = 0; d < r; d++) {
        base += start[d] * xs[d];
        j.st[d] = step[d] * xs[d];
        j.shape[d] = y->shape[d];
    }
    j.X = (const char *)k->x[0] + (size_t)base * es;
    run_gather(k, &j, total);
    return PG_OK;
}

pg_status pg_exec_gather(pg_kctx *k)
{
    const pg_tensor *x = k->in[0], *ix = k->in[1];
    int a = pg_norm_axis(pg_ir_attr_int(k->node, "axis", 0), x->rank);
    int64_t outer, inner, n = pg_tensor_numel(ix), dim = x->shape[a];
    axis_split(x, a, &outer, &inner);
    size_t es = pg_dtype_size(x->dtype), chunk = (size_t)inner * es;
    const char *X = k->x[0];
    char *Y = k->y[0];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < n; i++) {
            int64_t j = int_at(ix, k->x[1], i);
            if (j < 0)
                j += dim;
            if (j < 0 || j >= dim)
                return pg_fail(PG_ERR_INVALID_ARG, "node '%s' (Gather): index %lld is out of range "
                               "for a dim of %lld", k->node->name, (long long)int_at(ix, k->x[1], i),
                               (long long)dim);
            memcpy(Y + (size_t)(o * n + i) * chunk, X + (size_t)(o * dim + j) * chunk, chunk);
        }
    return PG_OK;
}

pg_status pg_exec_expand(pg_kctx *k)
{
    const pg_tensor *x = k->in[0], *y = k->out[0];
    int64_t total = pg_tensor_numel(y);
    size_t es = pg_dtype_size(x->dtype);
    if (total == 0)
        return PG_OK;
    if (y->rank == 0) {
        memcpy(k->y[0], k->x[0], es);
        return PG_OK;
    }
    gather_job j = { .r = y->rank, .es = es, .X = k->x[0], .Y = k->y[0] };
    pg_broadcast_strides(x->rank, x->shape, y->rank, y->shape, j.st);
    memcpy(j.shape, y->shape, sizeof(int64_t) * (size_t)y->rank);
    run_gather(k, &j, total);
    return PG_OK;
}

pg_status pg_exec_shape(pg_kctx *k)
{
    const pg_tensor *x = k->in[0];
    int r = x->rank;
    int64_t s = pg_ir_attr_int(k->node, "start", 0);
    if (s < 0) s += r;
    if (s < 0) s = 0;
    int64_t *Y = k->y[0], n = pg_tensor_numel(k->out[0]);
    for (int64_t i = 0; i < n; i++)
        Y[i] = x->shape[s + i];
    return PG_OK;
}

/* Constant's value: the tensor attribute's data, or value_float/int/s. */
pg_status pg_exec_constant(pg_kctx *k)
{
    const pg_node *n = k->node;
    const pg_attr *a = pg_ir_attr(n, "value");
    void *Y = k->y[0];
    if (a && a->type == PG_ATTR_TENSOR) {
        /* the attribute tensor's data is bound as the step's state */
        if (!k->state)
            return pg_fail(PG_ERR_INTERNAL, "node '%s': Constant value not bound "
                           "(set pg_kctx.state = pg_exec_node_state(g, node))", n->name);
        memcpy(Y, k->state, nbytes_of(k->out[0]));
    } else if ((a = pg_ir_attr(n, "value_float"))) {
        *(float *)Y = a->f;
    } else if ((a = pg_ir_attr(n, "value_int"))) {
        *(int64_t *)Y = a->i;
    } else if ((a = pg_ir_attr(n, "value_floats"))) {
        memcpy(Y, a->floats, sizeof(float) * (size_t)a->n);
    } else if ((a = pg_ir_attr(n, "value_ints"))) {
        memcpy(Y, a->ints, sizeof(int64_t) * (size_t)a->n);
    }
    return PG_OK;
}

pg_status pg_exec_constant_of_shape(pg_kctx *k)
{
    size_t es = pg_dtype_size(k->out[0]->dtype);
    int64_t n = pg_tensor_numel(k->out[0]);
    char v[8] = { 0 };
    const pg_attr *a = pg_ir_attr(k->node, "value");
    if (a && a->type == PG_ATTR_TENSOR && !k->state)
        return pg_fail(PG_ERR_INTERNAL, "node '%s': ConstantOfShape value not bound "
                       "(set pg_kctx.state = pg_exec_node_state(g, node))", k->node->name);
    if (k->state)
        memcpy(v, k->state, es);
    char *Y = k->y[0];
    for (int64_t i = 0; i < n; i++)
        memcpy(Y + (size_t)i * es, v, es);
    return PG_OK;
}

const void *pg_exec_node_state(const pg_graph *g, const pg_node *n)
{
    const pg_attr *a = pg_ir_attr(n, "value");
    if (a && a->type == PG_ATTR_TENSOR && a->tensor >= 0 && a->tensor < g->n_tensors && g->tensors[a->tensor])
        return g->tensors[a->tensor]->data;
    return NULL;
}

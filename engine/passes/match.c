/* match.c - pattern-matching helpers (see match.h). */
#include <math.h>
#include <string.h>

#include "match.h"

pg_tensor *pm_tensor(const pg_graph *g, int t)
{
    return t >= 0 && t < g->n_tensors ? g->tensors[t] : NULL;
}

pg_node *pm_producer(const pg_graph *g, int t, pg_opcode op)
{
    int p = pg_ir_producer(g, t);
    if (p < 0)
        return NULL;
    pg_node *n = g->nodes[p];
    return op == PG_OP_UNKNOWN || n->op == op ? n : NULL;
}

/* Both read the tensor's reader list (pg_tensor.users, one slot per input
 * that reads it, kept by the IR and checked by pg_ir_verify), not every
 * node: fusions ask for each candidate, a scan per ask was ~5% of a
 * compile. */
int pm_uses(const pg_graph *g, int t)
{
    const pg_tensor *x = pm_tensor(g, t);
    return x ? pg_ir_is_output(g, t) + x->n_users : 0;
}

pg_node *pm_sole_consumer(const pg_graph *g, int t, pg_opcode op)
{
    const pg_tensor *x = pm_tensor(g, t);
    if (!x || pg_ir_is_output(g, t) || x->n_users != 1)
        return NULL;
    pg_node *found = g->nodes[x->users[0]];
    return op == PG_OP_UNKNOWN || found->op == op ? found : NULL;
}

int pm_const_scalar(const pg_graph *g, int t, double *v)
{
    const pg_tensor *x = pm_tensor(g, t);
    if (!x || !x->is_const || !x->data || x->layout != PG_LAYOUT_ROW_MAJOR)
        return 0;
    if (x->rank < 0 || pg_tensor_numel(x) != 1)
        return 0;
    switch (x->dtype) {
    case PG_DTYPE_FLOAT32: *v = *(const float *)x->data; return 1;
    case PG_DTYPE_FLOAT64: *v = *(const double *)x->data; return 1;
    case PG_DTYPE_INT64: *v = (double)*(const int64_t *)x->data; return 1;
    case PG_DTYPE_INT32: *v = *(const int32_t *)x->data; return 1;
    default: return 0;
    }
}

int pm_const_is(const pg_graph *g, int t, double want, double tol)
{
    double v;
    if (!pm_const_scalar(g, t, &v))
        return 0;
    double lim = tol * fabs(want);
    if (lim < tol)
        lim = tol;
    return fabs(v - want) <= lim;
}

int pm_const_f32(const pg_graph *g, int t)
{
    const pg_tensor *x = pm_tensor(g, t);
    return x && x->is_const && x->data && x->dtype == PG_DTYPE_FLOAT32 &&
           x->layout == PG_LAYOUT_ROW_MAJOR && pg_tensor_numel(x) >= 0;
}

int pm_other_input(const pg_node *n, int t)
{
    if (n->n_inputs != 2)
        return -1;
    if (n->inputs[0] == t)
        return n->inputs[1];
    if (n->inputs[1] == t)
        return n->inputs[0];
    return -1;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

#include <stdlib.h>

int pm_axes(const pg_graph *g, const pg_node *n, int rank, int64_t *axes, int cap)
{
    int count = 0;
    const int64_t *a = pg_ir_attr_ints(n, "axes", &count);
    int64_t tmp[PG_MAX_RANK];
    if (!a && n->n_inputs > 1 && n->inputs[1] >= 0) {
        const pg_tensor *t = g->tensors[n->inputs[1]];
        const void *v = t->is_const ? t->data : t->known;
        int64_t ne = pg_tensor_numel(t);
        if (!v || ne < 0 || ne > PG_MAX_RANK)
            return -1;
        for (int64_t i = 0; i < ne; i++) {
            if (t->dtype == PG_DTYPE_INT64) tmp[i] = ((const int64_t *)v)[i];
            else if (t->dtype == PG_DTYPE_INT32) tmp[i] = ((const int32_t *)v)[i];
            else return -1;
        }
        a = tmp;
        count = (int)ne;
    }
    if (!a || count > cap)
        return -1;
    for (int i = 0; i < count; i++) {
        int64_t x = a[i] < 0 ? a[i] + rank : a[i];
        if (x < 0 || x >= rank)
            return -1;
        axes[i] = x;
    }
    qsort(axes, (size_t)count, sizeof *axes, cmp_i64);
    return count;
}

int pm_trailing_reduce(const pg_graph *g, const pg_node *n)
{
    if (n->op != PG_OP_REDUCEMEAN || n->n_inputs < 1)
        return 0;
    const pg_tensor *x = pm_tensor(g, n->inputs[0]);
    if (!x || x->rank < 1 || pg_ir_attr_int(n, "keepdims", 1) != 1)
        return 0;
    int64_t axes[PG_MAX_RANK];
    int na = pm_axes(g, n, x->rank, axes, PG_MAX_RANK);
    if (na <= 0)
        return 0;
    for (int i = 0; i < na; i++)
        if (axes[i] != x->rank - na + i)
            return 0;   /* not a trailing run of axes */
    return -na;
}

int pm_same_shape(const pg_tensor *a, const pg_tensor *b)
{
    if (!a || !b || a->rank < 0 || a->rank != b->rank)
        return 0;
    for (int d = 0; d < a->rank; d++)
        if (a->shape[d] < 0 || a->shape[d] != b->shape[d])
            return 0;
    return 1;
}

int64_t pm_numel_from(const pg_tensor *t, int from)
{
    if (t->rank < 0)
        return -1;
    int64_t n = 1;
    for (int d = from; d < t->rank; d++) {
        if (t->shape[d] < 0)
            return -1;
        n *= t->shape[d];
    }
    return n;
}

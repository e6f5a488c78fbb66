/* builder.c - the public graph-building API (pg_graph_*): names in,
 * checked, forwarded to the IR helpers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "ir.h"

/* The public handle is the IR graph itself; the text cache and the last
 * node's name live beside it so pg_graph_text can return a stable pointer. */
typedef struct text_cache {
    pg_graph *g;
    char *text;
} text_cache;

static _Thread_local text_cache cache;

static int bad_dims(int rank, const int64_t *dims)
{
    if (rank < 0 || rank > PG_MAX_RANK || (rank && !dims))
        return 1;
    for (int i = 0; i < rank; i++)
        if (dims[i] < 0)
            return 1;
    return 0;
}

/* A tensor a node named before it was declared: no producer, no data, not
 * an input; -1 if the name is unused.  Declaring it then fills it in. */
static int placeholder(pg_graph *g, const char *name)
{
    int t = pg_ir_find_tensor(g, name);
    if (t < 0)
        return -1;
    const pg_tensor *x = g->tensors[t];
    if (x->is_const || x->is_input || x->dtype != PG_DTYPE_UNDEFINED || pg_ir_producer(g, t) >= 0)
        return -2;   /* a real duplicate: the add below reports it */
    return t;
}

pg_status pg_graph_new(pg_graph **out)
{
    pg_clear_error();
    if (!out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_graph_new: NULL output");
    *out = pg_ir_new();
    return *out ? PG_OK : pg_last_status();
}

void pg_graph_free(pg_graph *g)
{
    if (cache.g == g) {
        free(cache.text);
        cache.text = NULL;
        cache.g = NULL;
    }
    pg_ir_free(g);
}

pg_status pg_graph_add_input(pg_graph *g, const char *name, pg_dtype dtype, int rank, const int64_t *dims)
{
    pg_clear_error();
    if (!g || !name)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_graph_add_input: NULL argument");
    if (!pg_dtype_public(dtype))
        return pg_fail(PG_ERR_DTYPE, "input '%s': unsupported dtype %d", name, (int)dtype);
    if (bad_dims(rank, dims))
        return pg_fail(PG_ERR_SHAPE, "input '%s': rank %d with dims that are not all concrete "
                       "(dynamic dims are not supported yet)", name, rank);
    int t = placeholder(g, name);
    if (t == -2)
        return pg_fail(PG_ERR_GRAPH, "tensor '%s' is defined twice", name);
    if (t >= 0) {
        g->tensors[t]->dtype = dtype;
        pg_ir_set_shape(g->tensors[t], rank, dims);
    } else if ((t = pg_ir_add_tensor(g, name, dtype, rank, dims)) < 0) {
        return pg_last_status();
    }
    if (g->n_inputs == g->cap_inputs) {   /* doubling: many inputs stay linear */
        int n = g->cap_inputs ? 2 * g->cap_inputs : 8;
        int *p = pg_obj_realloc(g->inputs, sizeof(int) * (size_t)n);
        if (!p)
            return pg_fail(PG_ERR_NOMEM, "out of memory");
        g->inputs = p;
        g->cap_inputs = n;
    }
    g->inputs[g->n_inputs++] = t;
    g->tensors[t]->is_input = 1;
    g->tensors[t]->rank = rank;
    return PG_OK;
}

/* pg_graph_add_initializer (borrow 0) and pg_graph_add_initializer_view
 * (borrow 1) */
static pg_status add_initializer(pg_graph *g, const char *name, pg_dtype dtype, int rank,
                                 const int64_t *dims, const void *data, int borrow)
{
    pg_clear_error();
    if (!g || !name || !data)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_graph_add_initializer: NULL argument");
    if (bad_dims(rank, dims))
        return pg_fail(PG_ERR_SHAPE, "initializer '%s': bad rank or dims", name);
    size_t es = pg_dtype_size(dtype);
    if (borrow && es && (uintptr_t)data % es)
        return pg_fail(PG_ERR_INVALID_ARG, "initializer '%s': data at %p is not aligned to its "
                       "%zu-byte elements", name, data, es);
    int (*add)(pg_graph *, const char *, pg_dtype, int, const int64_t *, const void *) =
        borrow ? pg_ir_add_const_view : pg_ir_add_const;
    int ph = placeholder(g, name);
    if (ph == -2)
        return pg_fail(PG_ERR_GRAPH, "tensor '%s' is defined twice", name);
    if (ph < 0)
        return add(g, name, dtype, rank, dims, data) < 0 ? pg_last_status() : PG_OK;
    /* a node already names it: build the constant aside and move its data in */
    char tmp[64];
    int c = add(g, pg_ir_unique_name(g, "init_tmp", tmp, sizeof tmp), dtype, rank, dims, data);
    if (c < 0)
        return pg_last_status();
    pg_tensor *src = g->tensors[c], *dst = g->tensors[ph];
    dst->dtype = dtype;
    pg_ir_set_shape(dst, rank, dims);
    pg_ir_set_const_data(dst, src->data, src->nbytes);
    dst->data_borrowed = src->data_borrowed;
    src->data = NULL;
    return pg_ir_remove_tensor(g, c);
}

pg_status pg_graph_add_initializer(pg_graph *g, const char *name, pg_dtype dtype, int rank,
                                   const int64_t *dims, const void *data)
{
    return add_initializer(g, name, dtype, rank, dims, data, 0);
}

pg_status pg_graph_add_initializer_view(pg_graph *g, const char *name, pg_dtype dtype, int rank,
                                        const int64_t *dims, const void *data)
{
    return add_initializer(g, name, dtype, rank, dims, data, 1);
}

static const char *last_node_name(const pg_graph *g)
{
    for (int i = g->n_nodes - 1; i >= 0; i--)
        if (g->nodes[i])
            return g->nodes[i]->name;
    return NULL;
}

const char *pg_graph_last_node(const pg_graph *g) { return g ? last_node_name(g) : NULL; }

pg_status pg_graph_add_node(pg_graph *g, const char *op_type, const char *name,
                            const char *const *inputs, int n_inputs,
                            const char *const *outputs, int n_outputs)
{
    pg_clear_error();
    if (!g || !op_type || n_inputs < 0 || n_outputs < 1 || (n_inputs && !inputs) || !outputs)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_graph_add_node: bad arguments for a %s node",
                       op_type ? op_type : "(null)");
    if (name && *name) {
        PG_IR_FOR_NODES(g, n)
            if (!strcmp(n->name, name))
                return pg_fail(PG_ERR_GRAPH, "node name '%s' is used twice", name);
    }
    int ins[256], outs[64];
    if (n_inputs > 256 || n_outputs > 64)
        return pg_fail(PG_ERR_INVALID_ARG, "node '%s': too many inputs or outputs", name ? name : op_type);
    for (int i = 0; i < n_inputs; i++) {
        if (!inputs[i] || !*inputs[i]) {
            ins[i] = -1;
            continue;
        }
        /* inputs may be defined later (any order is allowed; verify checks) */
        ins[i] = pg_ir_find_tensor(g, inputs[i]);
        if (ins[i] < 0 && (ins[i] = pg_ir_add_tensor(g, inputs[i], PG_DTYPE_UNDEFINED, -1, NULL)) < 0)
            return pg_last_status();
    }
    for (int i = 0; i < n_outputs; i++) {
        if (!outputs[i] || !*outputs[i])
            return pg_fail(PG_ERR_INVALID_ARG, "node '%s': output %d has no name", name ? name : op_type, i);
        outs[i] = pg_ir_find_tensor(g, outputs[i]);
        if (outs[i] < 0 && (outs[i] = pg_ir_add_tensor(g, outputs[i], PG_DTYPE_UNDEFINED, -1, NULL)) < 0)
            return pg_last_status();
    }
    return pg_ir_add_node(g, op_type, name, ins, n_inputs, outs, n_outputs) < 0 ? pg_last_status() : PG_OK;
}

static pg_node *find_node(pg_graph *g, const char *node)
{
    if (!g || !node)
        return NULL;
    PG_IR_FOR_NODES(g, n)
        if (!strcmp(n->name, node))
            return n;
    return NULL;
}

#define NODE_OR_FAIL(g, node, attr)                                                  \
    pg_clear_error();                                                                \
    pg_node *n = find_node(g, node);                                                 \
    if (!n || !attr)                                                                 \
        return pg_fail(PG_ERR_INVALID_ARG, "no node named '%s' to set attribute on", \
                       node ? node : "(null)");

pg_status pg_graph_set_attr_int(pg_graph *g, const char *node, const char *attr, int64_t v)
{
    NODE_OR_FAIL(g, node, attr);
    return pg_ir_set_attr_int(n, attr, v);
}

pg_status pg_graph_set_attr_float(pg_graph *g, const char *node, const char *attr, float v)
{
    NODE_OR_FAIL(g, node, attr);
    return pg_ir_set_attr_float(n, attr, v);
}

pg_status pg_graph_set_attr_ints(pg_graph *g, const char *node, const char *attr, const int64_t *v, int count)
{
    NODE_OR_FAIL(g, node, attr);
    if (count < 0 || (count && !v))
        return pg_fail(PG_ERR_INVALID_ARG, "attribute '%s': bad list", attr);
    return pg_ir_set_attr_ints(n, attr, v, count);
}

pg_status pg_graph_set_attr_floats(pg_graph *g, const char *node, const char *attr, const float *v, int count)
{
    NODE_OR_FAIL(g, node, attr);
    if (count < 0 || (count && !v))
        return pg_fail(PG_ERR_INVALID_ARG, "attribute '%s': bad list", attr);
    return pg_ir_set_attr_floats(n, attr, v, count);
}

pg_status pg_graph_set_attr_string(pg_graph *g, const char *node, const char *attr, const char *v)
{
    NODE_OR_FAIL(g, node, attr);
    return pg_ir_set_attr_string(n, attr, v);
}

pg_status pg_graph_set_attr_tensor(pg_graph *g, const char *node, const char *attr, pg_dtype dtype,
                                   int rank, const int64_t *dims, const void *data)
{
    NODE_OR_FAIL(g, node, attr);
    if (bad_dims(rank, dims) || !data)
        return pg_fail(PG_ERR_INVALID_ARG, "attribute '%s' of '%s': bad tensor", attr, node);
    char pre[160], buf[192];
    snprintf(pre, sizeof pre, "%s.%s", node, attr);
    int t = pg_ir_add_const(g, pg_ir_unique_name(g, pre, buf, sizeof buf), dtype, rank, dims, data);
    if (t < 0)
        return pg_last_status();
    n = find_node(g, node);
    return pg_ir_set_attr_tensor(n, attr, t);
}

pg_status pg_graph_add_output(pg_graph *g, const char *name)
{
    pg_clear_error();
    if (!g || !name)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_graph_add_output: NULL argument");
    int t = pg_ir_find_tensor(g, name);
    if (t < 0 && (t = pg_ir_add_tensor(g, name, PG_DTYPE_UNDEFINED, -1, NULL)) < 0)
        return pg_last_status();
    return pg_ir_add_graph_output(g, t, name);
}

pg_status pg_graph_copy(const pg_graph *g, pg_graph **out)
{
    pg_clear_error();
    if (!g || !out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_graph_copy: NULL argument");
    *out = pg_ir_clone_views(g);
    return *out ? PG_OK : pg_last_status();
}

static pg_status set_input_shape(pg_graph *g, const char *name, int rank, const int64_t *dims)
{
    if (!name)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_graph_set_input_shape: NULL argument");
    int id = pg_ir_find_tensor(g, name);
    if (id < 0 || !g->tensors[id]->is_input)
        return pg_fail(PG_ERR_INVALID_ARG, "'%s' is not an input of the graph", name);
    if (bad_dims(rank, dims))
        return pg_fail(PG_ERR_SHAPE, "input '%s': rank %d with dims that are not all concrete",
                       name, rank);
    pg_ir_set_shape(g->tensors[id], rank, dims);
    return PG_OK;
}

/* what was inferred from the inputs' old shapes: unknown again */
static void forget_inferred(pg_graph *g)
{
    PG_IR_FOR_TENSORS(g, t) {
        if (t->is_input || t->is_const)
            continue;
        t->rank = -1;
        pg_free(t->known);
        t->known = NULL;
    }
}

pg_status pg_graph_set_input_shape(pg_graph *g, const char *name, int rank, const int64_t *dims)
{
    pg_clear_error();
    if (!g)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_graph_set_input_shape: NULL argument");
    pg_status st = set_input_shape(g, name, rank, dims);
    if (st == PG_OK)
        forget_inferred(g);
    return st;
}

pg_status pg_graph_set_input_shapes(pg_graph *g, int n, const char *const *names, const int *ranks,
                                    const int64_t *const *dims)
{
    for (int i = 0; i < n; i++) {
        pg_status st = set_input_shape(g, names[i], ranks[i], dims[i]);
        if (st)
            return st;
    }
    if (n > 0)
        forget_inferred(g);
    return PG_OK;
}

const char *pg_graph_text(pg_graph *g)
{
    pg_clear_error();
    if (!g) {
        pg_fail(PG_ERR_INVALID_ARG, "pg_graph_text: NULL graph");
        return NULL;
    }
    free(cache.text);
    cache.g = g;
    cache.text = pg_ir_to_text(g);
    if (!cache.text)
        pg_fail(PG_ERR_NOMEM, "out of memory rendering the graph");
    return cache.text;
}

pg_status pg_graph_check(pg_graph *g)
{
    pg_clear_error();
    if (!g)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_graph_check: NULL graph");
    pg_status st = pg_ir_verify(g);
    return st ? st : pg_ir_infer_shapes(g);
}

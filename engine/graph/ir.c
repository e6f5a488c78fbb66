/* ir.c - graph IR storage and the mutation helpers passes use (see ir.h). */
#include <stdio.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/limits.h"
#include "ir.h"

/* ---- dtypes (op names: opdefs.c) ------------------------------------------ */

size_t pg_dtype_size(pg_dtype dt)
{
    switch (dt) {
    case PG_DTYPE_FLOAT32: case PG_DTYPE_INT32: return 4;
    case PG_DTYPE_INT64: case PG_DTYPE_FLOAT64: return 8;
    case PG_DTYPE_UINT8: case PG_DTYPE_INT8: case PG_DTYPE_BOOL: return 1;
    case PG_DTYPE_FLOAT16: return 2;
    default: return 0;
    }
}

int pg_dtype_public(pg_dtype dt)
{
    return pg_dtype_size(dt) && dt != PG_DTYPE_FLOAT16;
}

const char *pg_dtype_name(pg_dtype dt)
{
    switch (dt) {
    case PG_DTYPE_FLOAT32: return "float32";
    case PG_DTYPE_INT32: return "int32";
    case PG_DTYPE_INT64: return "int64";
    case PG_DTYPE_FLOAT64: return "float64";
    case PG_DTYPE_FLOAT16: return "float16";
    case PG_DTYPE_UINT8: return "uint8";
    case PG_DTYPE_INT8: return "int8";
    case PG_DTYPE_BOOL: return "bool";
    default: return "undefined";
    }
}

/* ---- growable id arrays -------------------------------------------------- */

static int grow(void **arr, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return 0;
    int nc = *cap ? *cap * 2 : 16;
    while (nc < need)
        nc *= 2;
    void *p = pg_obj_realloc(*arr, (size_t)nc * elem);
    if (!p)
        return -1;
    *arr = p;
    *cap = nc;
    return 0;
}

/* ---- lifetime ------------------------------------------------------------ */

pg_graph *pg_ir_new(void)
{
    pg_graph *g = pg_obj_calloc(1, sizeof *g);
    if (!g)
        pg_fail(PG_ERR_NOMEM, "out of memory creating a graph");
    return g;
}

static void free_attr(pg_attr *a)
{
    pg_free(a->name);
    pg_free(a->ints);
    pg_free(a->floats);
    pg_free(a->s);
}

/* whether p is in g's clone block (pg_graph.block), freed with it only */
static int in_block(const pg_graph *g, const void *p)
{
    return g->block && (const char *)p >= g->block && (const char *)p < g->block_end;
}

static void release(const pg_graph *g, void *p)
{
    if (!in_block(g, p))
        pg_free(p);
}

static void free_node(const pg_graph *g, pg_node *n)
{
    if (!n)
        return;
    release(g, n->name);
    release(g, n->op_type);
    release(g, n->inputs);
    release(g, n->outputs);
    for (int i = 0; i < n->n_attrs; i++)
        free_attr(&n->attrs[i]);
    pg_free(n->attrs);
    release(g, n);
}

static void free_tensor(const pg_graph *g, pg_tensor *t)
{
    if (!t)
        return;
    release(g, t->name);
    if (!t->data_borrowed)
        pg_free(t->data);
    pg_free(t->known);
    release(g, t->users);
    release(g, t);
}

void pg_ir_free(pg_graph *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->n_nodes; i++)
        free_node(g, g->nodes[i]);
    for (int i = 0; i < g->n_tensors; i++)
        free_tensor(g, g->tensors[i]);
    for (int i = 0; i < g->n_outputs; i++)
        pg_free(g->output_names[i]);
    pg_free(g->nodes);
    pg_free(g->tensors);
    pg_free(g->inputs);
    pg_free(g->outputs);
    pg_free(g->output_names);
    pg_namemap_free(&g->tensor_names);
    pg_namemap_free(&g->node_names);
    pg_free(g->topo_kept);
    pg_free(g->block);
    pg_free(g);
}

/* a copy of n bytes at p (NULL: none) in memory from alloc */
static void *dup_in(void *(*alloc)(size_t), const void *p, size_t n)
{
    if (!p)
        return NULL;
    void *d = alloc(n);
    if (d)
        memcpy(d, p, n);
    return d;
}

/* of a buffer (aligned: kernels may read it), of a record (not) */
static void *dup_bytes(const void *p, size_t n) { return dup_in(pg_malloc, p, n); }
static void *dup_obj(const void *p, size_t n) { return dup_in(pg_obj_malloc, p, n); }

/* The clone's block: its records, names and index arrays one after the
 * other (8-byte aligned), sized by a first walk (carve with at NULL) and
 * filled by a second. */
typedef struct carver {
    char *at;
    size_t used;
} carver;

static void *carve(carver *k, const void *p, size_t n)
{
    size_t off = k->used;
    k->used += n ? (n + 7) & ~(size_t)7 : 8;   /* an empty array still points inside */
    if (!k->at)
        return NULL;
    if (p)
        memcpy(k->at + off, p, n);
    return k->at + off;
}

static char *carve_str(carver *k, const char *s) { return s ? carve(k, s, strlen(s) + 1) : NULL; }

/* g's tensor and node records with their names, reader lists and index
 * arrays, into k (the clone's block; sized only while k->at is NULL) */
static void carve_records(carver *k, const pg_graph *g, pg_graph *c)
{
    for (int i = 0; i < g->n_tensors; i++) {
        const pg_tensor *t = g->tensors[i];
        if (!t)
            continue;
        pg_tensor *d = carve(k, t, sizeof *d);
        char *name = carve_str(k, t->name);
        int *users = t->n_users ? carve(k, t->users, sizeof(int) * (size_t)t->n_users) : NULL;
        if (d) {
            d->name = name;
            d->users = users;
            d->cap_users = t->n_users;
            d->data = d->known = d->pass_data = NULL;   /* filled by the caller */
            d->data_borrowed = 0;
            c->tensors[i] = d;
        }
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const pg_node *n = g->nodes[i];
        if (!n)
            continue;
        pg_node *d = carve(k, n, sizeof *d);
        char *name = carve_str(k, n->name), *op_type = carve_str(k, n->op_type);
        int *ins = carve(k, n->inputs, sizeof(int) * (size_t)n->n_inputs);
        int *outs = carve(k, n->outputs, sizeof(int) * (size_t)n->n_outputs);
        if (d) {
            d->name = name;
            d->op_type = op_type;
            d->inputs = ins;
            d->outputs = outs;
            d->attrs = NULL;
            d->n_attrs = 0;
            d->pass_data = NULL;
            c->nodes[i] = d;
        }
    }
}

static const char *tensor_name_of(void *g, int id)
{
    const pg_graph *c = g;
    return id >= 0 && id < c->n_tensors && c->tensors[id] ? c->tensors[id]->name : NULL;
}

static const char *node_name_of(void *g, int id)
{
    const pg_graph *c = g;
    return id >= 0 && id < c->n_nodes && c->nodes[id] ? c->nodes[id]->name : NULL;
}

/* What a clone does with g's borrowed constants: copies them (0), lends
 * those on a PG_ALIGN boundary (PG_DATA_LENT, pg_ir_clone_lent), or
 * borrows them all too (1, pg_ir_clone_views). */
static pg_graph *clone(const pg_graph *g, int borrowed)
{
    pg_graph *c = pg_ir_new();
    if (!c)
        return NULL;
    if (grow((void **)&c->tensors, &c->cap_tensors, g->n_tensors, sizeof(pg_tensor *)) ||
        grow((void **)&c->nodes, &c->cap_nodes, g->n_nodes, sizeof(pg_node *)) ||
        grow((void **)&c->inputs, &c->cap_inputs, g->n_inputs, sizeof(int)) ||
        grow((void **)&c->outputs, &c->cap_outputs, g->n_outputs, sizeof(int)))
        goto oom;
    c->output_names = pg_obj_calloc((size_t)(c->cap_outputs ? c->cap_outputs : 1), sizeof(char *));
    if (!c->output_names)
        goto oom;
    c->n_tensors = g->n_tensors;
    c->n_nodes = g->n_nodes;
    c->name_seq = g->name_seq;
    for (int i = 0; i < g->n_tensors; i++)   /* (no memset: NULL arrays of an empty graph) */
        c->tensors[i] = NULL;
    for (int i = 0; i < g->n_nodes; i++)
        c->nodes[i] = NULL;
    carver k = { NULL, 0 };
    carve_records(&k, g, c);
    if (!(k.at = c->block = pg_obj_malloc(k.used ? k.used : 1)))
        goto oom;
    c->block_end = c->block + k.used;
    k.used = 0;
    carve_records(&k, g, c);
    for (int i = 0; i < g->n_tensors; i++) {
        const pg_tensor *t = g->tensors[i];
        pg_tensor *d = c->tensors[i];
        if (!t)
            continue;
        int keep = borrowed && t->data_borrowed && t->data &&
                   (borrowed == 1 || (uintptr_t)t->data % PG_ALIGN == 0);
        d->data = keep ? t->data : dup_bytes(t->data, t->nbytes);
        d->data_borrowed = keep ? borrowed : 0;
        if (t->data && !d->data)
            goto oom;
        if (t->known) {
            size_t kb = t->known_bytes ? t->known_bytes
                                       : (size_t)pg_tensor_numel(t) * pg_dtype_size(t->dtype);
            d->known = dup_bytes(t->known, kb);
            d->known_bytes = kb;
            if (!d->known)
                goto oom;
        }
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const pg_node *n = g->nodes[i];
        pg_node *d = c->nodes[i];
        if (!n || !n->n_attrs)
            continue;
        d->attrs = pg_obj_calloc((size_t)n->n_attrs, sizeof(pg_attr));
        if (!d->attrs)
            goto oom;
        d->n_attrs = n->n_attrs;
        for (int j = 0; j < n->n_attrs; j++) {
            const pg_attr *a = &n->attrs[j];
            pg_attr *b = &d->attrs[j];
            *b = *a;
            b->name = pg_strdup(a->name);
            b->ints = dup_obj(a->ints, sizeof(int64_t) * (size_t)a->n);
            b->floats = dup_obj(a->floats, sizeof(float) * (size_t)a->n);
            b->s = pg_strdup(a->s);
            if (!b->name || (a->ints && !b->ints) || (a->floats && !b->floats) || (a->s && !b->s))
                goto oom;
        }
    }
    /* the name tables slot for slot, over the copy's strings */
    if (pg_namemap_copy(&c->tensor_names, &g->tensor_names, tensor_name_of, c) ||
        pg_namemap_copy(&c->node_names, &g->node_names, node_name_of, c))
        goto oom;
    c->n_inputs = g->n_inputs;
    c->n_outputs = g->n_outputs;
    for (int i = 0; i < g->n_inputs; i++)
        c->inputs[i] = g->inputs[i];
    for (int i = 0; i < g->n_outputs; i++) {
        c->outputs[i] = g->outputs[i];
        c->output_names[i] = pg_strdup(g->output_names[i]);
        if (!c->output_names[i])
            goto oom;
    }
    return c;
oom:
    pg_ir_free(c);
    pg_fail(PG_ERR_NOMEM, "out of memory copying a graph");
    return NULL;
}

pg_graph *pg_ir_clone(const pg_graph *g) { return clone(g, 0); }

pg_graph *pg_ir_clone_lent(const pg_graph *g) { return clone(g, PG_DATA_LENT); }

pg_graph *pg_ir_clone_views(const pg_graph *g) { return clone(g, 1); }

/* ---- tensors ------------------------------------------------------------- */

int pg_ir_find_tensor(const pg_graph *g, const char *name)
{
    return pg_namemap_get(&g->tensor_names, name);
}

static int node_name_used(const pg_graph *g, const char *name)
{
    return pg_namemap_get(&g->node_names, name) >= 0;
}

/* ---- reader lists -------------------------------------------------------- */

/* One more reader slot of t by node (kept ascending). */
static int users_add(const pg_graph *g, pg_tensor *t, int node)
{
    if (t->n_users >= t->cap_users && in_block(g, t->users)) {
        int *u = dup_obj(t->users, sizeof(int) * (size_t)t->n_users);   /* out of the block */
        if (!u)
            return -1;
        t->users = u;
    }
    if (grow((void **)&t->users, &t->cap_users, t->n_users + 1, sizeof(int)))
        return -1;
    int i = t->n_users;
    while (i > 0 && t->users[i - 1] > node) {
        t->users[i] = t->users[i - 1];
        i--;
    }
    t->users[i] = node;
    t->n_users++;
    return 0;
}

/* One reader slot of t by node fewer. */
static void users_del(pg_tensor *t, int node)
{
    for (int i = t->n_users - 1; i >= 0; i--)
        if (t->users[i] == node) {
            memmove(t->users + i, t->users + i + 1, sizeof(int) * (size_t)(t->n_users - i - 1));
            t->n_users--;
            return;
        }
}

/* prefix, cut to leave room for suffix, then suffix (copied by hand: a
 * compile makes ~130 names, and snprintf's "%s" / "%.*s%s" for each was
 * ~2% of it) */
static void join_name(char *buf, size_t cap, const char *prefix, const char *suffix, size_t sl)
{
    size_t room = cap - 1 > sl ? cap - 1 - sl : 0, pl = strnlen(prefix, room);
    memcpy(buf, prefix, pl);
    if (sl > cap - 1 - pl)
        sl = cap - 1 - pl;
    memcpy(buf + pl, suffix, sl);
    buf[pl + sl] = 0;
}

const char *pg_ir_unique_name(pg_graph *g, const char *prefix, char *buf, size_t cap)
{
    if (!cap)
        return buf;
    join_name(buf, cap, prefix, "", 0);
    while (pg_ir_find_tensor(g, buf) >= 0 || node_name_used(g, buf)) {
        /* the prefix gives way to the suffix: cut at cap, "prefix_N" of a
         * long prefix would be the taken name again, for ever */
        char suffix[24];
        int sl = snprintf(suffix, sizeof suffix, "_%d", ++g->name_seq);
        join_name(buf, cap, prefix, suffix, (size_t)sl);
    }
    return buf;
}

void pg_ir_set_shape(pg_tensor *t, int rank, const int64_t *shape)
{
    t->rank = rank;
    if (rank < 0)
        return;
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        t->shape[i] = shape[i];
        t->strides[i] = s;
        /* a count past int64 saturates: pg_tensor_numel says -1 for it and
         * shape inference refuses the tensor by name before a stride is used */
        if (__builtin_mul_overflow(s, shape[i] > 0 ? shape[i] : 1, &s))
            s = INT64_MAX;
    }
}

int64_t pg_tensor_numel(const pg_tensor *t)
{
    if (t->rank < 0)
        return -1;
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) {
        /* -1 also when the count overflows: shape inference refuses such
         * tensors by name (shape_infer.c, check_size) */
        if (t->shape[i] < 0 || __builtin_mul_overflow(n, t->shape[i], &n))
            return -1;
    }
    return n;
}

int64_t pg_matmul_rows(const pg_tensor *a, const pg_tensor *w)
{
    int64_t n = pg_tensor_numel(a);
    if (n < 0 || w->rank != 2 || w->shape[0] <= 0)
        return -1;
    return n / w->shape[0];
}

int pg_tensor_shape_known(const pg_tensor *t) { return pg_tensor_numel(t) >= 0; }

int pg_ir_add_tensor(pg_graph *g, const char *name, pg_dtype dt, int rank, const int64_t *shape)
{
    char buf[64];
    if (rank > PG_MAX_RANK)
        return pg_fail(PG_ERR_SHAPE, "tensor '%s': rank %d is above the maximum %d",
                       name ? name : "?", rank, PG_MAX_RANK), -1;
    if (name && !*name)
        return pg_fail(PG_ERR_INVALID_ARG, "a tensor needs a non-empty name"), -1;
    if (name && pg_ir_find_tensor(g, name) >= 0)
        return pg_fail(PG_ERR_GRAPH, "tensor '%s' is defined twice", name), -1;
    if (!name)
        name = pg_ir_unique_name(g, "t", buf, sizeof buf);
    if (grow((void **)&g->tensors, &g->cap_tensors, g->n_tensors + 1, sizeof(pg_tensor *)))
        return pg_fail(PG_ERR_NOMEM, "out of memory adding tensor '%s'", name), -1;
    pg_tensor *t = pg_obj_calloc(1, sizeof *t);
    if (!t || !(t->name = pg_strdup(name))) {
        pg_free(t);
        return pg_fail(PG_ERR_NOMEM, "out of memory adding tensor '%s'", name), -1;
    }
    t->id = g->n_tensors;
    if (pg_namemap_put(&g->tensor_names, t->name, t->id, &t->name_tag)) {
        free_tensor(g, t);
        return pg_fail(PG_ERR_NOMEM, "out of memory adding tensor '%s'", name), -1;
    }
    t->dtype = dt;
    t->producer = -1;
    t->rank = -1;
    if (rank >= 0 && shape)
        pg_ir_set_shape(t, rank, shape);
    else if (rank == 0)
        t->rank = 0;
    g->tensors[g->n_tensors++] = t;
    return t->id;
}

/* pg_ir_add_const (borrow 0: a copy of data) and pg_ir_add_const_view
 * (borrow 1: data itself, data_borrowed). */
static int add_const(pg_graph *g, const char *name, pg_dtype dt, int rank, const int64_t *shape,
                     const void *data, int borrow)
{
    size_t es = pg_dtype_size(dt);
    if (!pg_dtype_public(dt))
        return pg_fail(PG_ERR_DTYPE, "constant '%s': unsupported dtype %d", name ? name : "?", (int)dt), -1;
    for (int i = 0; i < rank; i++)
        if (shape[i] < 0)
            return pg_fail(PG_ERR_SHAPE, "constant '%s': dim %d is %lld", name ? name : "?", i,
                           (long long)shape[i]), -1;
    uint64_t bytes;
    if (pg_shape_bytes(rank, shape, es, &bytes) || bytes > pg_memory_limit())
        return pg_fail(PG_ERR_SHAPE, "constant '%s': its shape takes more bytes than the memory "
                       "limit of %llu", name ? name : "?", (unsigned long long)pg_memory_limit()), -1;
    int id = pg_ir_add_tensor(g, name, dt, rank, shape);
    if (id < 0)
        return -1;
    pg_tensor *t = g->tensors[id];
    t->rank = rank;
    size_t nb = (size_t)bytes;
    if (borrow && nb) {
        t->data = (void *)data;
        t->data_borrowed = 1;
    } else {
        t->data = pg_calloc(1, nb ? nb : 1);
    }
    if (!t->data) {
        g->tensors[id] = NULL;
        g->n_tensors--;
        pg_namemap_del(&g->tensor_names, t->name, t->name_tag, id);
        free_tensor(g, t);
        return pg_fail(PG_ERR_NOMEM, "out of memory for constant '%s' (%zu bytes)", name ? name : "?", nb), -1;
    }
    if (data && nb && !t->data_borrowed)
        memcpy(t->data, data, nb);
    t->nbytes = nb;
    t->is_const = 1;
    return id;
}

int pg_ir_add_const(pg_graph *g, const char *name, pg_dtype dt, int rank,
                    const int64_t *shape, const void *data)
{
    return add_const(g, name, dt, rank, shape, data, 0);
}

int pg_ir_add_const_view(pg_graph *g, const char *name, pg_dtype dt, int rank,
                         const int64_t *shape, const void *data)
{
    return add_const(g, name, dt, rank, shape, data, 1);
}

void pg_ir_set_const_data(pg_tensor *t, void *data, size_t nbytes)
{
    if (t->data != data) {
        if (!t->data_borrowed)
            pg_free(t->data);
        t->data_borrowed = 0;   /* the new buffer is the tensor's own */
    }
    t->data = data;
    t->nbytes = nbytes;
    t->is_const = 1;
    t->origin = 0;
}

void pg_ir_set_const_view(pg_tensor *t, const void *data, size_t nbytes, uint64_t origin)
{
    if (t->data != data && !t->data_borrowed)
        pg_free(t->data);
    t->data = (void *)data;
    t->data_borrowed = 1;
    t->nbytes = nbytes;
    t->is_const = 1;
    t->origin = origin;
}

int pg_ir_is_output(const pg_graph *g, int t)
{
    return t >= 0 && t < g->n_tensors && g->tensors[t] && g->tensors[t]->n_output_refs > 0;
}

pg_status pg_ir_add_graph_output(pg_graph *g, int t, const char *name)
{
    if (grow((void **)&g->outputs, &g->cap_outputs, g->n_outputs + 1, sizeof(int)))
        return pg_fail(PG_ERR_NOMEM, "out of memory");
    /* output_names grows with outputs */
    char **q = pg_obj_realloc(g->output_names, sizeof(char *) * (size_t)g->cap_outputs);
    if (!q)
        return pg_fail(PG_ERR_NOMEM, "out of memory");
    g->output_names = q;
    if (!(g->output_names[g->n_outputs] = pg_strdup(name)))
        return pg_fail(PG_ERR_NOMEM, "out of memory");
    g->outputs[g->n_outputs++] = t;
    g->tensors[t]->n_output_refs++;
    return PG_OK;
}

/* A Constant node's value is a tensor attribute: a reference too. */
static int attr_refers(const pg_graph *g, int t)
{
    PG_IR_FOR_NODES(g, n)
        for (int i = 0; i < n->n_attrs; i++)
            if (n->attrs[i].type == PG_ATTR_TENSOR && n->attrs[i].tensor == t)
                return 1;
    return 0;
}

pg_status pg_ir_remove_tensor(pg_graph *g, int t)
{
    if (t < 0 || t >= g->n_tensors || !g->tensors[t])
        return pg_fail(PG_ERR_INVALID_ARG, "no tensor %d", t);
    pg_tensor *tt = g->tensors[t];
    if (tt->n_users)
        return pg_fail(PG_ERR_GRAPH, "tensor '%s' is still used by node '%s'", tt->name,
                       g->nodes[tt->users[0]]->name);
    if (pg_ir_producer(g, t) >= 0)
        return pg_fail(PG_ERR_GRAPH, "tensor '%s' is still produced by node '%s'", tt->name,
                       g->nodes[tt->producer]->name);
    if (tt->n_output_refs || tt->is_input)
        return pg_fail(PG_ERR_GRAPH, "tensor '%s' is a graph input or output", tt->name);
    if (tt->is_const && attr_refers(g, t))
        return pg_fail(PG_ERR_GRAPH, "tensor '%s' is a node attribute's value", tt->name);
    pg_namemap_del(&g->tensor_names, tt->name, tt->name_tag, t);
    free_tensor(g, tt);
    g->tensors[t] = NULL;
    return PG_OK;
}

int pg_ir_remove_unread_consts(pg_graph *g)
{
    char *held = pg_obj_calloc((size_t)g->n_tensors + 1, 1);   /* an attribute's value */
    if (!held)
        return 0;   /* nothing removed: only memory is lost */
    PG_IR_FOR_NODES(g, n)
        for (int i = 0; i < n->n_attrs; i++)
            if (n->attrs[i].type == PG_ATTR_TENSOR && n->attrs[i].tensor >= 0 &&
                n->attrs[i].tensor < g->n_tensors)
                held[n->attrs[i].tensor] = 1;
    int removed = 0;
    PG_IR_FOR_TENSORS(g, t) {
        if (t->n_users || held[t->id] || !t->is_const || t->is_input || t->n_output_refs ||
            t->producer >= 0)
            continue;
        pg_namemap_del(&g->tensor_names, t->name, t->name_tag, t->id);
        g->tensors[t->id] = NULL;
        free_tensor(g, t);
        removed++;
    }
    pg_free(held);
    return removed;
}

/* ---- nodes --------------------------------------------------------------- */

/* No output of n is read or a graph output. */
static int node_unused(const pg_graph *g, const pg_node *n)
{
    for (int o = 0; o < n->n_outputs; o++) {
        const pg_tensor *t = g->tensors[n->outputs[o]];
        if (t && (t->n_users || t->n_output_refs))
            return 0;
    }
    return 1;
}

int pg_ir_add_node(pg_graph *g, const char *op_type, const char *name,
                   const int *inputs, int n_inputs, const int *outputs, int n_outputs)
{
    char buf[96];
    if (!op_type || !*op_type)
        return pg_fail(PG_ERR_INVALID_ARG, "a node needs an op type"), -1;
    if (n_inputs < 0 || n_outputs < 1 || (n_inputs && !inputs) || !outputs)
        return pg_fail(PG_ERR_INVALID_ARG, "node '%s' (%s): needs at least one output",
                       name ? name : "?", op_type), -1;
    if (!name || !*name) {
        char pre[64];
        snprintf(pre, sizeof pre, "%s_%d", op_type, g->n_nodes);
        name = pg_ir_unique_name(g, pre, buf, sizeof buf);
    }
    for (int i = 0; i < n_inputs; i++)
        if (inputs[i] < -1 || inputs[i] >= g->n_tensors || (inputs[i] >= 0 && !g->tensors[inputs[i]]))
            return pg_fail(PG_ERR_GRAPH, "node '%s' (%s): input %d is not a tensor", name, op_type, i), -1;
    for (int i = 0; i < n_outputs; i++) {
        int t = outputs[i];
        if (t < 0 || t >= g->n_tensors || !g->tensors[t])
            return pg_fail(PG_ERR_GRAPH, "node '%s' (%s): output %d is not a tensor", name, op_type, i), -1;
        pg_tensor *tt = g->tensors[t];
        if (tt->producer >= 0 && g->nodes[tt->producer])
            return pg_fail(PG_ERR_GRAPH, "node '%s' (%s): tensor '%s' is already produced by node '%s'",
                           name, op_type, tt->name, g->nodes[tt->producer]->name), -1;
        if (tt->is_const || tt->is_input)
            return pg_fail(PG_ERR_GRAPH, "node '%s' (%s): output '%s' is a graph input or constant",
                           name, op_type, tt->name), -1;
        for (int j = 0; j < i; j++)
            if (outputs[j] == t)
                return pg_fail(PG_ERR_GRAPH, "node '%s' (%s): output '%s' listed twice",
                               name, op_type, tt->name), -1;
    }
    if (grow((void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof(pg_node *)))
        return pg_fail(PG_ERR_NOMEM, "out of memory adding node '%s'", name), -1;
    pg_node *n = pg_obj_calloc(1, sizeof *n);
    if (!n)
        return pg_fail(PG_ERR_NOMEM, "out of memory adding node '%s'", name), -1;
    n->name = pg_strdup(name);
    n->op_type = pg_strdup(op_type);
    n->inputs = pg_obj_malloc(sizeof(int) * (size_t)(n_inputs ? n_inputs : 1));
    n->outputs = pg_obj_malloc(sizeof(int) * (size_t)n_outputs);
    if (!n->name || !n->op_type || !n->inputs || !n->outputs) {
        free_node(g, n);
        return pg_fail(PG_ERR_NOMEM, "out of memory adding node '%s'", name), -1;
    }
    if (n_inputs)
        memcpy(n->inputs, inputs, sizeof(int) * (size_t)n_inputs);
    memcpy(n->outputs, outputs, sizeof(int) * (size_t)n_outputs);
    n->n_inputs = n_inputs;
    n->n_outputs = n_outputs;
    n->op = pg_ir_op_from_name(op_type);
    n->id = g->n_nodes;
    if (pg_namemap_put(&g->node_names, n->name, n->id, &n->name_tag)) {
        free_node(g, n);
        return pg_fail(PG_ERR_NOMEM, "out of memory adding node '%s'", name), -1;
    }
    for (int i = 0; i < n_inputs; i++)
        if (inputs[i] >= 0 && users_add(g, g->tensors[inputs[i]], n->id)) {
            for (int j = 0; j < i; j++)
                if (inputs[j] >= 0)
                    users_del(g->tensors[inputs[j]], n->id);
            pg_namemap_del(&g->node_names, n->name, n->name_tag, n->id);
            free_node(g, n);
            return pg_fail(PG_ERR_NOMEM, "out of memory adding node '%s'", name), -1;
        }
    g->nodes[g->n_nodes++] = n;
    for (int i = 0; i < n_outputs; i++)
        g->tensors[outputs[i]]->producer = n->id;
    g->topo_gen++;
    return n->id;
}

void pg_ir_remove_node(pg_graph *g, int node)
{
    if (node < 0 || node >= g->n_nodes || !g->nodes[node])
        return;
    pg_node *n = g->nodes[node];
    for (int i = 0; i < n->n_outputs; i++) {
        pg_tensor *t = g->tensors[n->outputs[i]];
        if (t && t->producer == node)
            t->producer = -1;
    }
    for (int i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] >= 0 && g->tensors[n->inputs[i]])
            users_del(g->tensors[n->inputs[i]], node);
    pg_namemap_del(&g->node_names, n->name, n->name_tag, node);
    free_node(g, n);
    g->nodes[node] = NULL;
    g->topo_gen++;
}

pg_status pg_ir_rewire(pg_graph *g, int from, int to)
{
    if (from == to || from < 0 || from >= g->n_tensors || !g->tensors[from])
        return PG_OK;
    pg_tensor *f = g->tensors[from];
    /* each reader slot moves over; the last reader first keeps it cheap */
    while (f->n_users) {
        int node = f->users[f->n_users - 1];
        pg_node *n = g->nodes[node];
        for (int i = n->n_inputs - 1; i >= 0; i--)
            if (n->inputs[i] == from) {
                pg_status st = pg_ir_set_input(g, node, i, to);
                if (st)
                    return st;
                break;
            }
    }
    if (f->n_output_refs)
        for (int i = 0; i < g->n_outputs; i++)
            if (g->outputs[i] == from) {
                g->outputs[i] = to;
                f->n_output_refs--;
                if (to >= 0 && g->tensors[to])
                    g->tensors[to]->n_output_refs++;
            }
    return PG_OK;
}

pg_status pg_ir_set_input(pg_graph *g, int node, int slot, int tensor)
{
    if (node < 0 || node >= g->n_nodes || !g->nodes[node] || slot < 0 || slot >= g->nodes[node]->n_inputs)
        return pg_fail(PG_ERR_INVALID_ARG, "no input slot %d of node %d", slot, node);
    if (tensor < -1 || tensor >= g->n_tensors || (tensor >= 0 && !g->tensors[tensor]))
        return pg_fail(PG_ERR_INVALID_ARG, "no tensor %d", tensor);
    pg_node *n = g->nodes[node];
    int old = n->inputs[slot];
    if (old == tensor)
        return PG_OK;
    if (tensor >= 0 && users_add(g, g->tensors[tensor], node))
        return pg_fail(PG_ERR_NOMEM, "out of memory rewiring node '%s'", n->name);
    if (old >= 0 && g->tensors[old])
        users_del(g->tensors[old], node);
    n->inputs[slot] = tensor;
    g->topo_gen++;
    return PG_OK;
}

int pg_ir_producer(const pg_graph *g, int t)
{
    if (t < 0 || t >= g->n_tensors || !g->tensors[t])
        return -1;
    int p = g->tensors[t]->producer;
    return (p >= 0 && p < g->n_nodes && g->nodes[p]) ? p : -1;
}

int pg_ir_consumers(const pg_graph *g, int t, int *out, int cap)
{
    if (t < 0 || t >= g->n_tensors || !g->tensors[t])
        return 0;
    const pg_tensor *tt = g->tensors[t];
    int count = 0;
    for (int i = 0; i < tt->n_users; i++) {
        if (i && tt->users[i] == tt->users[i - 1])
            continue;   /* a node reading t twice counts once */
        if (count < cap && out)
            out[count] = tt->users[i];
        count++;
    }
    return count;
}

/* A binary min-heap of node ids. */
typedef struct id_heap { int *a; int n; } id_heap;

static void heap_push(id_heap *h, int v)
{
    int i = h->n++;
    while (i > 0 && h->a[(i - 1) / 2] > v) {
        h->a[i] = h->a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->a[i] = v;
}

static int heap_pop(id_heap *h)
{
    int top = h->a[0], v = h->a[--h->n], i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->a[c + 1] < h->a[c])
            c++;
        if (h->a[c] >= v)
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (h->n)
        h->a[i] = v;
    return top;
}

pg_status pg_ir_topo_order(const pg_graph *g, int *order, int *n_out)
{
    /* Kahn's algorithm in "sweeps": ready nodes are placed in ascending id
     * order; a node made ready by one with a smaller id joins the current
     * sweep, one made ready by a larger id waits for the next (the order
     * repeated id-order scans would give: stable, following insertion order
     * where it can).  Two heaps make it O((V + E) log V). */
    if (g->topo_keep && g->topo_kept && g->topo_kept_gen == g->topo_gen) {
        memcpy(order, g->topo_kept, sizeof(int) * (size_t)g->topo_kept_n);
        *n_out = g->topo_kept_n;
        return PG_OK;
    }
    int nn = g->n_nodes, count = 0, live = 0;
    size_t cap = (size_t)(nn ? nn : 1);
    int *pending = pg_obj_calloc(cap, sizeof(int));
    id_heap cur = { pg_obj_malloc(cap * sizeof(int)), 0 }, next = { pg_obj_malloc(cap * sizeof(int)), 0 };
    char *placed = pg_obj_calloc(cap, 1);
    pg_status st = PG_OK;
    if (!pending || !cur.a || !next.a || !placed) {
        st = pg_fail(PG_ERR_NOMEM, "out of memory ordering the graph");
        goto done;
    }
    /* pending[i] = input slots of node i produced by a live node not yet placed */
    PG_IR_FOR_NODES(g, n) {
        live++;
        for (int i = 0; i < n->n_inputs; i++)
            if (pg_ir_producer(g, n->inputs[i]) >= 0)
                pending[n->id]++;
        if (!pending[n->id])
            heap_push(&cur, n->id);
    }
    while (cur.n) {
        int id = heap_pop(&cur);
        const pg_node *n = g->nodes[id];
        placed[id] = 1;
        order[count++] = id;
        for (int o = 0; o < n->n_outputs; o++) {
            const pg_tensor *t = g->tensors[n->outputs[o]];
            for (int u = 0; u < t->n_users; u++)
                if (--pending[t->users[u]] == 0)
                    heap_push(t->users[u] > id ? &cur : &next, t->users[u]);
        }
        if (!cur.n) {
            id_heap tmp = cur;
            cur = next;
            next = tmp;
        }
    }
    if (count < live) {
        const pg_node *bad = NULL;
        PG_IR_FOR_NODES(g, n)
            if (!placed[n->id] && !bad)
                bad = n;
        st = pg_fail(PG_ERR_GRAPH, "the graph has a cycle through node '%s' (%s)",
                     bad->name, bad->op_type);
    }
    if (st == PG_OK && g->topo_keep) {
        /* kept for the next call while the wiring stays as it is (the
         * graph's owner set topo_keep: no other thread reads it) */
        pg_graph *w = (pg_graph *)g;
        int *k = pg_obj_realloc(w->topo_kept, sizeof(int) * cap);
        if (k) {
            memcpy(k, order, sizeof(int) * (size_t)count);
            w->topo_kept = k;
            w->topo_kept_n = count;
            w->topo_kept_gen = g->topo_gen;
        }
    }
done:
    pg_free(placed);
    pg_free(cur.a);
    pg_free(next.a);
    pg_free(pending);
    *n_out = count;
    return st;
}

int pg_ir_remove_dead(pg_graph *g)
{
    /* a worklist of nodes none of whose outputs is read or a graph output:
     * removing one may leave its inputs' producers unread in turn */
    int removed = 0, nw = 0;
    int *work = pg_obj_malloc(sizeof(int) * (size_t)(g->n_nodes + 1));
    char *mark = pg_obj_calloc((size_t)(g->n_tensors + 1), 1);
    char *queued = pg_obj_calloc((size_t)(g->n_nodes + 1), 1);   /* each node joins once */
    if (!work || !mark || !queued) {
        pg_free(work);
        pg_free(mark);
        pg_free(queued);
        return 0;   /* nothing removed: only memory is lost */
    }
    PG_IR_FOR_NODES(g, n)
        if (node_unused(g, n)) {
            work[nw++] = n->id;
            queued[n->id] = 1;
        }
    while (nw) {
        int id = work[--nw];
        pg_node *n = g->nodes[id];
        if (!n || !node_unused(g, n))
            continue;
        int k = n->n_inputs, *ins = n->inputs;
        n->inputs = NULL;   /* kept for the loop below; remove_node drops the reader slots */
        n->n_inputs = 0;
        for (int i = 0; i < k; i++)
            if (ins[i] >= 0 && g->tensors[ins[i]])
                users_del(g->tensors[ins[i]], id);
        pg_ir_remove_node(g, id);
        removed++;
        for (int i = 0; i < k; i++) {
            int p = ins[i] >= 0 ? pg_ir_producer(g, ins[i]) : -1;
            if (p >= 0 && !queued[p] && node_unused(g, g->nodes[p])) {
                work[nw++] = p;
                queued[p] = 1;
            }
        }
        release(g, ins);
    }
    /* tensors nothing references: not an input or output, no reader, no
     * live producer, no Constant attribute holding it */
    PG_IR_FOR_NODES(g, n)
        for (int i = 0; i < n->n_attrs; i++)
            if (n->attrs[i].type == PG_ATTR_TENSOR && n->attrs[i].tensor >= 0 &&
                n->attrs[i].tensor < g->n_tensors)
                mark[n->attrs[i].tensor] = 1;
    PG_IR_FOR_TENSORS(g, t)
        if (!t->is_input && !t->n_output_refs && !t->n_users && !mark[t->id] &&
            pg_ir_producer(g, t->id) < 0) {
            int id = t->id;   /* read before free_tensor frees t */
            pg_namemap_del(&g->tensor_names, t->name, t->name_tag, id);
            free_tensor(g, t);
            g->tensors[id] = NULL;
        }
    pg_free(work);
    pg_free(mark);
    pg_free(queued);
    return removed;
}

/* ---- attributes ---------------------------------------------------------- */

static pg_attr *attr_slot(pg_node *n, const char *name)
{
    for (int i = 0; i < n->n_attrs; i++)
        if (!strcmp(n->attrs[i].name, name)) {
            free_attr(&n->attrs[i]);
            memset(&n->attrs[i], 0, sizeof n->attrs[i]);
            n->attrs[i].name = pg_strdup(name);
            return n->attrs[i].name ? &n->attrs[i] : NULL;
        }
    pg_attr *na = pg_obj_realloc(n->attrs, sizeof(pg_attr) * (size_t)(n->n_attrs + 1));
    if (!na)
        return NULL;
    n->attrs = na;
    pg_attr *a = &n->attrs[n->n_attrs];
    memset(a, 0, sizeof *a);
    a->name = pg_strdup(name);
    if (!a->name)
        return NULL;
    n->n_attrs++;
    return a;
}

#define ATTR_OOM() pg_fail(PG_ERR_NOMEM, "out of memory setting attribute '%s' of node '%s'", name, n->name)

pg_status pg_ir_set_attr_int(pg_node *n, const char *name, int64_t v)
{
    pg_attr *a = attr_slot(n, name);
    if (!a) return ATTR_OOM();
    a->type = PG_ATTR_INT;
    a->i = v;
    return PG_OK;
}

pg_status pg_ir_set_attr_float(pg_node *n, const char *name, float v)
{
    pg_attr *a = attr_slot(n, name);
    if (!a) return ATTR_OOM();
    a->type = PG_ATTR_FLOAT;
    a->f = v;
    return PG_OK;
}

pg_status pg_ir_set_attr_ints(pg_node *n, const char *name, const int64_t *v, int count)
{
    pg_attr *a = attr_slot(n, name);
    if (!a) return ATTR_OOM();
    a->type = PG_ATTR_INTS;
    a->ints = pg_obj_malloc(sizeof(int64_t) * (size_t)(count > 0 ? count : 1));
    if (!a->ints) return ATTR_OOM();
    if (count > 0)
        memcpy(a->ints, v, sizeof(int64_t) * (size_t)count);
    a->n = count > 0 ? count : 0;
    return PG_OK;
}

pg_status pg_ir_set_attr_floats(pg_node *n, const char *name, const float *v, int count)
{
    pg_attr *a = attr_slot(n, name);
    if (!a) return ATTR_OOM();
    a->type = PG_ATTR_FLOATS;
    a->floats = pg_obj_malloc(sizeof(float) * (size_t)(count > 0 ? count : 1));
    if (!a->floats) return ATTR_OOM();
    if (count > 0)
        memcpy(a->floats, v, sizeof(float) * (size_t)count);
    a->n = count > 0 ? count : 0;
    return PG_OK;
}

pg_status pg_ir_set_attr_string(pg_node *n, const char *name, const char *v)
{
    pg_attr *a = attr_slot(n, name);
    if (!a) return ATTR_OOM();
    a->type = PG_ATTR_STRING;
    a->s = pg_strdup(v ? v : "");
    return a->s ? PG_OK : ATTR_OOM();
}

pg_status pg_ir_set_attr_tensor(pg_node *n, const char *name, int tensor)
{
    pg_attr *a = attr_slot(n, name);
    if (!a) return ATTR_OOM();
    a->type = PG_ATTR_TENSOR;
    a->tensor = tensor;
    return PG_OK;
}

const pg_attr *pg_ir_attr(const pg_node *n, const char *name)
{
    for (int i = 0; i < n->n_attrs; i++)
        if (!strcmp(n->attrs[i].name, name))
            return &n->attrs[i];
    return NULL;
}

int64_t pg_ir_attr_int(const pg_node *n, const char *name, int64_t dflt)
{
    const pg_attr *a = pg_ir_attr(n, name);
    if (!a) return dflt;
    if (a->type == PG_ATTR_INT) return a->i;
    /* a float stands in for an int only where it converts: NaN, Inf and
     * values past int64 would be undefined behaviour, so they saturate
     * (and the op's range check then names the attribute) */
    if (a->type == PG_ATTR_FLOAT) {
        if (a->f != a->f) return dflt;
        if (a->f >= 9.2233720368547758e18f) return INT64_MAX;
        if (a->f <= -9.2233720368547758e18f) return INT64_MIN;
        return (int64_t)a->f;
    }
    return dflt;
}

float pg_ir_attr_float(const pg_node *n, const char *name, float dflt)
{
    const pg_attr *a = pg_ir_attr(n, name);
    if (!a) return dflt;
    if (a->type == PG_ATTR_FLOAT) return a->f;
    if (a->type == PG_ATTR_INT) return (float)a->i;
    return dflt;
}

const char *pg_ir_attr_string(const pg_node *n, const char *name, const char *dflt)
{
    const pg_attr *a = pg_ir_attr(n, name);
    return (a && a->type == PG_ATTR_STRING) ? a->s : dflt;
}

const int64_t *pg_ir_attr_ints(const pg_node *n, const char *name, int *count)
{
    const pg_attr *a = pg_ir_attr(n, name);
    if (!a || a->type != PG_ATTR_INTS) {
        *count = 0;
        return NULL;
    }
    *count = a->n;
    return a->ints;
}

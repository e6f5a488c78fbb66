/* pass_cse.c - common subexpression elimination.
 *
 * Two nodes with the same op, the same inputs and the same attributes
 * compute the same thing (every op here is deterministic): the later one's
 * readers are rewired to the earlier one's outputs and it is removed.
 * Small constants (up to SMALL_CONST elements) with equal dtype, shape and
 * bytes are merged first, so that e.g. two Div nodes by two separate 8.0
 * scalars count as equal.  Nodes are visited in execution order, so once a
 * pair merges, the nodes reading them can merge in the same sweep. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pass.h"

#define SMALL_CONST 64

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
    while (s && *s)
        h = mix(h, (unsigned char)*s++);
    return h;
}

static int same_attr(const pg_attr *a, const pg_attr *b)
{
    if (strcmp(a->name, b->name) || a->type != b->type)
        return 0;
    switch (a->type) {
    case PG_ATTR_INT: return a->i == b->i;
    case PG_ATTR_FLOAT: return memcmp(&a->f, &b->f, sizeof a->f) == 0;
    case PG_ATTR_STRING: return !strcmp(a->s ? a->s : "", b->s ? b->s : "");
    case PG_ATTR_INTS:
        return a->n == b->n && (!a->n || !memcmp(a->ints, b->ints, sizeof(int64_t) * (size_t)a->n));
    case PG_ATTR_FLOATS:
        return a->n == b->n && (!a->n || !memcmp(a->floats, b->floats, sizeof(float) * (size_t)a->n));
    case PG_ATTR_TENSOR: return a->tensor == b->tensor;
    }
    return 0;
}

static int same_node(const pg_node *a, const pg_node *b)
{
    if (a->op != b->op || strcmp(a->op_type, b->op_type) || a->n_inputs != b->n_inputs ||
        a->n_outputs != b->n_outputs || a->n_attrs != b->n_attrs)
        return 0;
    for (int i = 0; i < a->n_inputs; i++)
        if (a->inputs[i] != b->inputs[i])
            return 0;
    /* attributes in any order */
    for (int i = 0; i < a->n_attrs; i++) {
        int found = 0;
        for (int j = 0; j < b->n_attrs && !found; j++)
            found = same_attr(&a->attrs[i], &b->attrs[j]);
        if (!found)
            return 0;
    }
    return 1;
}

static uint64_t hash_node(const pg_node *n)
{
    uint64_t h = hash_str(1469598103934665603ull, n->op_type);
    for (int i = 0; i < n->n_inputs; i++)
        h = mix(h, (uint64_t)(int64_t)n->inputs[i]);
    h = mix(h, (uint64_t)n->n_outputs);
    return h;
}

static int same_const(const pg_tensor *a, const pg_tensor *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank || a->nbytes != b->nbytes ||
        a->layout != b->layout)
        return 0;
    for (int d = 0; d < a->rank; d++)
        if (a->shape[d] != b->shape[d])
            return 0;
    return !memcmp(a->data, b->data, a->nbytes);
}

static uint64_t hash_const(const pg_tensor *t)
{
    uint64_t h = mix(1469598103934665603ull, (uint64_t)t->dtype);
    for (int d = 0; d < t->rank; d++)
        h = mix(h, (uint64_t)t->shape[d]);
    for (size_t i = 0; i < t->nbytes; i++)
        h = (h ^ ((const unsigned char *)t->data)[i]) * 1099511628211ull;
    return h;
}

/* Readers of each small constant read the first equal one instead (a
 * table keyed by content, so each constant costs one probe). */
static void merge_constants(pg_graph *g, pg_pass_ctx *c)
{
    size_t cap = 16;
    while (cap < (size_t)g->n_tensors * 2)
        cap <<= 1;
    int *table = malloc(sizeof(int) * cap);
    int *readers = malloc(sizeof(int) * (size_t)(g->n_nodes + 1));
    if (!table || !readers) {
        free(table);
        free(readers);
        return;   /* an optimisation missed, nothing wrong */
    }
    for (size_t i = 0; i < cap; i++)
        table[i] = -1;
    PG_IR_FOR_TENSORS(g, t) {
        int64_t ne = pg_tensor_numel(t);
        if (!t->is_const || !t->data || ne < 0 || ne > SMALL_CONST || t->is_input ||
            pg_ir_is_output(g, t->id))
            continue;
        size_t slot = (size_t)hash_const(t) & (cap - 1);
        int keep = -1;
        for (; table[slot] >= 0; slot = (slot + 1) & (cap - 1))
            if (same_const(g->tensors[table[slot]], t)) {
                keep = table[slot];
                break;
            }
        if (keep < 0) {
            table[slot] = t->id;
            continue;
        }
        int nr = pg_ir_consumers(g, t->id, readers, g->n_nodes + 1);
        for (int r = 0; r < nr; r++) {
            pg_node *n = g->nodes[readers[r]];
            for (int i = 0; i < n->n_inputs; i++)
                if (n->inputs[i] == t->id && pg_ir_set_input(g, n->id, i, keep) != PG_OK)
                    goto out;   /* out of memory: the reads not moved stay right */
            pg_pass_note(c, g, PG_PASS_REWRITTEN, n->id, 0,
                         "constant '%s' is equal to '%s': reads that one", t->name,
                         g->tensors[keep]->name);
        }
    }
out:
    free(table);
    free(readers);
}

static pg_status run_cse(pg_graph *g, pg_pass_ctx *c)
{
    merge_constants(g, c);
    int *order = malloc(sizeof(int) * (size_t)(g->n_nodes + 1)), count = 0;
    if (!order)
        return pg_fail(PG_ERR_NOMEM, "out of memory");
    pg_status st = pg_ir_topo_order(g, order, &count);
    if (st) {
        free(order);
        return st;
    }
    /* open-addressing table of kept node ids, keyed by hash */
    size_t cap = 16;
    while (cap < (size_t)count * 2)
        cap <<= 1;
    int *table = malloc(sizeof(int) * cap);
    if (!table) {
        free(order);
        return pg_fail(PG_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < cap; i++)
        table[i] = -1;
    for (int k = 0; k < count; k++) {
        pg_node *n = g->nodes[order[k]];
        if (!n)
            continue;
        size_t slot = (size_t)hash_node(n) & (cap - 1);
        pg_node *twin = NULL;
        while (table[slot] >= 0) {
            pg_node *m = g->nodes[table[slot]];
            if (m && same_node(m, n)) {
                twin = m;
                break;
            }
            slot = (slot + 1) & (cap - 1);
        }
        if (!twin) {
            table[slot] = n->id;
            continue;
        }
        /* Two graph outputs would then share one tensor: keep both nodes
         * (the run fills each output once). */
        int is_out = 0;
        for (int o = 0; o < n->n_outputs; o++)
            is_out |= pg_ir_is_output(g, n->outputs[o]);
        if (is_out)
            continue;
        for (int o = 0; o < n->n_outputs; o++)
            pg_ir_rewire(g, n->outputs[o], twin->outputs[o]);
        pg_pass_remove(c, g, n->id, "same op, inputs and attributes as '%s': its readers read that",
                       twin->name);
    }
    free(table);
    free(order);
    return PG_OK;
}

const pg_pass_def pg_pass_cse = {
    "cse", 1, "common subexpression elimination (and merging of equal small constants)",
    run_cse,
};

/* pass_fold.c - constant folding.
 *
 * A node whose every input is a constant is run once, now, by the
 * executor's own function for its op (so the folded value is exactly what
 * the run would compute), and its outputs become constants.  A node whose
 * outputs shape inference already knows (Shape of a statically shaped
 * tensor, and the Gather/Unsqueeze/Concat arithmetic on it that exported
 * transformer graphs feed to Reshape) is folded from those known values.
 * Nodes are visited in execution order, so a whole chain folds in one
 * sweep.  Not folded: fused ops (compile-time state), nodes whose outputs
 * are graph outputs (the run must produce them), and results over
 * FOLD_MAX_BYTES (folding would only move memory from the arena to the
 * weights). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../exec/ops.h"
#include "pass.h"

#define FOLD_MAX_BYTES ((size_t)64 << 20)

static int has_value(const pg_tensor *t)
{
    return t->is_const ? t->data != NULL : t->known != NULL;
}

static const void *value(const pg_tensor *t)
{
    return t->is_const ? t->data : t->known;
}

static size_t tensor_bytes(const pg_tensor *t)
{
    int64_t ne = pg_tensor_numel(t);
    return ne < 0 ? 0 : (size_t)ne * pg_dtype_size(t->dtype);
}

/* Fold one node; 1 if folded, 0 if it cannot be, -1 on error. */
static int fold_node(pg_graph *g, pg_pass_ctx *c, pg_node *n)
{
    pg_opcode op = n->op;
    if (op == PG_OP_FUSED_MATMUL || op == PG_OP_QKV_MATMUL || op == PG_OP_FUSED_ATTENTION ||
        op == PG_OP_UNKNOWN || n->n_inputs > 64 || n->n_outputs > 16)
        return 0;
    size_t total = 0;
    int all_known = 1;
    for (int o = 0; o < n->n_outputs; o++) {
        const pg_tensor *t = g->tensors[n->outputs[o]];
        if (pg_ir_is_output(g, t->id) || pg_tensor_numel(t) < 0 || !pg_dtype_size(t->dtype) ||
            t->rank < 0)
            return 0;
        total += tensor_bytes(t);
        all_known &= t->known != NULL;
    }
    if (total > FOLD_MAX_BYTES)
        return 0;
    const pg_tensor *in[64];
    const void *x[64];
    const pg_opdef *od = pg_opdef_of(op);
    int all_const = 1, desc_only = od && (od->flags & PG_OPF_DESC_ONLY);
    for (int i = 0; i < n->n_inputs; i++) {
        in[i] = n->inputs[i] >= 0 ? g->tensors[n->inputs[i]] : NULL;
        x[i] = NULL;
        if (!in[i])
            continue;
        if (desc_only)
            continue;   /* reads only the descriptor: known iff shapes are */
        if (!has_value(in[i]) || in[i]->layout != PG_LAYOUT_ROW_MAJOR)
            all_const = 0;
        else
            x[i] = value(in[i]);
    }
    if (desc_only)
        all_const = all_known;
    if (!all_const && !all_known)
        return 0;

    void *y[16] = { 0 };
    const pg_tensor *out[16];
    for (int o = 0; o < n->n_outputs; o++)
        out[o] = g->tensors[n->outputs[o]];
    if (all_known) {
        /* the known values' blocks (64-byte aligned, as constants' data)
         * become the data: a decode step's compile folds ~400 shape
         * computations, and an aligned copy of each was ~5% of it */
        for (int o = 0; o < n->n_outputs; o++) {
            pg_tensor *t = g->tensors[n->outputs[o]];
            y[o] = t->known;
            t->known = NULL;
            t->known_bytes = 0;
        }
    } else {
        for (int o = 0; o < n->n_outputs; o++)
            if (!(y[o] = pg_calloc(1, tensor_bytes(out[o]) + 1)))
                goto oom;
        const pg_opdef *d = pg_opdef_of(op);
        pg_binding bind;
        if (!d || (d->flags & PG_OPF_NO_FOLD) || pg_exec_bind(n, in, out, &bind)) {
            pg_clear_error();
            goto skip;
        }
        size_t sb = pg_exec_scratch_bytes(n, in, out, 1, &bind);
        void *scratch = sb ? pg_malloc(sb) : NULL;
        if (sb && !scratch)
            goto oom;
        pg_kctx k;
        memset(&k, 0, sizeof k);
        k.node = n;
        k.n_in = n->n_inputs;
        k.n_out = n->n_outputs;
        k.in = in;
        k.x = x;
        k.out = out;
        k.y = y;
        k.scratch = scratch;
        k.scratch_bytes = sb;
        k.state = (void *)pg_exec_node_state(g, n);   /* Constant/ConstantOfShape read their value here */
        k.bind = &bind;
        pg_status st = d->exec(&k);
        pg_free(scratch);
        if (st != PG_OK) {
            /* an op the executor refuses on these values is left to fail
             * (or not) at run time, as it would without folding */
            pg_clear_error();
            goto skip;
        }
    }
    const char *what = desc_only || !all_const ? "value known from shapes at compile time"
                                                       : "inputs are constants";
    int outs[16], n_out = n->n_outputs;
    memcpy(outs, n->outputs, sizeof(int) * (size_t)n_out);
    pg_pass_remove(c, g, n->id, "folded: %s", what);
    for (int o = 0; o < n_out; o++) {
        pg_tensor *t = g->tensors[outs[o]];
        pg_ir_set_const_data(t, y[o], tensor_bytes(t));
        t->layout = PG_LAYOUT_ROW_MAJOR;
    }
    return 1;
skip:
    for (int o = 0; o < n->n_outputs; o++)
        pg_free(y[o]);
    return 0;
oom:
    for (int o = 0; o < n->n_outputs; o++)
        pg_free(y[o]);
    pg_fail(PG_ERR_NOMEM, "out of memory folding node '%s'", n->name);
    return -1;
}

static pg_status run_fold(pg_graph *g, pg_pass_ctx *c)
{
    pg_status st = pg_pass_need_shapes(g, c);
    if (st)
        return st;
    int *order = malloc(sizeof(int) * (size_t)(g->n_nodes + 1)), count = 0;
    if (!order)
        return pg_fail(PG_ERR_NOMEM, "out of memory");
    if ((st = pg_ir_topo_order(g, order, &count))) {
        free(order);
        return st;
    }
    for (int i = 0; i < count; i++) {
        pg_node *n = g->nodes[order[i]];
        if (n && fold_node(g, c, n) < 0) {
            free(order);
            return pg_last_status();
        }
    }
    free(order);
    return PG_OK;
}

const pg_pass_def pg_pass_constant_folding = {
    "constant_folding", 1,
    "evaluate nodes whose inputs are constants (or whose values shape inference knows)",
    run_fold,
};

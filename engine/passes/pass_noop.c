/* pass_noop.c - removing nodes that do nothing.
 *
 *   Identity                          -> its input
 *   Cast to the dtype it already has  -> its input
 *   Reshape/Flatten/Squeeze/Unsqueeze whose output shape is its input's
 *                                     -> its input
 *   Reshape of a reshape-like node    -> one Reshape of the first input
 *                                        (to the static final shape)
 *   Transpose with the identity perm  -> its input
 *   Concat of one input               -> its input (the GPT-2 TorchScript
 *                                        export concatenates past_key_0
 *                                        alone: a copy of the whole past)
 *   Transpose of a Transpose          -> one Transpose with the composed
 *                                        perm, or nothing if that is the
 *                                        identity
 *
 * "-> its input" rewires every reader (graph outputs too: they keep their
 * public name) to the node's input and removes the node. */
#include <stdio.h>
#include <string.h>

#include "match.h"
#include "pass.h"

static int reshape_like(pg_opcode op)
{
    return op == PG_OP_RESHAPE || op == PG_OP_FLATTEN || op == PG_OP_SQUEEZE ||
           op == PG_OP_UNSQUEEZE;
}

/* perm of a Transpose (default: reversed dims); 0 if unknown. */
static int get_perm(const pg_graph *g, const pg_node *n, int64_t *perm)
{
    const pg_tensor *x = pm_tensor(g, n->inputs[0]);
    if (!x || x->rank < 0)
        return 0;
    int np = 0;
    const int64_t *p = pg_ir_attr_ints(n, "perm", &np);
    if (p && np != x->rank)
        return 0;
    for (int d = 0; d < x->rank; d++)
        perm[d] = p ? (p[d] < 0 ? p[d] + x->rank : p[d]) : x->rank - 1 - d;
    return 1;
}

static int is_identity_perm(const int64_t *perm, int rank)
{
    for (int d = 0; d < rank; d++)
        if (perm[d] != d)
            return 0;
    return 1;
}

/* Bypass node n: readers of its output read `src` instead. */
static void bypass(pg_graph *g, pg_pass_ctx *c, pg_node *n, int src, const char *why)
{
    int out = n->outputs[0];
    const char *sname = g->tensors[src]->name;
    char buf[160];
    snprintf(buf, sizeof buf, "%s", sname);
    int id = n->id;
    pg_ir_rewire(g, out, src);
    pg_pass_remove(c, g, id, "no-op: %s (readers now read '%s')", why, buf);
}

static pg_status run_noop(pg_graph *g, pg_pass_ctx *c)
{
    pg_status st = pg_pass_need_shapes(g, c);
    if (st)
        return st;
    for (int id = 0; id < g->n_nodes; id++) {
        pg_node *n = g->nodes[id];
        if (!n || n->n_inputs < 1 || n->n_outputs != 1 || n->inputs[0] < 0)
            continue;
        pg_tensor *x = g->tensors[n->inputs[0]], *y = g->tensors[n->outputs[0]];
        /* a graph output fed straight from a graph input would lose its
         * producer, and outputs must be produced by the run: keep those */
        if (pg_ir_is_output(g, y->id) && (x->is_input || x->is_const))
            continue;
        if (n->op == PG_OP_IDENTITY) {
            bypass(g, c, n, x->id, "Identity");
        } else if (n->op == PG_OP_CONCAT && n->n_inputs == 1) {
            if (x->dtype == y->dtype && pm_same_shape(x, y))
                bypass(g, c, n, x->id, "Concat of one input");
        } else if (n->op == PG_OP_CAST) {
            if (x->dtype == y->dtype && x->dtype != PG_DTYPE_UNDEFINED)
                bypass(g, c, n, x->id, "Cast to the same dtype");
        } else if (reshape_like(n->op)) {
            if (pm_same_shape(x, y)) {
                bypass(g, c, n, x->id, "reshape to the same shape");
                continue;
            }
            pg_node *inner = pm_producer(g, x->id, PG_OP_UNKNOWN);
            if (n->op != PG_OP_RESHAPE || !inner || !reshape_like(inner->op) ||
                inner->inputs[0] < 0 || !pg_tensor_shape_known(y))
                continue;
            int zero_dim = 0;
            for (int d = 0; d < y->rank; d++)
                zero_dim |= y->shape[d] == 0;
            if (zero_dim)
                continue;   /* 0 would mean "copy that dim" */
            /* Reshape(Reshape(a)) = Reshape(a) to the final shape, stated as
             * a constant (the old shape input may hold 0s or -1 that meant
             * something relative to the middle tensor). */
            int64_t sd = y->rank;
            char nm[96];
            pg_ir_unique_name(g, "shape", nm, sizeof nm);
            int s = pg_ir_add_const(g, nm, PG_DTYPE_INT64, 1, &sd, y->shape);
            if (s < 0)
                return pg_last_status();
            int src = inner->inputs[0];
            char iname[160];
            snprintf(iname, sizeof iname, "%s", inner->name);
            pg_ir_set_input(g, n->id, 0, src);
            if (n->n_inputs > 1)
                pg_ir_set_input(g, n->id, 1, s);
            pg_ir_set_attr_int(n, "allowzero", 0);
            pg_pass_note(c, g, PG_PASS_REWRITTEN, n->id, 0,
                         "reshape of reshape: now reads '%s' directly (skipping '%s')",
                         g->tensors[src]->name, iname);
            if (pm_uses(g, inner->outputs[0]) == 0)
                pg_pass_remove(c, g, inner->id, "no-op: its only reader was merged into '%s'",
                               n->name);
        } else if (n->op == PG_OP_TRANSPOSE) {
            int64_t p2[PG_MAX_RANK], p1[PG_MAX_RANK], pc[PG_MAX_RANK];
            if (!get_perm(g, n, p2))
                continue;
            if (is_identity_perm(p2, x->rank)) {
                bypass(g, c, n, x->id, "Transpose with the identity perm");
                continue;
            }
            pg_node *inner = pm_producer(g, x->id, PG_OP_TRANSPOSE);
            if (!inner || !get_perm(g, inner, p1))
                continue;
            for (int d = 0; d < x->rank; d++)
                pc[d] = p1[p2[d]];
            int src = inner->inputs[0];
            char iname[160];
            snprintf(iname, sizeof iname, "%s", inner->name);
            int inner_id = inner->id;
            if (is_identity_perm(pc, x->rank)) {
                if (pg_ir_is_output(g, y->id) &&
                    (g->tensors[src]->is_input || g->tensors[src]->is_const))
                    continue;
                bypass(g, c, n, src, "Transpose followed by its inverse");
            } else {
                pg_ir_set_input(g, n->id, 0, src);
                pg_ir_set_attr_ints(n, "perm", pc, x->rank);
                pg_pass_note(c, g, PG_PASS_REWRITTEN, n->id, 0,
                             "transpose of transpose: one Transpose with the composed perm "
                             "(skipping '%s')", iname);
            }
            if (g->nodes[inner_id] && pm_uses(g, g->nodes[inner_id]->outputs[0]) == 0)
                pg_pass_remove(c, g, inner_id, "no-op: cancelled by the Transpose that read it");
        }
    }
    return PG_OK;
}

const pg_pass_def pg_pass_noop_elimination = {
    "noop_elimination", 1,
    "remove Identity, same-dtype Cast, same-shape Reshape, Transpose pairs, one-input Concat; "
    "merge Reshape chains",
    run_noop,
};

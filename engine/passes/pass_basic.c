/* pass_basic.c - shape inference and dead-code elimination: the passes
 * with nothing to match. */
#include <stdlib.h>

#include "pass.h"

/* Shape and dtype of every tensor.  The compile infers them before the
 * passes, the driver again after every pass that changed the graph, and
 * passes that read shapes ask for it (pg_pass_need_shapes), so this entry
 * is the visible step: it infers only what a change left stale (a second
 * full run of a 1,000-node graph was ~6% of a decode step's recompile). */
static pg_status run_shape_inference(pg_graph *g, pg_pass_ctx *c)
{
    return pg_pass_need_shapes(g, c);
}

const pg_pass_def pg_pass_shape_inference = {
    "shape_inference", 1, "dtype and shape of every tensor (ONNX semantics)",
    run_shape_inference,
};

/* Removes nodes none of whose outputs is read or is a graph output, until
 * none is left (a dead node can make its producers dead). */
static pg_status run_dce(pg_graph *g, pg_pass_ctx *c)
{
    int *uses = calloc((size_t)(g->n_tensors + 1), sizeof(int));
    if (!uses)
        return pg_fail(PG_ERR_NOMEM, "out of memory");
    PG_IR_FOR_NODES(g, n)
        for (int i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] >= 0)
                uses[n->inputs[i]]++;
    for (int i = 0; i < g->n_outputs; i++)
        uses[g->outputs[i]]++;
    int changed = 1;
    while (changed) {
        changed = 0;
        /* newest first: a chain dies from its end in one sweep */
        for (int id = g->n_nodes - 1; id >= 0; id--) {
            pg_node *n = g->nodes[id];
            if (!n)
                continue;
            int live = 0;
            for (int o = 0; o < n->n_outputs; o++)
                live |= uses[n->outputs[o]] > 0;
            if (live)
                continue;
            for (int i = 0; i < n->n_inputs; i++)
                if (n->inputs[i] >= 0)
                    uses[n->inputs[i]]--;
            pg_pass_remove(c, g, id, "dead: no output is read");
            changed = 1;
        }
    }
    free(uses);
    return PG_OK;
}

const pg_pass_def pg_pass_dce = {
    "dce", 1, "dead-code elimination: nodes whose outputs nobody reads",
    run_dce,
};

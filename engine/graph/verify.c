/* verify.c - structural checks of a graph before it is compiled: every op
 * known, every consumed tensor defined (produced, fed or constant), one
 * producer per tensor, reader lists that match the inputs, every graph
 * output defined, no cycles.  Each error names the node and the reason. */
#include "../core/alloc.h"
#include "../core/error.h"
#include "ir.h"

static int defined(const pg_graph *g, const pg_tensor *t)
{
    return t->is_const || t->is_input || pg_ir_producer(g, t->id) >= 0;
}

/* Every tensor's reader list (pg_tensor.users) holds one slot per input
 * that reads it, each naming a live node that does: the passes' matchers
 * count readers from it (pm_uses). */
static int node_reads(const pg_node *n, int t)
{
    for (int i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] == t)
            return 1;
    return 0;
}

static pg_status check_readers(const pg_graph *g)
{
    int *reads = pg_obj_calloc((size_t)g->n_tensors + 1, sizeof(int));
    if (!reads)
        return pg_fail(PG_ERR_NOMEM, "out of memory");
    PG_IR_FOR_NODES(g, n)
        for (int i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] >= 0)
                reads[n->inputs[i]]++;
    pg_status st = PG_OK;
    PG_IR_FOR_TENSORS(g, t) {
        int ok = reads[t->id] == t->n_users;
        for (int k = 0; ok && k < t->n_users; k++) {
            int u = t->users[k];
            ok = u >= 0 && u < g->n_nodes && g->nodes[u] && node_reads(g->nodes[u], t->id);
        }
        if (!ok) {
            st = pg_fail(PG_ERR_INTERNAL, "tensor '%s': its reader list (%d) does not match the "
                         "%d inputs that read it", t->name, t->n_users, reads[t->id]);
            break;
        }
    }
    pg_free(reads);
    return st;
}

pg_status pg_ir_verify(const pg_graph *g)
{
    PG_IR_FOR_NODES(g, n) {
        if (n->op == PG_OP_UNKNOWN)
            return pg_fail(PG_ERR_GRAPH, "node '%s': unknown op type '%s'", n->name, n->op_type);
        for (int i = 0; i < n->n_inputs; i++) {
            int t = n->inputs[i];
            if (t < 0)
                continue;
            if (t >= g->n_tensors || !g->tensors[t])
                return pg_fail(PG_ERR_GRAPH, "node '%s' (%s): input %d refers to a removed tensor",
                               n->name, n->op_type, i);
            if (!defined(g, g->tensors[t]))
                return pg_fail(PG_ERR_GRAPH, "node '%s' (%s): input '%s' is dangling (no node "
                               "produces it and it is not a graph input or initializer)",
                               n->name, n->op_type, g->tensors[t]->name);
        }
        for (int i = 0; i < n->n_outputs; i++) {
            int t = n->outputs[i];
            if (t < 0 || t >= g->n_tensors || !g->tensors[t] || g->tensors[t]->producer != n->id)
                return pg_fail(PG_ERR_GRAPH, "node '%s' (%s): output %d is not owned by the node",
                               n->name, n->op_type, i);
        }
    }
    for (int i = 0; i < g->n_outputs; i++) {
        int t = g->outputs[i];
        if (t < 0 || t >= g->n_tensors || !g->tensors[t] || !defined(g, g->tensors[t]))
            return pg_fail(PG_ERR_GRAPH, "graph output '%s' is not produced by any node",
                           g->output_names[i]);
    }
    if (g->n_outputs == 0)
        return pg_fail(PG_ERR_GRAPH, "the graph has no outputs");
    pg_status st = check_readers(g);
    if (st)
        return st;
    int *order = pg_obj_malloc(sizeof(int) * (size_t)(g->n_nodes + 1)), n = 0;
    if (!order)
        return pg_fail(PG_ERR_NOMEM, "out of memory");
    st = pg_ir_topo_order(g, order, &n);
    pg_free(order);
    return st;
}

/* snapshot_api.c - the public "Passes" API: the pass registry and, per
 * compiled model, the log of what each pass did (peregrine.h).
 *
 * Entry 0 of a model's log is the graph as built ("input"); entries 1.. are
 * the registered passes in the order they run, enabled or not, each with its
 * changes and the graph as it stood after it.  A model compiled at level 0
 * ran no passes and has no log (count 0).  Strings handed out live as long
 * as the model. */
#include "../core/error.h"
#include "../exec/model.h"
#include "snapshot.h"

static const pg_pass_log *model_log(const pg_model *m)
{
    return m ? m->pass_log : NULL;
}

static const pg_snap_pass *get_pass(const pg_model *m, int pass, const char *fn)
{
    if (!m) {
        pg_fail(PG_ERR_INVALID_ARG, "%s: model is NULL", fn);
        return NULL;
    }
    const pg_pass_log *log = model_log(m);
    int n = log ? log->n : 0;
    if (pass < 0 || pass >= n) {
        pg_fail(PG_ERR_INVALID_ARG, "%s: pass %d out of range (the model's log has %d entries%s)",
                fn, pass, n, n ? "" : ": compiled at level 0, or the log was dropped");
        return NULL;
    }
    return &log->passes[pass];
}

PG_API int pg_pass_registry_count(void)
{
    return pg_passes_count();
}

PG_API pg_status pg_pass_registry_info(int i, pg_pass_info *out)
{
    pg_clear_error();
    if (!out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_pass_registry_info: out is NULL");
    if (i < 0 || i >= pg_passes_count())
        return pg_fail(PG_ERR_INVALID_ARG, "pg_pass_registry_info: pass %d out of range 0..%d", i,
                       pg_passes_count() - 1);
    *out = (pg_pass_info){ 0 };
    out->name = pg_passes_name(i);
    out->description = pg_passes_description(i);
    out->level = pg_passes_level(i);
    out->enabled = 1;
    return PG_OK;
}

PG_API int pg_model_pass_count(const pg_model *m)
{
    const pg_pass_log *log = model_log(m);
    return log ? log->n : 0;
}

PG_API pg_status pg_model_pass_info(const pg_model *m, int pass, pg_pass_info *out)
{
    pg_clear_error();
    if (!out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_model_pass_info: out is NULL");
    const pg_snap_pass *p = get_pass(m, pass, "pg_model_pass_info");
    if (!p)
        return pg_last_status();
    out->name = p->name;
    out->description = p->description;
    out->level = p->level;
    out->enabled = p->enabled;
    out->ran = p->ran;
    out->n_changes = p->n_changes;
    out->n_nodes = p->n_nodes;
    out->ms = p->ms;
    out->const_bytes = p->const_bytes;
    return PG_OK;
}

PG_API pg_status pg_model_pass_change(const pg_model *m, int pass, int i, pg_pass_change *out)
{
    pg_clear_error();
    if (!out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_model_pass_change: out is NULL");
    const pg_snap_pass *p = get_pass(m, pass, "pg_model_pass_change");
    if (!p)
        return pg_last_status();
    if (i < 0 || i >= p->n_changes)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_model_pass_change: change %d out of range "
                       "(pass '%s' made %d)", i, p->name, p->n_changes);
    const pg_snap_change *c = &p->changes[i];
    out->kind = (pg_pass_change_kind)c->kind;
    out->node = c->node;
    out->op = c->op;
    out->reason = c->reason;
    return PG_OK;
}

PG_API pg_status pg_model_snapshot_node(const pg_model *m, int pass, int i, pg_snapshot_node *out)
{
    pg_clear_error();
    if (!out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_model_snapshot_node: out is NULL");
    const pg_snap_pass *p = get_pass(m, pass, "pg_model_snapshot_node");
    if (!p)
        return pg_last_status();
    if (i < 0 || i >= p->n_nodes)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_model_snapshot_node: node %d out of range "
                       "(the graph after '%s' has %d)", i, p->name, p->n_nodes);
    const pg_snap_node *s = &p->nodes[i];
    out->name = s->name;
    out->op = s->op;
    out->inputs = s->inputs;
    out->outputs = s->outputs;
    out->in_shapes = s->in_shapes;
    out->shapes = s->shapes;
    out->dtypes = s->dtypes;
    out->attrs = s->attrs;
    out->fused = s->fused;
    return PG_OK;
}

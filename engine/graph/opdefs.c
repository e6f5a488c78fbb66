/* opdefs.c - the op descriptor table, built from opdefs.def, and the op
 * name lookups of the IR. */
#include <pthread.h>
#include <string.h>

#include "../core/error.h"
#include "../exec/ops.h"
#include "infer.h"
#include "namemap.h"
#include "opdefs.h"

static const pg_opdef defs[] = {
#define PG_OPDEF(id, name, onnx, ver, imin, imax, omin, omax, vals, infer, exec, bind, scratch, flags) \
    { PG_OP_##id, name, onnx, ver, imin, imax, omin, omax, vals, infer, exec, bind, scratch, flags },
#include "opdefs.def"
#undef PG_OPDEF
};

/* Other spellings an op_type may use (the table's name and ONNX name are
 * matched first). */
static const struct { const char *name; pg_opcode op; } aliases[] = {
    { "LayerNorm", PG_OP_LAYERNORM }, { "Silu", PG_OP_SILU },
};

const pg_opdef *pg_opdefs_all(int *count)
{
    *count = (int)(sizeof defs / sizeof defs[0]);
    return defs;
}

const pg_opdef *pg_opdef_of(pg_opcode op)
{
    /* rows are in enum order: PG_OP_<first row> is 1 */
    if (op <= PG_OP_UNKNOWN || op >= PG_OP_COUNT_)
        return NULL;
    return &defs[op - 1];
}

/* Every spelling (the table's names, ONNX names, aliases) hashed once:
 * each node a pass adds looks its op up, and a walk of ~200 rows with two
 * strcmps each was ~6% of a decode step's recompile.  Open addressing,
 * filled at first use (pthread_once: compiles may run on several
 * threads). */
#define OP_SLOTS 1024
static struct { const char *name; pg_opcode op; } op_slots[OP_SLOTS];
static pthread_once_t op_slots_once = PTHREAD_ONCE_INIT;

static size_t op_hash(const char *s) { return pg_name_hash(s) & (OP_SLOTS - 1); }

/* the first spelling of a name wins, as the walk of the table did */
static void op_slot_put(const char *name, pg_opcode op)
{
    size_t i = op_hash(name);
    while (op_slots[i].name && strcmp(op_slots[i].name, name))
        i = (i + 1) & (OP_SLOTS - 1);
    if (!op_slots[i].name) {
        op_slots[i].name = name;
        op_slots[i].op = op;
    }
}

static void op_slots_fill(void)
{
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
        op_slot_put(defs[i].name, defs[i].op);
        if (defs[i].onnx_name)
            op_slot_put(defs[i].onnx_name, defs[i].op);
    }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        op_slot_put(aliases[i].name, aliases[i].op);
}

pg_opcode pg_ir_op_from_name(const char *op_type)
{
    if (!op_type)
        return PG_OP_UNKNOWN;
    pthread_once(&op_slots_once, op_slots_fill);
    for (size_t i = op_hash(op_type); op_slots[i].name; i = (i + 1) & (OP_SLOTS - 1))
        if (!strcmp(op_slots[i].name, op_type))
            return op_slots[i].op;
    return PG_OP_UNKNOWN;
}

const char *pg_ir_op_name(pg_opcode op)
{
    const pg_opdef *d = pg_opdef_of(op);
    return d ? d->name : "Unknown";
}

/* ---- the public listing (pg_graph_op_*) ---------------------------------- */

int pg_graph_op_count(void)
{
    return (int)(sizeof defs / sizeof defs[0]);
}

pg_status pg_graph_op_get_info(int i, pg_graph_op_info *out)
{
    if (!out || i < 0 || i >= pg_graph_op_count())
        return pg_fail(PG_ERR_INVALID_ARG, "no graph op %d (there are %d)", i, pg_graph_op_count());
    const pg_opdef *d = &defs[i];
    memset(out, 0, sizeof *out);
    out->name = d->name;
    out->onnx_name = d->onnx_name;
    out->onnx_version = d->onnx_version;
    out->min_inputs = d->in_min;
    out->max_inputs = d->in_max;
    out->min_outputs = d->out_min;
    out->max_outputs = d->out_max;
    out->value_inputs = d->value_inputs;
    out->is_view = !!(d->flags & PG_OPF_VIEW);
    out->in_place = !!(d->flags & (PG_OPF_INPLACE_ANY | PG_OPF_INPLACE_FIRST));
    out->binds_kernels = d->bind != NULL;
    return PG_OK;
}

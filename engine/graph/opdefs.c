/* opdefs.c - the op descriptor table, built from opdefs.def, and the op
 * name lookups of the IR. */
#include <string.h>

#include "../core/error.h"
#include "../exec/ops.h"
#include "infer.h"
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

pg_opcode pg_ir_op_from_name(const char *op_type)
{
    if (!op_type)
        return PG_OP_UNKNOWN;
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
        if (!strcmp(defs[i].name, op_type) || (defs[i].onnx_name && !strcmp(defs[i].onnx_name, op_type)))
            return defs[i].op;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcmp(aliases[i].name, op_type))
            return aliases[i].op;
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

/* registry.c - the list of every op with a variant table.  An op's own
 * directory defines its table; this file only lists them in a fixed order. */
#include "variant.h"
#include "vadd/vadd.h"
#include "gemv/gemv.h"
#include "vmul/vmul.h"
#include "sgemm/sgemm.h"

static const pg_op *const all_ops[] = {
    &pg_op_vadd,
    &pg_op_gemv,
    &pg_op_vmul,
    &pg_op_sgemm,
};

const pg_op *const *pg_ops_all(int *count)
{
    *count = PG_COUNTOF(all_ops);
    return all_ops;
}

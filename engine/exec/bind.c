/* bind.c - what the compiler asks of an op beyond running it: its kernels
 * (bound once per compiled model), its scratch for those kernels, and which
 * inputs its output may overwrite.  The answers come from the op's row in
 * opdefs.def. */
#include <string.h>

#include "ops.h"

pg_status pg_exec_bind(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                       pg_binding *b)
{
    memset(b, 0, sizeof *b);
    const pg_opdef *d = pg_opdef_of(n->op);
    return d && d->bind ? d->bind(n, in, out, b) : PG_OK;
}

size_t pg_exec_scratch_bytes(const pg_node *n, const pg_tensor *const *in,
                             const pg_tensor *const *out, int threads, const pg_binding *b)
{
    const pg_opdef *d = pg_opdef_of(n->op);
    return d && d->scratch ? d->scratch(n, in, out, threads > 0 ? threads : 1, b) : 0;
}

unsigned pg_exec_inplace_mask(const pg_node *n, const pg_tensor *const *in, const pg_tensor *out)
{
    const pg_opdef *d = pg_opdef_of(n->op);
    unsigned any = d ? d->flags & PG_OPF_INPLACE_ANY : 0, first = d ? d->flags & PG_OPF_INPLACE_FIRST : 0;
    if (!any && !first)
        return 0;
    unsigned mask = 0;
    for (int i = 0; i < n->n_inputs && i < 8; i++) {
        const pg_tensor *t = in[i];
        if (!t || t->dtype != out->dtype || t->rank != out->rank || (first && i != 0))
            continue;
        int same = 1;
        for (int dd = 0; dd < t->rank; dd++)
            same &= t->shape[dd] == out->shape[dd];
        if (same)
            mask |= 1u << i;
    }
    return mask;
}

/* einsum.h - the parsed form of an Einsum equation, shared by its shape
 * rule (graph/infer_einsum.c) and its executor (ops_einsum.c).
 *
 * Every label of the equation, and every dim that `...` stands for, is one
 * iteration variable.  Each input axis reads one variable (a label repeated
 * in a term - a diagonal - reads it twice); the output's axes are the
 * output variables, every other variable is summed over.  A dim of size 1
 * broadcasts against the variable's size (numpy's rule for `...`). */
#ifndef PG_EXEC_EINSUM_H
#define PG_EXEC_EINSUM_H

#include "../graph/ir.h"

#define PG_EINSUM_MAX_IN     8    /* operands */
#define PG_EINSUM_MAX_LABELS 8    /* distinct letters */
#define PG_EINSUM_MAX_VARS   (PG_EINSUM_MAX_LABELS + PG_MAX_RANK)

typedef struct pg_einsum {
    int     n_in, n_vars, n_ell;               /* variables: the `...` dims first */
    int64_t dim[PG_EINSUM_MAX_VARS];
    int     in_rank[PG_EINSUM_MAX_IN];
    int     in_var[PG_EINSUM_MAX_IN][PG_MAX_RANK];
    int     out_rank;
    int     out_var[PG_MAX_RANK];
} pg_einsum;

/* Parses node n's `equation` against its inputs' shapes.  Errors name the
 * node: PG_ERR_GRAPH for a malformed equation, PG_ERR_SHAPE for dims that
 * disagree, PG_ERR_UNSUPPORTED past the limits above. */
pg_status pg_einsum_parse(const pg_node *n, const pg_tensor *const *in, int n_in, pg_einsum *e);

#endif /* PG_EXEC_EINSUM_H */

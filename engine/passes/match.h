/* match.h - small questions pattern-matching passes ask about the graph.
 *
 * All take tensor ids and tolerate -1 (absent) by answering "no". */
#ifndef PG_PASSES_MATCH_H
#define PG_PASSES_MATCH_H

#include "../graph/ir.h"

/* The tensor, or NULL for -1 / a hole. */
pg_tensor *pm_tensor(const pg_graph *g, int t);
/* The node producing t if its op is `op` (PG_OP_UNKNOWN: any op), else NULL. */
pg_node *pm_producer(const pg_graph *g, int t, pg_opcode op);
/* Number of node inputs reading t (a node reading it twice counts twice),
 * plus one if t is a graph output. */
int pm_uses(const pg_graph *g, int t);
/* The one node reading t, if exactly one node reads it exactly once, t is
 * no graph output, and that node's op is `op` (PG_OP_UNKNOWN: any). */
pg_node *pm_sole_consumer(const pg_graph *g, int t, pg_opcode op);
/* t is a constant with one element: its value as double (float, int or
 * bool dtypes). */
int pm_const_scalar(const pg_graph *g, int t, double *v);
/* t is a constant scalar within tol (relative to |want|, at least tol
 * absolute) of want. */
int pm_const_is(const pg_graph *g, int t, double want, double tol);
/* A float32 constant. */
int pm_const_f32(const pg_graph *g, int t);
/* For a two-input node reading t: the other input (-1 if it does not read
 * t or has not two inputs). */
int pm_other_input(const pg_node *n, int t);
/* The axes a Reduce/Squeeze/Unsqueeze node names (attribute, or a constant
 * input 1), normalised against rank and sorted; returns the count, -1 if
 * they are not known at compile time. */
int pm_axes(const pg_graph *g, const pg_node *n, int rank, int64_t *axes, int cap);
/* ReduceMean over the trailing axes of its input with keepdims = 1: the
 * first reduced axis (negative, from the end: -1 = the last axis), or 0 if
 * the node is not that. */
int pm_trailing_reduce(const pg_graph *g, const pg_node *n);
/* Shapes equal (ranks and every dim known and equal). */
int pm_same_shape(const pg_tensor *a, const pg_tensor *b);
/* Number of elements of t's shape from axis `from` on (-1 if unknown). */
int64_t pm_numel_from(const pg_tensor *t, int from);

#endif

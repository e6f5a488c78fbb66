/* opdefs.h - the graph op descriptors (one row per op in opdefs.def).
 *
 * A descriptor says everything the compiler needs to know about an op
 * besides its code: its names, the ONNX version it implements, its arity,
 * which inputs must be known at compile time, its shape rule, executor,
 * kernel binding and scratch, and whether its output may alias an input.
 * ir.c, shape_infer.c, exec/ and plan/ look ops up here instead of keeping
 * lists of their own; the C API exposes the table (pg_graph_op_*) to
 * Python, whose ONNX importer and docs read it. */
#ifndef PG_GRAPH_OPDEFS_H
#define PG_GRAPH_OPDEFS_H

#include "ir.h"

struct pg_infer_ctx;
struct pg_kctx;
struct pg_binding;

/* flags */
#define PG_OPF_VIEW          1u  /* output 0 is input 0's bytes, reshaped */
#define PG_OPF_INPLACE_ANY   2u  /* elementwise: the output may overwrite any
                                  * input of its size and dtype */
#define PG_OPF_INPLACE_FIRST 4u  /* row op: may overwrite input 0 only */
#define PG_OPF_NO_FOLD       8u  /* never run at compile time on known values */
#define PG_OPF_DESC_ONLY    16u  /* reads only its inputs' descriptors (Shape,
                                  * Size): its value is known once shapes are */
#define PG_OPF_PERSISTENT   32u  /* output 0 is a persistent buffer (KVCache):
                                  * kept across runs, outside the arena */

typedef pg_status (*pg_infer_fn)(struct pg_infer_ctx *c);
typedef pg_status (*pg_exec_fn)(struct pg_kctx *k);
/* Picks the op's kernel variants for this node (descriptors final) under
 * the current CPU mask; fails naming the node if none fits. */
typedef pg_status (*pg_bind_fn)(const pg_node *n, const pg_tensor *const *in,
                                const pg_tensor *const *out, struct pg_binding *b);
/* Scratch bytes the bound kernels need on up to `threads` threads. */
typedef size_t (*pg_scratch_fn)(const pg_node *n, const pg_tensor *const *in,
                                const pg_tensor *const *out, int threads,
                                const struct pg_binding *b);

typedef struct pg_opdef {
    pg_opcode     op;
    const char   *name;          /* op_type */
    const char   *onnx_name;     /* NULL: not an ONNX op */
    int           onnx_version;
    int           in_min, in_max, out_min, out_max;
    unsigned      value_inputs;  /* bit i: input i needed at compile time */
    pg_infer_fn   infer;
    pg_exec_fn    exec;
    pg_bind_fn    bind;          /* NULL: calls no variant table */
    pg_scratch_fn scratch;       /* NULL: needs none */
    unsigned      flags;
} pg_opdef;

/* The descriptor of an op code; NULL for PG_OP_UNKNOWN. */
const pg_opdef *pg_opdef_of(pg_opcode op);
/* Every descriptor in table order; *count gets how many. */
const pg_opdef *pg_opdefs_all(int *count);

#endif /* PG_GRAPH_OPDEFS_H */

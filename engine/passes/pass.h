/* pass.h - what a pass is, and the calls a pass uses to rewrite the graph
 * while the log records why.
 *
 * A pass is a function over the graph.  It changes the graph only through
 * the IR helpers, and says what it changed through pg_pass_note_* (or the
 * pg_pass_remove / pg_pass_fuse shortcuts below, which change and record in
 * one step), each with a reason a person can read ("fused 9 nodes
 * ReduceMean..Add into LayerNormalization 'ln_1'").  The framework counts
 * the notes: a pass that noted nothing changed nothing, and it re-runs
 * shape inference and verification after every pass that changed
 * something. */
#ifndef PG_PASSES_PASS_H
#define PG_PASSES_PASS_H

#include "../core/error.h"
#include "passes.h"

typedef struct pg_pass_ctx pg_pass_ctx;
typedef pg_status (*pg_pass_fn)(pg_graph *g, pg_pass_ctx *c);

typedef struct pg_pass_def {
    const char *name;         /* "layernorm_fusion": what `disabled` names */
    int         level;        /* 1 basic, 2 extended, 3 layout */
    const char *description;  /* one line */
    pg_pass_fn  run;
} pg_pass_def;

/* Kinds of change (the public pg_pass_change_kind has the same values). */
enum { PG_PASS_ADDED = 0, PG_PASS_REMOVED = 1, PG_PASS_REWRITTEN = 2 };

/* Record a change to node `node` (it must still exist).  `fused` marks an
 * added node as the product of a fusion (the viewer highlights it). */
void pg_pass_note(pg_pass_ctx *c, const pg_graph *g, int kind, int node, int fused,
                  const char *fmt, ...) PG_PRINTF(6, 7);
/* Record and remove a node (its outputs stay, producer -1). */
void pg_pass_remove(pg_pass_ctx *c, pg_graph *g, int node, const char *fmt, ...) PG_PRINTF(4, 5);
/* The usual end of a fusion: removes the matched nodes (n of them, in
 * pattern order, the node ids in `nodes`), adds one node of op_type named
 * after `prefix` ("ln" -> "ln", "ln_1", ...) with the given inputs and
 * outputs (the outputs are normally the last matched node's, so consumers
 * need no rewiring), and records all of it with the reason
 * "fused N nodes First..Last into Op 'name'".  The outputs must have
 * their shapes (the pattern's, or new tensors made with one): a fusion
 * leaves the shapes as fresh as it found them (pg_pass_need_shapes).
 * Returns the new node id, or -1 with the error set. */
int pg_pass_fuse(pg_pass_ctx *c, pg_graph *g, const int *nodes, int n, const char *op_type,
                 const char *prefix, const int *inputs, int n_inputs, const int *outputs,
                 int n_outputs);
/* Shape inference now if the graph changed since it last ran (passes that
 * read shapes call it first). */
pg_status pg_pass_need_shapes(pg_graph *g, pg_pass_ctx *c);
/* Changes recorded so far by this pass. */
int pg_pass_changes(const pg_pass_ctx *c);

/* The passes (one file each). */
extern const pg_pass_def pg_pass_shape_inference;
extern const pg_pass_def pg_pass_quant_fusion;
extern const pg_pass_def pg_pass_constant_folding;
extern const pg_pass_def pg_pass_noop_elimination;
extern const pg_pass_def pg_pass_cse;
extern const pg_pass_def pg_pass_dce;
extern const pg_pass_def pg_pass_layernorm_fusion;
extern const pg_pass_def pg_pass_rmsnorm_fusion;
extern const pg_pass_def pg_pass_gelu_fusion;
extern const pg_pass_def pg_pass_silu_fusion;
extern const pg_pass_def pg_pass_quant_epilogue_fusion;
extern const pg_pass_def pg_pass_matmul_epilogue_fusion;
extern const pg_pass_def pg_pass_attention_fusion;
extern const pg_pass_def pg_pass_rotary_fusion;
extern const pg_pass_def pg_pass_qkv_fusion;
extern const pg_pass_def pg_pass_lowp_prepack;
extern const pg_pass_def pg_pass_weight_prepack;
extern const pg_pass_def pg_pass_conv_bn_fold;
extern const pg_pass_def pg_pass_conv_act_fusion;
extern const pg_pass_def pg_pass_conv_winograd;
extern const pg_pass_def pg_pass_nchwc_layout;
extern const pg_pass_def pg_pass_conv_residual_fusion;
extern const pg_pass_def pg_pass_conv_prepack;

#endif

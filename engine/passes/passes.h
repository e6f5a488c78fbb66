/* passes.h - the graph optimiser: named rewrite passes in levels, and the
 * log of what each one did (the snapshots a viewer steps through).
 *
 * Levels (as ONNX Runtime's):
 *   0  none      - the graph runs as built
 *   1  basic     - shape inference, constant folding, no-op elimination,
 *                  common subexpressions, dead code
 *   2  extended  - pattern fusions: LayerNorm, RMSNorm, GELU, SiLU,
 *                  MatMul epilogues, attention, QKV projections
 *   3  layout    - constant weights pre-packed into the SGEMM panel layout
 * A level runs every pass of that level and below, in the fixed order of
 * the registry (passes.c); any pass can be switched off by name.
 *
 * The compile step owns the graph and the log (the model keeps it):
 *
 *     pg_pass_log *log = pg_pass_log_new();
 *     pg_status st = pg_passes_run(g, level, "cse,gelu_fusion", log);
 *     ...   // m->pass_log = log; pg_pass_log_free() in pg_model_free
 */
#ifndef PG_PASSES_H
#define PG_PASSES_H

#include "../graph/ir.h"

#define PG_PASS_LEVEL_MAX 3

typedef struct pg_pass_log pg_pass_log;

/* An empty log (NULL + error on OOM). */
pg_pass_log *pg_pass_log_new(void);
void pg_pass_log_free(pg_pass_log *log);

/* Runs the passes of `level` (0..3) on g, in place.  disabled_csv: pass
 * names separated by commas (spaces allowed), or NULL / "".  An unknown
 * name is PG_ERR_INVALID_ARG with a message listing the known passes, and
 * nothing runs.  g's shapes must be inferred (pg_ir_verify, then
 * pg_ir_infer_shapes) since its last change.  log may be NULL; otherwise
 * it is cleared and then gets one entry for the input graph plus one per
 * registered pass (enabled or not).  On success g is verified and its
 * shapes inferred: the driver does both after every pass that changed it.
 * A pass that leaves a graph that fails verification or shape inference is
 * reported as PG_ERR_INTERNAL naming the pass. */
pg_status pg_passes_run(pg_graph *g, int level, const char *disabled_csv, pg_pass_log *log);

/* After a CPU-mask change: weights packed for a panel width the selected
 * SGEMM kernel lacks are re-laid out for it (weight_prepack's rules);
 * *repacked gets how many. */
pg_status pg_prepack_relayout(pg_graph *g, int *repacked);

/* The registry, for listings: count, and each pass's name, level and one
 * line of description (NULL for a bad index). */
int         pg_passes_count(void);
const char *pg_passes_name(int i);
int         pg_passes_level(int i);
const char *pg_passes_description(int i);

#endif

/* passes.c - the pass registry and the driver that runs it.
 *
 * The registry is the single list of passes, in the order they run.  The
 * order matters: shape inference first (everything reads shapes); quantised
 * products before constant folding (which would dequantise their weights); constant
 * folding before no-op elimination (a Reshape's shape is often a folded
 * Shape->Gather->Concat chain); CSE after folding (folded constants compare
 * by value); the element-wise fusions (LayerNorm, GELU, ...) before the
 * MatMul epilogue fusion (it absorbs a Gelu that only exists once
 * gelu_fusion made it); attention and QKV after the epilogues; packing last
 * (it changes the weights' layout, which nothing after it must read). */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "pass.h"
#include "snapshot.h"

static const pg_pass_def *const registry[] = {
    &pg_pass_shape_inference,
    &pg_pass_quant_fusion,
    &pg_pass_constant_folding,
    &pg_pass_noop_elimination,
    &pg_pass_cse,
    &pg_pass_dce,
    &pg_pass_layernorm_fusion,
    &pg_pass_rmsnorm_fusion,
    &pg_pass_gelu_fusion,
    &pg_pass_silu_fusion,
    &pg_pass_quant_epilogue_fusion,
    &pg_pass_matmul_epilogue_fusion,
    &pg_pass_conv_bn_fold,
    &pg_pass_conv_act_fusion,
    &pg_pass_rotary_fusion,
    &pg_pass_attention_fusion,
    &pg_pass_qkv_fusion,
    &pg_pass_conv_winograd,
    &pg_pass_nchwc_layout,
    &pg_pass_conv_residual_fusion,
    &pg_pass_conv_prepack,
    &pg_pass_lowp_prepack,
    &pg_pass_weight_prepack,
};
#define N_PASSES ((int)(sizeof registry / sizeof registry[0]))

struct pg_pass_ctx {
    pg_pass_log  *log;        /* NULL when the caller keeps no log */
    pg_snap_pass *entry;      /* this pass's entry in the log, or NULL */
    int           changes;
    int           shapes_stale;
};

int pg_passes_count(void) { return N_PASSES; }
const char *pg_passes_name(int i) { return i >= 0 && i < N_PASSES ? registry[i]->name : NULL; }
int pg_passes_level(int i) { return i >= 0 && i < N_PASSES ? registry[i]->level : -1; }
const char *pg_passes_description(int i)
{
    return i >= 0 && i < N_PASSES ? registry[i]->description : NULL;
}

/* ---- recording ----------------------------------------------------------- */

int pg_pass_changes(const pg_pass_ctx *c) { return c->changes; }

static void note_v(pg_pass_ctx *c, const pg_graph *g, int kind, int node, int fused,
                   const char *fmt, va_list ap)
{
    const pg_node *n = node >= 0 && node < g->n_nodes ? g->nodes[node] : NULL;
    c->changes++;
    c->shapes_stale = 1;
    if (!c->log || !c->entry)
        return;
    char reason[512];
    vsnprintf(reason, sizeof reason, fmt, ap);
    pg_snap_add_change(c->log, c->entry, kind, n ? n->name : "?", n ? n->op_type : "?", reason);
    if (fused && n)
        pg_snap_mark_fused(c->log, n->name);
}

void pg_pass_note(pg_pass_ctx *c, const pg_graph *g, int kind, int node, int fused,
                  const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    note_v(c, g, kind, node, fused, fmt, ap);
    va_end(ap);
}

void pg_pass_remove(pg_pass_ctx *c, pg_graph *g, int node, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    note_v(c, g, PG_PASS_REMOVED, node, 0, fmt, ap);
    va_end(ap);
    pg_ir_remove_node(g, node);
}

int pg_pass_fuse(pg_pass_ctx *c, pg_graph *g, const int *nodes, int n, const char *op_type,
                 const char *prefix, const int *inputs, int n_inputs, const int *outputs,
                 int n_outputs)
{
    char name[96], reason[400] = "";
    pg_ir_unique_name(g, prefix, name, sizeof name);
    if (c->entry)   /* the text is for the log alone */
        snprintf(reason, sizeof reason, "fused %d node%s %s..%s into %s '%s'", n,
                 n == 1 ? "" : "s", g->nodes[nodes[0]]->op_type, g->nodes[nodes[n - 1]]->op_type,
                 op_type, name);
    /* The fused node reads and writes tensors that have their shapes (the
     * outputs are the pattern's own, or new ones made with a shape), so a
     * fusion leaves nothing for the next match to infer; the driver infers
     * and verifies the whole graph after the pass.  A pass's later rounds
     * re-inferred the graph after each round of fusions (~4% of a decode
     * step's recompile). */
    int stale = c->shapes_stale;
    for (int i = 0; i < n; i++)
        pg_pass_remove(c, g, nodes[i], "%s", reason);
    int id = pg_ir_add_node(g, op_type, name, inputs, n_inputs, outputs, n_outputs);
    if (id < 0)
        return -1;
    pg_pass_note(c, g, PG_PASS_ADDED, id, 1, "%s", reason);
    c->shapes_stale = stale;
    return id;
}

pg_status pg_pass_need_shapes(pg_graph *g, pg_pass_ctx *c)
{
    if (!c->shapes_stale)
        return PG_OK;
    pg_status st = pg_ir_infer_shapes(g);
    if (st == PG_OK)
        c->shapes_stale = 0;
    return st;
}

/* ---- the driver ---------------------------------------------------------- */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Sets off[i] for every pass named in csv; an unknown name is an error that
 * lists the known ones. */
static pg_status parse_disabled(const char *csv, int *off)
{
    memset(off, 0, sizeof(int) * N_PASSES);
    if (!csv)
        return PG_OK;
    const char *p = csv;
    while (*p) {
        while (*p == ',' || isspace((unsigned char)*p))
            p++;
        const char *s = p;
        while (*p && *p != ',')
            p++;
        const char *e = p;
        while (e > s && isspace((unsigned char)e[-1]))
            e--;
        if (e == s)
            continue;
        int found = -1;
        for (int i = 0; i < N_PASSES; i++)
            if (strlen(registry[i]->name) == (size_t)(e - s) &&
                !strncmp(registry[i]->name, s, (size_t)(e - s)))
                found = i;
        if (found < 0) {
            char known[1024];
            size_t o = 0;
            for (int i = 0; i < N_PASSES && o < sizeof known; i++)
                o += (size_t)snprintf(known + o, sizeof known - o, "%s%s", i ? ", " : "",
                                      registry[i]->name);
            return pg_fail(PG_ERR_INVALID_ARG, "unknown pass '%.*s' in the disabled list; "
                           "known passes: %s", (int)(e - s), s, known);
        }
        off[found] = 1;
    }
    return PG_OK;
}

pg_status pg_passes_run(pg_graph *g, int level, const char *disabled_csv, pg_pass_log *log)
{
    if (!g)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_passes_run: graph is NULL");
    if (level < 0 || level > PG_PASS_LEVEL_MAX)
        return pg_fail(PG_ERR_INVALID_ARG, "optimisation level %d is not 0..%d "
                       "(0 none, 1 basic, 2 extended, 3 layout)", level, PG_PASS_LEVEL_MAX);
    int off[N_PASSES];
    pg_status st = parse_disabled(disabled_csv, off);
    if (st)
        return st;
    if (log)
        pg_snap_clear(log);

    pg_snap_pass *input = log ? pg_snap_add_pass(log, "input", "the graph as built", 0, 1) : NULL;
    if (log && !input)
        return pg_fail(PG_ERR_NOMEM, "out of memory in the pass log");
    if (input) {
        input->ran = 1;
        if ((st = pg_snap_take(log, input, g)))
            return st;
    }

    pg_pass_ctx c = { log, NULL, 0, 0 };   /* the caller inferred the shapes */
    for (int i = 0; i < N_PASSES; i++) {
        const pg_pass_def *d = registry[i];
        int enabled = d->level <= level && !off[i];
        c.entry = log ? pg_snap_add_pass(log, d->name, d->description, d->level, enabled) : NULL;
        if (log && !c.entry)
            return pg_fail(PG_ERR_NOMEM, "out of memory in the pass log");
        if (enabled) {
            c.changes = 0;
            double t0 = now_ms();
            st = d->run(g, &c);
            if (st == PG_OK && c.changes) {
                /* Every pass must leave a graph the compiler can take: check
                 * here, so a broken rewrite names itself. */
                st = pg_ir_verify(g);
                if (st == PG_OK)
                    st = pg_ir_infer_shapes(g);
                if (st != PG_OK) {
                    char msg[600];
                    snprintf(msg, sizeof msg, "%s", pg_last_error());
                    return pg_fail(PG_ERR_INTERNAL, "pass '%s' left a broken graph: %s", d->name,
                                   msg);
                }
                c.shapes_stale = 0;
                /* constants nothing reads any more (weights a fusion
                 * replaced by a concatenated copy, the small scalars of a
                 * fused pattern): not nodes, so no note; only memory */
                pg_ir_remove_unread_consts(g);
            }
            if (st != PG_OK) {
                /* keep the pass's own message, prefixed with its name */
                char msg[600];
                snprintf(msg, sizeof msg, "%s", pg_last_error());
                return pg_fail(st, "pass '%s': %s", d->name, msg);
            }
            if (c.entry) {
                c.entry->ran = 1;
                c.entry->ms = now_ms() - t0;
            }
        }
        if (c.entry && (!enabled || !c.changes) && log->n >= 2)
            pg_snap_share(c.entry, &log->passes[log->n - 2]);
        else if (c.entry && (st = pg_snap_take(log, c.entry, g)))
            return st;
    }
    if (log && log->oom)
        return pg_fail(PG_ERR_NOMEM, "out of memory in the pass log");
    return PG_OK;
}

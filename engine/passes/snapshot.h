/* snapshot.h - the pass log: per pass, what changed and a compact copy of
 * the graph as it then stood.
 *
 * A snapshot keeps strings, not IR objects, so it outlives every later
 * rewrite and costs little: for each node (in execution order) its op, its
 * name, the names of its inputs and outputs, the shapes and dtypes of
 * both, a one-line attribute summary and whether a fusion made it.  The log
 * is read by snapshot_api.c (the public accessors on the model) and built by
 * passes.c. */
#ifndef PG_PASSES_SNAPSHOT_H
#define PG_PASSES_SNAPSHOT_H

#include "../graph/namemap.h"
#include "passes.h"

typedef struct pg_snap_node {
    char *name, *op;
    char *inputs, *outputs;       /* tensor names, comma-separated ("" = absent) */
    char *in_shapes, *shapes;     /* "1x128x768", ';'-separated per tensor, "?" unknown */
    char *dtypes;                 /* of the outputs, ';'-separated */
    char *attrs;                  /* "axis=-1 epsilon=1e-05" */
    int   fused;                  /* made by a fusion pass */
} pg_snap_node;

typedef struct pg_snap_change {
    int   kind;                   /* PG_PASS_ADDED / REMOVED / REWRITTEN */
    char *node, *op, *reason;   /* one block, owned by node */
} pg_snap_change;

typedef struct pg_snap_pass {
    const char *name;             /* static (the registry's) */
    const char *description;
    int    level;
    int    enabled;               /* at or below the level and not disabled */
    int    ran;
    double ms;                    /* wall time of the pass */
    pg_snap_change *changes;
    int    n_changes, cap_changes;
    pg_snap_node *nodes;          /* the graph after the pass */
    int    n_nodes;
    char  *strings;               /* one block: every string of nodes[] */
    int    shared;                /* nodes are an earlier entry's (this pass changed nothing) */
    int64_t const_bytes;          /* bytes of constant data in the graph */
} pg_snap_pass;

struct pg_pass_log {
    pg_snap_pass *passes;
    int n, cap;
    char **fused;                 /* names of nodes fusions made */
    int n_fused, cap_fused;
    pg_namemap fused_names;       /* the same names -> index, for the lookups */
    int oom;                      /* a note could not be stored */
};

/* Appends an entry (NULL on OOM, log->oom set). */
pg_snap_pass *pg_snap_add_pass(pg_pass_log *log, const char *name, const char *description,
                               int level, int enabled);
/* Replaces the entry's node list with the graph as it now stands. */
pg_status pg_snap_take(pg_pass_log *log, pg_snap_pass *p, const pg_graph *g);
/* The entry shows the same graph as `from` (an earlier entry that outlives
 * it): a pass that changed nothing costs no copy of a large graph. */
void pg_snap_share(pg_snap_pass *p, const pg_snap_pass *from);
/* Appends a change (copies the strings). */
void pg_snap_add_change(pg_pass_log *log, pg_snap_pass *p, int kind, const char *node,
                        const char *op, const char *reason);
void pg_snap_mark_fused(pg_pass_log *log, const char *node);
/* Empties the log (keeps the struct). */
void pg_snap_clear(pg_pass_log *log);

#endif

/* ir.h - the graph IR: tensors, nodes, attributes, and the helpers that
 * optimisation passes use to rewrite a graph.
 *
 * Model
 * -----
 * A pg_graph owns two arrays of heap objects, indexed by id:
 *   g->tensors[id]  (pg_tensor *), g->nodes[id]  (pg_node *).
 * Ids are stable for the life of the graph: removing a node frees it and
 * leaves g->nodes[id] == NULL; removing a tensor likewise.  So always iterate
 * with PG_IR_FOR_NODES / PG_IR_FOR_TENSORS (they skip the holes), and never
 * cache pointers across a call that may add objects (the arrays may move;
 * the objects themselves do not, so a pg_node * stays valid until removed).
 *
 * Edges are tensor ids: node->inputs[i] and node->outputs[i].  An optional
 * input that is absent is -1 (ONNX "").  A tensor has at most one producer
 * (tensor->producer, a node id or -1 for graph inputs and constants) and a
 * list of its readers (tensor->users, kept by the helpers below), so
 * pg_ir_consumers, the topological order and dead-code removal are linear
 * in the graph.  Never write node->inputs[] directly: use pg_ir_set_input
 * or pg_ir_rewire, which keep the reader lists.
 *
 * The node array is in insertion order, NOT execution order.  A pass may
 * append a fused node anywhere; pg_ir_topo_order() gives an execution order
 * (and finds cycles).  The compiler re-runs shape inference and verification
 * after the passes, so a pass only has to leave the graph well-formed:
 * every consumed tensor has a producer or is an input or a constant, every
 * graph output has a producer (or is an input/constant), no cycles.
 *
 * Graph outputs are (tensor id, name) pairs: rewiring a graph output to a new
 * tensor keeps the public name the caller fetches it by.
 *
 * Shapes: dims are int64; -1 means "not known yet".  rank == -1 means the
 * tensor has not been through shape inference.  Shape inference
 * (pg_ir_infer_shapes) fills dtype/rank/shape/strides of every tensor a node
 * produces; passes that create tensors may leave them unknown (rank -1) and
 * rely on the compiler re-running inference.
 *
 * Constants (initializers, Constant outputs, tensors a pass creates) have
 * is_const = 1 and own `data` (64-byte aligned, nbytes long).  A constant's
 * layout may be PG_LAYOUT_PACKED (the weight pre-packing pass): its data is
 * then in the format the SGEMM packing routine produced, `pack_nr` says the
 * panel width, `shape` still states the LOGICAL [K, N] shape and nbytes the
 * packed size.
 *
 * Fused ops (created by passes, executed by engine/exec):
 *
 *   FusedMatMul   in: A [..., M, K], B [K, N] (constant, may be PACKED),
 *                     bias [N] (optional)
 *                 out: Y [..., M, N] = act(alpha * A.B + bias)
 *                 attrs: activation (string: "none" | "relu" | "gelu" (erf) |
 *                        "gelu_tanh" | "sigmoid" | "tanh" | "silu"; default
 *                        "none"), alpha (float, default 1)
 *   QKVMatMul     in: X [..., M, K], W [K, Nq+Nk+Nv] (constant, may be
 *                     PACKED), bias [Nq+Nk+Nv] (optional)
 *                 out: Q [..., M, Nq], K [..., M, Nk], V [..., M, Nv]
 *                 attrs: splits (ints [Nq, Nk, Nv], required)
 *                 The planner places Q, K, V back to back in ONE block
 *                 (views of the block); each output is itself contiguous.
 *   FusedAttention in: Q [B, H, Sq, D], K [B, H, Sk, D] (or [B, H, D, Sk]
 *                     when k_transposed = 1), V [B, H, Sk, Dv],
 *                     mask (optional, additive, broadcastable to
 *                     [B, H, Sq, Sk]; bool masks: false -> -inf)
 *                 out: O [B, H, Sq, Dv] = softmax(scale * Q.K^T + mask) . V
 *                 attrs: scale (float, default 1/sqrt(D)), k_transposed (int,
 *                        default 0), causal (int, default 0), num_heads,
 *                        qkv_layout ("bhsd" default, as above; "bshd": Q
 *                        [B, Sq, H*D], K [B, Sk, H*D], V [B, Sk, H*Dv],
 *                        O [B, Sq, H*Dv], H = num_heads, k_transposed 0:
 *                        the head split/merge read as row strides),
 *                        nan_to_zero (int, default 0: 1 = NaN
 *                        probabilities become 0 before . V, the exporters'
 *                        Where(IsNaN(P), 0, P))
 *                 Computed a tile of query rows x all keys at a time
 *                 (SGEMM microkernel, softmax kernel; engine/exec/
 *                 ops_attention.c): the full [Sq, Sk] matrix never exists.
 *   LayerNormalization (ONNX): in X, scale, bias (optional);
 *                 attrs axis (default -1), epsilon (default 1e-5).
 *                 "LayerNorm" is accepted as an alias of the op type.
 *   Gelu (ONNX 20): in X; attr approximate ("none" | "tanh").
 *   RMSNorm       in: X, scale; attrs axis (default -1), epsilon (1e-6).
 *                 y = x / sqrt(mean(x^2 over axis..) + eps) * scale
 *                 rounding (string, default ""): "ggml" = llama.cpp's order
 *                 (kernel family rmsnorm_ggml; the GGUF decoder's norms)
 *                 ("RMSNormalization" is accepted as an alias).
 *   SiLU          in: X; y = x * sigmoid(x).
 *   Rotary        in: X [.., D] (D even), cos, sin (same shape, broadcasting
 *                 to X); y = X*cos + Concat(-X[..,D/2:], X[..,:D/2])*sin
 *                 (rotary position embeddings, rotate_half form).
 *
 * Typical pass (MatMul + Add -> FusedMatMul):
 *
 *     pg_node *mm = g->nodes[mm_id], *add = g->nodes[add_id];  // matched
 *     int y = add->outputs[0];
 *     int ins[3] = { mm->inputs[0], mm->inputs[1], bias_id };
 *     pg_ir_remove_node(g, add_id);   // y keeps existing, producer now -1
 *     int f = pg_ir_add_node(g, "FusedMatMul", NULL, ins, 3, &y, 1);
 *     if (f < 0) return pg_last_status();
 *     pg_ir_set_attr_string(g->nodes[f], "activation", "none");
 *     pg_ir_remove_dead(g);           // drops mm (its output is unread now)
 *
 * Because a tensor has one producer, pg_ir_add_node fails if an output
 * already has a live producer: remove the old producer first (its outputs
 * keep existing as tensors with producer -1), then add the new node with
 * those outputs.  Or give the new node fresh outputs and pg_ir_rewire() the
 * consumers.  pg_ir_remove_dead() drops nodes whose outputs nobody uses and
 * tensors nobody references.
 *
 * Memory: everything the IR owns comes from pg_malloc (engine/core/alloc.h),
 * 64-byte aligned; free constant data with pg_free.
 *
 * All helpers that can fail return -1 / a pg_status and set pg_fail().
 */
#ifndef PG_GRAPH_IR_H
#define PG_GRAPH_IR_H

#include <stddef.h>
#include <stdint.h>

#include "peregrine.h"
#include "namemap.h"

#define PG_MAX_RANK 8
#define PG_DATA_LENT 2   /* pg_tensor.data_borrowed: lent by the graph being compiled */

/* ---- op codes ----------------------------------------------------------- */

/* Every op the engine knows: PG_OP_<ID> for each row of opdefs.def, which
 * also holds the op's names and rules (opdefs.h).  pg_ir_op_from_name /
 * pg_ir_op_name map to and from the op_type string.  PG_OP_UNKNOWN is kept
 * in the IR (so a graph with an unknown op can be built and rendered) and
 * rejected by verify. */
typedef enum pg_opcode {
    PG_OP_UNKNOWN = 0,
#define PG_OPDEF(id, ...) PG_OP_##id,
#include "opdefs.def"
#undef PG_OPDEF
    PG_OP_COUNT_
} pg_opcode;

/* ---- tensors ------------------------------------------------------------- */

typedef enum pg_layout {
    PG_LAYOUT_ROW_MAJOR = 0,  /* dense, strides row-major */
    PG_LAYOUT_PACKED = 1,     /* a constant [K, N] packed into NR-wide panels */
    PG_LAYOUT_PACKED_BF16 = 2, /* [K, N] in bf16 pairs, gemm_bf16's panels (pass_lowp.c) */
    PG_LAYOUT_PACKED_U8S8 = 3  /* [K, N] as s8 + column sums + scales, gemm_u8s8's panels */
} pg_layout;

typedef struct pg_tensor {
    int       id;                    /* index in g->tensors */
    char     *name;                  /* unique in the graph, owned */
    unsigned  name_tag;              /* its tensor_names tag (namemap.h) */
    pg_dtype  dtype;                 /* PG_DTYPE_UNDEFINED until inferred */
    int       rank;                  /* -1 until inferred */
    int64_t   shape[PG_MAX_RANK];    /* -1: unknown */
    int64_t   strides[PG_MAX_RANK];  /* in elements; row-major for now */
    pg_layout layout;
    int       pack_nr;               /* panel width when layout is PACKED */
    int       is_const;              /* data holds the value */
    void     *data;                  /* owned, 64-byte aligned, NULL if not const */
    size_t    nbytes;                /* bytes of data (packed size if PACKED) */
    /* Not 0: data is not the tensor's own but points into memory someone
     * else owns - a loaded model's file mapping (engine/exec/model_io.c),
     * the caller's (pg_graph_add_initializer_view), the shared store
     * (exec/shared_consts.h), or PG_DATA_LENT: the graph being compiled
     * (pg_ir_clone_lent).  Never freed by the IR; pg_ir_set_const_data
     * replaces it with owned data, pg_ir_clone copies it into owned data. */
    int       data_borrowed;
    /* A key standing for data's bytes in a compile with a weight cache, or
     * 0 (exec/weight_cache.h says which constants have one);
     * pg_ir_set_const_data clears it. */
    uint64_t  origin;
    int       producer;              /* node id, -1 for inputs/constants */
    int       is_input;              /* a graph input (fed at run time) */
    /* Compile-time value of a small int tensor that is not a constant (the
     * output of Shape, or arithmetic on shapes): shape inference computes it
     * so that Reshape/Expand/Slice/ConstantOfShape get static shapes even at
     * level 0.  Owned; NULL when not known.  Never used by the executor. */
    void     *known;
    size_t    known_bytes;           /* its block's size (re-inference reuses it) */
    void     *pass_data;             /* scratch for a pass; not owned, not copied */
    /* Readers: one node id per input slot that reads this tensor,
     * ascending (a node reading it twice appears twice).  Owned; kept by
     * the IR helpers. */
    int      *users;
    int       n_users, cap_users;
    int       n_output_refs;         /* times it is listed in g->outputs */
} pg_tensor;

/* ---- attributes ---------------------------------------------------------- */

typedef enum pg_attr_type {
    PG_ATTR_INT = 1, PG_ATTR_FLOAT = 2, PG_ATTR_INTS = 3, PG_ATTR_FLOATS = 4,
    PG_ATTR_STRING = 5, PG_ATTR_TENSOR = 6
} pg_attr_type;

typedef struct pg_attr {
    char        *name;   /* owned */
    pg_attr_type type;
    int64_t      i;      /* INT */
    float        f;      /* FLOAT */
    int64_t     *ints;   /* INTS, owned, n entries */
    float       *floats; /* FLOATS, owned, n entries */
    int          n;
    char        *s;      /* STRING, owned */
    int          tensor; /* TENSOR: a constant tensor id in the same graph */
} pg_attr;

/* ---- nodes --------------------------------------------------------------- */

typedef struct pg_node {
    int       id;          /* index in g->nodes */
    char     *name;        /* unique-ish, owned (generated when not given) */
    unsigned  name_tag;    /* its node_names tag (namemap.h) */
    char     *op_type;     /* as given ("MatMul"), owned */
    pg_opcode op;          /* resolved op_type, PG_OP_UNKNOWN if unknown */
    int       n_inputs;
    int      *inputs;      /* tensor ids, -1 = absent optional input */
    int       n_outputs;
    int      *outputs;     /* tensor ids */
    int       n_attrs;
    pg_attr  *attrs;
    void     *pass_data;   /* scratch for a pass; not owned, not copied */
} pg_node;

/* ---- the graph ----------------------------------------------------------- */

struct pg_graph {
    pg_tensor **tensors;   int n_tensors; int cap_tensors;  /* holes are NULL */
    pg_node   **nodes;     int n_nodes;   int cap_nodes;    /* holes are NULL */
    int        *inputs;    int n_inputs;  int cap_inputs;   /* tensor ids */
    int        *outputs;   int n_outputs; int cap_outputs;  /* tensor ids */
    char      **output_names;                               /* owned, parallel */
    int         name_seq;  /* for generated names */
    int         precision; /* compile option PG_PRECISION_* (pass_lowp.c reads it) */
    pg_weight_cache *weight_cache; /* compile option, during pg_compile only (pass_prepack.c) */
    pg_namemap  tensor_names, node_names;  /* name -> id (namemap.h) */
    /* pg_ir_topo_order's last ordering, kept while topo_keep is set (by
     * pg_compile, on the graph it alone owns): verification, shape
     * inference and the pass log's snapshot after a pass share one.  Every
     * change of the nodes' wiring (pg_ir_add_node, _remove_node,
     * _set_input, and _rewire through it) counts in topo_gen. */
    int         topo_keep;
    uint64_t    topo_gen, topo_kept_gen;
    int        *topo_kept; int topo_kept_n;             /* NULL: none kept */
    /* A clone's one block (pg_ir_clone*): the tensor and node records it
     * copied, their names, reader lists and index arrays, in one
     * allocation instead of ~7,000 for a 600-node GPT-2 (a decode loop
     * clones its template at every step).  Nothing in it is freed alone:
     * pg_ir_free frees the block, and a reader list that grows moves out
     * first.  NULL for a graph built node by node. */
    char       *block, *block_end;
};

#define PG_IR_FOR_NODES(g, n)                                                  \
    for (int n##_i_ = 0; n##_i_ < (g)->n_nodes; n##_i_++)                      \
        for (pg_node *n = (g)->nodes[n##_i_]; n; n = NULL)
#define PG_IR_FOR_TENSORS(g, t)                                                \
    for (int t##_i_ = 0; t##_i_ < (g)->n_tensors; t##_i_++)                    \
        for (pg_tensor *t = (g)->tensors[t##_i_]; t; t = NULL)

/* ---- dtypes and ops ------------------------------------------------------ */

size_t      pg_dtype_size(pg_dtype dt);          /* 0 if unknown */
/* 1 for a dtype a graph's inputs, constants and Casts may have: every known
 * one but float16, which only the GGUF decoder's f16 KV cache (KVCache,
 * KVCacheWrite, KVCacheRead) stores - no other op computes on it */
int         pg_dtype_public(pg_dtype dt);
const char *pg_dtype_name(pg_dtype dt);          /* "float32" */
pg_opcode   pg_ir_op_from_name(const char *op_type);
const char *pg_ir_op_name(pg_opcode op);         /* canonical ONNX name */

/* ---- lifetime ------------------------------------------------------------ */

pg_graph *pg_ir_new(void);                       /* NULL + error on OOM */
void      pg_ir_free(pg_graph *g);
/* Deep copy (tensors with data, nodes, attributes); ids are preserved. */
pg_graph *pg_ir_clone(const pg_graph *g);
/* The same, except that g's borrowed constants on a PG_ALIGN boundary are
 * not copied: the clone's point at the same bytes, data_borrowed
 * PG_DATA_LENT.  For pg_compile, which copies or shares those bytes
 * (shared_consts.c) once the passes have rewritten the graph, so a weight
 * that a pass transposes or packs is never copied as it was. */
pg_graph *pg_ir_clone_lent(const pg_graph *g);
/* The same, except that every borrowed constant stays borrowed, read where
 * it is (pg_graph_copy: the caller keeps those bytes for both graphs). */
pg_graph *pg_ir_clone_views(const pg_graph *g);

/* ---- tensors ------------------------------------------------------------- */

/* A new tensor.  name NULL -> a generated unique name ("t17"); a name that
 * exists already is an error.  rank -1 = unknown shape.  Returns the id. */
int pg_ir_add_tensor(pg_graph *g, const char *name, pg_dtype dt, int rank,
                     const int64_t *shape);
/* A new constant holding a copy of data (nbytes = elements * dtype size;
 * data NULL -> zero-filled, fill it through g->tensors[id]->data). */
int pg_ir_add_const(pg_graph *g, const char *name, pg_dtype dt, int rank,
                    const int64_t *shape, const void *data);
/* A new constant that reads data where it is (data_borrowed): data must
 * outlive the graph, unchanged.  pg_ir_clone copies it. */
int pg_ir_add_const_view(pg_graph *g, const char *name, pg_dtype dt, int rank,
                         const int64_t *shape, const void *data);
/* Id of the tensor with that name, -1 if none (no error set). */
int pg_ir_find_tensor(const pg_graph *g, const char *name);
/* A name not used yet, built from prefix ("prefix", "prefix_1", ...). */
const char *pg_ir_unique_name(pg_graph *g, const char *prefix, char *buf, size_t cap);
/* Removes a tensor that no live node reads or writes and that is not a
 * graph input/output. */
pg_status pg_ir_remove_tensor(pg_graph *g, int t);
/* Removes the constants no node reads (an empty reader list), that are not
 * an attribute's value and not graph outputs: one pass over the graph for
 * all of them (pg_ir_remove_tensor scans every node's attributes for
 * each).  Returns how many went. */
int       pg_ir_remove_unread_consts(pg_graph *g);
/* Sets shape and row-major strides (rank <= PG_MAX_RANK). */
void      pg_ir_set_shape(pg_tensor *t, int rank, const int64_t *shape);
/* pg_graph_set_input_shape for n inputs at once (pg_compile's
 * input_shapes, builder.c): what was inferred from the old shapes is
 * forgotten once, not in a walk of the tensors per input. */
pg_status pg_graph_set_input_shapes(pg_graph *g, int n, const char *const *names, const int *ranks,
                                    const int64_t *const *dims);
int64_t   pg_tensor_numel(const pg_tensor *t);   /* -1 if any dim unknown */
/* Rows of A in a product A . W with a 2-D weight W [K, N] (A's elements
 * over K: what the product runs as one M x K matrix); -1 if unknown. */
int64_t   pg_matmul_rows(const pg_tensor *a, const pg_tensor *w);
int       pg_tensor_shape_known(const pg_tensor *t);
/* Replace a constant's data (takes ownership of a buffer from pg_malloc;
 * frees the old one; the origin key is cleared).  Used by the pre-packing
 * pass with layout PACKED. */
void      pg_ir_set_const_data(pg_tensor *t, void *data, size_t nbytes);
/* The same with bytes someone else owns (data_borrowed), for the key
 * origin: a weight cache's (exec/weight_cache.h). */
void      pg_ir_set_const_view(pg_tensor *t, const void *data, size_t nbytes, uint64_t origin);

/* ---- nodes --------------------------------------------------------------- */

/* A new node reading inputs[] and writing outputs[] (tensor ids; inputs may
 * hold -1 for absent optional inputs).  Outputs must not have a live
 * producer already.  name NULL -> generated.  Returns the node id. */
int  pg_ir_add_node(pg_graph *g, const char *op_type, const char *name,
                    const int *inputs, int n_inputs,
                    const int *outputs, int n_outputs);
/* Frees the node; its outputs stay (producer -1) for a replacement to take. */
void pg_ir_remove_node(pg_graph *g, int node);
/* Every live node reading `from` (and every graph output equal to it) now
 * reads `to`.  The usual last step of a fusion. */
pg_status pg_ir_rewire(pg_graph *g, int from, int to);
/* Replace input slot `slot` of a node (-1: absent). */
pg_status pg_ir_set_input(pg_graph *g, int node, int slot, int tensor);
/* Producer node id of a tensor, -1 if none. */
int  pg_ir_producer(const pg_graph *g, int t);
/* Node ids reading t, in node-id order; returns how many there are (may be
 * more than cap: only cap are written).  A node reading t twice counts once. */
int  pg_ir_consumers(const pg_graph *g, int t, int *out, int cap);
/* 1 if t is a graph output. */
int  pg_ir_is_output(const pg_graph *g, int t);
/* Lists t among the graph outputs under `name` (the builder's add_output). */
pg_status pg_ir_add_graph_output(pg_graph *g, int t, const char *name);
/* Node ids in an execution order (Kahn's algorithm, ties by node id so the
 * order is stable); *n gets the count.  order needs room for g->n_nodes.
 * PG_ERR_GRAPH naming a node on the cycle if there is one. */
pg_status pg_ir_topo_order(const pg_graph *g, int *order, int *n);
/* Drops nodes whose outputs nobody reads (transitively, not graph outputs)
 * and tensors nothing references.  Returns how many nodes it removed. */
int  pg_ir_remove_dead(pg_graph *g);

/* ---- attributes ---------------------------------------------------------- */

/* Setters replace an attribute of the same name.  They copy their data. */
pg_status pg_ir_set_attr_int(pg_node *n, const char *name, int64_t v);
pg_status pg_ir_set_attr_float(pg_node *n, const char *name, float v);
pg_status pg_ir_set_attr_ints(pg_node *n, const char *name, const int64_t *v, int count);
pg_status pg_ir_set_attr_floats(pg_node *n, const char *name, const float *v, int count);
pg_status pg_ir_set_attr_string(pg_node *n, const char *name, const char *v);
pg_status pg_ir_set_attr_tensor(pg_node *n, const char *name, int tensor);
const pg_attr *pg_ir_attr(const pg_node *n, const char *name);  /* NULL if absent */
int64_t     pg_ir_attr_int(const pg_node *n, const char *name, int64_t dflt);
float       pg_ir_attr_float(const pg_node *n, const char *name, float dflt);
const char *pg_ir_attr_string(const pg_node *n, const char *name, const char *dflt);
/* INTS attribute: *count gets the length; NULL (count 0) if absent. */
const int64_t *pg_ir_attr_ints(const pg_node *n, const char *name, int *count);

/* ---- whole-graph steps --------------------------------------------------- */

/* Structural checks: known ops, arity, every input produced or an
 * input/constant, single producers, outputs produced, no cycles.  The error
 * names the node and the reason. */
pg_status pg_ir_verify(const pg_graph *g);
/* Fills dtype/shape of every node output, in topological order; also
 * computes `known` values of small int tensors.  Errors name the node. */
pg_status pg_ir_infer_shapes(pg_graph *g);
/* Text rendering, one line per node in execution order.  Returns a malloc'd
 * string (free with free()), NULL on OOM. */
char *pg_ir_to_text(const pg_graph *g);

#endif /* PG_GRAPH_IR_H */

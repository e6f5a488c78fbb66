/*
 * peregrine.h - the public C API of the Peregrine inference engine.
 *
 * Everything a program (or the Python package, through cffi) may call is
 * declared here.  Conventions:
 *   - every name starts with pg_ / PG_;
 *   - objects are opaque handles created and destroyed through the API;
 *   - every call that can fail returns a pg_status; on failure
 *     pg_last_error() gives a message (per thread) naming what went wrong.
 *
 * The part between PG_CFFI_BEGIN and PG_CFFI_END is read verbatim by
 * peregrine_nb/_lib.py as the cffi cdef, so it must stay plain declarations:
 * no preprocessor directives, no inline code, enums with explicit values.
 */
#ifndef PEREGRINE_H
#define PEREGRINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PG_API __attribute__((visibility("default")))
#else
#define PG_API
#endif

/* PG_CFFI_BEGIN */

/* ---- status and errors ------------------------------------------------ */

typedef enum pg_status {
    PG_OK = 0,
    PG_ERR_INVALID_ARG = 1,   /* a NULL pointer, a bad size, an unknown name */
    PG_ERR_NOMEM = 2,         /* an allocation failed */
    PG_ERR_UNSUPPORTED = 3,   /* this CPU or build cannot do it */
    PG_ERR_SHAPE = 4,         /* shapes that do not agree */
    PG_ERR_DTYPE = 5,         /* a dtype that is not allowed there */
    PG_ERR_GRAPH = 6,         /* a malformed graph: cycle, dangling input, unknown op */
    PG_ERR_IO = 7,            /* a file could not be read */
    PG_ERR_FORMAT = 8,        /* a file is malformed or truncated */
    PG_ERR_INTERNAL = 9       /* a bug in the engine */
} pg_status;

/* Message of the last error raised on this thread ("" if none). */
PG_API const char *pg_last_error(void);
/* Status of the last error raised on this thread (PG_OK if none). */
PG_API pg_status pg_last_status(void);
/* Short name of a status ("PG_ERR_SHAPE"). */
PG_API const char *pg_status_name(pg_status s);
PG_API const char *pg_version(void);

/* ---- CPU detection and the dispatch mask ------------------------------ */

/* One bit per feature.  x86 and AArch64 features have distinct bits. */
typedef enum pg_cpu_flag {
    PG_CPU_SSE2        = 1,
    PG_CPU_SSE41       = 2,
    PG_CPU_AVX         = 4,
    PG_CPU_AVX2        = 8,
    PG_CPU_FMA         = 16,
    PG_CPU_F16C        = 32,
    PG_CPU_AVX512F     = 64,
    PG_CPU_AVX512BW    = 128,
    PG_CPU_AVX512VL    = 256,
    PG_CPU_AVX512DQ    = 512,
    PG_CPU_AVX512VNNI  = 1024,
    PG_CPU_AVXVNNI     = 2048,
    PG_CPU_AVX512BF16  = 4096,
    PG_CPU_AMXBF16     = 8192,   /* AMX-TILE + AMX-BF16, and the OS lets this process use the tiles */
    PG_CPU_AMXINT8     = 16384,  /* AMX-TILE + AMX-INT8, likewise */
    PG_CPU_NEON        = 65536,
    PG_CPU_DOTPROD     = 131072,
    PG_CPU_FP16        = 262144,
    PG_CPU_SVE         = 524288,
    PG_CPU_SVE2        = 1048576,
    PG_CPU_BF16        = 2097152,
    PG_CPU_I8MM        = 4194304
} pg_cpu_flag;

typedef struct pg_cpu_info {
    char     arch[16];          /* "x86_64" or "aarch64" */
    char     vendor[16];        /* "AuthenticAMD", "GenuineIntel", "" */
    char     brand[64];         /* CPU model string where the CPU tells it */
    uint64_t flags;             /* every feature detected (pg_cpu_flag bits) */
    uint64_t mask;              /* the mask in force */
    uint64_t active;            /* flags & mask: what dispatch may use */
    char     level[16];         /* highest dispatch level active: "avx2", "neon", "c" */
    int      vector_bits;       /* widest vector the active level uses */
    int      sve_bits;          /* SVE vector length in bits, 0 without SVE */
    int      cores;             /* online logical CPUs */
    int      l1d_bytes;         /* data caches, per core for L1/L2; 0 if unknown */
    int      l2_bytes;
    int      l3_bytes;
    int      cacheline_bytes;
} pg_cpu_info;

PG_API pg_status pg_cpu_get_info(pg_cpu_info *out);
/* Restrict dispatch to the features in mask (a set of pg_cpu_flag bits). */
PG_API pg_status pg_cpu_set_mask(uint64_t mask);
/* Restrict dispatch by level name: "c", "sse2", "sse41", "avx", "avx2",
 * "avx512", "avx512vnni", "neon", "dotprod", "sve", "sve2", or "all". */
PG_API pg_status pg_cpu_set_mask_name(const char *level);
PG_API uint64_t pg_cpu_get_mask(void);
/* The feature name of one flag bit ("avx2"), NULL if the bit is unused. */
PG_API const char *pg_cpu_flag_name(uint64_t flag);
/* The flags a level name stands for (all levels below it included). */
PG_API pg_status pg_cpu_level_flags(const char *level, uint64_t *out);
/* Dispatch levels of this architecture, lowest ("c") first. */
PG_API int pg_cpu_level_count(void);
PG_API const char *pg_cpu_level_name(int i);

/* ---- kernels: ops and their variant tables ---------------------------- */

/* Every op has one variant table: the single source of truth that dispatch,
 * checkasm, the Python API and the benchmarks all read. */
typedef struct pg_variant_info {
    const char *family;         /* the kernel family: "sgemm" */
    const char *name;           /* "f32_gemm_6x16_avx2_fma3" */
    const char *isa;            /* "avx2", "neon", "c" */
    uint64_t    required;       /* pg_cpu_flag bits it needs */
    int         runnable;       /* the CPU has them (ignores the mask) */
    int         active;         /* runnable and allowed by the mask */
    int         selected;       /* the one dispatch picks now */
    int         self_check;     /* 1: agreed with the C reference on its first use in this
                                   process; -1: disagreed, so dispatch never picks it;
                                   2: no self-check for its family (checkasm only);
                                   0: not run yet */
} pg_variant_info;

PG_API int pg_kernel_family_count(void);
PG_API const char *pg_kernel_family_name(int op);
PG_API const char *pg_kernel_family_description(int op);
/* Index of an op by name, or -1 (and an error) if there is none. */
PG_API int pg_kernel_family_find(const char *name);
PG_API int pg_variant_count(int op);
PG_API pg_status pg_variant_get_info(int op, int variant, pg_variant_info *out);
/* Index of a variant of op by name, or -1 (and an error). */
PG_API int pg_variant_find(int op, const char *name);
/* The variant dispatch picks for op under the current mask. */
PG_API int pg_variant_selected(int op);

/* ---- threads ---------------------------------------------------------- */

/* Threads the kernels use by default (0 = one per online core, or
 * $PEREGRINE_NUM_THREADS when the process was started with it). */
PG_API pg_status pg_set_num_threads(int n);
PG_API int pg_get_num_threads(void);

/* ---- Graph: build, compile and run a model ---------------------------- */
/*
 * Build a graph (ONNX op semantics, numpy broadcasting), compile it (shape
 * inference, optimisation passes by level, memory planning) into a pg_model,
 * then run the model on feeds.  A run allocates nothing (pg_alloc_count).
 *
 *   pg_graph *g; pg_graph_new(&g);
 *   int64_t xd[2] = {4, 8};
 *   pg_graph_add_input(g, "x", PG_DTYPE_FLOAT32, 2, xd);
 *   const char *in[1] = {"x"}, *out[1] = {"y"};
 *   pg_graph_add_node(g, "Relu", "relu0", in, 1, out, 1);
 *   pg_graph_add_output(g, "y");
 *   pg_model *m; pg_compile(g, NULL, &m);
 *   pg_model_run(m, 1, in, feeds, ranks, shapes);
 *   pg_tensor_info y; pg_model_output_info(m, 0, &y);   (y.data: valid until the next run)
 */

/* Element types; the values are ONNX's TensorProto codes (Cast's "to"). */
typedef enum pg_dtype {
    PG_DTYPE_UNDEFINED = 0,
    PG_DTYPE_FLOAT32 = 1,
    PG_DTYPE_UINT8 = 2,
    PG_DTYPE_INT8 = 3,
    PG_DTYPE_INT32 = 6,
    PG_DTYPE_INT64 = 7,
    PG_DTYPE_BOOL = 9,
    PG_DTYPE_FLOAT16 = 10,   /* storage only: the GGUF decoder's f16 KV cache */
    PG_DTYPE_FLOAT64 = 11
} pg_dtype;

typedef struct pg_graph pg_graph;   /* a graph being built */
typedef struct pg_model pg_model;   /* a compiled graph, ready to run */
typedef struct pg_weight_cache pg_weight_cache; /* packed weights kept across compiles */

/* Heap allocations the engine has made so far (a run must not add any). */
PG_API uint64_t pg_alloc_count(void);

PG_API pg_status pg_graph_new(pg_graph **out);
PG_API void pg_graph_free(pg_graph *g);
/* A graph input.  Dims must be concrete (>= 0) for now. */
PG_API pg_status pg_graph_add_input(pg_graph *g, const char *name, pg_dtype dtype,
                                    int rank, const int64_t *dims);
/* A constant (weight); data is copied (elements * dtype size bytes, row-major). */
PG_API pg_status pg_graph_add_initializer(pg_graph *g, const char *name, pg_dtype dtype,
                                          int rank, const int64_t *dims, const void *data);
/* The same without the copy: the graph reads data where it is, so data must
 * stay valid and unchanged until the graph is freed, and be aligned to its
 * element size.  pg_compile copies what the compiled model keeps, so a
 * model outlives it.  For an importer that holds the weights already and
 * builds a graph per input shape. */
PG_API pg_status pg_graph_add_initializer_view(pg_graph *g, const char *name, pg_dtype dtype,
                                               int rank, const int64_t *dims, const void *data);
/* A node.  inputs/outputs are tensor names; an empty string "" is an absent
 * optional input.  name may be NULL (one is generated); attributes are set
 * afterwards by node name. */
PG_API pg_status pg_graph_add_node(pg_graph *g, const char *op_type, const char *name,
                                   const char *const *inputs, int n_inputs,
                                   const char *const *outputs, int n_outputs);
/* Name of the node added last (the generated one when name was NULL). */
PG_API const char *pg_graph_last_node(const pg_graph *g);
PG_API pg_status pg_graph_set_attr_int(pg_graph *g, const char *node, const char *attr, int64_t v);
PG_API pg_status pg_graph_set_attr_float(pg_graph *g, const char *node, const char *attr, float v);
PG_API pg_status pg_graph_set_attr_ints(pg_graph *g, const char *node, const char *attr,
                                        const int64_t *v, int count);
PG_API pg_status pg_graph_set_attr_floats(pg_graph *g, const char *node, const char *attr,
                                          const float *v, int count);
PG_API pg_status pg_graph_set_attr_string(pg_graph *g, const char *node, const char *attr,
                                          const char *v);
/* A tensor-valued attribute (Constant's "value", ConstantOfShape's "value"). */
PG_API pg_status pg_graph_set_attr_tensor(pg_graph *g, const char *node, const char *attr,
                                          pg_dtype dtype, int rank, const int64_t *dims,
                                          const void *data);
PG_API pg_status pg_graph_add_output(pg_graph *g, const char *name);
/* A copy of g to change without rebuilding it: its inputs, constants,
 * nodes and outputs.  The constants g read in place (added as views)
 * are read in place by the copy too; the others are copied. */
PG_API pg_status pg_graph_copy(const pg_graph *g, pg_graph **out);
/* Gives input `name` another shape (concrete dims); the shapes inferred
 * from the old one are forgotten (the next compile or check infers them). */
PG_API pg_status pg_graph_set_input_shape(pg_graph *g, const char *name, int rank,
                                          const int64_t *dims);
/* Text rendering (one line per node); owned by the graph, valid until the
 * next call on it.  NULL + error on a graph that cannot be ordered. */
PG_API const char *pg_graph_text(pg_graph *g);
/* Runs verification and shape inference on the graph as built. */
PG_API pg_status pg_graph_check(pg_graph *g);

/* The graph ops (not to be confused with the kernel families above: a graph
 * op such as MatMul is bound to variants of kernel families such as sgemm).
 * One descriptor per op, the table the IR, shape inference, the executor
 * and the ONNX importer all read. */
typedef struct pg_graph_op_info {
    const char *name;         /* the op_type nodes name it by: "MatMul" */
    const char *onnx_name;    /* the ONNX op it implements, NULL: an op the passes create */
    int onnx_version;         /* the newest since_version it implements */
    int min_inputs, max_inputs, min_outputs, max_outputs;
    uint32_t value_inputs;    /* bit i: input i must be known at compile time */
    int is_view;              /* output 0 shares input 0's bytes */
    int in_place;             /* the output may overwrite an input */
    int binds_kernels;        /* runs kernels from variant tables */
} pg_graph_op_info;

PG_API int pg_graph_op_count(void);
PG_API pg_status pg_graph_op_get_info(int i, pg_graph_op_info *out);

typedef struct pg_compile_options {
    int level;                /* 0 none, 1 basic, 2 extended (fusions), 3 + layout */
    const char *disabled;     /* comma-separated pass names to skip, or NULL */
    int threads;              /* 0 = the default (pg_get_num_threads, read at compile time:
                                 per-thread scratch is planned for it) */
    const char *planner;      /* "greedy_by_size" (default), "greedy_by_first_use", "naive" */
    int precision;            /* PG_PRECISION_FP32 (0, default), _BF16, _INT8_DYNAMIC: the
                                 constant MatMul weights packed for the bf16 / int8 GEMM
                                 (level 3), activations converted at each product's input;
                                 where the CPU (mask) has no such kernel, fp32 */
    pg_weight_cache *weight_cache; /* or NULL: see pg_weight_cache_new */
    /* Inputs compiled at other shapes than the graph's (n_input_shapes 0:
     * none), as pg_graph_set_input_shape would set them on a copy: one
     * graph serves every shape set of a model (a decode loop's growing
     * past) without a copy of it per shape set.  Their names, ranks and
     * dims. */
    int n_input_shapes;
    const char *const *input_shape_names;
    const int *input_shape_ranks;
    const int64_t *const *input_shape_dims;
    /* 1: keep no pass log (pg_model_pass_count gives 0).  The log's
     * snapshot after each pass and its change texts are ~20% of a compile:
     * a compile per shape set of a decode loop is never stepped through. */
    int no_pass_log;
} pg_compile_options;

/* A cache of the weights compiles have packed, for compiling one model's
 * weights again at other input shapes (an OnnxModel's shape sets, a decode
 * loop's growing past): a compile that names it takes the packed weights
 * an earlier one made from the same lent constants instead of packing
 * them again.  It knows a lent constant (pg_graph_add_initializer_view)
 * by its address: the caller promises that every constant lent to a
 * compile naming the cache keeps its address and its bytes while the
 * cache lives.  It keeps what it holds alive (one copy of the weights,
 * shared with the models) until freed; models compiled with it outlive it
 * safely. */
PG_API pg_status pg_weight_cache_new(pg_weight_cache **out);
PG_API void pg_weight_cache_free(pg_weight_cache *c);
typedef struct pg_weight_cache_stats {
    int entries;              /* constants held */
    uint64_t bytes;           /* their bytes */
    uint64_t hits, misses;    /* of the keyed constants compiles kept so far, those found
                                 here and those added */
} pg_weight_cache_stats;
PG_API pg_status pg_weight_cache_get_stats(const pg_weight_cache *c, pg_weight_cache_stats *out);

enum { PG_PRECISION_FP32 = 0, PG_PRECISION_BF16 = 1, PG_PRECISION_INT8_DYNAMIC = 2 };

/* The most bytes one tensor, or a model's activation arena, may take; a
 * graph that needs more is refused at compile time naming the tensor
 * (PG_ERR_SHAPE).  Default: the machine's physical memory, or
 * $PEREGRINE_MEMORY_LIMIT; 0 restores the default. */
PG_API pg_status pg_set_memory_limit(uint64_t bytes);
PG_API uint64_t pg_get_memory_limit(void);

/* Compiles a copy of g (g itself is left as built).  opts NULL = level 3.
 * Every step is bound to its kernel variants now, under the current CPU
 * mask, its weights packed and its scratch planned for them. */
PG_API pg_status pg_compile(const pg_graph *g, const pg_compile_options *opts, pg_model **out);
PG_API void pg_model_free(pg_model *m);
/* 1 when the CPU mask has changed since the model was bound: it still runs
 * the kernels it was bound to (this CPU runs them all) until rebound. */
PG_API int pg_model_is_stale(const pg_model *m);
/* Binds the model again under the current mask: weights re-packed for the
 * newly selected SGEMM panel width, scratch and arena planned anew.  On
 * failure the model refuses to run until a rebind succeeds. */
PG_API pg_status pg_model_rebind(pg_model *m);

/* A tensor as the model sees it: inputs, outputs. */
typedef struct pg_tensor_info {
    const char *name;
    pg_dtype dtype;
    int rank;
    int64_t dims[8];
    void *data;               /* outputs after a run: valid until the next run */
    uint64_t nbytes;
} pg_tensor_info;

PG_API int pg_model_input_count(const pg_model *m);
PG_API pg_status pg_model_input_info(const pg_model *m, int i, pg_tensor_info *out);
PG_API int pg_model_output_count(const pg_model *m);
PG_API pg_status pg_model_output_info(const pg_model *m, int i, pg_tensor_info *out);

/* Runs the model.  Feeds are matched by name; every input must be fed, with
 * exactly the compiled shape (ranks[i], shapes[i]) - a mismatch is
 * PG_ERR_SHAPE naming the input.  Feed buffers are read, never written, and
 * need no alignment.  Outputs land in model-owned buffers
 * (pg_model_output_info); no allocation happens. */
PG_API pg_status pg_model_run(pg_model *m, int n_feeds, const char *const *names,
                              const void *const *data, const int *ranks,
                              const int64_t *const *shapes);

/* pg_model_run with the outputs written to the caller's buffers: out[i]
 * (n_out = pg_model_output_count, or 0 for none) holds output i's nbytes
 * (pg_model_output_info), NULL for an output not wanted.  An output that
 * the plan gives a buffer of its own in the arena is computed straight into
 * out[i] when out[i] is 64-byte aligned (no copy: a decoding step's present
 * key / values are megabytes); any other is copied there at the end.  The
 * model-owned output buffers are not written for those outputs. */
PG_API pg_status pg_model_run_into(pg_model *m, int n_feeds, const char *const *names,
                                   const void *const *data, const int *ranks,
                                   const int64_t *const *shapes, int n_out, void *const *out);

/* The memory plan, one row per tensor with storage. */
typedef enum pg_plan_kind {
    PG_PLAN_ARENA = 0,        /* its own range of the activation arena */
    PG_PLAN_VIEW = 1,         /* shares its source's buffer (Reshape, QKV parts) */
    PG_PLAN_INPLACE = 2,      /* reuses a dying input's buffer */
    PG_PLAN_INPUT = 3,        /* the caller's feed buffer */
    PG_PLAN_WEIGHT = 4,       /* the persistent weight arena */
    PG_PLAN_PERSISTENT = 5    /* a buffer kept across runs, outside the arena (an LLM's
                                 KV cache); offset: in the persistent block */
} pg_plan_kind;

typedef struct pg_plan_row {
    const char *tensor;
    uint64_t bytes;
    int64_t offset;           /* in its arena; -1 for inputs */
    int first;                /* step that produces it (-1: before the first) */
    int last;                 /* last step that reads it */
    pg_plan_kind kind;
    const char *alias_of;     /* VIEW / INPLACE: the tensor whose buffer it uses */
} pg_plan_row;

typedef struct pg_model_stats {
    uint64_t arena_bytes;     /* the activation arena this plan needs */
    uint64_t naive_bytes;     /* sum of every activation tensor's size */
    uint64_t lower_bound_bytes; /* max over steps of bytes live at that step */
    uint64_t weight_bytes;    /* the persistent weight arena */
    int steps;                /* nodes executed per run */
    int planned;              /* rows in the plan */
    const char *planner;
    uint64_t persistent_bytes; /* buffers kept across runs (PG_PLAN_PERSISTENT: a KV cache) */
    uint64_t shared_weight_bytes; /* of the weights, the bytes another live model holds too
                                     (one copy in the process, not one each) */
} pg_model_stats;

PG_API pg_status pg_model_get_stats(const pg_model *m, pg_model_stats *out);
PG_API int pg_model_plan_count(const pg_model *m);
PG_API pg_status pg_model_plan_row(const pg_model *m, int i, pg_plan_row *out);

/* The execution order. */
typedef struct pg_step_info {
    const char *node;
    const char *op_type;
    const char *inputs;       /* "x:float32[4,8], w:float32[8,8]" */
    const char *outputs;
    const char *detail;       /* attributes worth showing and the bound kernels
                                 ("activation=gelu packed-B kernel=f32_gemm_12x32_avx512f") */
} pg_step_info;

PG_API int pg_model_step_count(const pg_model *m);
PG_API pg_status pg_model_step_info(const pg_model *m, int i, pg_step_info *out);

/* Where a run's time goes.  pg_model_profile(m, 1) zeroes the counts and
 * starts timing each step of the runs that follow (two clock reads a
 * step; no allocation); 0 stops, keeping what was counted.  Rebinding the
 * model zeroes them too. */
typedef struct pg_step_time {
    uint64_t ns;      /* the step's wall time, summed over the runs timed */
    uint64_t runs;    /* runs timed */
    double   flops;   /* one run's floating-point operations: 2 x the multiply-adds of a
                         conv or matrix product as the op defines them, 0 for other ops */
} pg_step_time;

PG_API pg_status pg_model_profile(pg_model *m, int on);
PG_API pg_status pg_model_step_time(const pg_model *m, int i, pg_step_time *out);
/* The compiled graph as text (after passes), owned by the model. */
PG_API const char *pg_model_text(const pg_model *m);

/* ---- saved compiled models -------------------------------------------- */
/*
 * pg_model_save writes a compiled model to one file: the graph after its
 * passes (tensors with dtype, shape, layout and panel width, nodes with
 * their attributes), what it was compiled with (level, threads, planner),
 * the CPU flags its kernels were bound under, and every constant's bytes
 * (weights as packed), each at a 64-byte aligned offset of the file.
 * pg_model_save_many writes several models to one file with every
 * constant stored once (one network compiled for several input shapes
 * shares its weights).  pg_model_load maps the file read-only and points
 * the constants into the mapping (zero copy: processes loading one file
 * share its pages), then binds kernels and plans memory for the CPU mask in
 * force now; a weight packed for a panel width the now-selected SGEMM
 * kernel lacks is re-packed into the model's own memory.  No pass runs
 * again.
 *
 * Layout (byte offsets; numbers in the writer's byte order, which must be
 * the reader's; engine/exec/model_io.c):
 *   0    char[8]  magic "PGMODEL\0"
 *   8    u32      format version (1)
 *   12   u32      0x01020304, the byte-order mark
 *   16   char[32] pg_version() of the engine that wrote it
 *   48   u64      fingerprint of that engine's op table (names, arities)
 *   56   char[16] arch ("x86_64")
 *   72   u64      file bytes;  80 u64 table offset (256);  88 u32 models
 *   96   u64      table checksum
 *   104  u64 x 3  data offset (4096-aligned), data bytes, data checksum
 *   128  u64      checksum of bytes 0..127      (the rest up to 256: zero)
 *   256  the model table, 128 bytes per model:
 *          0 u64 x 3  graph offset, graph bytes, graph checksum
 *          24 u64     CPU flags its kernels were bound under (pg_cpu_flag bits)
 *          32 char[16] their dispatch level ("avx512")
 *          48 i32 x 4 level, threads as asked (0 = default), threads resolved,
 *                     SGEMM panel width of its packed weights (0: none)
 *          64 char[32] planner;  96 u32 x 2 tensors, nodes
 *          104 i32    the precision of its products (PG_PRECISION_*: int8
 *                     or bf16 when any weight is packed for that GEMM)
 *   then each model's graph section: tensors (name, dtype, rank, dims,
 *   layout, panel width, const / input flags, a constant's data offset and
 *   bytes), nodes (name, op type, input and output tensor indices,
 *   attributes), the input table, the output table (index, name);
 *   then the data section, each distinct constant 64-aligned in it.
 * Checksums are FNV-1a over 64-bit words (bytes for the tail).  Every
 * count, length, offset and id read from the file is checked against the
 * file and the graph: a truncated or damaged file is PG_ERR_FORMAT naming
 * what is wrong, never a crash.  A file from another format version,
 * engine version or op table is PG_ERR_FORMAT saying which.  The weights'
 * checksum is only verified with verify_data (it reads them all). */

typedef struct pg_model_load_options {
    int index;                /* which model of the file (pg_model_save_many order) */
    int threads;              /* 0 = as the file says (its threads option; 0 there = the default now) */
    const char *planner;      /* NULL = as the file says */
    int verify_data;          /* 1: check the constants' checksum (reads every weight) */
} pg_model_load_options;

/* What a saved file says about itself and its model `index` (checked). */
typedef struct pg_model_file_info {
    uint32_t format_version;
    int n_models;
    char engine_version[32];
    char arch[16];
    char bound_level[16];     /* the dispatch level its kernels were bound at */
    uint64_t bound_flags;
    int level;
    int threads;              /* the threads option it was compiled with (0 = default) */
    int threads_resolved;
    int pack_nr;              /* SGEMM panel width of its packed weights (0: none packed) */
    char planner[32];
    uint64_t file_bytes, graph_bytes, data_bytes;
    int n_tensors, n_nodes;
    int precision;            /* PG_PRECISION_* of its products (packed bf16 / int8 weights) */
} pg_model_file_info;

/* Where a model's constants live and what loading it did. */
typedef struct pg_model_load_info {
    int loaded;               /* 1: from pg_model_load, 0: compiled in this process */
    uint64_t mapped_bytes;    /* constant bytes read in place from the file mapping */
    uint64_t owned_bytes;     /* constant bytes in the model's own memory */
    int repacked;             /* weights re-packed at load for this CPU's SGEMM panel width */
    int rebound;              /* 1: bound under other CPU flags than the file's */
    uint64_t file_flags;      /* the CPU flags the file was bound under (0 if not loaded) */
} pg_model_load_info;

PG_API pg_status pg_model_save(const pg_model *m, const char *path);
PG_API pg_status pg_model_save_many(const pg_model *const *models, int n, const char *path);
/* options NULL = model 0, as the file says. */
PG_API pg_status pg_model_load(const char *path, const pg_model_load_options *options,
                               pg_model **out);
PG_API pg_status pg_model_file_info_get(const char *path, int index, pg_model_file_info *out);
PG_API pg_status pg_model_get_load_info(const pg_model *m, pg_model_load_info *out);

/* ---- GEMV: y = x . B (+ bias), the M = 1 (decode) product -------------- */

/* y[j] = bias[j] + sum_k x[k] * B[k * ldb + j] for 0 <= j < N.  B is K x N
 * row-major with leading dimension ldb >= N (SGEMM's unpacked B layout);
 * bias may be NULL.  variant: an index into the "gemv" variant table, or -1
 * for the one dispatch picks.  Bound by memory bandwidth: B is read once. */
PG_API pg_status pg_gemv(int variant, size_t N, size_t K, const float *x, const float *B,
                         size_t ldb, const float *bias, float *y);
/* The same product with the weights in nn.Linear (and GGUF) layout:
 * y[n] = bias[n] + sum_k W[n * ldw + k] * x[k] for 0 <= n < N, W N x K
 * row-major with ldw >= K; variant indexes the "gemv_nk" table (-1:
 * dispatch).  Reads W once, row by row. */
PG_API pg_status pg_gemv_nk(int variant, size_t N, size_t K, const float *x, const float *W,
                            size_t ldw, const float *bias, float *y);
/* The yardstick for bandwidth-bound kernels: copies `bytes` (>= 4096) with
 * an assembly streaming loop on `threads` threads and returns the best pass
 * in GB/s counted as STREAM's Copy does, (read + written) / time; -1.0 and
 * an error on bad arguments.  Takes about a quarter second. */
PG_API double pg_measure_copy_gbps(size_t bytes, int threads);

/* ---- SGEMM: C = A . B (+ bias) (+ activation), fp32 ------------------ */

/* Activations fused into the GEMM epilogue.  GELU is the exact (erf) form,
 * 0.5 x (1 + erf(x / sqrt 2)), to about 1e-6 relative. */
typedef enum pg_act {
    PG_ACT_NONE = 0,
    PG_ACT_RELU = 1,
    PG_ACT_GELU = 2
} pg_act;

/* B packed once into one microkernel's panel layout (opaque). */
typedef struct pg_packed_b pg_packed_b;

/* Pack B (K x N, row-major, leading dimension ldb >= N) for the "sgemm"
 * variant `variant` (-1: the one dispatch picks now).  The packed object
 * remembers its variant, so later calls need no dispatch and never repack.
 * PG_ERR_UNSUPPORTED if the CPU cannot run that variant. */
PG_API pg_status pg_sgemm_pack(int variant, size_t K, size_t N, const float *B, size_t ldb,
                               pg_packed_b **out);
PG_API void pg_packed_b_free(pg_packed_b *b);
/* Shape and variant index of a packed B (any out pointer may be NULL). */
PG_API pg_status pg_packed_b_get_info(const pg_packed_b *b, size_t *K, size_t *N,
                                      int *variant);
/* C[M x N] = act(A[M x K] . B + bias), all row-major: A with leading
 * dimension lda >= K, C with ldc >= N; bias (N floats) may be NULL; act is a
 * pg_act.  threads: 0 = pg_get_num_threads().  Allocates nothing. */
PG_API pg_status pg_sgemm_packed(size_t M, const float *A, size_t lda, const pg_packed_b *B,
                                 const float *bias, int act, float *C, size_t ldc,
                                 int threads);
/* The same on an unpacked B (ldb >= N): packs into a temporary first, so
 * for repeated products with one B, pack once and call pg_sgemm_packed. */
PG_API pg_status pg_sgemm(int variant, size_t M, size_t N, size_t K, const float *A,
                          size_t lda, const float *B, size_t ldb, const float *bias, int act,
                          float *C, size_t ldc, int threads);
/* The yardstick for compute-bound kernels: fp32 FMA throughput of this CPU
 * in GFLOP/s (an FMA counts 2), measured by an assembly loop of independent
 * FMA chains (the widest the active CPU mask allows, as dispatch does:
 * AVX-512 zmm, AVX2 ymm or NEON q; under a mask below all of them the
 * narrowest the CPU runs) on `threads` threads (0 = default), best
 * of a few runs; about 0.1 s.  One thread is timed in its own CPU time (so
 * a busy machine does not lower it), more in wall time.  -1.0 and an error
 * if no FMA loop runs here. */
PG_API double pg_measure_fma_peak_gflops(int threads);
/* The same yardstick for the low-precision GEMMs: a loop of independent
 * vdpbf16ps zmm (64 flops each: 32 bf16 products and their sums) and of
 * vpdpbusd zmm (128 int8 ops each), on every thread.  -1.0 and an error
 * where the CPU (or the mask) lacks AVX512-BF16 / AVX512-VNNI. */
PG_API double pg_measure_bf16_peak_gflops(int threads);
PG_API double pg_measure_vnni_peak_gops(int threads);
/* The AMX tile unit's: TDPBF16PS / TDPBUSD on full tiles (-1.0 and an
 * error without AMX, or without the OS's grant of the tile state). */
PG_API double pg_measure_amx_bf16_peak_gflops(int threads);
PG_API double pg_measure_amx_int8_peak_gops(int threads);

/* ---- GGUF: model files, read-only and zero-copy ----------------------- */

/* A GGUF file is mapped read-only; metadata and tensor data are read in
 * place.  Every count, length, offset and type is checked against the file
 * size when the file is opened, so a truncated or corrupt file is a
 * PG_ERR_FORMAT naming what is wrong and at which byte offset, never a
 * crash.  Strings handed out point into the mapping (or into the handle)
 * and live until pg_gguf_close. */
typedef struct pg_gguf pg_gguf;

/* Metadata value types (the numbers the file uses). */
typedef enum pg_gguf_type {
    PG_GGUF_UINT8 = 0,
    PG_GGUF_INT8 = 1,
    PG_GGUF_UINT16 = 2,
    PG_GGUF_INT16 = 3,
    PG_GGUF_UINT32 = 4,
    PG_GGUF_INT32 = 5,
    PG_GGUF_FLOAT32 = 6,
    PG_GGUF_BOOL = 7,
    PG_GGUF_STRING = 8,
    PG_GGUF_ARRAY = 9,
    PG_GGUF_UINT64 = 10,
    PG_GGUF_INT64 = 11,
    PG_GGUF_FLOAT64 = 12
} pg_gguf_type;

/* Tensor element types (ggml's numbering).  Sizes are known for all of
 * these; pg_gguf_dequantize expands all but i64. */
typedef enum pg_ggml_type {
    PG_GGML_F32 = 0,
    PG_GGML_F16 = 1,
    PG_GGML_Q4_0 = 2,
    PG_GGML_Q4_1 = 3,
    PG_GGML_Q5_0 = 6,
    PG_GGML_Q5_1 = 7,
    PG_GGML_Q8_0 = 8,
    PG_GGML_Q8_1 = 9,
    PG_GGML_Q2_K = 10,
    PG_GGML_Q3_K = 11,
    PG_GGML_Q4_K = 12,
    PG_GGML_Q5_K = 13,
    PG_GGML_Q6_K = 14,
    PG_GGML_Q8_K = 15,
    PG_GGML_I8 = 24,
    PG_GGML_I16 = 25,
    PG_GGML_I32 = 26,
    PG_GGML_I64 = 27,
    PG_GGML_F64 = 28,
    PG_GGML_BF16 = 30
} pg_ggml_type;

typedef struct pg_gguf_tensor_info {
    const char *name;        /* NUL-terminated, owned by the handle */
    int         type;        /* pg_ggml_type */
    int         n_dims;      /* 1..4 */
    int64_t     dims[4];     /* dims[0] varies fastest (the row length); unused = 1 */
    int64_t     n_elements;
    uint64_t    offset;      /* from the start of the data section */
    uint64_t    file_offset; /* from the start of the file */
    uint64_t    bytes;
    const void *data;        /* into the read-only mapping */
} pg_gguf_tensor_info;

PG_API pg_status pg_gguf_open(const char *path, pg_gguf **out);
/* Unmaps the file; NULL is allowed. */
PG_API void pg_gguf_close(pg_gguf *g);
PG_API uint32_t pg_gguf_version(const pg_gguf *g);
PG_API uint32_t pg_gguf_alignment(const pg_gguf *g);
/* Size of the mapped file and the offset of its data section. */
PG_API uint64_t pg_gguf_file_size(const pg_gguf *g);
PG_API uint64_t pg_gguf_data_offset(const pg_gguf *g);

/* Metadata.  Keys are addressed by index 0..count-1. */
PG_API int64_t pg_gguf_kv_count(const pg_gguf *g);
/* The key (NUL-terminated), NULL + error for a bad index. */
PG_API const char *pg_gguf_kv_key(const pg_gguf *g, int64_t i);
/* Index of a key, or -1 when the file has no such key (no error set). */
PG_API int64_t pg_gguf_find_key(const pg_gguf *g, const char *key);
/* Value type (pg_gguf_type), -1 + error for a bad index. */
PG_API int pg_gguf_kv_type(const pg_gguf *g, int64_t i);
/* Element type of an array value, -1 + error if the value is no array. */
PG_API int pg_gguf_kv_array_type(const pg_gguf *g, int64_t i);
/* Any integer or bool value (uint64 above INT64_MAX is an error). */
PG_API pg_status pg_gguf_get_int(const pg_gguf *g, int64_t i, int64_t *out);
/* float32 or float64. */
PG_API pg_status pg_gguf_get_float(const pg_gguf *g, int64_t i, double *out);
/* A string value: bytes into the mapping, NOT NUL-terminated, and its length. */
PG_API pg_status pg_gguf_get_string(const pg_gguf *g, int64_t i, const char **s, uint64_t *len);
PG_API pg_status pg_gguf_array_len(const pg_gguf *g, int64_t i, uint64_t *n);
PG_API pg_status pg_gguf_array_get_int(const pg_gguf *g, int64_t i, uint64_t j, int64_t *out);
PG_API pg_status pg_gguf_array_get_float(const pg_gguf *g, int64_t i, uint64_t j, double *out);
PG_API pg_status pg_gguf_array_get_string(const pg_gguf *g, int64_t i, uint64_t j,
                                          const char **s, uint64_t *len);
/* The packed elements of a numeric array, in place (little-endian, maybe
 * unaligned); an error for an array of strings. */
PG_API pg_status pg_gguf_array_data(const pg_gguf *g, int64_t i, const void **data);

/* Tensors. */
PG_API int64_t pg_gguf_tensor_count(const pg_gguf *g);
PG_API pg_status pg_gguf_tensor_info_get(const pg_gguf *g, int64_t i, pg_gguf_tensor_info *out);
/* Index of a tensor by name, or -1 and an error. */
PG_API int64_t pg_gguf_find_tensor(const pg_gguf *g, const char *name);
/* Expand tensor i to f32; n must equal its element count. */
PG_API pg_status pg_gguf_dequantize(const pg_gguf *g, int64_t i, float *out, int64_t n);
/* Expand rows [row0, row0 + n_rows) of tensor i (a row = dims[0] elements)
 * into out (n_rows * dims[0] floats): an embedding lookup. */
PG_API pg_status pg_gguf_dequantize_rows(const pg_gguf *g, int64_t i, int64_t row0,
                                         int64_t n_rows, float *out);
/* Expand n elements of type from packed blocks (n a multiple of the block). */
PG_API pg_status pg_dequantize(int type, const void *src, float *out, int64_t n);
/* Name ("q4_1"), elements per block and bytes per block of a tensor type;
 * NULL / 0 for a type the engine does not know. */
PG_API const char *pg_ggml_type_name(int type);
PG_API int64_t pg_ggml_type_block_size(int type);
PG_API int64_t pg_ggml_type_block_bytes(int type);

/* ---- tokenizer: byte-level BPE or SentencePiece from a GGUF file ------ */

/* Built from tokenizer.ggml.* metadata (model "gpt2": byte-level BPE, or
 * "llama": SentencePiece, merged by score with <0xNN> byte fallback, as
 * Llama 2, Mistral, Gemma and Phi-3 files have it); copies what it needs,
 * so the GGUF may be closed afterwards.  BPE pre-tokenizers: "smollm" and
 * its family (every digit its own word, then the GPT-2 rules), "gpt-2" and
 * its family, "llama-bpe" and its family (llama 3), "qwen2"; others are
 * PG_ERR_UNSUPPORTED. */
typedef struct pg_tokenizer pg_tokenizer;

/* Token types (tokenizer.ggml.token_type). */
typedef enum pg_token_type {
    PG_TOKEN_UNDEFINED = 0,
    PG_TOKEN_NORMAL = 1,
    PG_TOKEN_UNKNOWN = 2,
    PG_TOKEN_CONTROL = 3,
    PG_TOKEN_USER_DEFINED = 4,
    PG_TOKEN_UNUSED = 5,
    PG_TOKEN_BYTE = 6
} pg_token_type;

PG_API pg_status pg_tokenizer_from_gguf(const pg_gguf *g, pg_tokenizer **out);
PG_API void pg_tokenizer_free(pg_tokenizer *t);
PG_API int32_t pg_tokenizer_vocab_size(const pg_tokenizer *t);
/* Special ids from the file, -1 where it names none. */
PG_API int32_t pg_tokenizer_bos(const pg_tokenizer *t);
PG_API int32_t pg_tokenizer_eos(const pg_tokenizer *t);
/* 1 if prompts should start with BOS: tokenizer.ggml.add_bos_token, or the
 * pre-tokenizer's default when the file does not say (llama.cpp's rule). */
PG_API int pg_tokenizer_wants_bos(const pg_tokenizer *t);
/* tokenizer.ggml.pre ("smollm"). */
PG_API const char *pg_tokenizer_pre(const pg_tokenizer *t);
/* The token's vocabulary text (byte-mapped form, "Ġthe"), NULL + error if out of range. */
PG_API const char *pg_tokenizer_token_text(const pg_tokenizer *t, int32_t id);
/* pg_token_type of a token, -1 + error if out of range. */
PG_API int pg_tokenizer_token_type(const pg_tokenizer *t, int32_t id);
/* Token id of an exact vocabulary text, -1 if none (no error). */
PG_API int32_t pg_tokenizer_find(const pg_tokenizer *t, const char *text);

/* Encode len bytes of UTF-8 (invalid bytes become U+FFFD, as llama.cpp
 * does).  add_bos puts the BOS id first.  parse_special: control and
 * user-defined tokens written in the text ("<|im_start|>") become their
 * ids; otherwise only user-defined ones do.  If capacity is too small the
 * call fails with PG_ERR_SHAPE and *n_out says how many ids it needs. */
PG_API pg_status pg_tokenize(const pg_tokenizer *t, const char *text, size_t len,
                             int add_bos, int parse_special,
                             int32_t *ids, size_t capacity, size_t *n_out);
/* The bytes one token stands for (maybe part of a UTF-8 character).
 * Control tokens give their text when special is set, nothing otherwise.
 * Too small a buffer: PG_ERR_SHAPE with *n_out = bytes needed.  Not
 * NUL-terminated. */
PG_API pg_status pg_token_to_piece(const pg_tokenizer *t, int32_t id, int special,
                                   char *buf, size_t capacity, size_t *n_out);
/* The bytes of a token sequence (pieces concatenated; a SentencePiece
 * vocabulary with add_space_prefix drops the first piece's leading space,
 * as llama_detokenize does), same conventions. */
PG_API pg_status pg_detokenize(const pg_tokenizer *t, const int32_t *ids, size_t n_ids,
                               int special, char *buf, size_t capacity, size_t *n_out);

/* ---- elementwise and row kernels (fp32) ------------------------------- */

/* One call per op family, each over whole rows, for Python and the
 * benchmarks (the graph executor calls the kernels through their tables).
 * variant is an index into the op's variant table (pg_kernel_family_find,
 * pg_variant_find) or -1 for the one dispatch picks, so variants can be
 * raced.  A pointer may be NULL only when there is nothing to do; y may
 * equal x (or a) with the same stride: in place.  Single-threaded. */

/* y[i] = f(x[i]) for i < n.  op: "vexp" (or "exp"), "sigmoid", "silu",
 * "tanh", "gelu_erf", "gelu_tanh" (the error bounds are in each op's
 * header, engine/kernels/<op>/<op>.h). */
PG_API pg_status pg_kernel_unary(const char *op, int variant, size_t n, const float *x, float *y);
/* y[r * cols + c] = a[r * cols + c] (op) b[r * b_row_stride + c] for
 * r < rows, c < cols: a and y dense; b_row_stride = 0 broadcasts one row of
 * b to every row (a bias, a scale), cols or more walks b's rows.
 * op: "add" (the vadd table) or "mul" (vmul). */
PG_API pg_status pg_kernel_binary(const char *op, int variant, size_t rows, size_t cols,
                                  const float *a, const float *b, size_t b_row_stride, float *y);
/* Each row r: y = softmax(scale * x + mask), max-subtracted.  mask: NULL or
 * one row of cols (additive: 0 keeps, -inf drops) broadcast to every row.
 * Rows at x + r * ldx and y + r * ldy (ldx, ldy >= cols).  A row whose every
 * value is -inf comes out NaN. */
PG_API pg_status pg_kernel_softmax(int variant, size_t rows, size_t cols, const float *x,
                                   size_t ldx, float scale, const float *mask, float *y,
                                   size_t ldy);
/* Each row: y = (x - mean) / sqrt(var + eps) * gamma + beta, var the biased
 * (1/cols) variance.  gamma: cols floats, required; beta: cols floats or
 * NULL for none.  eps >= 0. */
PG_API pg_status pg_kernel_layernorm(int variant, size_t rows, size_t cols, const float *x,
                                     size_t ldx, const float *gamma, const float *beta, float eps,
                                     float *y, size_t ldy);
/* Each row: y = x / sqrt(mean(x^2) + eps) * gamma; gamma required, eps >= 0. */
PG_API pg_status pg_kernel_rmsnorm(int variant, size_t rows, size_t cols, const float *x,
                                   size_t ldx, const float *gamma, float eps, float *y,
                                   size_t ldy);

/* ---- Passes: the graph optimiser and its log, pass by pass ------------ */
/*
 * pg_compile runs the optimisation passes of its level (pg_compile_options:
 * level 0 none, 1 basic, 2 extended, 3 layout; `disabled` names passes to
 * skip - an unknown name is an error listing the known ones).  The model
 * keeps what every pass did so a viewer can step through them:
 *   entry 0            "input": the graph as built;
 *   entries 1..count-1 every registered pass in the order they run, enabled
 *                      or not, with its changes (node added / removed /
 *                      rewritten, each with a reason such as "fused 9 nodes
 *                      ReduceMean..Add into LayerNormalization 'ln_1'") and
 *                      the graph as it stood after it (a snapshot: nodes in
 *                      execution order with inputs, outputs, shapes, dtypes,
 *                      attributes and a 'fused' mark).
 * A model compiled at level 0 has no log (count 0).  Strings live as long as
 * the model.
 *
 *   for (int p = 0; p < pg_model_pass_count(m); p++) {
 *       pg_pass_info pi; pg_model_pass_info(m, p, &pi);
 *       for (int i = 0; i < pi.n_changes; i++) { pg_pass_change c; pg_model_pass_change(m, p, i, &c); }
 *       for (int i = 0; i < pi.n_nodes; i++) { pg_snapshot_node n; pg_model_snapshot_node(m, p, i, &n); }
 *   }
 */

typedef enum pg_pass_change_kind {
    PG_PASS_CHANGE_ADDED = 0,
    PG_PASS_CHANGE_REMOVED = 1,
    PG_PASS_CHANGE_REWRITTEN = 2
} pg_pass_change_kind;

typedef struct pg_pass_info {
    const char *name;         /* "layernorm_fusion" ("input" for entry 0) */
    const char *description;  /* one line */
    int level;                /* 1 basic, 2 extended, 3 layout (0: the input entry) */
    int enabled;              /* at or below the compile level and not disabled */
    int ran;
    int n_changes;
    int n_nodes;              /* nodes in the snapshot after it */
    double ms;                /* time the pass took */
    int64_t const_bytes;      /* constant (weight) bytes in the graph after it */
} pg_pass_info;

typedef struct pg_pass_change {
    pg_pass_change_kind kind;
    const char *node;         /* the node's name */
    const char *op;           /* its op type */
    const char *reason;
} pg_pass_change;

typedef struct pg_snapshot_node {
    const char *name;
    const char *op;
    const char *inputs;       /* tensor names, comma-separated ("" = absent input) */
    const char *outputs;
    const char *in_shapes;    /* "1x128x768;768x768" one per input ("?" unknown, "scalar") */
    const char *shapes;       /* of the outputs, ';'-separated */
    const char *dtypes;       /* of the outputs, ';'-separated ("float32") */
    const char *attrs;        /* "axis=-1 epsilon=1e-05" */
    int fused;                /* made by a fusion pass */
} pg_snapshot_node;

/* The passes this build has, in run order (enabled = 1, ran = 0 in the
 * info: no model is involved). */
PG_API int pg_pass_registry_count(void);
PG_API pg_status pg_pass_registry_info(int i, pg_pass_info *out);
/* Entries in a model's pass log (0 if it has none). */
PG_API int pg_model_pass_count(const pg_model *m);
PG_API pg_status pg_model_pass_info(const pg_model *m, int pass, pg_pass_info *out);
PG_API pg_status pg_model_pass_change(const pg_model *m, int pass, int i, pg_pass_change *out);
PG_API pg_status pg_model_snapshot_node(const pg_model *m, int pass, int i, pg_snapshot_node *out);

/* ---- quantised dot products (llama.cpp's block formats) --------------- */

/* Quantise n activations (a multiple of 32) to blocks of type PG_GGML_Q8_0
 * (34 bytes per 32) or PG_GGML_Q8_1 (36 bytes, with d * sum), as ggml's
 * reference quantisers do. */
PG_API pg_status pg_quantize_activations(int type, const float *x, void *out, int64_t n);
/* *out = dot of n elements of weights w (PG_GGML_Q8_0 blocks with q8_0
 * activations, or PG_GGML_Q4_1 blocks with q8_1 activations) and a.
 * variant: index in the op's table ("qdot_q8_0_q8_0" / "qdot_q4_1_q8_1"),
 * -1 for the one dispatch picks. */
PG_API pg_status pg_qdot(int variant, int wtype, int64_t n, const void *w, const void *a,
                         float *out);

/* ---- LLM: a Llama-architecture decoder from a GGUF file --------------- */
/*
 * Loads a GGUF decoder (llama, qwen2, qwen3, gemma, gemma2, phi3) with
 * q4_0 / q4_1 / q8_0 / q4_K / q5_K / q6_K / f16 / bf16 / f32 weights, used in
 * place from the mapped file, and compiles it as a Peregrine graph twice
 * (decode: 1 row; prefill: max_batch rows), the KV cache of n_ctx positions
 * the plans' persistent buffer.  Everything a run needs is allocated at
 * load: evaluating tokens allocates nothing.
 *
 *   pg_llm *m; pg_llm_load("model.gguf", NULL, &m);
 *   pg_tokenize(pg_llm_tokenizer(m), text, len, 0, 1, ids, cap, &n);
 *   pg_llm_eval(m, ids, n, NULL, 0);              prefill: logits of the last token
 *   pg_sampler *s; pg_sampler_new(&params, pg_llm_vocab(m), &s);
 *   pg_llm_decode_next(m, s, &tok);               sample, then evaluate tok
 */
typedef struct pg_llm pg_llm;

typedef struct pg_llm_options {
    int threads;              /* 0 = pg_get_num_threads() */
    int n_ctx;                /* KV cache positions; 0 = min(2048, trained context) */
    int max_batch;            /* tokens per forward pass; 0 = 256 (longer inputs run in chunks) */
    int kv_f16;               /* 1: the KV cache holds f16 (half the memory; the values are
                                 the same: they are rounded to f16 either way), 0: f32 */
} pg_llm_options;

typedef struct pg_llm_info {
    const char *arch;         /* general.architecture: "llama", "qwen2", ... */
    const char *name;         /* general.name, "" if none */
    int n_layer, n_embd, n_ff, n_head, n_head_kv, head_dim, n_vocab;
    int n_ctx;                /* the KV cache's positions */
    int n_ctx_train;          /* the context the model was trained for */
    int max_batch, threads;
    int n_past;               /* tokens in the KV cache now */
    float rope_base, norm_eps;
    int bos, eos;             /* -1 where the file names none */
    uint64_t weight_bytes;    /* bytes of weights one decoded token reads */
    uint64_t arena_bytes;     /* the compiled graphs' arenas + the KV cache + the RoPE tables */
    int n_steps;              /* steps of the compiled decode graph */
    double prefill_tps;       /* tokens/s of the evaluations since the last reset: */
    double decode_tps;        /* batches of >1 token (prefill) and single tokens (decode) */
} pg_llm_info;

/* options NULL = defaults.  PG_ERR_UNSUPPORTED names what the file has and
 * the decoder does not run (an architecture, a weight type, a key). */
PG_API pg_status pg_llm_load(const char *path, const pg_llm_options *options, pg_llm **out);
PG_API void pg_llm_free(pg_llm *m);
PG_API pg_status pg_llm_get_info(const pg_llm *m, pg_llm_info *out);
PG_API int32_t pg_llm_vocab(const pg_llm *m);
/* The model's tokenizer (owned by the model). */
PG_API const pg_tokenizer *pg_llm_tokenizer(const pg_llm *m);
/* Empty the KV cache (n_past = 0) and the speed counters. */
PG_API pg_status pg_llm_reset(pg_llm *m);
/* The decoder's kernels are bound at load under the CPU mask then; after a
 * mask change pg_llm_is_stale is 1 (it still runs the bound ones) until
 * pg_llm_rebind binds them anew.  pg_llm_bound_kernel: the variant name it
 * runs for a kernel family ("qgemv_q4_1" -> "q4_1_gemv_4row_avx2"), NULL
 * and an error for a family it does not use. */
PG_API pg_status pg_llm_rebind(pg_llm *m);
PG_API int pg_llm_is_stale(const pg_llm *m);
PG_API const char *pg_llm_bound_kernel(const pg_llm *m, const char *family);
/* The decoder's compiled graph, owned by the decoder (the pg_model_*
 * viewers work on it; do not run or free it).  prefill 0: the decode shape
 * (1 row), 1: the prefill shape (max_batch rows). */
PG_API pg_model *pg_llm_model(const pg_llm *m, int prefill);
/* Run ids[0..n) at positions n_past.. and append them to the cache.
 * logits: NULL, or n_vocab floats for the last token (all = 0), or
 * n * n_vocab floats, one row per token (all = 1).  The last token's logits
 * are also kept (pg_llm_logits).  PG_ERR_SHAPE if the cache would overflow,
 * PG_ERR_INVALID_ARG for an id outside the vocabulary. */
PG_API pg_status pg_llm_eval(pg_llm *m, const int32_t *ids, size_t n, float *logits, int all);
/* The last evaluated token's logits (n_vocab floats, owned by the model). */
PG_API const float *pg_llm_logits(const pg_llm *m);

/* Sampling, with llama.cpp's semantics and order: repetition penalty on the
 * logits of tokens among the last repeat_last_n accepted (a positive logit
 * divided by the penalty, a negative one multiplied), then top-k, then
 * top-p (on the softmax of the penalised logits), then temperature and a
 * draw.  temperature <= 0 is greedy (argmax, lowest id on ties) after the
 * penalty.  The random numbers come from splitmix64 seeded with `seed`
 * (a 53-bit uniform double per draw), so a seed reproduces a run here, not
 * llama.cpp's (which uses mt19937). */
typedef struct pg_sampler_params {
    float temperature;        /* <= 0: greedy */
    int top_k;                /* <= 0: off */
    float top_p;              /* >= 1: off */
    float repeat_penalty;     /* 1: off */
    int repeat_last_n;        /* tokens of history the penalty looks at */
    uint64_t seed;
} pg_sampler_params;

typedef struct pg_sampler pg_sampler;

/* Fills the defaults: temperature 0.8, top_k 40, top_p 0.95, penalty 1.0 over 64, seed 0. */
PG_API void pg_sampler_default_params(pg_sampler_params *p);
PG_API pg_status pg_sampler_new(const pg_sampler_params *p, int32_t n_vocab, pg_sampler **out);
PG_API void pg_sampler_free(pg_sampler *s);
/* Forget the history and reseed. */
PG_API pg_status pg_sampler_reset(pg_sampler *s);
/* Add a token to the history the repetition penalty looks at. */
PG_API pg_status pg_sampler_accept(pg_sampler *s, int32_t token);
/* Draw a token from n_vocab logits (not modified).  Does not accept it. */
PG_API pg_status pg_sample(pg_sampler *s, const float *logits, int32_t *token);
/* One decode step: sample from the last logits, accept the token into s,
 * evaluate it (so the next logits are ready) and return it. */
PG_API pg_status pg_llm_decode_next(pg_llm *m, pg_sampler *s, int32_t *token);

/* ---- Quantised: GEMV / GEMM on GGUF weight blocks --------------------- */
/*
 * The LLM decode (GEMV) and prefill (GEMM) products on weights as a GGUF
 * file stores them, rows of blocks of 32: PG_GGML_Q4_0, PG_GGML_Q4_1 or
 * PG_GGML_Q8_0.  Activations are quantised first, per block of 32, to the
 * type the weights pair with: PG_GGML_Q8_1 for q4_1 (it carries d * sum
 * for the q4_1 offset), PG_GGML_Q8_0 for q4_0 and q8_0.  Every output is
 * ggml's block formula: per block an exact int32 sum of products scaled
 * by the f16 scales in fp32 (only the fp32 summation order differs between
 * variants).  K must be a multiple of 32 (else PG_ERR_SHAPE); row strides
 * ldw and ldx are in BYTES, ldc in floats.  variant indexes the op's
 * table ("quantize_q8_0" / "quantize_q8_1", "qgemv_q4_1", "qgemm_q8_0", ...)
 * or is -1 for the one dispatch picks.  threads: 0 = pg_get_num_threads().
 *
 *   x (K floats) -> pg_quantize_row_q8(-1, PG_GGML_Q8_1, K, x, xq)
 *   pg_qgemv(-1, PG_GGML_Q4_1, N, K, W, ldw, xq, y, 0)
 */

/* n floats (a multiple of 32) -> n / 32 blocks of type (PG_GGML_Q8_0: 34
 * bytes each, PG_GGML_Q8_1: 36), byte-exact with ggml's reference
 * quantisers (d = max|x| / 127 as f16, q = round(x / d) half away). */
PG_API pg_status pg_quantize_row_q8(int variant, int type, size_t n, const float *x, void *out);
/* y[n] = dot(W row n, x) for n < N: W rows of K / 32 blocks of wtype at
 * W + n * ldw bytes, x one row of K quantised activations. */
PG_API pg_status pg_qgemv(int variant, int wtype, size_t N, size_t K, const void *W,
                          size_t ldw, const void *x, float *y, int threads);
/* C[m * ldc + n] = dot(W row n, X row m) for m < M, n < N: X rows of
 * quantised activations at X + m * ldx bytes.  Weight blocks are read once
 * per four rows of X. */
PG_API pg_status pg_qgemm(int variant, int wtype, size_t M, size_t N, size_t K, const void *W,
                          size_t ldw, const void *X, size_t ldx, float *C, size_t ldc,
                          int threads);

/* PG_CFFI_END */

#ifdef __cplusplus
}
#endif

#endif /* PEREGRINE_H */

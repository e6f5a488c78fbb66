/* fuzz_graph.c - the graph builder API, the compiler and the executor
 * driven by a little byte code.
 *
 * The input is a program: a header byte (planner, a disabled pass,
 * threads), then instructions until the bytes run out (reads past the end
 * give 0) or 512 have run:
 *
 *   op = byte % 10
 *   0 INPUT        name dtype shape              pg_graph_add_input
 *   1 INIT         name dtype shape data         pg_graph_add_initializer
 *   2 NODE         optype nodename n_in(byte % 6) inname*n_in
 *                  n_out(1 + byte % 3) name*n_out pg_graph_add_node (<= 64 nodes)
 *   3 ATTR_INT     noderef attr int              pg_graph_set_attr_int
 *   4 ATTR_FLOAT   noderef attr float            pg_graph_set_attr_float
 *   5 ATTR_INTS    noderef attr count(byte % 9) int*count
 *   6 ATTR_FLOATS  noderef attr count(byte % 9) float*count
 *   7 ATTR_STRING  noderef attr string
 *   8 ATTR_TENSOR  noderef attr dtype shape data pg_graph_set_attr_tensor
 *   9 OUTPUT       name                          pg_graph_add_output
 *
 * with the operands (one byte each unless said):
 *   name      "t<byte % 16>", t15 padded with 'x' to 3000 bytes (names
 *             come from model files, of any length: a 2 KB one once wrote
 *             past a step text's stack buffer)
 *   inname    byte % 17: 16 is "" (an absent optional input), else name k
 *   dtype     DTYPES[byte % 13] (UNDEFINED and uint64 included: refused)
 *   shape     rank = byte % 6, 5 meaning a bad rank (next byte odd: -1,
 *             even: 9); then rank dims, each DIMS[byte % 16] (0..8, or -1)
 *   data      one byte per element (elements of the shape, 0 if it is
 *             bad): ints INTS[byte % 16] (-4..8), uint8 byte % 9, bool
 *             byte & 1, floats FLOATS[byte % 16] (NaN and infinities too)
 *   optype    byte % (ops in the table + EXTRA_OPS): the table's names
 *             (pg_graph_op_get_info), then aliases and unknown names
 *   nodename  byte % 4 == 0: NULL (generated), 255: "", else "n<byte / 4>"
 *   noderef   byte < 192: the last node added, else "n<byte % 64>"
 *   attr      ATTRS[byte % 72]
 *   int       byte < 240: INTS[byte % 16], else BIG_INTS[byte - 240]
 *   float     FLOATS[byte % 16]
 *   string    STRINGS[byte % 28]
 *
 * Then the graph is rendered (pg_graph_text) and checked (pg_graph_check),
 * compiled at levels 0 and 3, and every model that compiles is run twice
 * on zero-filled feeds (checking that a run allocates nothing), its
 * outputs, steps, plan and pass log read, rebound and run again.  Sizes
 * are capped (dims <= 8, rank <= 4 as built, <= 64 nodes) so an execution
 * stays fast; a model whose arena would exceed 32 MiB is not run.  Any
 * PG_ERR_* status is fine; a crash, a sanitizer report, a leak, a hang or
 * a broken invariant is a bug.
 *
 * tests/fuzz/graph_bytecode.py is the same interpreter in Python (it must
 * stay in step with this file): tests/test_fuzz_regressions.py replays
 * the corpus and the crashes through it, and make_seeds.py assembles the
 * seed programs with it. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

#define MAX_NODES 64
#define MAX_INSNS 512
#define MAX_RUN_BYTES ((uint64_t)32 << 20)

static const pg_dtype DTYPES[13] = {
    PG_DTYPE_FLOAT32, PG_DTYPE_FLOAT32, PG_DTYPE_FLOAT32, PG_DTYPE_FLOAT32, PG_DTYPE_INT64,
    PG_DTYPE_INT64, PG_DTYPE_BOOL, PG_DTYPE_INT32, PG_DTYPE_UINT8, PG_DTYPE_INT8,
    PG_DTYPE_FLOAT64, PG_DTYPE_UNDEFINED, (pg_dtype)13 /* uint64: not supported */,
};
static const int64_t DIMS[16] = { 1, 2, 3, 4, 1, 2, 8, 5, 6, 7, 0, 1, 2, 4, 3, -1 };
static const int64_t INTS[16] = { 0, 1, 2, 3, 4, -1, -2, -3, -4, 5, 6, 7, 8, 1, 0, 2 };
static const int64_t BIG_INTS[16] = {
    INT64_MAX, INT64_MIN, -5, 9, 16, 64, INT64_C(2147483648), -INT64_C(2147483648),
    100, 1000, INT64_C(1) << 40, -1000, 255, 256, 7, -7,
};
#define FLOATS_INIT { 0.0f, 1.0f, -1.0f, 0.5f, 2.0f, -2.0f, 3.0f, 0.25f, 1e-5f, 10.0f, -0.5f, \
                      100.0f, NAN, INFINITY, -INFINITY, 1e30f }
#define N_ATTRS 73
static const char *const ATTRS[N_ATTRS] = {
    "axis", "axes", "perm", "transA", "transB", "alpha", "beta", "epsilon", "keepdims", "to",
    "approximate", "activation", "splits", "split", "scale", "causal", "k_transposed",
    "num_heads", "qkv_layout", "value", "value_float", "value_floats", "value_int",
    "value_ints", "allowzero", "noop_with_empty_axes", "start", "end", "num_outputs", "bogus",
    "batch_dims", "equation", "exclusive", "fmod", "largest", "mode", "num_groups", "reduction",
    "reverse", "select_last_index", "upper", "sorted", "min", "max",
    /* the GGUF decoder's ops, then the NCHWc reorders and Conv */
    "wtype", "n_embd", "act_type", "K", "N", "tail", "heads", "head_dim", "n_rot", "neox",
    "positions", "width", "layer", "n_head", "n_head_kv", "window", "softcap", "kq_scale", "q_scale",
    "nchwc", "channels", "kernel_shape", "strides", "pads", "dilations", "group", "auto_pad", "blocksize",
    "f16",
};
#define N_STRINGS 28
static const char *const STRINGS[N_STRINGS] = {
    "none", "relu", "gelu", "gelu_tanh", "sigmoid", "tanh", "silu", "bshd",
    "bhsd", "erf", "", "bogus", "1", "axis", "NONE", "gelu_erf",
    "constant", "reflect", "edge", "wrap", "add", "mul", "ij,jk->ik", "ii->i",
    "...ij->...ji", "bij,bjk->bik", "i,i->", "ij->",
};
/* after the table's names: aliases the IR accepts, then names it must refuse */
static const char *const EXTRA_OPS[8] = {
    "LayerNorm", "RMSNormalization", "Conv", "", "matmul", "FusedMatMulX", "Loop", "If",
};
static const char *const PLANNERS[8] = {
    NULL, "greedy_by_size", "greedy_by_first_use", "naive", NULL, NULL, NULL, "bogus",
};

static int n_ops;
static const char *op_names[256];
static int n_passes;
static const char *pass_names[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    n_ops = pg_graph_op_count();
    FZ_ASSERT(n_ops > 0 && n_ops <= 256, "%d graph ops", n_ops);
    for (int i = 0; i < n_ops; i++) {
        pg_graph_op_info info;
        FZ_ASSERT(pg_graph_op_get_info(i, &info) == PG_OK && info.name, "op %d", i);
        op_names[i] = info.name;
    }
    n_passes = pg_pass_registry_count();
    FZ_ASSERT(n_passes >= 0 && n_passes <= 64, "%d passes", n_passes);
    for (int i = 0; i < n_passes; i++) {
        pg_pass_info pi;
        FZ_ASSERT(pg_pass_registry_info(i, &pi) == PG_OK && pi.name, "pass %d", i);
        pass_names[i] = pi.name;
    }
    pg_set_num_threads(1);
    return 0;
}

/* ---- operands ----------------------------------------------------------- */

typedef struct shape {
    int rank;          /* -1 or 9 when bad */
    int64_t dims[9];
    int64_t numel;     /* 0 when the shape is bad */
} shape;

#define LONG_NAME 3000
#define NAME_CAP (LONG_NAME + 1)

static void tensor_name(int k, char *buf)
{
    int n = snprintf(buf, NAME_CAP, "t%d", k);
    if (k == 15) {
        memset(buf + n, 'x', (size_t)(LONG_NAME - n));
        buf[LONG_NAME] = '\0';
    }
}

static void read_name(fz_reader *r, char *buf) { tensor_name(fz_u8(r) % 16, buf); }

static void read_inname(fz_reader *r, char *buf)
{
    int k = fz_u8(r) % 17;
    if (k == 16)
        buf[0] = '\0';
    else
        tensor_name(k, buf);
}

static pg_dtype read_dtype(fz_reader *r) { return DTYPES[fz_u8(r) % 13]; }

static void read_shape(fz_reader *r, shape *s)
{
    int k = fz_u8(r) % 6;
    s->rank = k < 5 ? k : (fz_u8(r) & 1) ? -1 : 9;
    s->numel = 1;
    for (int d = 0; d < s->rank; d++) {
        s->dims[d] = DIMS[fz_u8(r) % 16];
        s->numel = s->dims[d] < 0 ? 0 : s->numel * s->dims[d];
    }
    if (s->rank < 0 || s->rank > 8)
        s->numel = 0;
    for (int d = s->rank < 0 ? 0 : s->rank; d < 9; d++)
        s->dims[d] = 0;
}

/* Elements from the stream; returns a buffer of numel * 8 bytes at least
 * 8 (never NULL unless out of memory), which the caller frees. */
static void *read_data(fz_reader *r, pg_dtype t, int64_t numel)
{
    static const float floats[16] = FLOATS_INIT;
    uint8_t *buf = calloc((size_t)(numel > 0 ? numel : 1), 8);
    if (!buf)
        return NULL;
    for (int64_t i = 0; i < numel; i++) {
        uint8_t b = fz_u8(r);
        switch (t) {
        case PG_DTYPE_FLOAT32: ((float *)buf)[i] = floats[b % 16]; break;
        case PG_DTYPE_FLOAT64: ((double *)buf)[i] = floats[b % 16]; break;
        case PG_DTYPE_INT64: ((int64_t *)buf)[i] = INTS[b % 16]; break;
        case PG_DTYPE_INT32: ((int32_t *)buf)[i] = (int32_t)INTS[b % 16]; break;
        case PG_DTYPE_INT8: ((int8_t *)buf)[i] = (int8_t)INTS[b % 16]; break;
        case PG_DTYPE_UINT8: buf[i] = (uint8_t)(b % 9); break;
        case PG_DTYPE_BOOL: buf[i] = b & 1; break;
        default: break;   /* undefined / unsupported: the bytes are consumed, left 0 */
        }
    }
    return buf;
}

static int64_t read_int(fz_reader *r)
{
    uint8_t b = fz_u8(r);
    return b < 240 ? INTS[b % 16] : BIG_INTS[b - 240];
}

static float read_float(fz_reader *r)
{
    static const float floats[16] = FLOATS_INIT;
    return floats[fz_u8(r) % 16];
}

/* NULL for a generated name */
static const char *read_nodename(fz_reader *r, char *buf)
{
    uint8_t b = fz_u8(r);
    if (b % 4 == 0)
        return NULL;
    if (b == 255)
        return "";
    snprintf(buf, 8, "n%d", b / 4);
    return buf;
}

static const char *read_noderef(fz_reader *r, const pg_graph *g, char *buf)
{
    uint8_t b = fz_u8(r);
    if (b < 192) {
        const char *last = pg_graph_last_node(g);
        snprintf(buf, 64, "%s", last ? last : "n0");
    } else {
        snprintf(buf, 64, "n%d", b % 64);
    }
    return buf;
}

/* ---- running what compiles ---------------------------------------------- */

static void exercise_model(pg_model *m)
{
    pg_model_stats stats;
    FZ_ASSERT(pg_model_get_stats(m, &stats) == PG_OK, "stats: %s", pg_last_error());
    fz_touch_str(stats.planner);
    fz_touch_str(pg_model_text(m));
    for (int i = 0; i < pg_model_step_count(m); i++) {
        pg_step_info si;
        FZ_ASSERT(pg_model_step_info(m, i, &si) == PG_OK, "step %d", i);
        fz_touch_str(si.node);
        fz_touch_str(si.op_type);
        fz_touch_str(si.inputs);
        fz_touch_str(si.outputs);
        fz_touch_str(si.detail);
    }
    for (int i = 0; i < pg_model_plan_count(m); i++) {
        pg_plan_row row;
        FZ_ASSERT(pg_model_plan_row(m, i, &row) == PG_OK, "plan row %d", i);
        fz_touch_str(row.tensor);
        fz_touch_str(row.alias_of);
    }
    for (int p = 0; p < pg_model_pass_count(m); p++) {
        pg_pass_info pi;
        FZ_ASSERT(pg_model_pass_info(m, p, &pi) == PG_OK, "pass %d", p);
        fz_touch_str(pi.name);
        for (int i = 0; i < pi.n_changes; i++) {
            pg_pass_change c;
            FZ_ASSERT(pg_model_pass_change(m, p, i, &c) == PG_OK, "pass %d change %d", p, i);
            fz_touch_str(c.node);
            fz_touch_str(c.op);
            fz_touch_str(c.reason);
        }
        for (int i = 0; i < pi.n_nodes; i++) {
            pg_snapshot_node sn;
            FZ_ASSERT(pg_model_snapshot_node(m, p, i, &sn) == PG_OK, "pass %d node %d", p, i);
            fz_touch_str(sn.name);
            fz_touch_str(sn.inputs);
            fz_touch_str(sn.in_shapes);
            fz_touch_str(sn.shapes);
            fz_touch_str(sn.dtypes);
            fz_touch_str(sn.attrs);
        }
    }
    if (stats.arena_bytes > MAX_RUN_BYTES)
        return;

    int n_in = pg_model_input_count(m);
    const char *names[64];
    const void *data[64];
    int ranks[64];
    int64_t dims[64][8];
    const int64_t *shapes[64];
    void *bufs[64] = { 0 };
    if (n_in > 64)
        return;
    uint64_t total = 0;
    for (int i = 0; i < n_in; i++) {
        pg_tensor_info ti;
        FZ_ASSERT(pg_model_input_info(m, i, &ti) == PG_OK, "input %d", i);
        FZ_ASSERT(ti.rank >= 0 && ti.rank <= 8, "input rank %d", ti.rank);
        total += ti.nbytes;
        names[i] = ti.name;
        ranks[i] = ti.rank;
        memcpy(dims[i], ti.dims, sizeof dims[i]);
        shapes[i] = dims[i];
        bufs[i] = total <= MAX_RUN_BYTES ? calloc(ti.nbytes ? ti.nbytes : 1, 1) : NULL;
        data[i] = bufs[i];
    }
    int ok = total <= MAX_RUN_BYTES;
    for (int i = 0; ok && i < n_in; i++)
        ok = bufs[i] != NULL;
    for (int rep = 0; ok && rep < 3; rep++) {
        if (rep == 2) {   /* rebound under the same mask: it must run as before */
            pg_status st = pg_model_rebind(m);
            fz_check_status(st, "pg_model_rebind");
            if (st != PG_OK)
                break;
        }
        uint64_t allocs = pg_alloc_count();
        pg_status st = pg_model_run(m, n_in, names, data, ranks, shapes);
        fz_check_status(st, "pg_model_run");
        FZ_ASSERT(pg_alloc_count() == allocs, "a run allocated %llu times",
                  (unsigned long long)(pg_alloc_count() - allocs));
        if (st != PG_OK)
            break;
        for (int o = 0; o < pg_model_output_count(m); o++) {
            pg_tensor_info ti;
            FZ_ASSERT(pg_model_output_info(m, o, &ti) == PG_OK, "output %d", o);
            fz_touch_str(ti.name);
            if (ti.nbytes)
                fz_touch(ti.data, (size_t)ti.nbytes);
        }
    }
    for (int i = 0; i < n_in; i++)
        free(bufs[i]);
}

/* ---- the interpreter ---------------------------------------------------- */

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    fz_reader r = { bytes, size, 0 };
    uint8_t h = fz_u8(&r);
    pg_compile_options base = { 0 };
    base.planner = PLANNERS[h & 7];
    base.disabled = (h & 8) && n_passes ? pass_names[(h >> 4) % n_passes] : NULL;
    base.threads = 1 + (h >> 7);

    pg_graph *g = NULL;
    FZ_ASSERT(pg_graph_new(&g) == PG_OK, "pg_graph_new: %s", pg_last_error());
    int nodes = 0;
    for (int insn = 0; insn < MAX_INSNS && fz_more(&r); insn++) {
        char name[NAME_CAP], node[64];
        const char *attr;
        shape s;
        pg_dtype t;
        void *buf;
        int count;
        switch (fz_u8(&r) % 10) {
        case 0:
            read_name(&r, name);
            t = read_dtype(&r);
            read_shape(&r, &s);
            fz_check_status(pg_graph_add_input(g, name, t, s.rank, s.dims), "pg_graph_add_input");
            break;
        case 1:
            read_name(&r, name);
            t = read_dtype(&r);
            read_shape(&r, &s);
            buf = read_data(&r, t, s.numel);
            if (buf)
                fz_check_status(pg_graph_add_initializer(g, name, t, s.rank, s.dims, buf),
                                "pg_graph_add_initializer");
            free(buf);
            break;
        case 2: {
            int k = fz_u8(&r) % (n_ops + 8);
            const char *op = k < n_ops ? op_names[k] : EXTRA_OPS[k - n_ops];
            char nbuf[8], ins[5][NAME_CAP], outs[3][NAME_CAP];
            const char *nn = read_nodename(&r, nbuf);
            const char *in_p[5], *out_p[3];
            int n_in = fz_u8(&r) % 6;
            for (int i = 0; i < n_in; i++) {
                read_inname(&r, ins[i]);
                in_p[i] = ins[i];
            }
            int n_out = 1 + fz_u8(&r) % 3;
            for (int i = 0; i < n_out; i++) {
                read_name(&r, outs[i]);
                out_p[i] = outs[i];
            }
            if (nodes >= MAX_NODES)
                break;
            pg_status st = pg_graph_add_node(g, op, nn, in_p, n_in, out_p, n_out);
            fz_check_status(st, "pg_graph_add_node");
            nodes += st == PG_OK;
            break;
        }
        case 3:
            read_noderef(&r, g, node);
            attr = ATTRS[fz_u8(&r) % N_ATTRS];
            fz_check_status(pg_graph_set_attr_int(g, node, attr, read_int(&r)), "set_attr_int");
            break;
        case 4:
            read_noderef(&r, g, node);
            attr = ATTRS[fz_u8(&r) % N_ATTRS];
            fz_check_status(pg_graph_set_attr_float(g, node, attr, read_float(&r)), "set_attr_float");
            break;
        case 5: {
            int64_t v[8];
            read_noderef(&r, g, node);
            attr = ATTRS[fz_u8(&r) % N_ATTRS];
            count = fz_u8(&r) % 9;
            for (int i = 0; i < count; i++)
                v[i] = read_int(&r);
            fz_check_status(pg_graph_set_attr_ints(g, node, attr, v, count), "set_attr_ints");
            break;
        }
        case 6: {
            float v[8];
            read_noderef(&r, g, node);
            attr = ATTRS[fz_u8(&r) % N_ATTRS];
            count = fz_u8(&r) % 9;
            for (int i = 0; i < count; i++)
                v[i] = read_float(&r);
            fz_check_status(pg_graph_set_attr_floats(g, node, attr, v, count), "set_attr_floats");
            break;
        }
        case 7:
            read_noderef(&r, g, node);
            attr = ATTRS[fz_u8(&r) % N_ATTRS];
            fz_check_status(pg_graph_set_attr_string(g, node, attr, STRINGS[fz_u8(&r) % N_STRINGS]),
                            "set_attr_string");
            break;
        case 8:
            read_noderef(&r, g, node);
            attr = ATTRS[fz_u8(&r) % N_ATTRS];
            t = read_dtype(&r);
            read_shape(&r, &s);
            buf = read_data(&r, t, s.numel);
            if (buf)
                fz_check_status(pg_graph_set_attr_tensor(g, node, attr, t, s.rank, s.dims, buf),
                                "set_attr_tensor");
            free(buf);
            break;
        case 9:
            read_name(&r, name);
            fz_check_status(pg_graph_add_output(g, name), "pg_graph_add_output");
            break;
        }
    }
    const char *text = pg_graph_text(g);
    if (text)
        fz_touch_str(text);
    else
        fz_check_status(pg_last_status(), "pg_graph_text");
    pg_status checked = pg_graph_check(g);
    fz_check_status(checked, "pg_graph_check");

    static const int levels[2] = { 0, 3 };
    for (int l = 0; l < 2; l++) {
        pg_compile_options o = base;
        o.level = levels[l];
        pg_model *m = NULL;
        pg_status st = pg_compile(g, &o, &m);
        fz_check_status(st, "pg_compile");
        FZ_ASSERT((st == PG_OK) == (m != NULL), "compile status %d, model %p", (int)st, (void *)m);
        if (m)
            exercise_model(m);
        pg_model_free(m);
    }
    pg_graph_free(g);
    return 0;
}

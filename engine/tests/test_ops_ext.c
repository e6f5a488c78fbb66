/* test_ops_ext.c - the graph ops added for exported transformer graphs,
 * one small graph each through the C API at levels 0 and 3: the values
 * against hand-computed ones, and no allocation during a run.  (The Python
 * tests check them against numpy and the ONNX cases; this one runs under
 * the sanitizers in CI.)  Also: compile-time refusals, and tensor names
 * longer than the steps' text buffers. */
#include <math.h>
#include <string.h>

#include "test_util.h"

/* x [2, 3], fed */
static const float X[6] = { -1.5f, 0.5f, 2.0f, -0.25f, 3.0f, 1.0f };

typedef struct init {
    const char *name;
    pg_dtype dt;
    int rank;
    int64_t dims[3];
    const void *data;
} init;

typedef struct attr {
    const char *name;
    char kind;            /* 'i' int, 'f' float, 's' string, 'I' ints (n of v) */
    int64_t i;
    float f;
    const char *s;
    int64_t v[4];
    int n;
} attr;

typedef struct tcase {
    const char *op;
    const char *in[4];
    int n_in, n_out;
    init inits[3];
    attr attrs[3];
    int64_t numel;        /* elements of output 0 */
    const float *want;    /* float32 output 0, or NULL */
    const int64_t *want_i; /* int64 output (the last), or NULL */
} tcase;

static const float c0 = 0.0f, c1 = 1.0f, lo1 = -1.0f, hi1 = 1.0f, ones3[3] = { 1, 1, 1 },
                   bias3[3] = { 1, 2, 3 }, zeros3[3] = { 0, 0, 0 }, upd[3] = { 7, 8, 9 }, r0 = 0,
                   r3 = 3, vals01[2] = { 0, 1 }, one1 = 1;
static const int64_t ax1 = 1, reps[2] = { 1, 2 }, pads[4] = { 0, 1, 0, 1 }, k2 = 2, depth4 = 4,
                     ge_idx[6] = { 2, 0, 1, 1, 1, 0 }, nd_idx[4] = { 1, 2, 0, 0 }, sc_idx = 1,
                     axes1 = 1;

static const float want_max[6] = { 0, 0.5f, 2, 0, 3, 1 };
static const float want_mod[6] = { -0.5f, 0.5f, 0, -0.25f, 0, 0 };
static const float want_clip[6] = { -1, 0.5f, 1, -0.25f, 1, 1 };
static const float want_t[6] = { -1.5f, -0.25f, 0.5f, 3, 2, 1 };
static const float want_tile[12] = { -1.5f, 0.5f, 2, -1.5f, 0.5f, 2, -0.25f, 3, 1, -0.25f, 3, 1 };
static const float want_pad[10] = { 0.5f, -1.5f, 0.5f, 2, 0.5f, 3, -0.25f, 3, 1, 3 };
static const float want_triu[6] = { -1.5f, 0.5f, 2, 0, 3, 1 };
static const float want_cum[6] = { -1.5f, -1, 1, -0.25f, 2.75f, 3.75f };
static const float want_rmax[2] = { 2, 3 };
static const float want_ge[6] = { 2, -1.5f, 0.5f, 3, 3, -0.25f };
static const float want_nd[2] = { 1, -1.5f };
static const float want_sc[6] = { -1.5f, 0.5f, 2, 6.75f, 11, 10 };
static const float want_topk[4] = { 2, 0.5f, 3, 1 };
static const int64_t want_topk_i[4] = { 2, 1, 1, 2 };
static const int64_t want_argmax[2] = { 2, 1 };
static const float want_inorm[6] = { 1, 2, 3, 1, 2, 3 };
static const float want_range[6] = { -1.5f, 1.5f, 4, -0.25f, 4, 3 };
static const int64_t want_size[1] = { 6 };
static const float want_einsum_mm[4] = { 6.5f, 3.875f, 3.875f, 10.0625f };

#define AI(nm, v) { .name = nm, .kind = 'i', .i = v }
#define AF(nm, v) { .name = nm, .kind = 'f', .f = v }
#define AS(nm, v) { .name = nm, .kind = 's', .s = v }
#define SCALAR(nm, dt, p) { nm, dt, 0, { 0 }, p }
#define VEC(nm, dt, n, p) { nm, dt, 1, { n }, p }

static const tcase cases[] = {
    { "Max", { "x", "c" }, 2, 1, { SCALAR("c", PG_DTYPE_FLOAT32, &c0) }, { { 0 } }, 6, want_max, NULL },
    { "Mod", { "x", "c" }, 2, 1, { SCALAR("c", PG_DTYPE_FLOAT32, &c1) }, { AI("fmod", 1) }, 6, want_mod, NULL },
    { "Clip", { "x", "lo", "hi" }, 3, 1, { SCALAR("lo", PG_DTYPE_FLOAT32, &lo1), SCALAR("hi", PG_DTYPE_FLOAT32, &hi1) },
      { { 0 } }, 6, want_clip, NULL },
    { "Einsum", { "x" }, 1, 1, { { 0 } }, { AS("equation", "ij->ji") }, 6, want_t, NULL },
    { "Einsum", { "x", "x" }, 2, 1, { { 0 } }, { AS("equation", "ij,kj->ik") }, 4, want_einsum_mm, NULL },
    { "Tile", { "x", "r" }, 2, 1, { VEC("r", PG_DTYPE_INT64, 2, reps) }, { { 0 } }, 12, want_tile, NULL },
    { "Pad", { "x", "p" }, 2, 1, { VEC("p", PG_DTYPE_INT64, 4, pads) }, { AS("mode", "reflect") }, 10,
      want_pad, NULL },
    { "Trilu", { "x" }, 1, 1, { { 0 } }, { AI("upper", 1) }, 6, want_triu, NULL },
    { "CumSum", { "x", "a" }, 2, 1, { SCALAR("a", PG_DTYPE_INT64, &ax1) }, { { 0 } }, 6, want_cum, NULL },
    { "ReduceMax", { "x", "a" }, 2, 1, { VEC("a", PG_DTYPE_INT64, 1, &axes1) }, { AI("keepdims", 0) }, 2,
      want_rmax, NULL },
    { "GatherElements", { "x", "i" }, 2, 1, { { "i", PG_DTYPE_INT64, 2, { 2, 3 }, ge_idx } }, { AI("axis", 1) },
      6, want_ge, NULL },
    { "GatherND", { "x", "i" }, 2, 1, { { "i", PG_DTYPE_INT64, 2, { 2, 2 }, nd_idx } }, { { 0 } }, 2, want_nd, NULL },
    { "ScatterND", { "x", "i", "u" }, 3, 1, { { "i", PG_DTYPE_INT64, 2, { 1, 1 }, &sc_idx },
      { "u", PG_DTYPE_FLOAT32, 2, { 1, 3 }, upd } }, { AS("reduction", "add") }, 6, want_sc, NULL },
    { "TopK", { "x", "k" }, 2, 2, { VEC("k", PG_DTYPE_INT64, 1, &k2) }, { AI("axis", -1) }, 4, want_topk,
      want_topk_i },
    { "ArgMax", { "x" }, 1, 1, { { 0 } }, { AI("axis", 1), AI("keepdims", 0) }, 2, NULL, want_argmax },
    { "InstanceNormalization", { "x", "s", "b" }, 3, 1, { VEC("s", PG_DTYPE_FLOAT32, 3, ones3),
      VEC("b", PG_DTYPE_FLOAT32, 3, bias3) }, { AF("epsilon", 1e-5f) }, 6, want_inorm, NULL },
    { "GroupNormalization", { "x", "s", "b" }, 3, 1, { VEC("s", PG_DTYPE_FLOAT32, 3, ones3),
      VEC("b", PG_DTYPE_FLOAT32, 3, zeros3) }, { AI("num_groups", 1), AF("epsilon", 1e-5f) }, 6, NULL, NULL },
    { "OneHot", { "x", "d", "v" }, 3, 1, { SCALAR("d", PG_DTYPE_INT64, &depth4), VEC("v", PG_DTYPE_FLOAT32, 2, vals01) },
      { AI("axis", -1) }, 24, NULL, NULL },
    { "Size", { "x" }, 1, 1, { { 0 } }, { { 0 } }, 1, NULL, want_size },
    { "LogSoftmax", { "x" }, 1, 1, { { 0 } }, { AI("axis", -1) }, 6, NULL, NULL },
    { "ReduceL2", { "x", "a" }, 2, 1, { VEC("a", PG_DTYPE_INT64, 1, &axes1) }, { AI("keepdims", 1) }, 2, NULL, NULL },
    { "ReduceProd", { "x" }, 1, 1, { { 0 } }, { AI("keepdims", 0) }, 1, NULL, NULL },
    { "Min", { "x", "c", "x" }, 3, 1, { SCALAR("c", PG_DTYPE_FLOAT32, &c0) }, { { 0 } }, 6, NULL, NULL },
    /* unary math: checked against libm below */
    { "Sin", { "x" }, 1, 1, { { 0 } }, { { 0 } }, 6, NULL, NULL },
    { "Cos", { "x" }, 1, 1, { { 0 } }, { { 0 } }, 6, NULL, NULL },
    { "Floor", { "x" }, 1, 1, { { 0 } }, { { 0 } }, 6, NULL, NULL },
    { "Ceil", { "x" }, 1, 1, { { 0 } }, { { 0 } }, 6, NULL, NULL },
    { "Round", { "x" }, 1, 1, { { 0 } }, { { 0 } }, 6, NULL, NULL },
    { "Sign", { "x" }, 1, 1, { { 0 } }, { { 0 } }, 6, NULL, NULL },
    { "LeakyRelu", { "x" }, 1, 1, { { 0 } }, { AF("alpha", 0.1f) }, 6, NULL, NULL },
    { "HardSigmoid", { "x" }, 1, 1, { { 0 } }, { AF("alpha", 0.2f), AF("beta", 0.5f) }, 6, NULL, NULL },
    { "HardSwish", { "x" }, 1, 1, { { 0 } }, { { 0 } }, 6, NULL, NULL },
    { "Softplus", { "x" }, 1, 1, { { 0 } }, { { 0 } }, 6, NULL, NULL },
    { "Mish", { "x" }, 1, 1, { { 0 } }, { { 0 } }, 6, NULL, NULL },
};

static double unary_ref(const char *op, double v)
{
    double sp = log1p(exp(v));
    if (!strcmp(op, "Sin")) return sin(v);
    if (!strcmp(op, "Cos")) return cos(v);
    if (!strcmp(op, "Floor")) return floor(v);
    if (!strcmp(op, "Ceil")) return ceil(v);
    if (!strcmp(op, "Round")) return nearbyint(v);
    if (!strcmp(op, "Sign")) return v > 0 ? 1 : v < 0 ? -1 : 0;
    if (!strcmp(op, "LeakyRelu")) return v < 0 ? 0.1 * v : v;
    if (!strcmp(op, "HardSigmoid")) return fmax(0, fmin(1, 0.2 * v + 0.5));
    if (!strcmp(op, "HardSwish")) return v * fmax(0, fmin(1, v / 6 + 0.5));
    if (!strcmp(op, "Softplus")) return sp;
    if (!strcmp(op, "Mish")) return v * tanh(sp);
    return NAN;
}

/* Range's output added to x: Range(0, 3, 1) is [0, 1, 2] at compile time. */
static pg_graph *range_graph(void)
{
    pg_graph *g;
    int64_t xd[2] = { 2, 3 };
    OK(pg_graph_new(&g));
    OK(pg_graph_add_input(g, "x", PG_DTYPE_FLOAT32, 2, xd));
    OK(pg_graph_add_initializer(g, "s", PG_DTYPE_FLOAT32, 0, NULL, &r0));
    OK(pg_graph_add_initializer(g, "l", PG_DTYPE_FLOAT32, 0, NULL, &r3));
    OK(pg_graph_add_initializer(g, "d", PG_DTYPE_FLOAT32, 0, NULL, &one1));
    const char *ri[3] = { "s", "l", "d" }, *ro[1] = { "r" }, *ai[2] = { "x", "r" }, *ao[1] = { "y0" };
    OK(pg_graph_add_node(g, "Range", "range", ri, 3, ro, 1));
    OK(pg_graph_add_node(g, "Add", "add", ai, 2, ao, 1));
    OK(pg_graph_add_output(g, "y0"));
    return g;
}

static pg_graph *case_graph(const tcase *c)
{
    pg_graph *g;
    int64_t xd[2] = { 2, 3 };
    OK(pg_graph_new(&g));
    OK(pg_graph_add_input(g, "x", PG_DTYPE_FLOAT32, 2, xd));
    for (int i = 0; i < 3 && c->inits[i].name; i++)
        OK(pg_graph_add_initializer(g, c->inits[i].name, c->inits[i].dt, c->inits[i].rank, c->inits[i].dims,
                                    c->inits[i].data));
    const char *outs[2] = { "y0", "y1" };
    OK(pg_graph_add_node(g, c->op, "n", c->in, c->n_in, outs, c->n_out));
    for (int i = 0; i < 3 && c->attrs[i].name; i++) {
        const attr *a = &c->attrs[i];
        if (a->kind == 'i') OK(pg_graph_set_attr_int(g, "n", a->name, a->i));
        else if (a->kind == 'f') OK(pg_graph_set_attr_float(g, "n", a->name, a->f));
        else if (a->kind == 's') OK(pg_graph_set_attr_string(g, "n", a->name, a->s));
        else OK(pg_graph_set_attr_ints(g, "n", a->name, a->v, a->n));
    }
    for (int o = 0; o < c->n_out; o++)
        OK(pg_graph_add_output(g, outs[o]));
    return g;
}

/* Compiles at `level`, runs twice (the second run must allocate nothing),
 * and checks the outputs. */
static void check_case(const char *what, pg_graph *g, int level, const tcase *c)
{
    pg_model *m;
    pg_compile_options o = { .level = level, .threads = 1 };
    OK(pg_compile(g, &o, &m));
    const char *names[1] = { "x" };
    const void *data[1] = { X };
    int ranks[1] = { 2 };
    int64_t xd[2] = { 2, 3 };
    const int64_t *shapes[1] = { xd };
    OK(pg_model_run(m, 1, names, data, ranks, shapes));
    uint64_t before = pg_alloc_count();
    OK(pg_model_run(m, 1, names, data, ranks, shapes));
    CHECK(pg_alloc_count() == before, "%s level %d: a run allocated %llu times", what, level,
          (unsigned long long)(pg_alloc_count() - before));
    pg_tensor_info y;
    OK(pg_model_output_info(m, 0, &y));
    int64_t n = 1;
    for (int d = 0; d < y.rank; d++) n *= y.dims[d];
    CHECK(n == c->numel, "%s level %d: %lld elements, expected %lld", what, level, (long long)n,
          (long long)c->numel);
    if (n == c->numel && y.dtype == PG_DTYPE_FLOAT32) {
        const float *Y = y.data;
        double sum = 0;
        for (int64_t i = 0; i < n; i++) {
            double want = c->want ? c->want[i] : i < 6 ? unary_ref(c->op, X[i]) : NAN;
            if (c->want || !isnan(want))
                CHECK(fabs(Y[i] - want) <= 1e-5 * (1 + fabs(want)), "%s level %d: [%lld] = %g, expected %g",
                      what, level, (long long)i, Y[i], want);
            sum += Y[i];
        }
        if (!strcmp(c->op, "OneHot"))
            CHECK(sum == 6, "OneHot level %d: %g ones, expected 6 (one per index)", level, sum);
        if (!strcmp(c->op, "LogSoftmax")) {
            for (int r = 0; r < 2; r++) {
                double e = 0;
                for (int j = 0; j < 3; j++) e += exp(Y[r * 3 + j]);
                CHECK(fabs(e - 1) < 1e-5, "LogSoftmax level %d: row %d sums to %g after exp", level, r, e);
            }
        }
        if (!strcmp(c->op, "GroupNormalization"))
            for (int r = 0; r < 2; r++)
                CHECK(fabs(Y[r * 3] + Y[r * 3 + 1] + Y[r * 3 + 2]) < 1e-5, "GroupNorm level %d: row %d mean", level, r);
    }
    if (c->want_i) {
        OK(pg_model_output_info(m, c->n_out - 1, &y));
        const int64_t *Y = y.data;
        int64_t ni = 1;
        for (int d = 0; d < y.rank; d++) ni *= y.dims[d];
        CHECK(y.dtype == PG_DTYPE_INT64, "%s: int64 output", what);
        for (int64_t i = 0; i < ni && y.dtype == PG_DTYPE_INT64; i++)
            CHECK(Y[i] == c->want_i[i], "%s level %d: int [%lld] = %lld, expected %lld", what, level,
                  (long long)i, (long long)Y[i], (long long)c->want_i[i]);
    }
    pg_model_free(m);
}

/* Compile-time refusals: errors, not crashes. */
static void check_refusals(void)
{
    pg_graph *g;
    int64_t xd[2] = { 2, 3 };
    OK(pg_graph_new(&g));
    OK(pg_graph_add_input(g, "x", PG_DTYPE_FLOAT32, 2, xd));
    const char *in[1] = { "x" }, *out[1] = { "y" };
    OK(pg_graph_add_node(g, "NonZero", "nz", in, 1, out, 1));
    OK(pg_graph_add_output(g, "y"));
    pg_model *m = NULL;
    pg_status st = pg_compile(g, NULL, &m);
    CHECK(st == PG_ERR_UNSUPPORTED && strstr(pg_last_error(), "'nz'") &&
          strstr(pg_last_error(), "depends on data at run time"), "NonZero on a fed input: %s", pg_last_error());
    pg_graph_free(g);

    OK(pg_graph_new(&g));
    OK(pg_graph_add_input(g, "x", PG_DTYPE_FLOAT32, 2, xd));
    OK(pg_graph_add_node(g, "Einsum", "es", in, 1, out, 1));
    OK(pg_graph_set_attr_string(g, "es", "equation", "ab...,cd...->abcd..."));
    OK(pg_graph_add_output(g, "y"));
    st = pg_compile(g, NULL, &m);
    CHECK(st == PG_ERR_GRAPH && strstr(pg_last_error(), "'es'"), "Einsum with 2 terms, 1 input: %s",
          pg_last_error());
    pg_graph_free(g);
}

/* Tensor names of any length (an ONNX file's are arbitrary strings): the
 * steps' "name:dtype[dims]" texts are cut at their 2047-byte buffer.  Such
 * a name once carried the text's offset past the buffer, and the next
 * append wrote past it on the stack (ASan: stack-buffer-overflow in
 * tensor_list_text; found by the ONNX fuzzer as heap corruption). */
static void check_long_names(void)
{
    static char xname[5000], yname[3000];
    memset(xname, 'x', sizeof xname - 1);
    memset(yname, 'y', sizeof yname - 1);
    int64_t xd[2] = { 2, 3 };
    for (int level = 0; level <= 3; level += 3) {
        pg_graph *g;
        OK(pg_graph_new(&g));
        OK(pg_graph_add_input(g, xname, PG_DTYPE_FLOAT32, 2, xd));
        const char *in[1] = { xname }, *mid[1] = { yname }, *out[1] = { "z" };
        OK(pg_graph_add_node(g, "Relu", "r", in, 1, mid, 1));
        OK(pg_graph_add_node(g, "Neg", "n", mid, 1, out, 1));
        OK(pg_graph_add_output(g, "z"));
        pg_compile_options o = { .level = level };
        pg_model *m = NULL;
        OK(pg_compile(g, &o, &m));
        pg_graph_free(g);
        for (int i = 0; i < pg_model_step_count(m); i++) {
            pg_step_info si;
            OK(pg_model_step_info(m, i, &si));
            size_t ni = strlen(si.inputs), no = strlen(si.outputs);
            CHECK(ni > 0 && ni < 2048 && no > 0 && no < 2048, "level %d step %d: texts of %zu and %zu bytes",
                  level, i, ni, no);
        }
        const char *names[1] = { xname };
        const void *data[1] = { X };
        const int ranks[1] = { 2 };
        const int64_t *shapes[1] = { xd };
        OK(pg_model_run(m, 1, names, data, ranks, shapes));
        pg_tensor_info ti;
        OK(pg_model_output_info(m, 0, &ti));
        const float *z = ti.data;
        for (int i = 0; i < 6; i++)
            CHECK(z[i] == -(X[i] > 0 ? X[i] : 0.0f), "level %d: z[%d] = %g", level, i, z[i]);
        pg_model_free(m);
    }
}

int main(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int level = 0; level <= 3; level += 3) {
            pg_graph *g = case_graph(&cases[i]);
            check_case(cases[i].op, g, level, &cases[i]);
            pg_graph_free(g);
        }
    tcase rc = { "Range", { 0 }, 0, 1, { { 0 } }, { { 0 } }, 6, want_range, NULL };
    for (int level = 0; level <= 3; level += 3) {
        pg_graph *g = range_graph();
        check_case("Range", g, level, &rc);
        pg_graph_free(g);
    }
    check_refusals();
    check_long_names();
    printf("%s: %d failure(s)\n", __FILE__, failures);
    return failures ? 1 : 0;
}

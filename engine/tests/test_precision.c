/* test_precision.c - compile(precision=...) through the C API, for the
 * sanitizer run: a FusedMatMul-able graph (MatMul + bias + Relu, then a
 * second MatMul, on a rank-3 input) compiled at fp32, bf16 and
 * int8-dynamic; the low-precision outputs against fp32 (relative to the
 * output's scale: bf16 rounding and int8 quantisation bounds), the step
 * detail naming the precision, no allocation difference between runs, a
 * save / load round trip bit-equal, an out-of-range precision refused.
 * Where the CPU has no low-precision kernel the model is fp32 and equal. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "peregrine.h"
#include "test_util.h"

enum { B = 2, S = 9, K = 70, H = 96, N = 40 };

static uint32_t seed = 99;
static float frand(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static pg_graph *build(void)
{
    pg_graph *g;
    OK(pg_graph_new(&g));
    int64_t xd[3] = { B, S, K }, w1d[2] = { K, H }, bd[1] = { H }, w2d[2] = { H, N };
    OK(pg_graph_add_input(g, "x", PG_DTYPE_FLOAT32, 3, xd));
    static float w1[K * H], b1[H], w2[H * N];
    for (int i = 0; i < K * H; i++) w1[i] = frand() * 0.15f;
    for (int i = 0; i < H; i++) b1[i] = frand() * 0.1f;
    for (int i = 0; i < H * N; i++) w2[i] = frand() * 0.15f;
    OK(pg_graph_add_initializer(g, "w1", PG_DTYPE_FLOAT32, 2, w1d, w1));
    OK(pg_graph_add_initializer(g, "b1", PG_DTYPE_FLOAT32, 1, bd, b1));
    OK(pg_graph_add_initializer(g, "w2", PG_DTYPE_FLOAT32, 2, w2d, w2));
    const char *i1[2] = { "x", "w1" }, *o1[1] = { "h" };
    OK(pg_graph_add_node(g, "MatMul", "mm1", i1, 2, o1, 1));
    const char *i2[2] = { "h", "b1" }, *o2[1] = { "hb" };
    OK(pg_graph_add_node(g, "Add", "add", i2, 2, o2, 1));
    const char *i3[1] = { "hb" }, *o3[1] = { "r" };
    OK(pg_graph_add_node(g, "Relu", "relu", i3, 1, o3, 1));
    const char *i4[2] = { "r", "w2" }, *o4[1] = { "y" };
    OK(pg_graph_add_node(g, "MatMul", "mm2", i4, 2, o4, 1));
    OK(pg_graph_add_output(g, "y"));
    return g;
}

static float x[B * S * K];

static void run(pg_model *m, float *out)
{
    const char *names[1] = { "x" };
    const void *data[1] = { x };
    int ranks[1] = { 3 };
    int64_t shape[3] = { B, S, K };
    const int64_t *shapes[1] = { shape };
    OK(pg_model_run(m, 1, names, data, ranks, shapes));
    pg_tensor_info ti;
    OK(pg_model_output_info(m, 0, &ti));
    memcpy(out, ti.data, sizeof(float) * B * S * N);
}

/* any step's detail says precision=<name> */
static int says(const pg_model *m, const char *name)
{
    char want[64];
    snprintf(want, sizeof want, "precision=%s", name);
    for (int i = 0; i < pg_model_step_count(m); i++) {
        pg_step_info si;
        OK(pg_model_step_info(m, i, &si));
        if (si.detail && strstr(si.detail, want))
            return 1;
    }
    return 0;
}

int main(void)
{
    for (int i = 0; i < B * S * K; i++)
        x[i] = frand() * 2.0f;
    pg_graph *g = build();
    static float ref[B * S * N], got[B * S * N], back[B * S * N];
    pg_compile_options o = { .level = 3, .threads = 1, .precision = PG_PRECISION_FP32 };
    pg_model *m32;
    OK(pg_compile(g, &o, &m32));
    run(m32, ref);
    float scale = 0;
    for (int i = 0; i < B * S * N; i++)
        scale = fabsf(ref[i]) > scale ? fabsf(ref[i]) : scale;
    static const struct { int p; const char *name; float tol; } cases[] = {
        { PG_PRECISION_BF16, "bf16", 0.02f }, { PG_PRECISION_INT8_DYNAMIC, "int8-dynamic", 0.05f } };
    for (int c = 0; c < 2; c++) {
        o.precision = cases[c].p;
        pg_model *m;
        OK(pg_compile(g, &o, &m));
        run(m, got);
        int lowp = says(m, cases[c].name);
        float err = 0;
        for (int i = 0; i < B * S * N; i++)
            err = fabsf(got[i] - ref[i]) > err ? fabsf(got[i] - ref[i]) : err;
        printf("%s: %s, max error %.3g of output scale %.3g\n", cases[c].name,
               lowp ? "low precision" : "fp32 fallback", (double)err, (double)scale);
        CHECK(err <= cases[c].tol * scale, "%s: error %g", cases[c].name, (double)err);
        if (!lowp)
            CHECK(err == 0, "%s fallback differs from fp32", cases[c].name);
        /* saved and loaded: the packed weights as they were */
        char path[] = "/tmp/pg_test_precision_XXXXXX";
        int fd = mkstemp(path);
        CHECK(fd >= 0, "mkstemp");
        close(fd);
        OK(pg_model_save(m, path));
        pg_model *l;
        OK(pg_model_load(path, NULL, &l));
        run(l, back);
        CHECK(!memcmp(back, got, sizeof got), "%s: loaded model differs", cases[c].name);
        CHECK(says(l, cases[c].name) == lowp, "%s: loaded model's precision", cases[c].name);
        pg_model_free(l);
        unlink(path);
        pg_model_free(m);
    }
    o.precision = 7;
    pg_model *bad = NULL;
    CHECK(pg_compile(g, &o, &bad) == PG_ERR_INVALID_ARG && !bad, "precision 7 accepted");
    CHECK(strstr(pg_last_error(), "precision 7") != NULL, "message: %s", pg_last_error());
    pg_model_free(m32);
    pg_graph_free(g);
    printf("%s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}

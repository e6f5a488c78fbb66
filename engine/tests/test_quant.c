/* test_quant.c - the quantisation ops and quant_fusion through the C API
 * (the Python tests check them against ONNX Runtime and the ONNX cases;
 * this one runs under the sanitizers in CI):
 *
 *   - quantize_dynamic's chain DynamicQuantizeLinear -> MatMulInteger ->
 *     Cast -> Mul(scale product) -> Add(bias), uint8 weights with a zero
 *     point, K = 13 and N = 37 (a padded K group, a partial panel): at
 *     levels 0, 1 and 3 and under the C-only CPU mask, bit-equal to the
 *     arithmetic written out here; a QuantMatMul step at levels 1 and 3;
 *   - QDQ: QuantizeLinear -> DequantizeLinear -> MatMul(DequantizeLinear(W
 *     int8, per-column scales)): level 0 (float products of dequantised
 *     values) within float rounding of level 1, and level 1 bit-equal to
 *     the int32 sum times the scale product;
 *   - no allocation during a run. */
#include <math.h>
#include <string.h>

#include "test_util.h"

enum { M = 5, K = 13, N = 37 };

static float X[M * K], WS[N], BIAS[N];
static uint8_t WU[K * N];
static int8_t WI[K * N];

static void fill(void)
{
    unsigned s = 12345u;
    for (int i = 0; i < M * K; i++) {
        s = s * 1103515245u + 12345u;
        X[i] = (float)((int)(s >> 16 & 0x3ff) - 400) / 97.0f;
    }
    for (int i = 0; i < K * N; i++) {
        s = s * 1103515245u + 12345u;
        WU[i] = (uint8_t)(s >> 20);
        WI[i] = (int8_t)(s >> 13);
    }
    for (int j = 0; j < N; j++) {
        WS[j] = 0.001f * (float)(j + 3);
        BIAS[j] = 0.01f * (float)(j - 17);
    }
}

static int has_step(const pg_model *m, const char *op)
{
    for (int i = 0; i < pg_model_step_count(m); i++) {
        pg_step_info si;
        if (pg_model_step_info(m, i, &si) == PG_OK && !strcmp(si.op_type, op))
            return 1;
    }
    return 0;
}

static const float *run(pg_model *m)
{
    const char *names[1] = { "x" };
    const void *data[1] = { X };
    int ranks[1] = { 2 };
    int64_t xd[2] = { M, K };
    const int64_t *shapes[1] = { xd };
    OK(pg_model_run(m, 1, names, data, ranks, shapes));   /* warm */
    uint64_t a0 = pg_alloc_count();
    OK(pg_model_run(m, 1, names, data, ranks, shapes));
    CHECK(pg_alloc_count() == a0, "a run allocated %llu times", (unsigned long long)(pg_alloc_count() - a0));
    pg_tensor_info y;
    OK(pg_model_output_info(m, 0, &y));
    CHECK(y.dtype == PG_DTYPE_FLOAT32 && y.rank == 2 && y.dims[0] == M && y.dims[1] == N, "output shape");
    return y.data;
}

/* ---- quantize_dynamic's chain ------------------------------------------- */

static pg_graph *dynamic_graph(void)
{
    pg_graph *g;
    OK(pg_graph_new(&g));
    int64_t xd[2] = { M, K }, wd[2] = { K, N }, nd[1] = { N };
    uint8_t wz = 131;
    OK(pg_graph_add_input(g, "x", PG_DTYPE_FLOAT32, 2, xd));
    OK(pg_graph_add_initializer(g, "w", PG_DTYPE_UINT8, 2, wd, WU));
    OK(pg_graph_add_initializer(g, "wz", PG_DTYPE_UINT8, 0, NULL, &wz));
    OK(pg_graph_add_initializer(g, "ws", PG_DTYPE_FLOAT32, 1, nd, WS));
    OK(pg_graph_add_initializer(g, "b", PG_DTYPE_FLOAT32, 1, nd, BIAS));
    const char *dq_out[3] = { "xq", "xs", "xz" };
    const char *dq_in[1] = { "x" };
    OK(pg_graph_add_node(g, "DynamicQuantizeLinear", "dq", dq_in, 1, dq_out, 3));
    const char *mi_in[4] = { "xq", "w", "xz", "wz" }, *mi_out[1] = { "acc" };
    OK(pg_graph_add_node(g, "MatMulInteger", "mmi", mi_in, 4, mi_out, 1));
    const char *c_in[1] = { "acc" }, *c_out[1] = { "accf" };
    OK(pg_graph_add_node(g, "Cast", "cast", c_in, 1, c_out, 1));
    OK(pg_graph_set_attr_int(g, "cast", "to", PG_DTYPE_FLOAT32));
    const char *s_in[2] = { "xs", "ws" }, *s_out[1] = { "sm" };
    OK(pg_graph_add_node(g, "Mul", "scales", s_in, 2, s_out, 1));
    const char *m_in[2] = { "accf", "sm" }, *m_out[1] = { "yq" };
    OK(pg_graph_add_node(g, "Mul", "deq", m_in, 2, m_out, 1));
    const char *a_in[2] = { "b", "yq" }, *a_out[1] = { "y" };
    OK(pg_graph_add_node(g, "Add", "bias", a_in, 2, a_out, 1));
    OK(pg_graph_add_output(g, "y"));
    return g;
}

/* The chain's arithmetic written out: DynamicQuantizeLinear (x / scale in
 * float32, half to even), the exact int32 sums, float32 Cast, Mul, Add. */
static void dynamic_want(float *want)
{
    float lo = 0, hi = 0;
    for (int i = 0; i < M * K; i++) {
        lo = X[i] < lo ? X[i] : lo;
        hi = X[i] > hi ? X[i] : hi;
    }
    float s = (hi - lo) / 255.0f;
    float zf = 0.0f - lo / s;
    int zp = (int)nearbyintf(zf < 0 ? 0 : zf > 255 ? 255 : zf);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            int32_t acc = 0;
            for (int k = 0; k < K; k++) {
                float v = nearbyintf(X[i * K + k] / s) + (float)zp;
                int q = v < 0 ? 0 : v > 255 ? 255 : (int)v;
                acc += (q - zp) * ((int)WU[k * N + j] - 131);
            }
            float sm = s * WS[j];
            float yq = (float)acc * sm;
            want[i * N + j] = BIAS[j] + yq;
        }
}

static void test_dynamic(void)
{
    float want[M * N];
    dynamic_want(want);
    pg_graph *g = dynamic_graph();
    for (int pass = 0; pass < 4; pass++) {
        int level = pass == 0 ? 0 : pass == 1 ? 1 : 3;   /* 0, 1, 3, then 3 under the C mask */
        if (pass == 3)
            OK(pg_cpu_set_mask_name("c"));
        pg_compile_options o = { .level = level };
        pg_model *m;
        OK(pg_compile(g, &o, &m));
        CHECK(has_step(m, "QuantMatMul") == (level >= 1), "level %d: QuantMatMul step %s", level,
              level >= 1 ? "missing" : "at level 0");
        CHECK(!has_step(m, "MatMulInteger") == (level >= 1), "level %d: MatMulInteger", level);
        const float *y = run(m);
        int bad = 0;
        for (int i = 0; i < M * N; i++)
            bad += memcmp(&y[i], &want[i], sizeof(float)) != 0;
        CHECK(bad == 0, "dynamic, level %d%s: %d of %d values differ (y[0] %.9g, want %.9g)", level,
              pass == 3 ? " (C mask)" : "", bad, M * N, y[0], want[0]);
        pg_model_free(m);
    }
    OK(pg_cpu_set_mask_name("all"));
    pg_graph_free(g);
}

/* ---- QDQ -------------------------------------------------------------------- */

static pg_graph *qdq_graph(void)
{
    pg_graph *g;
    OK(pg_graph_new(&g));
    int64_t xd[2] = { M, K }, wd[2] = { K, N }, nd[1] = { N };
    float sx = 0.03f;
    int8_t zx = -3, wz[N];
    memset(wz, 0, sizeof wz);
    OK(pg_graph_add_input(g, "x", PG_DTYPE_FLOAT32, 2, xd));
    OK(pg_graph_add_initializer(g, "sx", PG_DTYPE_FLOAT32, 0, NULL, &sx));
    OK(pg_graph_add_initializer(g, "zx", PG_DTYPE_INT8, 0, NULL, &zx));
    OK(pg_graph_add_initializer(g, "w", PG_DTYPE_INT8, 2, wd, WI));
    OK(pg_graph_add_initializer(g, "ws", PG_DTYPE_FLOAT32, 1, nd, WS));
    OK(pg_graph_add_initializer(g, "wz", PG_DTYPE_INT8, 1, nd, wz));
    const char *q_in[3] = { "x", "sx", "zx" }, *q_out[1] = { "xq" };
    OK(pg_graph_add_node(g, "QuantizeLinear", "q", q_in, 3, q_out, 1));
    const char *d_in[3] = { "xq", "sx", "zx" }, *d_out[1] = { "xd" };
    OK(pg_graph_add_node(g, "DequantizeLinear", "dqx", d_in, 3, d_out, 1));
    const char *w_in[3] = { "w", "ws", "wz" }, *w_out[1] = { "wd" };
    OK(pg_graph_add_node(g, "DequantizeLinear", "dqw", w_in, 3, w_out, 1));
    OK(pg_graph_set_attr_int(g, "dqw", "axis", 1));
    const char *mm_in[2] = { "xd", "wd" }, *mm_out[1] = { "y" };
    OK(pg_graph_add_node(g, "MatMul", "mm", mm_in, 2, mm_out, 1));
    OK(pg_graph_add_output(g, "y"));
    return g;
}

static void test_qdq(void)
{
    float y0[M * N], want[M * N];
    const float sx = 0.03f;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            int32_t acc = 0;
            for (int k = 0; k < K; k++) {
                float v = nearbyintf(X[i * K + k] / sx) - 3.0f;
                int q = v < -128 ? -128 : v > 127 ? 127 : (int)v;
                acc += (q + 3) * WI[k * N + j];
            }
            want[i * N + j] = (float)acc * (sx * WS[j]);
        }
    pg_graph *g = qdq_graph();
    for (int level = 0; level <= 3; level += 3) {
        pg_compile_options o = { .level = level };
        pg_model *m;
        OK(pg_compile(g, &o, &m));
        CHECK(has_step(m, "QuantMatMul") == (level >= 1), "qdq level %d: QuantMatMul", level);
        const float *y = run(m);
        if (level == 0) {
            memcpy(y0, y, sizeof y0);
            pg_model_free(m);
            continue;
        }
        int bad = 0, far = 0;
        for (int i = 0; i < M * N; i++) {
            bad += memcmp(&y[i], &want[i], sizeof(float)) != 0;
            far += fabsf(y[i] - y0[i]) > 1e-5f * (1.0f + fabsf(y0[i]));
        }
        CHECK(bad == 0, "qdq level %d: %d values differ from the int32 sums times the scales", level, bad);
        CHECK(far == 0, "qdq level %d: %d values beyond float rounding of level 0", level, far);
        pg_model_free(m);
    }
    pg_graph_free(g);
}

/* ---- DynamicQuantizeLinear on many values ---------------------------------
 * 4 x 100,003 values (3 magnitudes, and values half-way between steps),
 * against x / scale written out
 * (the executor rounds products by a faster route and must land on the
 * same integers). */
enum { BIG = 100003 };

static void test_dynamic_many(void)
{
    static float xs[BIG];
    static uint8_t want[BIG];
    unsigned r = 777u;
    for (int t = 0; t < 4; t++) {
        float mag = t == 0 ? 1.0f : t == 1 ? 37.5f : 1e-3f;
        for (int i = 0; i < BIG; i++) {
            r = r * 1103515245u + 12345u;
            xs[i] = ((float)(r >> 8) / 16777216.0f - 0.3f) * mag;
        }
        if (t == 3) {
            /* range [-1, 2]: scale 3 / 255; the rest half-way between two
             * steps, where a product and a quotient round apart */
            float sc = 3.0f / 255.0f;
            xs[0] = -1.0f;
            xs[1] = 2.0f;
            for (int i = 2; i < BIG; i++) {
                r = r * 1103515245u + 12345u;
                xs[i] = ((float)((int)(r >> 16) % 254 - 85) + 0.5f) * sc;
            }
        }
        float lo = 0, hi = 0;
        for (int i = 0; i < BIG; i++) {
            lo = xs[i] < lo ? xs[i] : lo;
            hi = xs[i] > hi ? xs[i] : hi;
        }
        float s = (hi - lo) / 255.0f, zf = 0.0f - lo / s;
        int zp = (int)nearbyintf(zf < 0 ? 0 : zf > 255 ? 255 : zf);
        for (int i = 0; i < BIG; i++) {
            float v = nearbyintf(xs[i] / s) + (float)zp;
            want[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
        pg_graph *g;
        OK(pg_graph_new(&g));
        int64_t d[1] = { BIG };
        OK(pg_graph_add_input(g, "x", PG_DTYPE_FLOAT32, 1, d));
        const char *in[1] = { "x" }, *out[3] = { "q", "s", "z" };
        OK(pg_graph_add_node(g, "DynamicQuantizeLinear", "dq", in, 1, out, 3));
        OK(pg_graph_add_output(g, "q"));
        OK(pg_graph_add_output(g, "s"));
        pg_compile_options o = { .level = 0 };
        pg_model *m;
        OK(pg_compile(g, &o, &m));
        const char *names[1] = { "x" };
        const void *data[1] = { xs };
        int ranks[1] = { 1 };
        const int64_t *shapes[1] = { d };
        OK(pg_model_run(m, 1, names, data, ranks, shapes));
        pg_tensor_info q, sc;
        OK(pg_model_output_info(m, 0, &q));
        OK(pg_model_output_info(m, 1, &sc));
        int bad = 0;
        for (int i = 0; i < BIG; i++)
            bad += ((const uint8_t *)q.data)[i] != want[i];
        CHECK(bad == 0 && *(const float *)sc.data == s, "DynamicQuantizeLinear, magnitude %g: %d of %d differ",
              mag, bad, BIG);
        pg_model_free(m);
        pg_graph_free(g);
    }
}

/* ---- refusals ------------------------------------------------------------------ */

static void test_refusals(void)
{
    pg_graph *g;
    OK(pg_graph_new(&g));
    int64_t xd[2] = { 2, 3 };
    OK(pg_graph_add_input(g, "x", PG_DTYPE_FLOAT32, 2, xd));
    int64_t sd[1] = { 2 };
    float s2[2] = { 1, 2 };
    OK(pg_graph_add_initializer(g, "s", PG_DTYPE_FLOAT32, 1, sd, s2));
    const char *in[2] = { "x", "s" }, *out[1] = { "y" };
    OK(pg_graph_add_node(g, "QuantizeLinear", "q_bad", in, 2, out, 1));
    OK(pg_graph_add_output(g, "y"));
    pg_model *m = NULL;
    pg_compile_options o = { .level = 0 };
    pg_status st = pg_compile(g, &o, &m);   /* 2 scales for axis 1 of size 3 */
    CHECK(st == PG_ERR_SHAPE && strstr(pg_last_error(), "q_bad"), "a misfit scale: %s", pg_last_error());
    pg_model_free(m);
    pg_graph_free(g);
}

int main(void)
{
    fill();
    test_dynamic();
    test_qdq();
    test_dynamic_many();
    test_refusals();
    if (!failures)
        printf("test_quant: ok\n");
    return failures ? 1 : 0;
}

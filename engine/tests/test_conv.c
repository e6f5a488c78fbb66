/* test_conv.c - Conv's fast paths (exec/conv_fast.c: the SGEMM and dwconv
 * kernels; exec/conv_nchwc.c: the blocked layout), the CNN passes
 * (conv_bn_fold, conv_act_fusion, nchwc_layout) and MaxPool's fast path
 * through the C API: a small network at levels 0 and 3 (in NCHW and
 * re-laid) on 1 and 2 threads against plain loops in this file, and no
 * allocation during a run.  (tests/test_cnn_passes.py checks the same against ONNX
 * Runtime; this one runs under the sanitizers in CI.)
 *
 *   x [2, 5, 11, 9] -> Conv 3x3 (12, bias) -> BatchNorm -> Relu
 *     -> Conv 3x3 stride 2 depthwise -> Clip(0, 6) -> Conv 1x1 (7) -> HardSwish
 *     -> MaxPool 3x3 stride 2 pad 1 -> Conv 5x5 depthwise pad 2 -> Sigmoid * x */
#include <math.h>
#include <string.h>

#include "test_util.h"

enum { N = 2, C0 = 5, H0 = 11, W0 = 9, C1 = 12, C2 = 7 };

static float rnd(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xFFFF) / 32768.0f - 1.0f;
}

/* y = conv(x) (+ b), NCHW, square kernel k, stride s, pad p, groups g */
static void conv_ref(const float *x, int C, int H, int W, const float *w, const float *b, int M, int k,
                     int s, int p, int g, float *y, int *OH, int *OW)
{
    int oh = (H + 2 * p - k) / s + 1, ow = (W + 2 * p - k) / s + 1, cg = C / g, mg = M / g;
    for (int n = 0; n < N; n++)
        for (int m = 0; m < M; m++)
            for (int i = 0; i < oh; i++)
                for (int j = 0; j < ow; j++) {
                    double acc = b ? b[m] : 0;
                    for (int c = 0; c < cg; c++)
                        for (int ky = 0; ky < k; ky++)
                            for (int kx = 0; kx < k; kx++) {
                                int iy = i * s - p + ky, ix = j * s - p + kx;
                                if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                                    continue;
                                int ci = m / mg * cg + c;
                                acc += (double)w[((m * cg + c) * k + ky) * k + kx] *
                                       x[((n * C + ci) * H + iy) * W + ix];
                            }
                    y[((n * M + m) * oh + i) * ow + j] = (float)acc;
                }
    *OH = oh;
    *OW = ow;
}

static float wa[C1 * C0 * 9], ba[C1], sc[C1], be[C1], mu[C1], va[C1], wb[C1 * 9], wc[C2 * C1],
             wd[C2 * 25], lo = 0.0f, hi = 6.0f;
static float xin[N * C0 * H0 * W0], t1[N * C1 * H0 * W0], t2[N * C1 * 6 * 5], t3[N * C2 * 6 * 5],
             t4[N * C2 * 3 * 3], want[N * C2 * 3 * 3];

static void reference(int *oh, int *ow)
{
    int h, w;
    conv_ref(xin, C0, H0, W0, wa, ba, C1, 3, 1, 1, 1, t1, &h, &w);
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C1; c++)
            for (int i = 0; i < h * w; i++) {
                float *v = &t1[(n * C1 + c) * h * w + i];
                double a = sc[c] / sqrt((double)va[c] + 1e-5);
                *v = (float)((*v - mu[c]) * a + be[c]);
                *v = *v > 0 ? *v : 0;
            }
    conv_ref(t1, C1, h, w, wb, NULL, C1, 3, 2, 1, C1, t2, &h, &w);
    for (int i = 0; i < N * C1 * h * w; i++)
        t2[i] = t2[i] < lo ? lo : t2[i] > hi ? hi : t2[i];
    conv_ref(t2, C1, h, w, wc, NULL, C2, 1, 1, 0, 1, t3, &h, &w);
    for (int i = 0; i < N * C2 * h * w; i++) {
        float r = t3[i] + 3;
        r = r < 0 ? 0 : r > 6 ? 6 : r;
        t3[i] = t3[i] * r / 6;
    }
    int ph = (h + 2 - 3) / 2 + 1, pw = (w + 2 - 3) / 2 + 1;
    for (int p = 0; p < N * C2; p++)
        for (int i = 0; i < ph; i++)
            for (int j = 0; j < pw; j++) {
                float m = -INFINITY;
                for (int ky = 0; ky < 3; ky++)
                    for (int kx = 0; kx < 3; kx++) {
                        int iy = i * 2 - 1 + ky, ix = j * 2 - 1 + kx;
                        if (iy >= 0 && iy < h && ix >= 0 && ix < w && t3[(p * h + iy) * w + ix] > m)
                            m = t3[(p * h + iy) * w + ix];
                    }
                t4[(p * ph + i) * pw + j] = m;
            }
    conv_ref(t4, C2, ph, pw, wd, NULL, C2, 5, 1, 2, C2, want, oh, ow);
    for (int i = 0; i < N * C2 * *oh * *ow; i++)
        want[i] = want[i] / (1.0f + expf(-want[i]));
}

static void attrs(pg_graph *g, const char *node, int k, int s, int p, int group)
{
    int64_t ks[2] = { k, k }, st[2] = { s, s }, pd[4] = { p, p, p, p };
    OK(pg_graph_set_attr_ints(g, node, "kernel_shape", ks, 2));
    OK(pg_graph_set_attr_ints(g, node, "strides", st, 2));
    OK(pg_graph_set_attr_ints(g, node, "pads", pd, 4));
    if (group)
        OK(pg_graph_set_attr_int(g, node, "group", group));
}

static pg_graph *build(void)
{
    pg_graph *g;
    int64_t xd[4] = { N, C0, H0, W0 }, dwa[4] = { C1, C0, 3, 3 }, dwb[4] = { C1, 1, 3, 3 },
            dwc[4] = { C2, C1, 1, 1 }, dwd[4] = { C2, 1, 5, 5 }, v1[1] = { C1 };
    OK(pg_graph_new(&g));
    OK(pg_graph_add_input(g, "x", PG_DTYPE_FLOAT32, 4, xd));
    OK(pg_graph_add_initializer(g, "wa", PG_DTYPE_FLOAT32, 4, dwa, wa));
    OK(pg_graph_add_initializer(g, "ba", PG_DTYPE_FLOAT32, 1, v1, ba));
    OK(pg_graph_add_initializer(g, "sc", PG_DTYPE_FLOAT32, 1, v1, sc));
    OK(pg_graph_add_initializer(g, "be", PG_DTYPE_FLOAT32, 1, v1, be));
    OK(pg_graph_add_initializer(g, "mu", PG_DTYPE_FLOAT32, 1, v1, mu));
    OK(pg_graph_add_initializer(g, "va", PG_DTYPE_FLOAT32, 1, v1, va));
    OK(pg_graph_add_initializer(g, "wb", PG_DTYPE_FLOAT32, 4, dwb, wb));
    OK(pg_graph_add_initializer(g, "wc", PG_DTYPE_FLOAT32, 4, dwc, wc));
    OK(pg_graph_add_initializer(g, "wd", PG_DTYPE_FLOAT32, 4, dwd, wd));
    OK(pg_graph_add_initializer(g, "lo", PG_DTYPE_FLOAT32, 0, NULL, &lo));
    OK(pg_graph_add_initializer(g, "hi", PG_DTYPE_FLOAT32, 0, NULL, &hi));
    const char *i1[3] = { "x", "wa", "ba" }, *o1[1] = { "a1" };
    OK(pg_graph_add_node(g, "Conv", "conv1", i1, 3, o1, 1));
    attrs(g, "conv1", 3, 1, 1, 0);
    const char *i2[5] = { "a1", "sc", "be", "mu", "va" }, *o2[1] = { "a2" };
    OK(pg_graph_add_node(g, "BatchNormalization", "bn1", i2, 5, o2, 1));
    const char *i3[1] = { "a2" }, *o3[1] = { "a3" };
    OK(pg_graph_add_node(g, "Relu", "relu1", i3, 1, o3, 1));
    const char *i4[2] = { "a3", "wb" }, *o4[1] = { "a4" };
    OK(pg_graph_add_node(g, "Conv", "dw1", i4, 2, o4, 1));
    attrs(g, "dw1", 3, 2, 1, C1);
    const char *i5[3] = { "a4", "lo", "hi" }, *o5[1] = { "a5" };
    OK(pg_graph_add_node(g, "Clip", "clip1", i5, 3, o5, 1));
    const char *i6[2] = { "a5", "wc" }, *o6[1] = { "a6" };
    OK(pg_graph_add_node(g, "Conv", "pw1", i6, 2, o6, 1));
    attrs(g, "pw1", 1, 1, 0, 0);
    const char *i7[1] = { "a6" }, *o7[1] = { "a7" };
    OK(pg_graph_add_node(g, "HardSwish", "hs1", i7, 1, o7, 1));
    const char *i8[1] = { "a7" }, *o8[1] = { "a8" };
    OK(pg_graph_add_node(g, "MaxPool", "pool1", i8, 1, o8, 1));
    attrs(g, "pool1", 3, 2, 1, 0);
    const char *i9[2] = { "a8", "wd" }, *o9[1] = { "a9" };
    OK(pg_graph_add_node(g, "Conv", "dw2", i9, 2, o9, 1));
    attrs(g, "dw2", 5, 1, 2, C2);
    const char *i10[1] = { "a9" }, *o10[1] = { "a10" };
    OK(pg_graph_add_node(g, "Sigmoid", "sig1", i10, 1, o10, 1));
    const char *i11[2] = { "a9", "a10" }, *o11[1] = { "y" };
    OK(pg_graph_add_node(g, "Mul", "mul1", i11, 2, o11, 1));
    OK(pg_graph_add_output(g, "y"));
    return g;
}

/* pg_model_profile: two profiled runs counted (and allocating nothing),
 * none after it is off, the first conv's FLOPs as the op defines them. */
static void check_profile(pg_model *m, const char **names, const void **data, const int *ranks,
                          const int64_t **shapes, int level)
{
    pg_step_time t;
    OK(pg_model_profile(m, 1));
    OK(pg_model_step_time(m, 0, &t));
    CHECK(t.runs == 0 && t.ns == 0, "level %d: a fresh profile holds %llu runs", level,
          (unsigned long long)t.runs);
    uint64_t before = pg_alloc_count();
    OK(pg_model_run(m, 1, names, data, ranks, shapes));
    OK(pg_model_run(m, 1, names, data, ranks, shapes));
    CHECK(pg_alloc_count() == before, "level %d: a profiled run allocated", level);
    OK(pg_model_profile(m, 0));
    OK(pg_model_run(m, 1, names, data, ranks, shapes));
    uint64_t total = 0;
    double conv_flops = -1;
    for (int i = 0; i < pg_model_step_count(m); i++) {
        pg_step_info si;
        OK(pg_model_step_info(m, i, &si));
        OK(pg_model_step_time(m, i, &t));
        CHECK(t.runs == 2, "level %d: step %d counted %llu runs, not 2", level, i, (unsigned long long)t.runs);
        total += t.ns;
        if (conv_flops < 0 && (!strcmp(si.op_type, "Conv") || !strcmp(si.op_type, "FusedConv")))
            conv_flops = t.flops;
    }
    CHECK(total > 0, "level %d: no time counted", level);
    CHECK(conv_flops == 2.0 * N * C1 * H0 * W0 * C0 * 9, "level %d: the first conv's FLOPs %g", level,
          conv_flops);
    CHECK(pg_model_step_time(m, pg_model_step_count(m), &t) == PG_ERR_INVALID_ARG,
          "a step past the last has a time");
}

int main(void)
{
    unsigned s = 7;
    for (size_t i = 0; i < sizeof xin / sizeof *xin; i++) xin[i] = rnd(&s) * 2;
    for (size_t i = 0; i < sizeof wa / sizeof *wa; i++) wa[i] = rnd(&s) * 0.5f;
    for (size_t i = 0; i < sizeof wb / sizeof *wb; i++) wb[i] = rnd(&s) * 0.6f;
    for (size_t i = 0; i < sizeof wc / sizeof *wc; i++) wc[i] = rnd(&s) * 0.5f;
    for (size_t i = 0; i < sizeof wd / sizeof *wd; i++) wd[i] = rnd(&s) * 0.3f;
    for (int c = 0; c < C1; c++) {
        ba[c] = rnd(&s) * 0.2f;
        sc[c] = 1.0f + rnd(&s) * 0.5f;
        be[c] = rnd(&s) * 0.2f;
        mu[c] = rnd(&s) * 0.2f;
        va[c] = 1.0f + rnd(&s) * 0.5f;
    }
    int oh, ow;
    reference(&oh, &ow);
    pg_graph *g = build();
    /* level 0; level 3 in NCHW (nchwc_layout off: the counts below); level
     * 3 with the network re-laid in NCHW16c where the CPU has the kernels */
    for (int cfg = 0; cfg < 3; cfg++)
        for (int threads = 1; threads <= 2; threads++) {
            int level = cfg ? 3 : 0;
            pg_model *m;
            pg_compile_options o = { .level = level, .disabled = cfg == 1 ? "nchwc_layout" : NULL,
                                       .threads = threads };
            OK(pg_compile(g, &o, &m));
            const char *names[1] = { "x" };
            const void *data[1] = { xin };
            int ranks[1] = { 4 };
            int64_t xd[4] = { N, C0, H0, W0 };
            const int64_t *shapes[1] = { xd };
            OK(pg_model_run(m, 1, names, data, ranks, shapes));
            uint64_t before = pg_alloc_count();
            OK(pg_model_run(m, 1, names, data, ranks, shapes));
            CHECK(pg_alloc_count() == before, "level %d, %d threads: a run allocated", level, threads);
            pg_tensor_info y;
            OK(pg_model_output_info(m, 0, &y));
            CHECK(y.rank == 4 && y.dims[0] == N && y.dims[1] == C2 && y.dims[2] == oh && y.dims[3] == ow,
                  "level %d: output shape", level);
            const float *Y = y.data;
            double worst = 0, big = 0;
            /* plain comparisons: aarch64-linux-gnu-gcc 12 stops with an
             * internal error vectorising an fmax reduction (as in test_ops_cnn.c) */
            for (int i = 0; i < N * C2 * oh * ow; i++) {
                double e = fabs((double)Y[i] - want[i]), a = fabs((double)want[i]);
                if (e != e)
                    worst = INFINITY;   /* a NaN output fails */
                else if (e > worst)
                    worst = e;
                if (a > big)
                    big = a;
            }
            CHECK(worst <= 1e-4 * big, "level %d, %d threads: max error %g of %g", level, threads, worst, big);
            /* level 3: BN folded, the activations fused (MaxPool keeps its
             * op: its executor picks the fast path) */
            int nsteps = pg_model_step_count(m), fused = 0, plain = 0;
            for (int i = 0; i < nsteps; i++) {
                pg_step_info si;
                OK(pg_model_step_info(m, i, &si));
                fused += !strcmp(si.op_type, "FusedConv");
                plain += !strcmp(si.op_type, "BatchNormalization") || !strcmp(si.op_type, "Relu") ||
                         !strcmp(si.op_type, "Mul");
            }
            if (cfg == 1)
                CHECK(fused == 4 && plain == 0 && nsteps == 5, "level 3: %d steps, %d fused, %d unfused",
                      nsteps, fused, plain);
            check_profile(m, names, data, ranks, shapes, level);
            pg_model_free(m);
        }
    pg_graph_free(g);
    printf("test_conv: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}

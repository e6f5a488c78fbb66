/* test_ops_cnn.c - the CNN graph ops through the C API at levels 0 and 3:
 * each output against a direct formula computed here (one output element
 * at a time, the gather form, independent of the executors' loop order),
 * no allocation during a run, and the refusals (errors naming the node,
 * never a crash).  The Python tests check the same ops against ONNX Runtime
 * and the ONNX cases; this one runs under the sanitizers in CI, the
 * level-3 runs through whatever fast path a Conv binds. */
#include <math.h>
#include <string.h>

#include "test_util.h"

#define MAXN 4096

static float X[MAXN], W[MAXN], B[64], OUT[MAXN], WANT[MAXN];
static int64_t IDX[MAXN], WANT_IDX[MAXN];

static void fill(float *p, int n, unsigned seed)
{
    for (int i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
    }
}

typedef struct attr {
    const char *name;
    char kind;            /* 'i' int, 's' string, 'I' ints, 'f' float */
    int64_t i;
    const char *s;
    int64_t v[6];
    int n;
    float f;
} attr;

#define AI(nm, x) { .name = nm, .kind = 'i', .i = x }
#define AF(nm, x) { .name = nm, .kind = 'f', .f = x }
#define AS(nm, x) { .name = nm, .kind = 's', .s = x }
#define AV(nm, cnt, ...) { .name = nm, .kind = 'I', .v = { __VA_ARGS__ }, .n = cnt }

typedef struct wt {
    const char *name;
    pg_dtype dt;
    int rank;
    int64_t dims[5];
    const void *data;
} wt;

/* One node reading fed x (and constants), writing y (and y1 when n_out is
 * 2); compiled at `level`, run twice (the second allocating nothing); its
 * outputs copied to OUT (and IDX).  Returns the elements of y, or -1 with
 * the compile status in *st. */
static int64_t run_one(const char *op, int xrank, const int64_t *xd, const char *const *ins, int n_in,
                       const wt *ws, int n_w, const attr *as, int n_a, int n_out, int level, pg_status *st)
{
    pg_graph *g;
    OK(pg_graph_new(&g));
    OK(pg_graph_add_input(g, "x", PG_DTYPE_FLOAT32, xrank, xd));
    for (int i = 0; i < n_w; i++)
        OK(pg_graph_add_initializer(g, ws[i].name, ws[i].dt, ws[i].rank, ws[i].dims, ws[i].data));
    const char *outs[2] = { "y", "y1" };
    OK(pg_graph_add_node(g, op, "the_node", ins, n_in, outs, n_out));
    for (int i = 0; i < n_a; i++) {
        const attr *a = &as[i];
        if (a->kind == 'i') OK(pg_graph_set_attr_int(g, "the_node", a->name, a->i));
        else if (a->kind == 'f') OK(pg_graph_set_attr_float(g, "the_node", a->name, a->f));
        else if (a->kind == 's') OK(pg_graph_set_attr_string(g, "the_node", a->name, a->s));
        else OK(pg_graph_set_attr_ints(g, "the_node", a->name, a->v, a->n));
    }
    for (int o = 0; o < n_out; o++)
        OK(pg_graph_add_output(g, outs[o]));
    pg_model *m = NULL;
    pg_compile_options opt = { 0 };
    opt.level = level;
    opt.threads = 1;
    *st = pg_compile(g, &opt, &m);
    pg_graph_free(g);
    if (*st != PG_OK)
        return -1;
    const char *names[1] = { "x" };
    const void *data[1] = { X };
    int ranks[1] = { xrank };
    const int64_t *shapes[1] = { xd };
    OK(pg_model_run(m, 1, names, data, ranks, shapes));
    uint64_t before = pg_alloc_count();
    OK(pg_model_run(m, 1, names, data, ranks, shapes));
    CHECK(pg_alloc_count() == before, "%s level %d: a run allocated", op, level);
    pg_tensor_info y;
    OK(pg_model_output_info(m, 0, &y));
    int64_t n = 1;
    for (int d = 0; d < y.rank; d++) n *= y.dims[d];
    if (n <= MAXN)
        memcpy(OUT, y.data, (size_t)n * sizeof(float));
    if (n_out > 1) {
        pg_tensor_info yi;
        OK(pg_model_output_info(m, 1, &yi));
        if (n <= MAXN)
            memcpy(IDX, yi.data, (size_t)n * sizeof(int64_t));
    }
    pg_model_free(m);
    return n;
}

static void compare(const char *what, int level, int64_t n, int64_t want_n)
{
    CHECK(n == want_n, "%s level %d: %lld elements, expected %lld", what, level, (long long)n, (long long)want_n);
    if (n != want_n)
        return;
    /* plain comparisons: aarch64-linux-gnu-gcc 12 stops with an internal
     * error vectorising an fmax reduction here */
    double worst = 0, scale = 1e-6;
    for (int64_t i = 0; i < n; i++)
        if (fabs(WANT[i]) > scale)
            scale = fabs(WANT[i]);
    for (int64_t i = 0; i < n; i++) {
        double e = fabs((double)OUT[i] - WANT[i]) / scale;
        if (e != e)
            worst = INFINITY;   /* a NaN output fails */
        else if (e > worst)
            worst = e;
    }
    CHECK(worst <= 1e-5, "%s level %d: relative error %g", what, level, worst);
}

/* ---- Conv / ConvTranspose: 2D, the direct sums ------------------------------- */

typedef struct conv2d {
    int64_t N, C, H, Wd, M, KH, KW, G, sh, sw, dh, dw, pt, pl, pb, pr, oph, opw;
} conv2d;

static int64_t conv_out(const conv2d *p, int64_t *OH, int64_t *OW)
{
    *OH = (p->H + p->pt + p->pb - ((p->KH - 1) * p->dh + 1)) / p->sh + 1;
    *OW = (p->Wd + p->pl + p->pr - ((p->KW - 1) * p->dw + 1)) / p->sw + 1;
    return p->N * p->M * *OH * *OW;
}

static void conv_want(const conv2d *p, int64_t OH, int64_t OW)
{
    int64_t Cg = p->C / p->G, Mg = p->M / p->G;
    for (int64_t n = 0; n < p->N; n++)
        for (int64_t m = 0; m < p->M; m++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    double acc = B[m];
                    for (int64_t c = 0; c < Cg; c++)
                        for (int64_t kh = 0; kh < p->KH; kh++)
                            for (int64_t kw = 0; kw < p->KW; kw++) {
                                int64_t ih = oh * p->sh - p->pt + kh * p->dh, iw = ow * p->sw - p->pl + kw * p->dw;
                                if (ih < 0 || ih >= p->H || iw < 0 || iw >= p->Wd)
                                    continue;
                                int64_t ci = (m / Mg) * Cg + c;
                                acc += (double)X[((n * p->C + ci) * p->H + ih) * p->Wd + iw] *
                                       W[((m * Cg + c) * p->KH + kh) * p->KW + kw];
                            }
                    WANT[((n * p->M + m) * OH + oh) * OW + ow] = (float)acc;
                }
}

static void check_conv(const char *what, conv2d p)
{
    int64_t OH, OW, total = conv_out(&p, &OH, &OW);
    int64_t xd[4] = { p.N, p.C, p.H, p.Wd };
    fill(X, (int)(p.N * p.C * p.H * p.Wd), 1);
    fill(W, (int)(p.M * (p.C / p.G) * p.KH * p.KW), 2);
    fill(B, (int)p.M, 3);
    conv_want(&p, OH, OW);
    wt ws[2] = { { "w", PG_DTYPE_FLOAT32, 4, { p.M, p.C / p.G, p.KH, p.KW }, W },
                 { "b", PG_DTYPE_FLOAT32, 1, { p.M }, B } };
    attr as[4] = { AV("strides", 2, p.sh, p.sw), AV("dilations", 2, p.dh, p.dw),
                   AV("pads", 4, p.pt, p.pl, p.pb, p.pr), AI("group", p.G) };
    const char *ins[3] = { "x", "w", "b" };
    for (int level = 0; level <= 3; level += 3) {
        pg_status st;
        int64_t n = run_one("Conv", 4, xd, ins, 3, ws, 2, as, 4, 1, level, &st);
        CHECK(st == PG_OK, "%s level %d: %s", what, level, pg_last_error());
        if (st == PG_OK)
            compare(what, level, n, total);
    }
}

static void check_conv_transpose(void)
{
    conv2d p = { .N = 2, .C = 4, .H = 3, .Wd = 4, .M = 6, .KH = 3, .KW = 2, .G = 2, .sh = 2, .sw = 3,
                 .dh = 1, .dw = 2, .pt = 1, .pl = 0, .pb = 0, .pr = 1, .oph = 1, .opw = 0 };
    int64_t Cg = p.C / p.G, Mg = p.M / p.G;
    int64_t OH = p.sh * (p.H - 1) + p.oph + (p.KH - 1) * p.dh + 1 - p.pt - p.pb;
    int64_t OW = p.sw * (p.Wd - 1) + p.opw + (p.KW - 1) * p.dw + 1 - p.pl - p.pr;
    fill(X, (int)(p.N * p.C * p.H * p.Wd), 4);
    fill(W, (int)(p.C * Mg * p.KH * p.KW), 5);
    fill(B, (int)p.M, 6);
    for (int64_t n = 0; n < p.N; n++)
        for (int64_t m = 0; m < p.M; m++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    double acc = B[m];
                    int64_t g = m / Mg, mg = m % Mg;
                    for (int64_t c = g * Cg; c < (g + 1) * Cg; c++)
                        for (int64_t ih = 0; ih < p.H; ih++)
                            for (int64_t iw = 0; iw < p.Wd; iw++)
                                for (int64_t kh = 0; kh < p.KH; kh++)
                                    for (int64_t kw = 0; kw < p.KW; kw++)
                                        if (ih * p.sh - p.pt + kh * p.dh == oh && iw * p.sw - p.pl + kw * p.dw == ow)
                                            acc += (double)X[((n * p.C + c) * p.H + ih) * p.Wd + iw] *
                                                   W[((c * Mg + mg) * p.KH + kh) * p.KW + kw];
                    WANT[((n * p.M + m) * OH + oh) * OW + ow] = (float)acc;
                }
    int64_t xd[4] = { p.N, p.C, p.H, p.Wd };
    wt ws[2] = { { "w", PG_DTYPE_FLOAT32, 4, { p.C, Mg, p.KH, p.KW }, W }, { "b", PG_DTYPE_FLOAT32, 1, { p.M }, B } };
    attr as[5] = { AV("strides", 2, p.sh, p.sw), AV("dilations", 2, p.dh, p.dw),
                   AV("pads", 4, p.pt, p.pl, p.pb, p.pr), AI("group", p.G), AV("output_padding", 2, p.oph, p.opw) };
    const char *ins[3] = { "x", "w", "b" };
    for (int level = 0; level <= 3; level += 3) {
        pg_status st;
        int64_t n = run_one("ConvTranspose", 4, xd, ins, 3, ws, 2, as, 5, 1, level, &st);
        CHECK(st == PG_OK, "ConvTranspose level %d: %s", level, pg_last_error());
        if (st == PG_OK)
            compare("ConvTranspose", level, n, p.N * p.M * OH * OW);
    }
}

/* ---- pools ------------------------------------------------------------------ */

static void check_pools(void)
{
    /* [1, 2, 5, 6], kernel 3x2, strides 2, pads (1, 0, 1, 1), ceil_mode */
    int64_t H = 5, Wd = 6, C = 2, KH = 3, KW = 2, s = 2, pt = 1, pl = 0, pb = 1, pr = 1;
    int64_t xd[4] = { 1, C, H, Wd };
    fill(X, (int)(C * H * Wd), 7);
    int64_t OH = (H + pt + pb - KH + s - 1) / s + 1, OW = (Wd + pl + pr - KW + s - 1) / s + 1;
    if ((OH - 1) * s >= H + pt) OH--;
    if ((OW - 1) * s >= Wd + pl) OW--;
    const char *ins[1] = { "x" };
    for (int kind = 0; kind < 3; kind++) {   /* max (with Indices), avg, avg counting pads */
        for (int64_t c = 0; c < C; c++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    double mx = -INFINITY, sum = 0;
                    int64_t cnt = 0, cnt_pad = 0, arg = -1;
                    for (int64_t kh = 0; kh < KH; kh++)
                        for (int64_t kw = 0; kw < KW; kw++) {
                            int64_t ih = oh * s - pt + kh, iw = ow * s - pl + kw;
                            if (ih >= -pt && ih < H + pb && iw >= -pl && iw < Wd + pr)
                                cnt_pad++;
                            if (ih < 0 || ih >= H || iw < 0 || iw >= Wd)
                                continue;
                            float v = X[(c * H + ih) * Wd + iw];
                            if (v > mx) {
                                mx = v;
                                arg = (c * H + ih) * Wd + iw;
                            }
                            sum += v;
                            cnt++;
                        }
                    int64_t o = (c * OH + oh) * OW + ow;
                    WANT[o] = (float)(kind == 0 ? mx : sum / (double)(kind == 1 ? cnt : cnt_pad));
                    WANT_IDX[o] = arg;
                }
        attr as[5] = { AV("kernel_shape", 2, KH, KW), AV("strides", 2, s, s), AV("pads", 4, pt, pl, pb, pr),
                       AI("ceil_mode", 1), AI("count_include_pad", kind == 2) };
        const char *op = kind == 0 ? "MaxPool" : "AveragePool";
        for (int level = 0; level <= 3; level += 3) {
            pg_status st;
            int64_t n = run_one(op, 4, xd, ins, 1, NULL, 0, as, kind == 0 ? 4 : 5, kind == 0 ? 2 : 1, level, &st);
            CHECK(st == PG_OK, "%s level %d: %s", op, level, pg_last_error());
            if (st != PG_OK)
                continue;
            compare(op, level, n, C * OH * OW);
            if (kind == 0)
                for (int64_t o = 0; o < n && o < C * OH * OW; o++)
                    CHECK(IDX[o] == WANT_IDX[o], "MaxPool level %d: index [%lld] = %lld, expected %lld", level,
                          (long long)o, (long long)IDX[o], (long long)WANT_IDX[o]);
        }
    }
    /* GlobalAveragePool over [2, 3, 4, 5] */
    int64_t gd[4] = { 2, 3, 4, 5 };
    fill(X, 120, 8);
    for (int i = 0; i < 6; i++) {
        double sum = 0;
        for (int j = 0; j < 20; j++) sum += X[i * 20 + j];
        WANT[i] = (float)(sum / 20);
    }
    for (int level = 0; level <= 3; level += 3) {
        pg_status st;
        int64_t n = run_one("GlobalAveragePool", 4, gd, ins, 1, NULL, 0, NULL, 0, 1, level, &st);
        CHECK(st == PG_OK, "GlobalAveragePool: %s", pg_last_error());
        if (st == PG_OK)
            compare("GlobalAveragePool", level, n, 6);
    }
}

/* ---- BatchNormalization, PRelu, DepthToSpace, Resize ------------------------- */

static void check_misc(void)
{
    int64_t xd[4] = { 2, 3, 2, 4 };
    float sc[3], bi[3], mu[3], var[3] = { 0.5f, 1.0f, 2.0f };
    fill(X, 48, 9);
    fill(sc, 3, 10);
    fill(bi, 3, 11);
    fill(mu, 3, 12);
    for (int i = 0; i < 48; i++) {
        int c = (i / 8) % 3;
        WANT[i] = (float)((X[i] - mu[c]) / sqrt(var[c] + 1e-3) * sc[c] + bi[c]);
    }
    wt bn[4] = { { "s", PG_DTYPE_FLOAT32, 1, { 3 }, sc }, { "b", PG_DTYPE_FLOAT32, 1, { 3 }, bi },
                 { "m", PG_DTYPE_FLOAT32, 1, { 3 }, mu }, { "v", PG_DTYPE_FLOAT32, 1, { 3 }, var } };
    const char *bn_in[5] = { "x", "s", "b", "m", "v" }, *x_in[2] = { "x", "slope" };
    attr eps[1] = { AF("epsilon", 1e-3f) };
    pg_status st;
    for (int level = 0; level <= 3; level += 3) {
        int64_t n = run_one("BatchNormalization", 4, xd, bn_in, 5, bn, 4, eps, 1, 1, level, &st);
        CHECK(st == PG_OK, "BatchNormalization: %s", pg_last_error());
        if (st == PG_OK)
            compare("BatchNormalization", level, n, 48);
    }
    /* PRelu, slope [3, 1, 1] */
    wt sl[1] = { { "slope", PG_DTYPE_FLOAT32, 3, { 3, 1, 1 }, sc } };
    for (int i = 0; i < 48; i++) WANT[i] = X[i] < 0 ? sc[(i / 8) % 3] * X[i] : X[i];
    for (int level = 0; level <= 3; level += 3) {
        int64_t n = run_one("PRelu", 4, xd, x_in, 2, sl, 1, NULL, 0, 1, level, &st);
        CHECK(st == PG_OK, "PRelu: %s", pg_last_error());
        if (st == PG_OK)
            compare("PRelu", level, n, 48);
    }
    /* DepthToSpace DCR and CRD, blocksize 2: [1, 8, 2, 3] -> [1, 2, 4, 6] */
    int64_t dd[4] = { 1, 8, 2, 3 };
    fill(X, 48, 13);
    for (int crd = 0; crd < 2; crd++) {
        for (int c = 0; c < 2; c++)
            for (int oh = 0; oh < 4; oh++)
                for (int ow = 0; ow < 6; ow++) {
                    int i = oh % 2, j = ow % 2, ch = crd ? c * 4 + i * 2 + j : (i * 2 + j) * 2 + c;
                    WANT[(c * 4 + oh) * 6 + ow] = X[(ch * 2 + oh / 2) * 3 + ow / 2];
                }
        attr da[2] = { AI("blocksize", 2), AS("mode", crd ? "CRD" : "DCR") };
        for (int level = 0; level <= 3; level += 3) {
            int64_t n = run_one("DepthToSpace", 4, dd, x_in, 1, NULL, 0, da, 2, 1, level, &st);
            CHECK(st == PG_OK, "DepthToSpace: %s", pg_last_error());
            if (st == PG_OK)
                compare(crd ? "DepthToSpace CRD" : "DepthToSpace DCR", level, n, 48);
        }
    }
    /* Resize: linear, align_corners, [1, 1, 3, 4] -> [1, 1, 5, 7] by sizes */
    int64_t rd[4] = { 1, 1, 3, 4 }, sizes[4] = { 1, 1, 5, 7 };
    fill(X, 12, 14);
    for (int oh = 0; oh < 5; oh++)
        for (int ow = 0; ow < 7; ow++) {
            double y = oh * 2.0 / 4.0, x = ow * 3.0 / 6.0;
            int y0 = (int)floor(y), x0 = (int)floor(x), y1 = y0 + 1 < 3 ? y0 + 1 : 2, x1 = x0 + 1 < 4 ? x0 + 1 : 3;
            double fy = y - y0, fx = x - x0;
            WANT[oh * 7 + ow] = (float)((1 - fy) * ((1 - fx) * X[y0 * 4 + x0] + fx * X[y0 * 4 + x1]) +
                                        fy * ((1 - fx) * X[y1 * 4 + x0] + fx * X[y1 * 4 + x1]));
        }
    wt rs[1] = { { "sizes", PG_DTYPE_INT64, 1, { 4 }, sizes } };
    const char *r_in[4] = { "x", "", "", "sizes" };
    attr ra[2] = { AS("mode", "linear"), AS("coordinate_transformation_mode", "align_corners") };
    for (int level = 0; level <= 3; level += 3) {
        int64_t n = run_one("Resize", 4, rd, r_in, 4, rs, 1, ra, 2, 1, level, &st);
        CHECK(st == PG_OK, "Resize: %s", pg_last_error());
        if (st == PG_OK)
            compare("Resize linear align_corners", level, n, 35);
    }
}

/* ---- refusals: a status and a message naming the node, never a crash --------- */

static void refused(const char *what, pg_status want, const char *word, const char *op, int xrank,
                    const int64_t *xd, const char *const *ins, int n_in, const wt *ws, int n_w, const attr *as,
                    int n_a, int n_out)
{
    pg_status st;
    run_one(op, xrank, xd, ins, n_in, ws, n_w, as, n_a, n_out, 0, &st);
    const char *msg = pg_last_error();
    CHECK(st == want && strstr(msg, "the_node") && strstr(msg, word), "%s: %s: %s", what, pg_status_name(st), msg);
}

static void check_refusals(void)
{
    int64_t xd[4] = { 1, 3, 8, 8 };
    fill(W, 4 * 4 * 9, 15);
    const char *cw[2] = { "x", "w" }, *x1[1] = { "x" };
    wt w4[1] = { { "w", PG_DTYPE_FLOAT32, 4, { 4, 4, 3, 3 }, W } };
    refused("Conv channel mismatch", PG_ERR_SHAPE, "input channels", "Conv", 4, xd, cw, 2, w4, 1, NULL, 0, 1);
    wt w3[1] = { { "w", PG_DTYPE_FLOAT32, 4, { 4, 3, 3, 3 }, W } };
    attr big[1] = { AV("strides", 2, (int64_t)1 << 40, 1) };
    refused("Conv huge stride", PG_ERR_UNSUPPORTED, "strides", "Conv", 4, xd, cw, 2, w3, 1, big, 1, 1);
    attr neg[1] = { AV("pads", 4, -1, 0, 0, 0) };
    refused("Conv negative pad", PG_ERR_UNSUPPORTED, "pads", "Conv", 4, xd, cw, 2, w3, 1, neg, 1, 1);
    attr grp[1] = { AI("group", 0) };
    refused("Conv group 0", PG_ERR_GRAPH, "group", "Conv", 4, xd, cw, 2, w3, 1, grp, 1, 1);
    attr ap[1] = { AS("auto_pad", "SIDEWAYS") };
    refused("Conv auto_pad", PG_ERR_UNSUPPORTED, "auto_pad", "Conv", 4, xd, cw, 2, w3, 1, ap, 1, 1);
    attr ks[1] = { AV("kernel_shape", 2, 9, 9) };
    refused("MaxPool kernel past the input", PG_ERR_SHAPE, "kernel", "MaxPool", 4, xd, x1, 1, NULL, 0, ks, 1, 1);
    float ones[3] = { 1, 1, 1 };
    wt bn[4] = { { "s", PG_DTYPE_FLOAT32, 1, { 3 }, ones }, { "b", PG_DTYPE_FLOAT32, 1, { 3 }, ones },
                 { "m", PG_DTYPE_FLOAT32, 1, { 3 }, ones }, { "v", PG_DTYPE_FLOAT32, 1, { 3 }, ones } };
    const char *bn_in[5] = { "x", "s", "b", "m", "v" };
    attr tm[1] = { AI("training_mode", 1) };
    refused("BatchNormalization training", PG_ERR_UNSUPPORTED, "training_mode", "BatchNormalization", 4, xd,
            bn_in, 5, bn, 4, tm, 1, 1);
    attr bs[1] = { AI("blocksize", (int64_t)1 << 33) };
    refused("DepthToSpace huge blocksize", PG_ERR_UNSUPPORTED, "blocksize", "DepthToSpace", 4, xd, x1, 1, NULL, 0,
            bs, 1, 1);
    float sc_bad[4] = { 1, 1, 1e30f, 1 };
    wt rs[1] = { { "scales", PG_DTYPE_FLOAT32, 1, { 4 }, sc_bad } };
    const char *r_in[3] = { "x", "", "scales" };
    refused("Resize huge scale", PG_ERR_SHAPE, "scale", "Resize", 4, xd, r_in, 3, rs, 1, NULL, 0, 1);
}

int main(void)
{
    check_conv("Conv 3x3 group 2 stride (2,1) dilation (1,2) asymmetric pads",
               (conv2d){ .N = 2, .C = 4, .H = 7, .Wd = 6, .M = 6, .KH = 3, .KW = 3, .G = 2, .sh = 2, .sw = 1,
                         .dh = 1, .dw = 2, .pt = 1, .pl = 0, .pb = 2, .pr = 1 });
    check_conv("Conv depthwise 3x3 stride 2",
               (conv2d){ .N = 1, .C = 8, .H = 9, .Wd = 9, .M = 8, .KH = 3, .KW = 3, .G = 8, .sh = 2, .sw = 2,
                         .dh = 1, .dw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1 });
    check_conv("Conv depthwise 5x5",
               (conv2d){ .N = 1, .C = 5, .H = 6, .Wd = 7, .M = 5, .KH = 5, .KW = 5, .G = 5, .sh = 1, .sw = 1,
                         .dh = 1, .dw = 1, .pt = 2, .pl = 2, .pb = 2, .pr = 2 });
    check_conv("Conv 1x1", (conv2d){ .N = 2, .C = 7, .H = 3, .Wd = 5, .M = 9, .KH = 1, .KW = 1, .G = 1, .sh = 1,
                                     .sw = 1, .dh = 1, .dw = 1 });
    check_conv("Conv 3x3 (the general path)",
               (conv2d){ .N = 1, .C = 6, .H = 10, .Wd = 11, .M = 10, .KH = 3, .KW = 3, .G = 1, .sh = 1, .sw = 1,
                         .dh = 1, .dw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1 });
    check_conv_transpose();
    check_pools();
    check_misc();
    check_refusals();
    printf("%s: %d failure(s)\n", __FILE__, failures);
    return failures ? 1 : 0;
}

/* conv_fast.c - Conv on the hand-written kernels: the general conv as
 * im2col written straight into the SGEMM kernel's packed panels (the SGEMM
 * asm does the flops), the 1x1 conv as the same product with the input
 * rows as the panels, the depthwise 3x3 / 5x5 conv on the dwconv kernels;
 * a grouped conv (and a depthwise one of another kernel size) as that
 * product per group, on the group's channels and filters;
 * bias and the activation (ReLU, Clip / ReLU6, HardSwish, SiLU) applied
 * while a tile is in registers or right after it is written.
 *
 * Layout: NCHW, the graph's own layout, kept end to end.  Measured with
 * benchmarks/bench_cnn.py --layouts (1 thread, batch 1, this 2-vCPU
 * shared machine, one run, ms): the NCHW conv step as built here against
 * the NHWC form's product alone (im2col rows already made as A, W packed
 * as B, the same SGEMM kernel) and that product plus the NCHW<->NHWC
 * transposes a layout change costs at the graph edges:
 *
 *   layer                    NCHW step   NHWC product   + edge transposes
 *   ResNet-18 7x7/2 stem       3.61         2.59           12.42
 *   ResNet-18 3x3 64@56        2.87         2.34            2.97
 *   ResNet-18 3x3 128@28       2.31         1.73            2.06
 *   ResNet-18 3x3 256@14       2.44         1.82            1.97
 *   ResNet-18 3x3 512@7        2.66         2.46            2.55
 *   ResNet-18 1x1/2 128->256   0.27         0.13            0.26
 *   MobileNetV2 1x1 24->144    0.44         0.30            0.68
 *   MobileNetV2 1x1 144->24    0.41         0.34            0.81
 *   MobileNetV2 1x1 320->1280  0.60         0.38            0.46
 *
 * The NHWC product alone is 10-50% faster than the NCHW step, but it
 * leaves out its own im2col (the NCHW step includes it) and needs the
 * whole network re-laid; with one transpose pair per conv it is slower on
 * the early layers and about equal on the late ones.  Not measured: NHWC
 * with every op between convs in NHWC (transposes only at the two graph
 * edges), which would need NHWC pools / Add / Concat / Resize executors;
 * that is the open question this table leaves.
 *
 * LAYOUT_NOTE.  Why NCHW: with this SGEMM (A read in place and
 * broadcast, B in NR-column panels) the weight matrix of an NCHW conv is
 * A exactly as ONNX stores it ([M, C, kh, kw] = M x K row-major: nothing
 * to pre-pack), and the output pixels are the panel columns, so a pixel
 * block's im2col is written once into panels that stay in L1/L2 while
 * every M tile passes over them; the output comes out in NCHW with no
 * transpose.  The NHWC form needs the same im2col (as A rows) plus a
 * transpose per graph edge and NHWC executors for every pool / Add /
 * Concat / Resize between convs; the product itself runs at the same
 * kernel speed either way (same microkernel, same K), so the difference
 * is the data movement around it, which NCHW does not have.  A 1x1
 * stride-1 conv's panels are plain copies of input rows (pg_sgemm_pack
 * layout), the only extra pass over the input (Cin x HW floats against
 * M x Cin x HW FMAs).  Depthwise convs run per channel plane: the plane's
 * output pixels along a row are the dwconv kernel's vector lanes (its
 * "channels"), the output rows its "pixels", and each input row is laid
 * out once as kw shifted copies (stride and left/right padding resolved
 * there), so the kernel's tap addressing stays uniform for any stride.
 *
 * The im2col gather is C (memcpy of contiguous runs at stride 1, a
 * strided copy otherwise): it moves K x pixels floats against M x K x
 * pixels FMAs.  That is not free: a perf profile of ResNet-18 (batch 1,
 * 1 thread) put the gather and the bias prefill at about 11% of samples
 * against 39% in the SGEMM kernel, and the 7x7 stride-2 stem (K = 147,
 * M = 64) is far below the other layers; an asm gather for stride 2 and a
 * bias folded into the kernel's epilogue per row are the next steps.
 *
 * Threads: tasks are (image, pixel block) for the GEMM form and (image,
 * channel) planes for depthwise; each of up to `threads` workers takes
 * tasks in turn and uses its own slice of the step's scratch (sized by
 * pg_scratch_conv at compile time: no allocation per call). */
#include <math.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/threadpool.h"
#include "../kernels/dwconv/dwconv.h"
#include "../kernels/sgemm/sgemm.h"
#include "conv_fast.h"
#include "gemm.h"

pg_conv_act pg_conv_act_from_name(const char *s)
{
    if (!s || !*s || !strcmp(s, "none")) return PG_CONVACT_NONE;
    if (!strcmp(s, "relu")) return PG_CONVACT_RELU;
    if (!strcmp(s, "clip")) return PG_CONVACT_CLIP;
    if (!strcmp(s, "hardswish")) return PG_CONVACT_HARDSWISH;
    if (!strcmp(s, "silu")) return PG_CONVACT_SILU;
    return PG_CONVACT_INVALID;
}

enum { CONV_REF = 0, CONV_GEMM = 1, CONV_DW = 2 };

/* 2-D convs, and 1-D ones (Whisper's front end, audio): pg_win_geometry
 * puts a 1-D window in the last dim with height 1, and [N, C, W] is laid
 * out as [N, C, 1, W], so the 2-D forms run it unchanged. */
static int fast_rank(const pg_tensor *x, const pg_tensor *wt)
{
    return (x->rank == 4 || x->rank == 3) && wt->rank == x->rank;
}

/* Which fast form a node takes (CONV_REF: the reference loop). */
static int conv_form(const pg_node *n, const pg_tensor *x, const pg_tensor *wt, const pg_win *w)
{
    if (x->dtype != PG_DTYPE_FLOAT32 || wt->dtype != PG_DTYPE_FLOAT32 || !fast_rank(x, wt) ||
        wt->layout != PG_LAYOUT_ROW_MAJOR)
        return CONV_REF;
    int64_t G = pg_ir_attr_int(n, "group", 1), C = x->shape[1], M = wt->shape[0];
    /* an empty input, kernel or output has no product to block (K = 0
     * divided the GEMM form's k blocks by zero): the reference loop
     * writes it */
    if (!pg_tensor_numel(x) || !pg_tensor_numel(wt) || !w->out[1] || !w->out[2])
        return CONV_REF;
    if (G < 1 || C % G || M % G || wt->shape[1] != C / G)
        return CONV_REF;
    if (G > 1 && G == C && M == C && w->k[1] == w->k[2] &&
        (w->k[1] == 3 || w->k[1] == 5 || w->k[1] == 7))
        return CONV_DW;
    /* group 1, or each group's product in turn (wav2vec2's positional conv,
     * 16 groups of 24 channels; a depthwise conv of another kernel size,
     * one filter a group): the reference loop ran them at 1-3 GFLOP/s */
    return CONV_GEMM;
}

static int64_t dw_rows(const pg_win *w) { return (w->out[1] - 1) * w->stride[1] + (w->k[1] - 1) * w->dil[1] + 1; }

/* Floats per laid-out input row of the depthwise form: at horizontal
 * stride 1 one zero-padded row (the taps kx are kx * dilation floats on),
 * else KW shifted copies of OW floats (stride and padding resolved). */
/* Room for one input row split into its even and odd columns (stride 2). */
static size_t dw_split_floats(const pg_win *w)
{
    return w->stride[2] == 2 ? 2 * (size_t)((w->in[2] + 1) / 2) : 0;
}

static int64_t dw_row_len(const pg_win *w)
{
    int64_t OW = w->out[2];
    return w->stride[2] == 1 ? OW + (w->k[2] - 1) * w->dil[2] : w->k[2] * OW;
}

/* Floats of one worker's slice. */
static size_t gemm_block_pixels(const pg_variant *v, size_t K)
{
    const pg_sgemm_params *p = v->params;
    size_t nr = (size_t)p->nr;
    /* a pixel block's panels (K x pixels) in about 256 KiB of L2 */
    size_t panels = (256 * 1024) / (K * nr * sizeof(float) + 1);
    panels = panels < 1 ? 1 : panels > 8 ? 8 : panels;
    return panels * nr;
}

/* The GEMM form's bias: as one more column of A (a copy of W with the
 * bias after each row, the panels get a row of ones) when that copy is
 * smaller than the output it would otherwise prefill (K + 1 < pixels),
 * so the kernel adds it in its k loop; else the output block is prefilled
 * with it and the kernel accumulates. */
static int bias_in_a(int has_bias, size_t K, size_t pixels) { return has_bias && K + 1 < pixels; }

static size_t gemm_kp(int has_bias, const pg_tensor *x, const pg_tensor *wt, const pg_win *w)
{
    size_t K = (size_t)(wt->shape[1] * w->k[1] * w->k[2]);
    size_t pixels = (size_t)(w->out[1] * w->out[2] * x->shape[0]);
    return K + (size_t)bias_in_a(has_bias, K, pixels);
}

static size_t slice_floats(int form, const pg_variant *v, const pg_tensor *x, const pg_tensor *wt,
                           const pg_win *w, int has_bias)
{
    if (form == CONV_GEMM) {
        size_t Kp = gemm_kp(has_bias, x, wt, w);
        return Kp * gemm_block_pixels(v, Kp);
    }
    (void)x;
    size_t OW = (size_t)w->out[2];
    size_t tb = (size_t)(dw_rows(w) * dw_row_len(w));
    return pg_align_up(tb * sizeof(float)) / sizeof(float) +
           pg_dwconv_packed_floats(OW, (int)w->k[1], (int)w->k[2]) + dw_split_floats(w);
}

/* The GEMM form at horizontal stride 2 gathers from a copy of the input
 * with every row split into its even and odd columns (row iy of channel c
 * at (c IH + iy) 2L, the odd half L floats on, L = ceil(IW / 2)), so each
 * run of an im2col row is one contiguous copy. */
static size_t deint_floats(int form, const pg_tensor *x, const pg_win *w)
{
    if (form != CONV_GEMM || w->stride[2] != 2)
        return 0;
    size_t L = (size_t)(w->in[2] + 1) / 2;
    return (size_t)(x->shape[0] * x->shape[1]) * (size_t)w->in[1] * 2 * L;
}

/* conv_prepack (passes/fuse_conv.c) gave the node W with the bias after
 * each row as its tensor attribute "value" (the step's kctx.state): M x Kp
 * floats for exactly this conv. */
static int prepacked_wb(const pg_node *n, const pg_tensor *wt, size_t Kp)
{
    const pg_attr *a = pg_ir_attr(n, "value");
    (void)wt;
    return a && a->type == PG_ATTR_TENSOR && pg_ir_attr_int(n, "value_cols", 0) == (int64_t)Kp;
}

size_t pg_conv_gemm_bias_cols(const pg_node *n, const pg_tensor *x, const pg_tensor *wt)
{
    if (!fast_rank(x, wt) || n->n_inputs < 3 || n->inputs[2] < 0 || pg_ir_attr_int(n, "nchwc", 0))
        return 0;
    pg_win w;
    if (pg_win_geometry(n, PG_WIN_CONV, x->rank - 2, x->shape + 2, wt->shape + 2, &w) != PG_OK) {
        pg_clear_error();
        return 0;
    }
    if (conv_form(n, x, wt, &w) != CONV_GEMM)
        return 0;
    size_t K = (size_t)(wt->shape[1] * w.k[1] * w.k[2]), Kp = gemm_kp(1, x, wt, &w);
    return Kp > K ? Kp : 0;
}

static int fits_nr(const pg_variant *v, const void *ctx)
{
    (void)ctx;
    const pg_sgemm_params *p = v->params;
    return p && p->nr > 0 && p->nr <= 64 && p->mr > 0;   /* im2col_panels: up to 64 runs */
}

pg_status pg_bind_conv(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                       pg_binding *b)
{
    (void)out;
    const pg_tensor *x = in[0], *wt = in[1];
    if (pg_ir_attr_int(n, "nchwc", 0))
        return pg_bind_conv_nchwc(n, b);
    pg_conv_act act = pg_conv_act_from_name(pg_ir_attr_string(n, "activation", "none"));
    if (act == PG_CONVACT_INVALID)
        return pg_fail(PG_ERR_UNSUPPORTED, "node '%s': attribute 'activation' is '%s'; FusedConv "
                       "takes none, relu, clip, hardswish or silu", n->name,
                       pg_ir_attr_string(n, "activation", ""));
    if (!fast_rank(x, wt))
        return PG_OK;   /* 3D: the reference loop */
    pg_win w;
    pg_status st = pg_win_geometry(n, PG_WIN_CONV, x->rank - 2, x->shape + 2, wt->shape + 2, &w);
    if (st)
        return st;
    int form = conv_form(n, x, wt, &w);
    if (form == CONV_GEMM)
        b->kern[0] = pg_kernel_select_fitting(&pg_kernels_sgemm, fits_nr, NULL);
    else if (form == CONV_DW)
        b->kern[0] = pg_kernel_select(w.k[1] == 3 ? &pg_kernels_dwconv3x3
                                      : w.k[1] == 5 ? &pg_kernels_dwconv5x5 : &pg_kernels_dwconv7x7);
    if (b->kern[0] && act == PG_CONVACT_SILU)
        b->kern[1] = pg_kernel_select(pg_kernel_family_by_name("silu"));
    return PG_OK;
}

size_t pg_scratch_conv(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                       int threads, const pg_binding *b)
{
    (void)out;
    const pg_tensor *x = in[0], *wt = in[1];
    if (pg_ir_attr_int(n, "nchwc", 0))
        return pg_scratch_conv_nchwc(n, x, threads);
    if (!b->kern[0] || !fast_rank(x, wt))
        return 0;
    pg_win w;
    if (pg_win_geometry(n, PG_WIN_CONV, x->rank - 2, x->shape + 2, wt->shape + 2, &w) != PG_OK) {
        pg_clear_error();
        return 0;
    }
    int form = conv_form(n, x, wt, &w);
    int has_bias = n->n_inputs > 2 && in[2];
    size_t slice = pg_align_up(slice_floats(form, b->kern[0], x, wt, &w, has_bias) * sizeof(float));
    int t = threads > PG_MAX_THREADS ? PG_MAX_THREADS : threads < 1 ? 1 : threads;
    size_t wcopy = 0;
    if (form == CONV_GEMM) {
        size_t Kp = gemm_kp(has_bias, x, wt, &w), K = (size_t)(wt->shape[1] * w.k[1] * w.k[2]);
        /* W with the bias column: prepacked (conv_prepack's "value"), else a copy per run */
        wcopy = Kp > K && !prepacked_wb(n, wt, Kp) ? pg_align_up((size_t)wt->shape[0] * Kp * sizeof(float)) : 0;
    }
    return pg_align_up(deint_floats(form, x, &w) * sizeof(float)) + wcopy + slice * (size_t)t + 64;
}

/* ---- the activation after a tile / plane ---------------------------------- */

void pg_conv_epi_apply(const pg_conv_epi *e, float *y, size_t n)
{
    switch (e->act) {
    case PG_CONVACT_CLIP:
        for (size_t i = 0; i < n; i++) {
            float v = y[i] < e->lo ? e->lo : y[i];
            y[i] = v > e->hi ? e->hi : v;
        }
        break;
    case PG_CONVACT_HARDSWISH:
        for (size_t i = 0; i < n; i++) {
            float r = y[i] + 3.0f;
            r = r < 0.0f ? 0.0f : r > 6.0f ? 6.0f : r;
            y[i] = y[i] * (r * (1.0f / 6.0f));
        }
        break;
    case PG_CONVACT_SILU:
        if (e->silu)
            e->silu->fn.unary(n, y, y);
        else
            for (size_t i = 0; i < n; i++)
                y[i] = y[i] / (1.0f + expf(-y[i]));
        break;
    default:
        break;
    }
}

/* ---- the GEMM form -------------------------------------------------------- */

typedef struct gemm_conv {
    const pg_variant *v;
    const float *X, *W, *B;
    float *Y;
    const pg_win *w;
    size_t G, Ct, Mt;           /* groups; channels in and out of the whole conv */
    size_t C, M, K, P;          /* channels in, out per group; K = C kh kw; P = output pixels */
    size_t Kp;                  /* K, or K + 1 with the bias as A's last column (W then a copy) */
    size_t mr, nr, kc, block;   /* block: pixels per task (whole panels) */
    size_t blocks, tasks, workers;
    const float *deint;         /* stride 2: the input's rows split even / odd, or NULL */
    int relu_clip;              /* Clip(0, hi): ReLU in the kernel, the upper bound after */
    char *scratch;
    size_t slice_bytes;
    pg_conv_epi e;
} gemm_conv;

/* im2col of pixels [j0, j0 + cnt) of image x into nr-column panels at dst
 * (row k of panel q at dst + q K nr + k nr; columns past cnt zero). */
static void im2col_panels(const gemm_conv *g, const float *x, const float *xd, size_t j0, size_t cnt,
                          float *dst)
{
    const pg_win *w = g->w;
    size_t nr = g->nr, K = g->K, Kp = g->Kp;
    int64_t IH = w->in[1], IW = w->in[2], OW = w->out[2];
    int64_t KH = w->k[1], KW = w->k[2];
    int one = KH == 1 && KW == 1 && w->stride[1] == 1 && w->stride[2] == 1 && w->lo[1] == 0 &&
              w->lo[2] == 0 && w->in[1] == w->out[1] && w->in[2] == w->out[2];
    for (size_t q = 0; q * nr < cnt; q++) {
        float *panel = dst + q * Kp * nr;
        size_t pj = j0 + q * nr, pw = cnt - q * nr < nr ? cnt - q * nr : nr;
        if (Kp > K)   /* the row of ones the bias column of A multiplies */
            for (size_t t = 0; t < nr; t++)
                panel[K * nr + t] = t < pw ? 1.0f : 0.0f;
        if (one) {
            /* 1x1, stride 1, no pads: the panel rows are input row slices */
            if (pw == nr) {
                /* whole panels: a plain loop (short rows: no call per row) */
                for (size_t c = 0; c < K; c++) {
                    const float *restrict src = x + c * g->P + pj;
                    float *restrict o = panel + c * nr;
                    for (size_t t = 0; t < nr; t++)
                        o[t] = src[t];
                }
                continue;
            }
            for (size_t c = 0; c < K; c++) {
                memcpy(panel + c * nr, x + c * g->P + pj, pw * sizeof(float));
                for (size_t t = pw; t < nr; t++)
                    panel[c * nr + t] = 0.0f;
            }
            continue;
        }
        /* the panel's pixels as runs along output rows (the same for every
         * row k of the panel): start column, output row and column, length */
        size_t run_t[65], run_n[65], nruns = 0;
        int64_t run_oy[65], run_ox[65];
        for (size_t t = 0; t < pw && nruns < 64;) {
            int64_t j = (int64_t)(pj + t), oy = j / OW, ox = j % OW;
            size_t run = (size_t)(OW - ox);
            if (run > pw - t)
                run = pw - t;
            run_t[nruns] = t, run_n[nruns] = run, run_oy[nruns] = oy, run_ox[nruns] = ox;
            nruns++;
            t += run;
        }
        size_t kk = 0;
        for (size_t c = 0; c < g->C; c++) {
            const float *xc = x + c * (size_t)(IH * IW);
            for (int64_t ky = 0; ky < KH; ky++)
                for (int64_t kx = 0; kx < KW; kx++, kk++) {
                    float *o = panel + kk * nr;
                    for (size_t ri = 0; ri < nruns; ri++) {
                        size_t t = run_t[ri], run = run_n[ri];
                        int64_t oy = run_oy[ri], ox = run_ox[ri];
                        int64_t iy = oy * w->stride[1] - w->lo[1] + ky * w->dil[1];
                        if (iy < 0 || iy >= IH) {
                            memset(o + t, 0, run * sizeof(float));
                        } else {
                            /* ix = ox sx + off: zeros left of the input, a
                             * copy (contiguous for stride 1), zeros right */
                            const float *xr = xc + iy * IW;
                            int64_t sx = w->stride[2], off = kx * w->dil[2] - w->lo[2];
                            int64_t vlo = off >= 0 ? 0 : (-off + sx - 1) / sx;
                            int64_t vhi = IW - off <= 0 ? 0 : (IW - off + sx - 1) / sx;
                            int64_t a = ox, e = ox + (int64_t)run;
                            vlo = vlo < a ? a : vlo > e ? e : vlo;
                            vhi = vhi < vlo ? vlo : vhi > e ? e : vhi;
                            float *d = o + t;   /* d[q - a]: pixel q of this run */
                            for (int64_t q = a; q < vlo; q++)
                                d[q - a] = 0.0f;
                            if (sx == 1) {
                                memcpy(d + (vlo - a), xr + vlo + off, (size_t)(vhi - vlo) * sizeof(float));
                            } else if (xd) {
                                /* column 2q + off: the even or odd half at q + off / 2 */
                                int64_t L = (IW + 1) / 2, par = off & 1, h = (off - par) / 2;
                                const float *src = xd + ((int64_t)c * IH + iy) * 2 * L + par * L + h;
                                memcpy(d + (vlo - a), src + vlo, (size_t)(vhi - vlo) * sizeof(float));
                            } else
                                for (int64_t q = vlo; q < vhi; q++)
                                    d[q - a] = xr[q * sx + off];
                            for (int64_t q = vhi; q < e; q++)
                                d[q - a] = 0.0f;
                        }
                    }
                    for (size_t r = pw; r < nr; r++)
                        o[r] = 0.0f;
                }
        }
    }
}

static void gemm_worker(void *ctx, size_t worker)
{
    const gemm_conv *g = ctx;
    float *panels = (float *)(g->scratch + worker * g->slice_bytes);
    size_t K = g->Kp, nr = g->nr, mr = g->mr, P = g->P;
    const float *B = g->Kp > g->K ? NULL : g->B;   /* else A's last column */
    pg_sgemm_ukernel_fn kern = g->v->fn.sgemm;
    for (size_t task = worker; task < g->tasks; task += g->workers) {
        /* (image, group, pixel block): the group's input channels, filters
         * (W's rows, the bias) and output channels */
        size_t img = task / g->blocks / g->G, grp = task / g->blocks % g->G, blk = task % g->blocks;
        size_t j0 = blk * g->block, cnt = P - j0 < g->block ? P - j0 : g->block;
        size_t isz = (size_t)(g->w->in[1] * g->w->in[2]), c0 = img * g->Ct + grp * g->C;
        const float *x = g->X + c0 * isz;
        const float *xd = g->deint ? g->deint + c0 * (size_t)g->w->in[1] * 2 *
                                                  (size_t)((g->w->in[2] + 1) / 2) : NULL;
        float *y = g->Y + (img * g->Mt + grp * g->M) * P;
        const float *W = g->W + grp * g->M * K, *Bg = B ? B + grp * g->M : NULL;
        im2col_panels(g, x, xd, j0, cnt, panels);
        size_t npan = (cnt + nr - 1) / nr;
        for (size_t i = 0; i < g->M; i += mr) {
            size_t h = g->M - i < mr ? g->M - i : mr;
            for (size_t q = 0; q < npan; q++) {
                size_t col = j0 + q * nr, wd = cnt - q * nr < nr ? cnt - q * nr : nr;
                float *c = y + i * P + col;
                if (Bg)
                    for (size_t r = 0; r < h; r++)
                        for (size_t t = 0; t < wd; t++)
                            c[r * P + t] = Bg[i + r];
                for (size_t pc = 0; pc == 0 || pc < K; pc += g->kc) {
                    size_t kb = K - pc < g->kc ? K - pc : g->kc;
                    int last = pc + kb >= K;
                    pg_sgemm_epilogue ep = { NULL, last && (g->e.act == PG_CONVACT_RELU || g->relu_clip)
                                                       ? PG_ACT_RELU : PG_ACT_NONE,
                                             (Bg || pc > 0) ? PG_SGEMM_ACCUMULATE : 0 };
                    kern(h, wd, kb, W + i * K + pc, K, panels + q * K * nr + pc * nr, c, P, &ep);
                    if (K == 0)
                        break;
                }
                if (g->relu_clip) {
                    /* Clip(0, hi): the kernel's ReLU did the lower bound */
                    for (size_t r = 0; r < h; r++) {
                        float *cr = c + r * P, hi = g->e.hi;
                        for (size_t t = 0; t < wd; t++)
                            cr[t] = cr[t] > hi ? hi : cr[t];
                    }
                } else if (g->e.act != PG_CONVACT_NONE && g->e.act != PG_CONVACT_RELU) {
                    for (size_t r = 0; r < h; r++)
                        pg_conv_epi_apply(&g->e, c + r * P, wd);
                }
            }
        }
    }
}

static size_t pick_workers(const pg_kctx *k, size_t tasks, double flops)
{
    size_t t = k->threads > 1 ? (size_t)k->threads : 1;
    if (t > PG_MAX_THREADS)
        t = PG_MAX_THREADS;
    if (flops < 2e6)
        t = 1;
    return t < tasks ? t : tasks ? tasks : 1;
}

static pg_status conv_gemm(pg_kctx *k, const pg_win *w, const pg_conv_epi *e)
{
    const pg_tensor *x = k->in[0], *wt = k->in[1];
    const pg_variant *v = k->bind->kern[0];
    const pg_sgemm_params *p = v->params;
    gemm_conv g = { .v = v, .X = k->x[0], .W = k->x[1], .B = k->n_in > 2 ? k->x[2] : NULL,
                    .Y = k->y[0], .w = w, .e = *e };
    g.G = (size_t)pg_ir_attr_int(k->node, "group", 1);
    g.Ct = (size_t)x->shape[1];
    g.Mt = (size_t)wt->shape[0];
    g.C = g.Ct / g.G;
    g.M = g.Mt / g.G;
    g.K = g.C * (size_t)(w->k[1] * w->k[2]);
    g.P = (size_t)(w->out[1] * w->out[2]);
    g.Kp = gemm_kp(g.B != NULL, x, wt, w);
    g.relu_clip = e->act == PG_CONVACT_CLIP && e->lo == 0.0f;
    g.mr = (size_t)p->mr;
    g.nr = (size_t)p->nr;
    /* a kc x nr slice of a panel in half of L1 (the SGEMM driver's rule) */
    size_t kc = 32 * 1024 / 2 / (g.nr * sizeof(float));
    size_t nkb = (g.Kp + kc - 1) / kc;
    g.kc = (g.Kp + nkb - 1) / nkb;
    g.block = gemm_block_pixels(v, g.Kp);
    g.blocks = (g.P + g.block - 1) / g.block;
    g.tasks = g.blocks * g.G * (size_t)x->shape[0];
    g.slice_bytes = pg_align_up(g.Kp * g.block * sizeof(float));
    double flops = 2.0 * (double)g.Mt * (double)g.K * (double)g.P * (double)x->shape[0];
    g.workers = pick_workers(k, g.tasks, flops);
    size_t dbytes = pg_align_up(deint_floats(CONV_GEMM, x, w) * sizeof(float));
    const float *wb = g.Kp > g.K && prepacked_wb(k->node, wt, g.Kp) ? k->state : NULL;
    size_t wbytes = g.Kp > g.K && !wb ? pg_align_up(g.Mt * g.Kp * sizeof(float)) : 0;
    if (wb)
        g.W = wb;   /* W with its bias column, made at compile */
    if (!k->scratch || k->scratch_bytes < dbytes + wbytes + g.slice_bytes * g.workers)
        return pg_fail(PG_ERR_INTERNAL, "node '%s': conv scratch %zu bytes, needs %zu", k->node->name,
                       k->scratch_bytes, dbytes + wbytes + g.slice_bytes * g.workers);
    g.scratch = (char *)k->scratch + dbytes + wbytes;
    if (wbytes) {
        /* W with the bias after each row: the kernel adds it as a k step */
        float *wa = (float *)((char *)k->scratch + dbytes);
        for (size_t m = 0; m < g.Mt; m++) {
            memcpy(wa + m * g.Kp, g.W + m * g.K, g.K * sizeof(float));
            wa[m * g.Kp + g.K] = g.B[m];
        }
        g.W = wa;
    }
    if (dbytes) {
        /* split every input row into its even and odd columns */
        float *d = k->scratch;
        size_t IW = (size_t)w->in[2], L = (IW + 1) / 2;
        size_t rows = (size_t)(x->shape[0] * x->shape[1] * w->in[1]);
        for (size_t r = 0; r < rows; r++) {
            const float *xr = g.X + r * IW;
            float *e = d + r * 2 * L, *o = e + L;
            for (size_t j = 0; j < IW / 2; j++) {
                e[j] = xr[2 * j];
                o[j] = xr[2 * j + 1];
            }
            if (IW & 1) {
                e[L - 1] = xr[IW - 1];
                o[L - 1] = 0.0f;
            }
        }
        g.deint = d;
    }
    if (g.workers > 1)
        pg_parallel_for(g.workers, gemm_worker, &g, (int)g.workers);
    else
        gemm_worker(&g, 0);
    return PG_OK;
}

/* ---- the depthwise form --------------------------------------------------- */

typedef struct dw_conv {
    const pg_variant *v;
    const float *X, *W, *B;
    float *Y;
    const pg_win *w;
    size_t C, planes, workers, tb_floats;
    char *scratch;
    size_t slice_bytes;
    pg_conv_epi e;
} dw_conv;

static void dw_worker(void *ctx, size_t worker)
{
    const dw_conv *d = ctx;
    const pg_win *w = d->w;
    int64_t IH = w->in[1], IW = w->in[2], OH = w->out[1], OW = w->out[2];
    int64_t KH = w->k[1], KW = w->k[2], rows = dw_rows(w);
    size_t taps = (size_t)(KH * KW), groups = ((size_t)OW + PG_DWCONV_GROUP - 1) / PG_DWCONV_GROUP;
    float *tb = (float *)(d->scratch + worker * d->slice_bytes);
    float *pw = tb + d->tb_floats;
    float *split = pw + pg_dwconv_packed_floats((size_t)OW, (int)KH, (int)KW);   /* stride 2 */
    int64_t L = (IW + 1) / 2;
    size_t last_c = (size_t)-1;
    for (size_t task = worker; task < d->planes; task += d->workers) {
        size_t c = task % d->C;
        const float *x = d->X + task * (size_t)(IH * IW);
        /* each input row (padding included): at stride 1 one zero-padded
         * row, else KW shifted copies of OW floats */
        int64_t RL = dw_row_len(w), sx = w->stride[2];
        for (int64_t r = 0; r < rows; r++) {
            int64_t iy = r - w->lo[1];
            if (sx == 1) {
                float *o = tb + r * RL;
                if (iy < 0 || iy >= IH) {
                    memset(o, 0, (size_t)RL * sizeof(float));
                    continue;
                }
                /* o[j] = x[iy][j - pad]: zeros, the row, zeros */
                int64_t lo = w->lo[2] < RL ? w->lo[2] : RL;
                int64_t n = IW < RL - lo ? IW : RL - lo;
                memset(o, 0, (size_t)lo * sizeof(float));
                memcpy(o + lo, x + iy * IW, (size_t)n * sizeof(float));
                memset(o + lo + n, 0, (size_t)(RL - lo - n) * sizeof(float));
                continue;
            }
            if (sx == 2 && iy >= 0 && iy < IH) {
                /* the row's even columns, then its odd ones: each shifted
                 * copy below is then one contiguous run */
                const float *xr = x + iy * IW;
                for (int64_t j = 0; j < IW / 2; j++) {
                    split[j] = xr[2 * j];
                    split[L + j] = xr[2 * j + 1];
                }
                if (IW & 1) {
                    split[L - 1] = xr[IW - 1];
                    split[2 * L - 1] = 0.0f;
                }
            }
            for (int64_t kx = 0; kx < KW; kx++) {
                float *o = tb + (r * KW + kx) * OW;
                if (iy < 0 || iy >= IH) {
                    memset(o, 0, (size_t)OW * sizeof(float));
                    continue;
                }
                /* o[t] = x[iy][t sx + off]: zeros, the columns inside, zeros */
                const float *xr = x + iy * IW;
                int64_t off = kx * w->dil[2] - w->lo[2];
                int64_t vlo = off >= 0 ? 0 : (-off + sx - 1) / sx;
                int64_t vhi = IW - off <= 0 ? 0 : (IW - off + sx - 1) / sx;
                vlo = vlo > OW ? OW : vlo;
                vhi = vhi < vlo ? vlo : vhi > OW ? OW : vhi;
                for (int64_t t = 0; t < vlo; t++)
                    o[t] = 0.0f;
                if (sx == 2) {
                    int64_t par = off & 1, h = (off - par) / 2;   /* column 2t + off */
                    memcpy(o + vlo, split + par * L + h + vlo, (size_t)(vhi - vlo) * sizeof(float));
                } else {
                    for (int64_t t = vlo; t < vhi; t++)
                        o[t] = xr[t * sx + off];
                }
                for (int64_t t = vhi; t < OW; t++)
                    o[t] = 0.0f;
            }
        }
        /* this plane's taps and bias in every lane of every group */
        const float *wc = d->W + c * taps;
        float b = d->B ? d->B[c] : 0.0f;
        if (c != last_c) {   /* the planes of one channel (a batch) share it */
            for (size_t l = 0; l < PG_DWCONV_GROUP; l++)
                pw[l] = b;
            for (size_t t = 0; t < taps; t++)
                for (size_t l = 0; l < PG_DWCONV_GROUP; l++)
                    pw[(1 + t) * PG_DWCONV_GROUP + l] = wc[t];
            size_t gsz = (1 + taps) * PG_DWCONV_GROUP;
            for (size_t q = 1; q < groups; q++)
                memcpy(pw + q * gsz, pw, gsz * sizeof(float));
            last_c = c;
        }
        const float *rp[7];
        for (int64_t ky = 0; ky < KH; ky++)
            rp[ky] = tb + ky * w->dil[1] * RL;
        pg_dwconv_args a = { rp, pw, d->Y + task * (size_t)(OH * OW), (size_t)OW, (size_t)OH,
                             (size_t)(w->stride[1] * RL), (size_t)(sx == 1 ? w->dil[2] : OW), (size_t)OW,
                             0.0f, INFINITY, PG_DWACT_NONE, 0 };
        if (d->e.act == PG_CONVACT_RELU) {
            a.act = PG_DWACT_CLAMP;
        } else if (d->e.act == PG_CONVACT_CLIP) {
            a.act = PG_DWACT_CLAMP;
            a.lo = d->e.lo;
            a.hi = d->e.hi;
        } else if (d->e.act == PG_CONVACT_HARDSWISH) {
            a.act = PG_DWACT_HARDSWISH;
        }
        d->v->fn.dwconv(&a);
        if (d->e.act == PG_CONVACT_SILU)
            pg_conv_epi_apply(&d->e, a.out, (size_t)(OH * OW));
    }
}

static pg_status conv_dw(pg_kctx *k, const pg_win *w, const pg_conv_epi *e)
{
    const pg_tensor *x = k->in[0];
    dw_conv d = { .v = k->bind->kern[0], .X = k->x[0], .W = k->x[1],
                  .B = k->n_in > 2 ? k->x[2] : NULL, .Y = k->y[0], .w = w, .e = *e };
    d.C = (size_t)x->shape[1];
    d.planes = d.C * (size_t)x->shape[0];
    size_t OW = (size_t)w->out[2];
    d.tb_floats = pg_align_up((size_t)(dw_rows(w) * dw_row_len(w)) * sizeof(float)) / sizeof(float);
    d.slice_bytes = pg_align_up((d.tb_floats + pg_dwconv_packed_floats(OW, (int)w->k[1], (int)w->k[2]) +
                                 dw_split_floats(w)) *
                                sizeof(float));
    double flops = 2.0 * (double)d.planes * (double)(w->out[1] * w->out[2] * w->k[1] * w->k[2]);
    d.workers = pick_workers(k, d.planes, flops);
    if (!k->scratch || k->scratch_bytes < d.slice_bytes * d.workers)
        return pg_fail(PG_ERR_INTERNAL, "node '%s': conv scratch %zu bytes, needs %zu", k->node->name,
                       k->scratch_bytes, d.slice_bytes * d.workers);
    d.scratch = k->scratch;
    if (d.workers > 1)
        pg_parallel_for(d.workers, dw_worker, &d, (int)d.workers);
    else
        dw_worker(&d, 0);
    return PG_OK;
}

pg_status pg_conv_epi_of(const pg_kctx *k, const pg_variant *silu, pg_conv_epi *e)
{
    const pg_node *n = k->node;
    e->act = pg_conv_act_from_name(pg_ir_attr_string(n, "activation", "none"));
    e->lo = pg_ir_attr_float(n, "act_min", -INFINITY);
    e->hi = pg_ir_attr_float(n, "act_max", INFINITY);
    e->silu = silu;
    if (e->act == PG_CONVACT_INVALID)
        return pg_fail(PG_ERR_UNSUPPORTED, "node '%s': attribute 'activation' is '%s'", n->name,
                       pg_ir_attr_string(n, "activation", ""));
    return PG_OK;
}

pg_status pg_conv_fast(pg_kctx *k, const pg_win *w)
{
    pg_conv_epi e;
    pg_status st = pg_conv_epi_of(k, k->bind->kern[1], &e);
    if (st)
        return st;
    const pg_variant *v = k->bind->kern[0];
    if (!v)
        return pg_fail(PG_ERR_INTERNAL, "node '%s': conv fast path without a kernel", k->node->name);
    int form = conv_form(k->node, k->in[0], k->in[1], w);
    if (form == CONV_GEMM && pg_variant_index(&pg_kernels_sgemm, v) >= 0)
        return conv_gemm(k, w, &e);
    if (form == CONV_DW && (pg_variant_index(&pg_kernels_dwconv3x3, v) >= 0 ||
                            pg_variant_index(&pg_kernels_dwconv5x5, v) >= 0 ||
                            pg_variant_index(&pg_kernels_dwconv7x7, v) >= 0))
        return conv_dw(k, w, &e);
    return pg_fail(PG_ERR_INTERNAL, "node '%s': conv bound to %s does not fit its shape",
                   k->node->name, v->name);
}

/* FusedConv: the fast path when bound, else the reference loop and the
 * activation after it. */
pg_status pg_exec_fused_conv(pg_kctx *k)
{
    const pg_tensor *x = k->in[0], *wt = k->in[1];
    if (pg_ir_attr_int(k->node, "nchwc", 0))
        return pg_conv_nchwc(k);
    pg_win w;
    pg_status st = pg_win_geometry(k->node, PG_WIN_CONV, x->rank - 2, x->shape + 2, wt->shape + 2, &w);
    if (st)
        return st;
    if (k->bind->kern[0])
        return pg_conv_fast(k, &w);
    pg_conv_epi e;
    if ((st = pg_conv_epi_of(k, k->bind->kern[1], &e)) || (st = pg_conv_reference(k, &w)))
        return st;
    float *y = k->y[0];
    size_t n = (size_t)pg_tensor_numel(k->out[0]);
    if (e.act == PG_CONVACT_RELU)
        for (size_t i = 0; i < n; i++)
            y[i] = y[i] < 0.0f ? 0.0f : y[i];
    else
        pg_conv_epi_apply(&e, y, n);
    return PG_OK;
}

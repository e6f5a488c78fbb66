/* conv_nchwc.c - the CNN ops on channel-blocked activations (NCHW16c),
 * the layout the nchwc_layout pass (passes/relayout_nchwc.c) re-lays a
 * network into: FusedConv / MaxPool / GlobalAveragePool with attribute
 * nchwc = 16, and ReorderInput / ReorderOutput at the region's edges.
 *
 * Layout: [N, ceil(C / 16), H, W, 16] (conv_nchwc.h spells it out).  Why
 * blocked, by measurement (benchmarks/bench_cnn.py, 1 thread, batch 1, this
 * shared 2-vCPU machine; conv layers in GFLOP/s against the ~200 GFLOP/s
 * measured FMA peak; the NCHW column is the im2col + 12x32 SGEMM form of
 * conv_fast.c, which nchwc_layout replaces on AVX-512):
 *
 *   layer                  NCHW (GEMM form)   NCHW16c (conv_nchwc)   ORT (NCHWc)
 *   ResNet-18 7x7/2 stem        76.8 (36%)          88.6 (46%)           114
 *   ResNet-18 3x3 64@56         87.7 (41%)         148.7 (77%)           143
 *   ResNet-18 3x3 128@28        97.3 (46%)         137.2 (71%)           151
 *   ResNet-18 3x3 256@14        81.1 (38%)         129.1 (67%)           133
 *   ResNet-18 3x3 512@7         91.6 (43%)          88.9 (46%)            99
 *   ResNet-18 1x1/2 128->256    49.6 (23%)         155.7 (80%)           136
 *   the kernel alone (checkasm, a 3x3 64->64 row of 56): 160-167 (76-79%)
 *
 *   whole network, x ORT's latency    NCHW (last session)   NCHW16c
 *   ResNet-18                              1.42                 1.01 - 1.17
 *   MobileNetV2                            1.19                 0.80 - 1.15
 *   (the spread is this machine's load from run to run; by thread CPU
 *   time, which the load disturbs less: ResNet-18 0.95 - 1.11, MobileNetV2
 *   0.95 - 1.04)
 *
 * The 7x7 layers are short of the rest: their 9 MB of weights come from
 * memory once per run, and 7 pixels a row make chunks of 4 + 3.  A
 * prefetch of the next input tile's weights from the kernel was tried and
 * measured slower (Zen 5); the driver's prefetch of the next tile into L2,
 * a row's share before each row of the current one (direct_task), is what
 * stays: Sapphire Rapids, ResNet-18 batch 1, 1 thread, each 512@7 conv
 * 1.99 -> 1.81 ms (110 -> 128 GFLOP/s, CompiledModel.profile), the net
 * 19.4 -> 18.8 ms.
 *
 * The NCHW form spends its time outside the FMAs: the im2col gather and
 * the panel packing move K x pixels floats per output block, the SGEMM
 * tile's loads of A and B compete with the FMAs (12x32 at 40-46% of peak
 * on these shapes), and the epilogue passes over C again.  In NCHW16c a
 * pixel's 16 channels are one vector, so a direct conv needs no gather:
 * the kernel broadcasts one input value per pixel and channel and
 * multiplies it into 4 filter-block vectors (64 output channels) for 6
 * pixels at once, 24 FMAs per 10 loads, all from the tensor as it is.
 * The block is the vector width (16 on AVX-512, one zmm): a smaller block
 * (8, AVX2's) halves the filter vectors per broadcast, a larger one pads
 * small channel counts more; NHWC needs the same re-lay at the edges and
 * gives the kernel a stride of C between pixels instead of 16, so the
 * weights of a tap no longer sit in one cache line per channel.  Depthwise
 * convs are the NHWC dwconv kernels on one block at a time (16 channels,
 * pixels 16 floats apart), which is exactly the NHWC layout they were
 * written for, with no per-channel-plane re-lay (the NCHW form copies each
 * input row kw times).  Elementwise ops (Add, Relu, Clip, ...) run on the
 * 5-D tensors as they are; GlobalAveragePool writes plain [N, C, 1, 1].
 *
 * Channels past C in the last block: ReorderInput writes zeros, and every
 * op keeps them finite (their weights and bias are zero, so a conv's
 * padded output channels are act(0)); ReorderOutput and GlobalAveragePool
 * drop them.
 *
 * 1x1 convs at stride 1 with no padding (MobileNetV2's expand and project
 * layers) ignore the image rows: a plane is runs of up to FLAT_RUN pixels.
 * A 7-pixel row went to the kernel as calls of 4 + 3 pixels (16 and 12 of
 * its 24 accumulators), a 14-pixel one as 6 + 4 + 4.  Sapphire Rapids,
 * MobileNetV2, within one process, runs by image rows and by flat runs
 * interleaved (CompiledModel.profile): batch 1, 1 thread 6.83 -> 6.56 ms
 * (the 7x7 layers 10-16% faster each); 2 threads 4.65 -> 4.22 ms; batch 8,
 * 1 thread 66.2 -> 63.4 ms.  Runs of 200 measured as 98, of 48 slower.
 *
 * Padding: the conv kernel never tests a bound.  Rows outside the input
 * are left out of its kh; output pixels whose window crosses the left or
 * right edge go one at a time with their kx range (1 or 2 per row for a
 * 3x3), the rest in one call; a plane 16 wide or less is padded once
 * instead (every pixel interior).  The depthwise form reads the input rows
 * in place (a zero row for the padding) and takes the edge pixels from a
 * padded copy of their window; planes 30 wide or less are padded once at
 * stride 1.
 * A group's weights past a third of L2 (of L1 on planes of 14 x 14 or
 * less) go in input-channel tiles that every row passes over before the
 * next tile, the partial sums accumulating in y (ACCUMULATE).
 *
 * Threads: tasks are (image, filter group, output row) for the direct conv
 * (all rows of a group when its weights are tiled), (image, block, output
 * row) for depthwise, (image, block) for the pools, handed out from the
 * pool's shared counter (a fixed slice per worker stalled every step on a
 * preempted worker).
 *
 * AVX2 keeps the 16-channel block (two ymm, one filter block a call:
 * f32_conv_nchwc_avx2_fma3.S), so the layout does not change with the CPU.
 * Measured on AMD Zen 3 (AVX2 only, FMA peak 94.2 GFLOP/s, 1 thread):
 * ResNet-18 3x3 layers 84-88 GFLOP/s (89-93%), 512@7 65.6 (70%), the stem
 * 84.2 (89%), 1x1/2 71.8 (76%); ORT 0.97-1.14x of that per layer.
 *
 * Activations: ReLU / Clip and HardSwish in the kernels' registers before
 * the store (conv_nchwc, dwconv); SiLU, which needs an exp, on the silu
 * kernel over each output row right after the row is written (still in
 * L1), inside the same step - as Winograd's HardSwish, whose output
 * transform only clamps.  (Before, both ran as a separate op over the
 * whole blocked tensor.)
 *
 * Not done: NEON (4c) rows of conv_nchwc - there the pass leaves the
 * network in NCHW on the SGEMM path; a blocked Concat / Resize (YOLO's
 * necks reorder around them).
 *
 * Residual: a FusedConv's 4th input (conv_residual_fusion) is a skip
 * tensor in y's layout, added by the kernel (flag RESIDUAL) before the
 * clamp, in the last input tile only; a.res follows a.y through
 * run_pixels and the edge calls.  FusedConv is not in place, so y never
 * shares the skip tensor's memory (the partial sums of a tiled group
 * would overwrite it). */
#include <math.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/threadpool.h"
#include "../graph/infer.h"
#include "../kernels/conv_nchwc/conv_nchwc.h"
#include "../kernels/dwconv/dwconv.h"
#include "../kernels/transpose/transpose.h"
#include "../kernels/winograd/winograd.h"
#include "cnn.h"
#include "conv_fast.h"
#include "parallel.h"

#define NB PG_NCHWC_BLOCK

static int64_t blocks_of(int64_t c) { return (c + NB - 1) / NB; }

/* ---- shape rules ---------------------------------------------------------- */

/* The spatial dims of a blocked (rank 5) or NCHW (rank 4) input. */
static int nchwc_spatial(const pg_tensor *x, int64_t sp[2])
{
    if (x->rank != 4 && !(x->rank == 5 && x->shape[4] == NB))
        return 0;
    sp[0] = x->shape[2];
    sp[1] = x->shape[3];
    return 1;
}

pg_status pg_infer_nchwc(pg_infer_ctx *c)
{
    const pg_node *n = c->n;
    const pg_tensor *x = c->in[0];
    int64_t sp[2], shape[5];
    if (pg_ir_attr_int(n, "nchwc", 0) != NB)
        return PG_INFER_FAIL(PG_ERR_UNSUPPORTED, "attribute 'nchwc' is %lld; the blocked ops take %d",
                             (long long)pg_ir_attr_int(n, "nchwc", 0), NB);
    if (x->dtype != PG_DTYPE_FLOAT32 || !nchwc_spatial(x, sp))
        return PG_INFER_FAIL(PG_ERR_SHAPE, "input '%s' must be float32 [N, C, H, W] or [N, C/%d, H, W, %d]",
                             x->name, NB, NB);
    int64_t C = pg_ir_attr_int(n, "channels", -1);
    int cnt = 0;
    const int64_t *ks = pg_ir_attr_ints(n, "kernel_shape", &cnt);
    pg_win w;
    pg_status st;
    switch (n->op) {
    case PG_OP_FUSED_CONV:
    case PG_OP_MAXPOOL:
        if (!ks || cnt != 2)
            return PG_INFER_FAIL(PG_ERR_GRAPH, "attribute 'kernel_shape' must give 2 values");
        if ((st = pg_win_geometry(n, n->op == PG_OP_MAXPOOL ? PG_WIN_POOL : PG_WIN_CONV, 2, sp, ks, &w)))
            return st;
        if (n->op == PG_OP_FUSED_CONV)
            C = pg_ir_attr_int(n, "out_channels", -1);
        else
            C = x->rank == 5 ? x->shape[1] * NB : -1;
        if (C < 1 || (n->op == PG_OP_MAXPOOL && x->rank != 5))
            return PG_INFER_FAIL(PG_ERR_GRAPH, "a blocked %s needs a blocked input and its channel count",
                                 n->op_type);
        shape[0] = x->shape[0];
        shape[1] = blocks_of(C);
        shape[2] = w.out[1];
        shape[3] = w.out[2];
        shape[4] = NB;
        if (n->op == PG_OP_FUSED_CONV) {
            /* the weights as nchwc_layout packed them, the bias padded */
            int dw = pg_nchwc_depthwise(n), blocked = x->rank == 5;
            size_t Cin = blocked ? (size_t)x->shape[1] * NB : (size_t)x->shape[1];
            size_t want = dw ? pg_dwconv_packed_floats(Cin, (int)ks[0], (int)ks[1])
                          : pg_ir_attr_int(n, "winograd", 0)
                              ? PG_WINO_POINTS * pg_wino_plane_floats((size_t)C, Cin, NB)
                              : pg_conv_nchwc_packed_floats((size_t)C, Cin, blocked ? NB : 1, (int)ks[0],
                                                            (int)ks[1], NB, 1);
            const pg_tensor *wt = pg_infer_has_in(c, 1) ? c->in[1] : NULL;
            if (!wt || wt->dtype != PG_DTYPE_FLOAT32 || pg_tensor_numel(wt) != (int64_t)want)
                return PG_INFER_FAIL(PG_ERR_SHAPE, "the packed weights must be %zu float32 values", want);
            const pg_tensor *bt = pg_infer_has_in(c, 2) ? c->in[2] : NULL;
            if (!dw && (!bt || bt->dtype != PG_DTYPE_FLOAT32 || pg_tensor_numel(bt) != blocks_of(C) * NB))
                return PG_INFER_FAIL(PG_ERR_SHAPE, "the padded bias must be %lld float32 values",
                                     (long long)(blocks_of(C) * NB));
        }
        if (n->op == PG_OP_FUSED_CONV && pg_infer_has_in(c, 3)) {
            /* the skip tensor: y's own blocked shape, a group-1 conv */
            const pg_tensor *s = c->in[3];
            int same = s->dtype == PG_DTYPE_FLOAT32 && s->rank == 5;
            for (int i = 0; same && i < 5; i++)
                same = s->shape[i] == shape[i];
            if (!same || pg_nchwc_depthwise(n))
                return PG_INFER_FAIL(PG_ERR_SHAPE, "skip input '%s' must be float32 [%lld, %lld, %lld, %lld, %d] "
                                     "(the output's shape) of a group-1 conv", s->name, (long long)shape[0],
                                     (long long)shape[1], (long long)shape[2], (long long)shape[3], NB);
        }
        pg_infer_set_out(c, 0, PG_DTYPE_FLOAT32, 5, shape);
        return PG_OK;
    case PG_OP_GLOBAL_AVERAGEPOOL:
    case PG_OP_REORDER_OUTPUT:
        if (x->rank != 5 || C < 1 || blocks_of(C) != x->shape[1])
            return PG_INFER_FAIL(PG_ERR_SHAPE, "input '%s' must be [N, C/%d, H, W, %d] for channels = %lld",
                                 x->name, NB, NB, (long long)C);
        shape[0] = x->shape[0];
        shape[1] = C;
        shape[2] = n->op == PG_OP_GLOBAL_AVERAGEPOOL ? 1 : sp[0];
        shape[3] = n->op == PG_OP_GLOBAL_AVERAGEPOOL ? 1 : sp[1];
        pg_infer_set_out(c, 0, PG_DTYPE_FLOAT32, 4, shape);
        return PG_OK;
    case PG_OP_REORDER_INPUT:
        if (x->rank != 4)
            return PG_INFER_FAIL(PG_ERR_SHAPE, "input '%s' must be [N, C, H, W]", x->name);
        shape[0] = x->shape[0];
        shape[1] = blocks_of(x->shape[1]);
        shape[2] = sp[0];
        shape[3] = sp[1];
        shape[4] = NB;
        pg_infer_set_out(c, 0, PG_DTYPE_FLOAT32, 5, shape);
        return PG_OK;
    default:
        return PG_INFER_FAIL(PG_ERR_UNSUPPORTED, "%s has no blocked (nchwc) form", n->op_type);
    }
}

/* ---- the edges ------------------------------------------------------------ */

/* A whole block of NB channels is a transpose of NB rows of HW pixels
 * (in) or of HW rows of NB channels (out): the bound transpose kernel takes
 * its whole tiles, the loops below the pixels past them and a last block
 * short of NB channels. */
typedef struct reorder_job {
    const float *X;
    float *Y;
    int64_t C, HW;
    pg_f32_transpose_fn tr;   /* or NULL */
    int64_t tile;
} reorder_job;

/* NCHW -> NCHW16c: task = (image, block); channels past C zero */
static void reorder_in(void *ctx, int64_t begin, int64_t end)
{
    const reorder_job *j = ctx;
    int64_t CB = blocks_of(j->C);
    for (int64_t t = begin; t < end; t++) {
        int64_t img = t / CB, cb = t % CB, p0 = 0;
        float *y = j->Y + t * j->HW * NB;
        if (j->tr && (cb + 1) * NB <= j->C && j->HW >= j->tile) {
            p0 = j->HW / j->tile * j->tile;
            j->tr(NB, (size_t)p0, j->X + (img * j->C + cb * NB) * j->HW, (size_t)j->HW, y, NB);
        }
        for (int l = 0; l < NB; l++) {
            int64_t c = cb * NB + l;
            if (c >= j->C) {
                for (int64_t p = 0; p < j->HW; p++)
                    y[p * NB + l] = 0.0f;
                continue;
            }
            const float *x = j->X + (img * j->C + c) * j->HW;
            for (int64_t p = p0; p < j->HW; p++)
                y[p * NB + l] = x[p];
        }
    }
}

static void reorder_out(void *ctx, int64_t begin, int64_t end)
{
    const reorder_job *j = ctx;
    int64_t CB = blocks_of(j->C);
    for (int64_t t = begin; t < end; t++) {
        int64_t img = t / CB, cb = t % CB, p0 = 0;
        const float *x = j->X + t * j->HW * NB;
        if (j->tr && (cb + 1) * NB <= j->C && j->HW >= j->tile) {
            p0 = j->HW / j->tile * j->tile;
            j->tr((size_t)p0, NB, x, NB, j->Y + (img * j->C + cb * NB) * j->HW, (size_t)j->HW);
        }
        for (int l = 0; l < NB && cb * NB + l < j->C; l++) {
            float *y = j->Y + (img * j->C + cb * NB + l) * j->HW;
            for (int64_t p = p0; p < j->HW; p++)
                y[p] = x[p * NB + l];
        }
    }
}

pg_status pg_exec_reorder(pg_kctx *k)
{
    const pg_tensor *x = k->in[0];
    int in = k->node->op == PG_OP_REORDER_INPUT;
    const pg_tensor *plain = in ? x : k->out[0];
    reorder_job j = { k->x[0], k->y[0], plain->shape[1], plain->shape[2] * plain->shape[3], NULL, 0 };
    if (k->bind && k->bind->kern[0]) {
        j.tr = k->bind->kern[0]->fn.transpose;
        j.tile = ((const pg_transpose_params *)k->bind->kern[0]->params)->tile;
    }
    int64_t tasks = plain->shape[0] * blocks_of(j.C);
    pg_exec_parallel(k, tasks, j.HW * NB, 1, in ? reorder_in : reorder_out, &j);
    return PG_OK;
}

/* ---- pools ---------------------------------------------------------------- */

typedef struct pool_job {
    const float *X;
    float *Y;
    pg_win w;
    int64_t C, CB;
} pool_job;

/* MaxPool: task = (image, block); NaN never wins (v > m), as the reference */
static void maxpool_blocks(void *ctx, int64_t begin, int64_t end)
{
    const pool_job *j = ctx;
    const pg_win *w = &j->w;
    int64_t IH = w->in[1], IW = w->in[2], OH = w->out[1], OW = w->out[2];
    int64_t KH = w->k[1], KW = w->k[2], sy = w->stride[1], sx = w->stride[2];
    int64_t dy = w->dil[1], dx = w->dil[2];
    for (int64_t t = begin; t < end; t++) {
        const float *x = j->X + t * IH * IW * NB;
        float *y = j->Y + t * OH * OW * NB;
        for (int64_t oy = 0; oy < OH; oy++) {
            int64_t y0 = oy * sy - w->lo[1];
            int64_t ka = y0 >= 0 ? 0 : (-y0 + dy - 1) / dy;
            int64_t kb = IH - y0 <= 0 ? 0 : (IH - y0 + dy - 1) / dy;
            kb = kb > KH ? KH : kb;
            for (int64_t ox = 0; ox < OW; ox++) {
                int64_t x0 = ox * sx - w->lo[2];
                int64_t la = x0 >= 0 ? 0 : (-x0 + dx - 1) / dx;
                int64_t lb = IW - x0 <= 0 ? 0 : (IW - x0 + dx - 1) / dx;
                lb = lb > KW ? KW : lb;
                float m[NB];
                for (int l = 0; l < NB; l++)
                    m[l] = -INFINITY;
                for (int64_t ky = ka; ky < kb; ky++)
                    for (int64_t kx = la; kx < lb; kx++) {
                        const float *r = x + ((y0 + ky * dy) * IW + x0 + kx * dx) * NB;
                        for (int l = 0; l < NB; l++)
                            m[l] = r[l] > m[l] ? r[l] : m[l];
                    }
                memcpy(y + (oy * OW + ox) * NB, m, sizeof m);
            }
        }
    }
}

/* GlobalAveragePool -> plain [N, C, 1, 1]: task = (image, block) */
static void gap_blocks(void *ctx, int64_t begin, int64_t end)
{
    const pool_job *j = ctx;
    int64_t S = j->w.in[1] * j->w.in[2];
    for (int64_t t = begin; t < end; t++) {
        int64_t img = t / j->CB, cb = t % j->CB;
        const float *x = j->X + t * S * NB;
        /* float sums over runs of 64 pixels (whole vectors), added in double */
        double s[NB];
        for (int l = 0; l < NB; l++)
            s[l] = 0.0;
        for (int64_t p0 = 0; p0 < S; p0 += 64) {
            int64_t p1 = p0 + 64 < S ? p0 + 64 : S;
            float r[NB];
            for (int l = 0; l < NB; l++)
                r[l] = 0.0f;
            for (int64_t p = p0; p < p1; p++)
                for (int l = 0; l < NB; l++)
                    r[l] += x[p * NB + l];
            for (int l = 0; l < NB; l++)
                s[l] += r[l];
        }
        for (int l = 0; l < NB && cb * NB + l < j->C; l++)
            j->Y[img * j->C + cb * NB + l] = (float)(s[l] / (double)S);
    }
}

pg_status pg_exec_pool_nchwc(pg_kctx *k)
{
    const pg_tensor *x = k->in[0];
    if (x->rank != 5 || x->dtype != PG_DTYPE_FLOAT32 || k->n_out != 1)
        return pg_fail(PG_ERR_INTERNAL, "node '%s': a blocked pool takes one float32 [N, C/16, H, W, 16] "
                       "tensor", k->node->name);
    pool_job j = { k->x[0], k->y[0], { 0 }, 0, x->shape[1] };
    int64_t tasks = x->shape[0] * x->shape[1];
    if (k->node->op == PG_OP_GLOBAL_AVERAGEPOOL) {
        j.C = k->out[0]->shape[1];
        j.w.in[1] = x->shape[2];
        j.w.in[2] = x->shape[3];
        pg_exec_parallel(k, tasks, x->shape[2] * x->shape[3] * NB, 1, gap_blocks, &j);
        return PG_OK;
    }
    int cnt = 0;
    const int64_t *ks = pg_ir_attr_ints(k->node, "kernel_shape", &cnt);
    pg_status st = pg_win_geometry(k->node, PG_WIN_POOL, 2, x->shape + 2, ks, &j.w);
    if (st)
        return st;
    pg_exec_parallel(k, tasks, j.w.out[1] * j.w.out[2] * j.w.k[1] * j.w.k[2] * NB, 1, maxpool_blocks, &j);
    return PG_OK;
}

/* ---- the conv -------------------------------------------------------------- */

int pg_nchwc_depthwise(const pg_node *n)
{
    return pg_ir_attr_int(n, "group", 1) > 1;
}

static int fits_block(const pg_variant *v, const void *ctx)
{
    const pg_conv_nchwc_params *p = v->params;
    return p && p->block == NB && p->fb == *(const int *)ctx;
}

/* Filter blocks per group of the packed weights: nchwc_group, at most the
 * kernel's FB (graphs saved before it: FB). */
size_t pg_nchwc_group_blocks(const pg_node *n, const pg_variant *v)
{
    const pg_conv_nchwc_params *p = v->params;
    int64_t g = pg_ir_attr_int(n, "nchwc_group", p->fb);
    return g >= 1 && g <= p->fb ? (size_t)g : (size_t)p->fb;
}

/* kern[3]: the silu kernel of a conv with a fused SiLU */
static pg_status bind_silu(const pg_node *n, pg_binding *b)
{
    if (pg_conv_act_from_name(pg_ir_attr_string(n, "activation", "none")) == PG_CONVACT_SILU &&
        !(b->kern[3] = pg_kernel_select(pg_kernel_family_by_name("silu"))))
        return pg_fail(PG_ERR_UNSUPPORTED, "node '%s': no silu kernel for its fused SiLU", n->name);
    return PG_OK;
}

pg_status pg_bind_conv_nchwc(const pg_node *n, pg_binding *b)
{
    if (pg_nchwc_depthwise(n)) {
        int cnt = 0;
        const int64_t *ks = pg_ir_attr_ints(n, "kernel_shape", &cnt);
        if (!ks || cnt != 2 || ks[0] != ks[1] || (ks[0] != 3 && ks[0] != 5))
            return pg_fail(PG_ERR_UNSUPPORTED, "node '%s': a blocked depthwise conv takes a 3x3 or 5x5 "
                           "kernel_shape", n->name);
        b->kern[0] = pg_kernel_select(ks[0] == 3 ? &pg_kernels_dwconv3x3 : &pg_kernels_dwconv5x5);
        return bind_silu(n, b);
    }
    int fb = (int)pg_ir_attr_int(n, "nchwc_fb", 0);
    b->kern[0] = pg_kernel_select_fitting(&pg_kernels_conv_nchwc, fits_block, &fb);
    if (!b->kern[0])
        return pg_fail(PG_ERR_UNSUPPORTED, "node '%s': no conv_nchwc kernel takes weights packed for "
                       "%d filter blocks", n->name, fb);
    if (pg_ir_attr_int(n, "winograd", 0)) {
        /* the products on kern[0], the transforms on kern[1], kern[2] */
        b->kern[1] = pg_kernel_select(&pg_kernels_wino_in_f23);
        b->kern[2] = pg_kernel_select(&pg_kernels_wino_out_f23);
        if (!b->kern[1] || !b->kern[2])
            return pg_fail(PG_ERR_UNSUPPORTED, "node '%s': no Winograd transform kernel", n->name);
    }
    return bind_silu(n, b);
}

/* Rows x columns of the zero-padded plane a depthwise task fills. */
static void dw_plane(const pg_win *w, int64_t *ph, int64_t *pw)
{
    *ph = (w->out[1] - 1) * w->stride[1] + (w->k[1] - 1) * w->dil[1] + 1;
    *pw = (w->out[2] - 1) * w->stride[2] + (w->k[2] - 1) * w->dil[2] + 1;
}

static pg_status conv_geometry(const pg_node *n, const pg_tensor *x, pg_win *w)
{
    int cnt = 0;
    int64_t sp[2];
    const int64_t *ks = pg_ir_attr_ints(n, "kernel_shape", &cnt);
    if (!ks || cnt != 2 || !nchwc_spatial(x, sp))
        return pg_fail(PG_ERR_INTERNAL, "node '%s': a blocked conv without its kernel_shape", n->name);
    return pg_win_geometry(n, PG_WIN_CONV, 2, sp, ks, w);
}

/* The direct conv pads a small blocked input once (no edge pixels). */
static int direct_padded(const pg_win *w, int blocked)
{
    return blocked && w->out[2] <= 16 && (w->lo[1] || w->lo[2] || w->hi[1] || w->hi[2]);
}

/* A depthwise conv on a small plane pads it once (its rows are short, so
 * the edge pixels' windows would be a large share of them) - at stride 1
 * only: at stride 2 the copy moves four input pixels per output pixel and
 * a row has one edge pixel (MobileNetV2's 3x3/2 on 28- and 14-pixel
 * planes: 0.028 -> 0.014 ms and 0.025 -> 0.013 ms each, batch 1, 1 thread,
 * Sapphire Rapids, without the copy). */
static int dw_padded(const pg_win *w)
{
    return w->in[2] <= 30 && w->stride[1] == 1 && w->stride[2] == 1 &&
           (w->lo[1] || w->lo[2] || w->hi[1] || w->hi[2]);
}

size_t pg_scratch_conv_nchwc(const pg_node *n, const pg_tensor *x, int threads)
{
    pg_win w;
    if (conv_geometry(n, x, &w) != PG_OK) {
        pg_clear_error();
        return 0;
    }
    if (pg_ir_attr_int(n, "winograd", 0)) {
        size_t KB = (size_t)blocks_of(pg_ir_attr_int(n, "out_channels", 1));
        size_t gfb = (size_t)pg_ir_attr_int(n, "nchwc_group", pg_ir_attr_int(n, "nchwc_fb", 1));
        return x->rank == 5 ? pg_scratch_conv_winograd(&w, (size_t)x->shape[0], (size_t)x->shape[1], KB, gfb,
                                                       threads)
                            : 0;
    }
    int64_t ph, pw;
    dw_plane(&w, &ph, &pw);
    if (!pg_nchwc_depthwise(n))
        return direct_padded(&w, x->rank == 5)
                   ? pg_align_up((size_t)(x->shape[0] * x->shape[1] * ph * pw * NB) * sizeof(float)) + 64
                   : 0;
    (void)threads;   /* the zero row and the padded planes are shared: read only */
    return pg_align_up((size_t)w.in[2] * NB * sizeof(float)) +
           (dw_padded(&w) ? pg_align_up((size_t)(x->shape[0] * x->shape[1] * ph * pw * NB) * sizeof(float)) : 0) +
           64;
}

typedef struct nchwc_conv {
    const pg_variant *v;
    const pg_conv_nchwc_params *p;
    const float *X, *W, *B;
    const float *R;               /* the skip tensor (RESIDUAL), y's layout, or NULL */
    float *Y;
    pg_win w;
    int blocked;                  /* the input is NCHW16c (else NCHW) */
    size_t C, CB, MB, gfb, groups, cin_blk, ncb;   /* gfb: filter blocks per group */
    size_t tasks, workers;
    size_t dw_rows, dw_grain;     /* depthwise: output rows (all planes), rows per task */
    size_t group_floats;          /* packed floats of a whole group */
    size_t cin_tile, rows;        /* input blocks per pass over a group's rows; rows per task */
    size_t nrows, flat;           /* rows of a plane: its image rows (flat 0), or runs of flat pixels */
    const float *xpad;            /* small planes: the input zero-padded (wpad its geometry) */
    pg_win wpad;
    float lo, hi;
    int act;                      /* in the kernel: PG_CONV_NCHWC_ACT_* */
    pg_conv_epi post;             /* after it, on each row it wrote: SiLU (else NONE) */
    char *scratch;
} nchwc_conv;

static const float zero_bias[64 * 4];   /* the bias of a second input tile: none */
/* Depthwise tasks per worker: runs of rows, long enough that the shared
 * counter is not what the threads wait on, enough that a preempted worker
 * leaves the others work (1 to 8 measured alike on MobileNetV2; a task a
 * row ran slower on 2 threads than on 1). */
#define DW_TASKS_PER_WORKER 4
/* pixels a run of a flat 1x1 conv at most: a 14 x 14 plane in two */
#define FLAT_RUN 98

/* A run of n pixels in calls the kernel splits well: chunks of 6, and a
 * last 7 or 8 as 4 + 3 or 4 + 4 instead of 6 + 1 or 6 + 2 (a chunk of 1 or
 * 2 pixels has too few accumulators to hide the FMA latency). */
static void run_pixels(pg_f32_conv_nchwc_fn kern, pg_conv_nchwc_args *a, size_t n, size_t x_step)
{
    size_t r = n % 6;
    if (n > 6 && (r == 1 || r == 2)) {
        size_t head = n - 6 - r, h2 = (6 + r) / 2 + ((6 + r) & 1);
        const float *x = a->x, *res = a->res;   /* res moves with y */
        float *y = a->y;
        if (head) {
            a->pixels = head;
            kern(a);
        }
        a->x = (const float *)((const char *)x + head * x_step);
        a->y = y + head * NB;
        a->res = res ? res + head * NB : NULL;
        a->pixels = h2;
        kern(a);
        a->x = (const float *)((const char *)x + (head + h2) * x_step);
        a->y = y + (head + h2) * NB;
        a->res = res ? res + (head + h2) * NB : NULL;
        a->pixels = 6 + r - h2;
        kern(a);
        return;
    }
    a->pixels = n;
    kern(a);
}

/* SiLU after the kernel over the row it just wrote, n pixels at y in each
 * of fb blocks (still in L1) */
static void post_rows(const nchwc_conv *d, float *y, size_t fb, size_t n)
{
    if (d->post.act == PG_CONVACT_NONE)
        return;
    size_t plane = (size_t)(d->w.out[1] * d->w.out[2]) * NB;
    for (size_t f = 0; f < fb; f++)
        pg_conv_epi_apply(&d->post, y + f * plane, n * NB);
}

static void direct_task(void *ctx, size_t task)
{
    const nchwc_conv *d = ctx;
    const pg_win *w = d->xpad ? &d->wpad : &d->w;
    const float *X = d->xpad ? d->xpad : d->X;
    int64_t IH = w->in[1], IW = w->in[2], OH = w->out[1], OW = w->out[2];
    int64_t KH = w->k[1], KW = w->k[2], sy = w->stride[1], sx = w->stride[2];
    int64_t dy = w->dil[1], dx = w->dil[2];
    size_t FB = d->gfb, pf = d->blocked ? NB : 1;   /* floats per input pixel */
    size_t tap_floats = d->cin_blk * NB;                        /* per filter block */
    pg_f32_conv_nchwc_fn kern = d->v->fn.conv_nchwc;
    /* the interior: output columns whose whole window row is inside */
    int64_t oxa = w->lo[2] <= 0 ? 0 : (w->lo[2] + sx - 1) / sx;
    int64_t last = IW - 1 + w->lo[2] - (KW - 1) * dx;   /* ox sx <= last */
    int64_t oxb = last < 0 ? 0 : last / sx + 1;
    oxb = oxb > OW ? OW : oxb;
    oxa = oxa > oxb ? oxb : oxa;
    size_t chunks = (d->nrows + d->rows - 1) / d->rows, P = (size_t)(OH * OW);
    {
        size_t img = task / (d->groups * chunks), rest = task % (d->groups * chunks);
        size_t g = rest / chunks;
        int64_t oy0 = (int64_t)((rest % chunks) * d->rows), nr = (int64_t)d->nrows;
        int64_t oy1 = oy0 + (int64_t)d->rows > nr ? nr : oy0 + (int64_t)d->rows;
        size_t f0 = g * FB, fb = d->MB - f0 < FB ? d->MB - f0 : FB;
        size_t wrow = (size_t)KW * tap_floats * fb;   /* floats of one ky row of taps */
        size_t wcb = (size_t)KH * wrow;               /* of one input block */
        const float *ximg = X + img * (d->blocked ? d->CB * NB : d->C) * (size_t)(IH * IW);
        size_t x_cb = (size_t)(IH * IW) * pf;        /* floats between input blocks */
        for (size_t c0 = 0; c0 < d->ncb; c0 += d->cin_tile) {
            size_t nc = d->ncb - c0 < d->cin_tile ? d->ncb - c0 : d->cin_tile;
            int lastc = c0 + nc >= d->ncb;
            const float *wg = d->W + g * d->group_floats + c0 * wcb;
            const float *xc = ximg + c0 * x_cb;
            pg_conv_nchwc_args a = {
                NULL, NULL, NULL, c0 ? zero_bias : d->B + f0 * NB, 0, fb, nc, d->cin_blk, 0, 0,
                (size_t)sx * pf * 4, (size_t)dx * pf * 4, (size_t)(dy * IW) * pf * 4, x_cb * 4,
                wrow * 4, wcb * 4, (size_t)(OH * OW) * NB * 4, d->lo, d->hi,
                lastc ? d->act : PG_CONV_NCHWC_ACT_NONE,
                (c0 ? PG_CONV_NCHWC_ACCUMULATE : 0) | (lastc && d->R ? PG_CONV_NCHWC_RESIDUAL : 0), NULL,
                (size_t)(OH * OW) * NB * 4 };
            /* tiled weights: the next tile's (this group's next input
             * blocks, else the next group's first) brought into L2 a row's
             * share at a time while this tile runs from L1 - the first row
             * of a tile otherwise waits on memory for all of it */
            const char *pf_next = (const char *)(wg + nc * wcb);
            int more = c0 + nc < d->ncb || g + 1 < d->groups;
            size_t pf_bytes = d->rows > 1 && more ? d->cin_tile * wcb * sizeof(float) : 0, pf_done = 0;
            for (int64_t oy = oy0; oy < oy1; oy++) {
                for (size_t upto = pf_bytes * (size_t)(oy - oy0 + 1) / (size_t)(oy1 - oy0); pf_done < upto;
                     pf_done += 64)
                    __builtin_prefetch(pf_next + pf_done, 0, 2);
                if (d->flat) {
                    /* pixels [p0, p0 + np) of the plane, input and output alike */
                    size_t p0 = (size_t)oy * d->flat, np = P - p0 < d->flat ? P - p0 : d->flat;
                    size_t yoff = ((img * d->MB + f0) * P + p0) * NB;
                    a.x = xc + p0 * pf;
                    a.w = wg;
                    a.y = d->Y + yoff;
                    a.res = a.flags & PG_CONV_NCHWC_RESIDUAL ? d->R + yoff : NULL;
                    a.kh = a.kw = 1;
                    run_pixels(kern, &a, np, a.x_pix);
                    if (lastc)
                        post_rows(d, d->Y + yoff, fb, np);
                    continue;
                }
                int64_t y0 = oy * sy - w->lo[1];
                int64_t ka = y0 >= 0 ? 0 : (-y0 + dy - 1) / dy;
                int64_t kb = IH - y0 <= 0 ? 0 : (IH - y0 + dy - 1) / dy;
                kb = kb > KH ? KH : kb;
                ka = ka > kb ? kb : ka;
                a.kh = (size_t)(kb - ka);
                size_t yoff = ((img * d->MB + f0) * (size_t)OH + (size_t)oy) * (size_t)OW * NB;
                float *yrow = d->Y + yoff;
                const float *rrow = a.flags & PG_CONV_NCHWC_RESIDUAL ? d->R + yoff : NULL;
                /* input row y0 + ka dy, the weights from tap row ka */
                const float *xr = xc + (size_t)((y0 + ka * dy) * IW) * pf;
                const float *wr = wg + (size_t)ka * wrow;
                for (int64_t ox = 0; ox < OW;) {
                    int64_t x0 = ox * sx - w->lo[2];
                    if (ox >= oxa && ox < oxb) {
                        a.x = xr + (size_t)x0 * pf;
                        a.w = wr;
                        a.y = yrow + (size_t)ox * NB;
                        a.res = rrow ? rrow + (size_t)ox * NB : NULL;
                        a.kw = (size_t)KW;
                        run_pixels(kern, &a, (size_t)(oxb - ox), a.x_pix);
                        ox = oxb;
                        continue;
                    }
                    int64_t la = x0 >= 0 ? 0 : (-x0 + dx - 1) / dx;
                    int64_t lb = IW - x0 <= 0 ? 0 : (IW - x0 + dx - 1) / dx;
                    lb = lb > KW ? KW : lb;
                    la = la > lb ? lb : la;
                    a.x = xr + (size_t)(x0 + la * dx) * pf;
                    a.w = wr + (size_t)la * tap_floats * fb;
                    a.y = yrow + (size_t)ox * NB;
                    a.res = rrow ? rrow + (size_t)ox * NB : NULL;
                    a.pixels = 1;
                    a.kw = (size_t)(lb - la);
                    kern(&a);
                    ox++;
                }
                if (lastc)
                    post_rows(d, yrow, fb, (size_t)OW);
            }
        }
    }
}

/* plane x (IH x IW pixels of NB floats) into the zero-padded ph x pw plane
 * o, input pixel (r - top, c - left) at (r, c) */
static void pad_plane(const float *x, int64_t IH, int64_t IW, int64_t top, int64_t left, int64_t ph,
                      int64_t pw, float *o)
{
    int64_t va = -left < 0 ? 0 : -left, vb = pw - left > IW ? IW : pw - left;
    for (int64_t r = 0; r < ph; r++, o += pw * NB) {
        int64_t iy = r - top;
        if (iy < 0 || iy >= IH || vb <= va) {
            memset(o, 0, (size_t)pw * NB * sizeof(float));
            continue;
        }
        size_t lz = (size_t)(va + left), n = (size_t)(vb - va);
        memset(o, 0, lz * NB * sizeof(float));
        memcpy(o + lz * NB, x + (size_t)(iy * IW + va) * NB, n * NB * sizeof(float));
        memset(o + (lz + n) * NB, 0, ((size_t)pw - lz - n) * NB * sizeof(float));
    }
}

/* every input plane of d (N x CB of them) zero-padded into xp as ph x pw
 * planes - on `workers` threads, one plane a task (on one, the other
 * thread waited through the whole copy: 5% of MobileNetV2 at batch 8) */
typedef struct pad_job {
    const nchwc_conv *d;
    float *xp;
    int64_t ph, pw;
} pad_job;

static void pad_task(void *ctx, size_t q)
{
    const pad_job *j = ctx;
    const pg_win *w = &j->d->w;
    pad_plane(j->d->X + q * (size_t)(w->in[1] * w->in[2]) * NB, w->in[1], w->in[2], w->lo[1], w->lo[2], j->ph,
              j->pw, j->xp + q * (size_t)(j->ph * j->pw) * NB);
}

static void pad_planes(nchwc_conv *d, size_t planes, float *xp, int64_t ph, int64_t pw, size_t workers)
{
    pad_job j = { d, xp, ph, pw };
    if (workers > 1 && planes > 1)
        pg_parallel_for(planes, pad_task, &j, (int)(workers < planes ? workers : planes));
    else
        for (size_t q = 0; q < planes; q++)
            pad_task(&j, q);
    d->xpad = xp;
    d->wpad = d->w;
    d->wpad.in[1] = ph;
    d->wpad.in[2] = pw;
}

/* One output row of one block: the interior pixels read the input rows in
 * place (a zero row for the rows in the padding), the pixels whose window
 * crosses the left or right edge one at a time from a zero-padded copy of
 * their window (no per-plane copy: the input is read once, by the FMAs). */
static void dw_row(const nchwc_conv *d, size_t task)
{
    const pg_win *w = &d->w;
    int64_t IH = w->in[1], IW = w->in[2], OH = w->out[1], OW = w->out[2];
    int64_t KH = w->k[1], KW = w->k[2], sy = w->stride[1], sx = w->stride[2];
    int64_t dy = w->dil[1], dx = w->dil[2];
    size_t plane = task / (size_t)OH, taps = (size_t)(KH * KW);
    int64_t oy = (int64_t)(task % (size_t)OH);
    const float *x = d->X + plane * (size_t)(IH * IW) * NB;
    float *y = d->Y + (plane * (size_t)OH + (size_t)oy) * (size_t)OW * NB;
    const float *zero = (const float *)d->scratch;   /* IW pixels of zeros */
    int64_t oxa = w->lo[2] <= 0 ? 0 : (w->lo[2] + sx - 1) / sx;
    int64_t last = IW - 1 + w->lo[2] - (KW - 1) * dx;
    int64_t oxb = last < 0 ? 0 : last / sx + 1;
    oxb = oxb > OW ? OW : oxb;
    oxa = oxa > oxb ? oxb : oxa;
    const float *rows[5];
    float win[5 * 5 * NB];
    pg_dwconv_args a = { rows, d->W + (plane % d->CB) * (1 + taps) * NB, NULL, NB, 0,
                         (size_t)sx * NB, (size_t)dx * NB, NB, d->lo, d->hi,
                         d->act == PG_CONV_NCHWC_ACT_CLAMP       ? PG_DWACT_CLAMP
                         : d->act == PG_CONV_NCHWC_ACT_HARDSWISH ? PG_DWACT_HARDSWISH
                                                                 : PG_DWACT_NONE, 0 };
    if (d->xpad) {
        /* a small plane padded once: the whole row in one call */
        const pg_win *wp = &d->wpad;
        const float *xp = d->xpad + plane * (size_t)(wp->in[1] * wp->in[2]) * NB;
        for (int64_t ky = 0; ky < KH; ky++)
            rows[ky] = xp + (size_t)((oy * sy + ky * dy) * wp->in[2]) * NB;
        a.out = y;
        a.width = (size_t)OW;
        d->v->fn.dwconv(&a);
        pg_conv_epi_apply(&d->post, y, (size_t)OW * NB);
        return;
    }
    int64_t y0 = oy * sy - w->lo[1];
    if (oxb > oxa) {
        for (int64_t ky = 0; ky < KH; ky++) {
            int64_t iy = y0 + ky * dy;
            rows[ky] = iy < 0 || iy >= IH ? zero : x + (size_t)((iy * IW + oxa * sx - w->lo[2]) * NB);
        }
        a.out = y + (size_t)oxa * NB;
        a.width = (size_t)(oxb - oxa);
        d->v->fn.dwconv(&a);
    }
    a.width = 1;
    a.pix = NB;
    for (int64_t ox = 0; ox < OW; ox++) {
        if (ox == oxa && oxb > oxa)
            ox = oxb;
        if (ox >= OW)
            break;
        int64_t x0 = ox * sx - w->lo[2];
        for (int64_t ky = 0; ky < KH; ky++) {
            int64_t iy = y0 + ky * dy;
            for (int64_t kx = 0; kx < KW; kx++) {
                int64_t ix = x0 + kx * dx;
                float *o = win + (size_t)(ky * KW + kx) * NB;
                if (iy < 0 || iy >= IH || ix < 0 || ix >= IW)
                    memset(o, 0, NB * sizeof(float));
                else
                    memcpy(o, x + (size_t)((iy * IW + ix) * NB), NB * sizeof(float));
            }
            rows[ky] = win + (size_t)(ky * KW) * NB;
        }
        a.out = y + (size_t)ox * NB;
        d->v->fn.dwconv(&a);
    }
    pg_conv_epi_apply(&d->post, y, (size_t)OW * NB);
}

/* Rows (of any block plane) dw_grain at a time: a depthwise row is short
 * work (7 to 112 pixels of 9 or 25 taps). */
static void dw_task(void *ctx, size_t task)
{
    const nchwc_conv *d = ctx;
    size_t end = (task + 1) * d->dw_grain;
    for (size_t q = task * d->dw_grain; q < end && q < d->dw_rows; q++)
        dw_row(d, q);
}

pg_status pg_conv_nchwc(pg_kctx *k)
{
    const pg_node *n = k->node;
    const pg_tensor *x = k->in[0];
    const pg_variant *v = k->bind->kern[0];
    nchwc_conv d = { .v = v, .X = k->x[0], .W = k->x[1], .B = k->n_in > 2 ? k->x[2] : NULL,
                     .Y = k->y[0], .lo = 0.0f, .hi = INFINITY };
    pg_status st = conv_geometry(n, x, &d.w);
    if (st)
        return st;
    if (!v)
        return pg_fail(PG_ERR_INTERNAL, "node '%s': a blocked conv without a kernel", n->name);
    /* the activation: a clamp or HardSwish in the kernel's registers,
     * SiLU (an exp) on the silu kernel over each row as it is written */
    pg_conv_epi e;
    if ((st = pg_conv_epi_of(k, k->bind->kern[3], &e)))
        return st;
    d.post.act = PG_CONVACT_NONE;
    d.act = PG_CONV_NCHWC_ACT_NONE;
    d.lo = -INFINITY;
    if (e.act == PG_CONVACT_RELU) {
        d.act = PG_CONV_NCHWC_ACT_CLAMP;
        d.lo = 0.0f;
    } else if (e.act == PG_CONVACT_CLIP) {
        d.act = PG_CONV_NCHWC_ACT_CLAMP;
        d.lo = e.lo;
        d.hi = e.hi;
    } else if (e.act == PG_CONVACT_HARDSWISH) {
        d.act = PG_CONV_NCHWC_ACT_HARDSWISH;
    } else if (e.act == PG_CONVACT_SILU) {
        d.post = e;
    }
    d.blocked = x->rank == 5;
    d.C = d.blocked ? (size_t)x->shape[1] * NB : (size_t)x->shape[1];
    d.CB = d.blocked ? (size_t)x->shape[1] : 0;
    d.MB = (size_t)k->out[0]->shape[1];
    size_t N = (size_t)x->shape[0];
    /* output elements x taps (x input channels for the direct form) */
    double flops = 2.0 * (double)N * (double)(d.w.out[1] * d.w.out[2] * d.w.k[1] * d.w.k[2]) * NB *
                   (double)d.MB * (pg_nchwc_depthwise(n) ? 1.0 : (double)d.C);
    size_t t = k->threads > 1 ? (size_t)k->threads : 1;
    if (t > PG_MAX_THREADS)
        t = PG_MAX_THREADS;
    if (pg_nchwc_depthwise(n)) {
        if (!d.blocked || (pg_variant_index(&pg_kernels_dwconv3x3, v) < 0 &&
                               pg_variant_index(&pg_kernels_dwconv5x5, v) < 0))
            return pg_fail(PG_ERR_INTERNAL, "node '%s': a blocked depthwise conv needs a blocked input "
                           "and a dwconv kernel", n->name);
        size_t zbytes = (size_t)d.w.in[2] * NB * sizeof(float);
        int64_t ph, pw;
        dw_plane(&d.w, &ph, &pw);
        size_t pbytes = dw_padded(&d.w) ? N * d.CB * (size_t)(ph * pw) * NB * sizeof(float) : 0;
        d.dw_rows = N * d.CB * (size_t)d.w.out[1];
        d.dw_grain = 1;
        d.workers = flops < 2e6 ? 1 : t < d.dw_rows ? t : d.dw_rows;
        if (d.workers > 1)
            d.dw_grain = (d.dw_rows + DW_TASKS_PER_WORKER * d.workers - 1) / (DW_TASKS_PER_WORKER * d.workers);
        d.tasks = (d.dw_rows + d.dw_grain - 1) / d.dw_grain;
        if (!k->scratch || k->scratch_bytes < zbytes + pbytes)
            return pg_fail(PG_ERR_INTERNAL, "node '%s': conv scratch %zu bytes, needs %zu", n->name,
                           k->scratch_bytes, zbytes + pbytes);
        memset(k->scratch, 0, zbytes);   /* the zero row of the padding */
        d.scratch = k->scratch;
        if (pbytes) {
            pad_planes(&d, N * d.CB, (float *)((char *)k->scratch + pg_align_up(zbytes)), ph, pw, d.workers);
        }
        if (d.workers > 1)
            pg_parallel_for(d.tasks, dw_task, &d, (int)d.workers);
        else
            for (size_t q = 0; q < d.tasks; q++)
                dw_task(&d, q);
        return PG_OK;
    }
    if (pg_ir_attr_int(n, "winograd", 0)) {
        /* its output transform clamps; HardSwish follows it as SiLU does */
        if (d.act == PG_CONV_NCHWC_ACT_HARDSWISH)
            d.post = e;
        return pg_conv_winograd(k, &d.w, d.lo, d.hi, &d.post);
    }
    d.R = k->n_in > 3 ? k->x[3] : NULL;
    if (pg_variant_index(&pg_kernels_conv_nchwc, v) < 0 || !d.B)
        return pg_fail(PG_ERR_INTERNAL, "node '%s': a blocked conv needs a conv_nchwc kernel and its "
                       "padded bias", n->name);
    d.p = v->params;
    d.cin_blk = d.blocked ? NB : 1;
    d.ncb = d.blocked ? d.CB : d.C;
    d.gfb = pg_nchwc_group_blocks(n, v);
    d.groups = (d.MB + d.gfb - 1) / d.gfb;
    d.group_floats = d.gfb * d.ncb * d.cin_blk * (size_t)(d.w.k[1] * d.w.k[2]) * NB;
    /* a group's weights past about a third of L2 (of L1 for a plane of
     * 14 x 14 or less, whose rows are too short to reuse a weight from
     * L2 enough): the input blocks in tiles whose weights stay there while
     * every row passes (the partial sums accumulate in y); else one row
     * per task */
    size_t gbytes = d.group_floats * sizeof(float), P = (size_t)(d.w.out[1] * d.w.out[2]);
    size_t cap = P <= 196 ? 40 * 1024 : 384 * 1024;   /* small planes: L1 */
    /* a 1x1 conv at stride 1, unpadded, maps the input plane onto the
     * output pixel for pixel: it goes in runs of up to FLAT_RUN pixels
     * across image rows (rows of 7 or 14 made kernel calls of 3 and 4
     * pixels, too few accumulators for the FMA latency) */
    d.nrows = (size_t)d.w.out[1];
    d.flat = 0;
    if (d.w.k[1] == 1 && d.w.k[2] == 1 && d.w.stride[1] == 1 && d.w.stride[2] == 1 && !d.w.lo[1] && !d.w.lo[2] &&
        !d.w.hi[1] && !d.w.hi[2]) {
        d.nrows = (P + FLAT_RUN - 1) / FLAT_RUN;
        d.flat = (P + d.nrows - 1) / d.nrows;
    }
    d.cin_tile = d.ncb;
    d.rows = 1;
    if (gbytes > cap) {
        d.cin_tile = d.ncb * cap / gbytes;
        d.cin_tile = d.cin_tile < 1 ? 1 : d.cin_tile;
        d.rows = d.nrows;
    }
    if (direct_padded(&d.w, d.blocked)) {
        /* small planes: zero-padded once, so every pixel is interior */
        int64_t ph, pw;
        dw_plane(&d.w, &ph, &pw);
        size_t need = N * d.CB * (size_t)(ph * pw) * NB * sizeof(float);
        if (!k->scratch || k->scratch_bytes < need)
            return pg_fail(PG_ERR_INTERNAL, "node '%s': conv scratch %zu bytes, needs %zu", n->name,
                           k->scratch_bytes, need);
        pad_planes(&d, N * d.CB, k->scratch, ph, pw, flops < 2e6 ? 1 : t);
        d.wpad.lo[1] = d.wpad.lo[2] = d.wpad.hi[1] = d.wpad.hi[2] = 0;
    }
    d.tasks = N * d.groups * ((d.nrows + d.rows - 1) / d.rows);
    d.workers = flops < 2e6 ? 1 : t < d.tasks ? t : d.tasks;
    if (d.workers > 1)
        pg_parallel_for(d.tasks, direct_task, &d, (int)d.workers);
    else
        for (size_t q = 0; q < d.tasks; q++)
            direct_task(&d, q);
    return PG_OK;
}

/* conv_winograd.c - a blocked 3x3 stride-1 conv (FusedConv nchwc = 16,
 * winograd = 1) as Winograd's F(2x2, 3x3): each 2x2 output tile from a
 * 4x4 input tile through 16 products instead of 36 multiply-adds per
 * input channel (kernels/winograd/winograd.h has the algebra).
 *
 * Per task - an image, a chunk of tile rows, a share of the filter groups:
 *   1. the input transform (wino_in_f23) of every input block's tile rows
 *      into U, 16 planes [CB][tiles][16], from zero-padded copies of the 4
 *      input rows a tile row reads (the padding, and a right edge a tile
 *      overhangs, are zeros in the copy: the kernel never tests a bound);
 *   2. the 16 products M[xi] = U[xi] V[xi], each a 1x1 conv over the
 *      chunk's tiles on the conv_nchwc kernel (V, the filters' transform,
 *      packed per point by the nchwc_layout pass as 1x1 conv weights);
 *   3. the output transform (wino_out_f23) with the bias, the skip tensor
 *      (conv_residual_fusion's 4th input) and the clamp, into y, then a
 *      HardSwish / SiLU over the rows just written.  An odd
 *      last row or column: the tile's extra row goes to a scratch row, its
 *      extra column through a scratch tile.
 * A chunk is whole tile rows, at least CHUNK_TILES tiles where the plane
 * has them, so the products' pixel runs are long enough for the kernel's
 * 6-pixel chunks; U and M of a chunk stay in L2.  When there are fewer
 * chunks than threads the filter groups are shared out too (each share
 * makes its own U: the input transform is cheap beside the products).
 * Every task takes a scratch slot (U, M, the padded rows) by atomic claim
 * - no more tasks run at once than there are slots (the threads).
 *
 * Why, by measurement (benchmarks/bench_cnn.py, AMD Zen 5, 1 thread,
 * batch 1, FMA peak ~270 GFLOP/s; a layer's GFLOP/s counts the direct
 * conv's multiply-adds, "products" is the share of the peak the 16
 * products per tile run at, the transforms' time included):
 *
 *   ResNet-18 layer    direct (conv_nchwc)    Winograd F(2x2,3x3)     ORT
 *   3x3 64@56             246 (91%)         457 (products 74%)     264
 *   3x3 128@28            235 (87%)         503 (82%)              264
 *   3x3 256@14            246 (91%)         416 (68%)              247
 *   3x3 512@7             208 (77%)         275 (59%)              190
 *   whole network, x ORT's latency: 1.04 (B1) / 1.07 (B8) direct, 0.70 /
 *   0.69 with Winograd.  On the AVX2 kernels (the same machine under
 *   PEREGRINE_CPU_MASK=avx2: the 1x16 conv_nchwc and the ymm transforms):
 *   ResNet-18 B1 19.2 ms against 30.7 ms direct.
 *
 * The direct kernel was within 10% of the FMA peak and of ORT's: the only
 * room left was in the number of multiply-adds.  F(2x2, 3x3) and not a
 * larger tile: 2.25x fewer products with transforms of adds and
 * subtracts only (F(4x4, 3x3)'s 4x needs multiplies by fractions in the
 * transforms, which grow the rounding error; not tried); 512@7 gains least - its
 * 4x4 tiles cover 8x8 outputs for 7x7 and its 16 transformed weight
 * planes (16 MB) stream from memory once per image.  On Sapphire Rapids
 * (FMA peak ~172 GFLOP/s) it loses: at batch 1 ResNet-18 ran 0.88 - 0.89x
 * ORT's latency with 512@7 direct against 0.90 - 0.92x with it as
 * Winograd, so a conv of fewer than 32 tiles over the batch stays direct
 * (passes/fuse_conv.c, MIN_WINO_TILES; 512@7 at batch 8 is 128 tiles and
 * gains).  The stem (3 input channels) and convs under 16 channels stay
 * direct.  Rounding: the
 * transforms add and subtract up to 9 inputs before the products, so the
 * result differs from the direct sum by a few ulp of the largest of them
 * - well inside 1e-4 of ORT's (tests/test_cnn_winograd.py). */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/threadpool.h"
#include "../kernels/conv_nchwc/conv_nchwc.h"
#include "../kernels/winograd/winograd.h"
#include "conv_fast.h"

#define NB PG_NCHWC_BLOCK
#define XI PG_WINO_POINTS
#define CHUNK_TILES 24

int pg_conv_winograd_fits(const pg_win *w)
{
    if (w->nsp != 2 || w->k[1] != 3 || w->k[2] != 3)
        return 0;
    for (int d = 1; d < 3; d++)
        if (w->stride[d] != 1 || w->dil[d] != 1 || w->lo[d] < 0 || w->lo[d] > 1 || w->hi[d] < 0 ||
            w->hi[d] > 1)
            return 0;
    return 1;
}

/* the tiling of one conv, the same at compile (scratch) and run time */
typedef struct wino_plan {
    size_t N, CB, KB, FB, groups;
    size_t TH, TW, rc, chunks, tc;   /* tile rows / columns, tile rows per chunk, chunks, tiles per chunk */
    size_t row_floats;               /* a padded input row: 2 TW + 2 pixels */
    size_t u_floats, m_floats, slot_bytes;
} wino_plan;

static void plan_of(const pg_win *w, size_t N, size_t CB, size_t KB, size_t FB, wino_plan *p)
{
    p->N = N;
    p->CB = CB;
    p->KB = KB;
    p->FB = FB;
    p->groups = (KB + FB - 1) / FB;
    p->TH = (size_t)(w->out[1] + 1) / 2;
    p->TW = (size_t)(w->out[2] + 1) / 2;
    p->rc = (CHUNK_TILES + p->TW - 1) / p->TW;
    p->rc = p->rc > p->TH ? p->TH : p->rc;
    p->chunks = (p->TH + p->rc - 1) / p->rc;
    p->tc = p->rc * p->TW;
    p->row_floats = (2 * p->TW + 2) * NB;
    p->u_floats = XI * CB * p->tc * NB;
    p->m_floats = XI * KB * p->tc * NB;
    /* U, M, 4 padded rows + a zero row, a scratch output row, the zero bias */
    p->slot_bytes = pg_align_up((p->u_floats + p->m_floats + 5 * p->row_floats + 2 * p->TW * NB + FB * NB) *
                                sizeof(float));
}

size_t pg_scratch_conv_winograd(const pg_win *w, size_t N, size_t CB, size_t KB, size_t FB, int threads)
{
    wino_plan p;
    plan_of(w, N, CB, KB, FB, &p);
    size_t slots = threads > 1 ? (size_t)threads : 1;
    return slots * p.slot_bytes + 64;
}

typedef struct wino_job {
    wino_plan p;
    const pg_win *w;
    const pg_variant *gemm, *win, *wout;
    const float *X, *V, *B, *R;
    float *Y;
    float lo, hi;
    const pg_conv_epi *post;      /* HardSwish / SiLU after the transform, per row */
    size_t parts, gpp, plane_floats;
    char *scratch;
    int slots;
    atomic_int busy[PG_MAX_THREADS];
} wino_job;

static int claim_slot(wino_job *j)
{
    for (;;)
        for (int i = 0; i < j->slots; i++) {
            int free_ = 0;
            if (atomic_compare_exchange_strong(&j->busy[i], &free_, 1))
                return i;
        }
}

/* the input transform of tile rows [ty0, ty1) of image n into U */
static void transform_in(const wino_job *j, size_t n, size_t ty0, size_t ty1, float *U, float *prow)
{
    const wino_plan *p = &j->p;
    int64_t IH = j->w->in[1], IW = j->w->in[2], top = j->w->lo[1], left = j->w->lo[2];
    size_t RL = p->row_floats, RP = RL / NB;
    float *zero = prow + 4 * RL;
    /* the pixels of a padded row that come from the input */
    size_t lz = (size_t)left, nin = (size_t)IW < RP - lz ? (size_t)IW : RP - lz;
    for (size_t cb = 0; cb < p->CB; cb++) {
        const float *xb = j->X + (n * p->CB + cb) * (size_t)(IH * IW) * NB;
        for (size_t ty = ty0; ty < ty1; ty++) {
            const float *rows[4];
            for (int r = 0; r < 4; r++) {
                int64_t iy = 2 * (int64_t)ty - top + r;
                if (iy < 0 || iy >= IH) {
                    rows[r] = zero;
                    continue;
                }
                float *o = prow + (size_t)r * RL;
                memset(o, 0, lz * NB * sizeof(float));
                memcpy(o + lz * NB, xb + (size_t)iy * (size_t)IW * NB, nin * NB * sizeof(float));
                memset(o + (lz + nin) * NB, 0, (RP - lz - nin) * NB * sizeof(float));
                rows[r] = o;
            }
            pg_wino_in_args a = { rows, U + (cb * p->tc + (ty - ty0) * p->TW) * NB, p->TW,
                                  p->CB * p->tc * NB * sizeof(float) };
            j->win->fn.wino_in(&a);
        }
    }
}

/* the 16 products of filter groups [g0, g1) over T tiles */
static void products(const wino_job *j, const float *U, float *M, size_t g0, size_t g1, size_t T,
                     const float *zb)
{
    const wino_plan *p = &j->p;
    size_t tc = p->tc;
    for (size_t xi = 0; xi < XI; xi++)
        for (size_t g = g0; g < g1; g++) {
            size_t fb = p->KB - g * p->FB < p->FB ? p->KB - g * p->FB : p->FB;
            size_t wky = fb * NB * NB * sizeof(float);
            pg_conv_nchwc_args a = {
                U + xi * p->CB * tc * NB, j->V + xi * j->plane_floats + g * p->FB * p->CB * NB * NB,
                M + (xi * p->KB + (g - g0) * p->FB) * tc * NB, zb, T, fb, p->CB, NB, 1, 1,
                NB * sizeof(float), 0, 0, tc * NB * sizeof(float), wky, wky, tc * NB * sizeof(float),
                -INFINITY, INFINITY, PG_CONV_NCHWC_ACT_NONE, 0, NULL, 0 };
            j->gemm->fn.conv_nchwc(&a);
        }
}

/* an odd last column: its tile through 2 x 2 scratch pixels (a: the tile
 * row's call, at output `at`; two: whether the tile's second row is in y) */
static void last_column(const wino_job *j, pg_wino_out_args a, size_t at, int two)
{
    size_t OW = (size_t)j->w->out[2];
    float ty_[2][2 * NB], tr[2][2 * NB];
    memset(tr, 0, sizeof tr);
    for (int r = 0; r < 1 + two; r++)
        if (j->R)
            memcpy(tr[r], j->R + at + ((size_t)r * OW + OW - 1) * NB, NB * sizeof(float));
    a.m += OW / 2 * NB;
    a.y[0] = ty_[0];
    a.y[1] = ty_[1];
    a.res[0] = tr[0];
    a.res[1] = tr[1];
    a.tiles = 1;
    j->wout->fn.wino_out(&a);
    for (int r = 0; r < 1 + two; r++)
        memcpy(j->Y + at + ((size_t)r * OW + OW - 1) * NB, ty_[r], NB * sizeof(float));
}

/* the output transform of blocks [kb0, kb1) over tile rows [ty0, ty1) */
static void transform_out(const wino_job *j, size_t n, size_t ty0, size_t ty1, size_t kb0, size_t kb1,
                          const float *M, float *dummy)
{
    const wino_plan *p = &j->p;
    size_t OH = (size_t)j->w->out[1], OW = (size_t)j->w->out[2], full = OW / 2;
    for (size_t kb = kb0; kb < kb1; kb++)
        for (size_t ty = ty0; ty < ty1; ty++) {
            size_t oy = 2 * ty, at = ((n * p->KB + kb) * OH + oy) * OW * NB;
            int two = oy + 1 < OH;
            pg_wino_out_args a = { M + ((kb - kb0) * p->tc + (ty - ty0) * p->TW) * NB,
                                   p->KB * p->tc * NB * sizeof(float),
                                   { j->Y + at, two ? j->Y + at + OW * NB : dummy },
                                   { NULL, NULL }, j->B + kb * NB, full, j->lo, j->hi,
                                   j->R ? PG_WINO_RESIDUAL : 0, 0 };
            if (j->R) {
                a.res[0] = j->R + at;
                a.res[1] = two ? j->R + at + OW * NB : dummy;
            }
            j->wout->fn.wino_out(&a);
            if (OW & 1)
                last_column(j, a, at, two);
            if (j->post->act != PG_CONVACT_NONE)
                for (int r = 0; r < 1 + two; r++)   /* the tile row's output rows, in L1 */
                    pg_conv_epi_apply(j->post, j->Y + at + (size_t)r * OW * NB, OW * NB);
        }
}

static void wino_task(void *ctx, size_t task)
{
    wino_job *j = ctx;
    const wino_plan *p = &j->p;
    size_t part = task % j->parts, chunk = task / j->parts % p->chunks, n = task / (j->parts * p->chunks);
    int slot = claim_slot(j);
    float *U = (float *)(j->scratch + (size_t)slot * p->slot_bytes);
    float *M = U + p->u_floats, *prow = M + p->m_floats, *dummy = prow + 5 * p->row_floats;
    float *zb = dummy + 2 * p->TW * NB;
    memset(prow + 4 * p->row_floats, 0, p->row_floats * sizeof(float));
    memset(zb, 0, p->FB * NB * sizeof(float));
    size_t ty0 = chunk * p->rc, ty1 = ty0 + p->rc < p->TH ? ty0 + p->rc : p->TH;
    size_t g0 = part * j->gpp, g1 = g0 + j->gpp < p->groups ? g0 + j->gpp : p->groups;
    if (g0 < g1) {
        transform_in(j, n, ty0, ty1, U, prow);
        products(j, U, M, g0, g1, (ty1 - ty0) * p->TW, zb);
        size_t kb1 = g1 * p->FB < p->KB ? g1 * p->FB : p->KB;
        transform_out(j, n, ty0, ty1, g0 * p->FB, kb1, M, dummy);
    }
    atomic_store(&j->busy[slot], 0);
}

pg_status pg_conv_winograd(pg_kctx *k, const pg_win *w, float lo, float hi, const pg_conv_epi *post)
{
    const pg_node *n = k->node;
    const pg_tensor *x = k->in[0];
    const pg_variant *gemm = k->bind->kern[0], *win = k->bind->kern[1], *wout = k->bind->kern[2];
    if (!gemm || !win || !wout || x->rank != 5 || !pg_conv_winograd_fits(w) || k->n_in < 3 || !k->x[2])
        return pg_fail(PG_ERR_INTERNAL, "node '%s': a Winograd conv needs a blocked input, a 3x3 stride-1 "
                       "window padded by at most 1, its bias and the conv_nchwc and wino kernels", n->name);
    wino_job job;
    memset(&job, 0, sizeof job);
    plan_of(w, (size_t)x->shape[0], (size_t)x->shape[1], (size_t)k->out[0]->shape[1],
            pg_nchwc_group_blocks(n, gemm), &job.p);
    job.plane_floats = pg_wino_plane_floats(job.p.KB * NB, job.p.CB * NB, NB);
    size_t want = XI * job.plane_floats;
    if (k->in[1]->rank != 1 || (size_t)k->in[1]->shape[0] != want)
        return pg_fail(PG_ERR_SHAPE, "node '%s': Winograd weights of %lld floats, the conv needs %zu", n->name,
                       (long long)k->in[1]->shape[0], want);
    /* a slot per thread, as many as the scratch planned for holds */
    int threads = k->threads > 1 ? k->threads : 1;
    threads = threads > PG_MAX_THREADS ? PG_MAX_THREADS : threads;
    size_t fit = k->scratch && k->scratch_bytes > 64 ? (k->scratch_bytes - 64) / job.p.slot_bytes : 0;
    if (fit < 1)
        return pg_fail(PG_ERR_INTERNAL, "node '%s': conv scratch %zu bytes, needs %zu", n->name, k->scratch_bytes,
                       job.p.slot_bytes + 64);
    threads = (size_t)threads > fit ? (int)fit : threads;
    job.w = w;
    job.gemm = gemm;
    job.win = win;
    job.wout = wout;
    job.X = k->x[0];
    job.V = k->x[1];
    job.B = k->x[2];
    job.R = k->n_in > 3 ? k->x[3] : NULL;
    job.Y = k->y[0];
    job.lo = lo;
    job.hi = hi;
    job.post = post;
    job.scratch = k->scratch;
    job.slots = threads;
    size_t per_image = job.p.chunks;
    job.parts = 1;
    if ((size_t)threads > job.p.N * per_image) {
        job.parts = ((size_t)threads + job.p.N * per_image - 1) / (job.p.N * per_image);
        job.parts = job.parts > job.p.groups ? job.p.groups : job.parts;
    }
    job.gpp = (job.p.groups + job.parts - 1) / job.parts;
    for (int i = 0; i < PG_MAX_THREADS; i++)
        atomic_init(&job.busy[i], 0);
    size_t tasks = job.p.N * per_image * job.parts;
    int workers = (size_t)threads < tasks ? threads : (int)tasks;
    if (workers > 1)
        pg_parallel_for(tasks, wino_task, &job, workers);
    else
        for (size_t q = 0; q < tasks; q++)
            wino_task(&job, q);
    return PG_OK;
}

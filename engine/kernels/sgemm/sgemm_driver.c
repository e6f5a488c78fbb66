/* sgemm_driver.c - C = A * B (+bias) (act) over a packed B: cache blocking,
 * the split into tasks for the thread pool, and the calls of the
 * microkernel.  Not hot itself: all the flops are in the microkernel.
 *
 * Blocking (after BLIS/GotoBLAS):
 *   kc: a kc x NR slice of a B panel takes at most an eighth of L2 (it
 *       streams from L2 under the kernel's prefetch; long K blocks save
 *       passes of C through the accumulate epilogue);
 *   a task whose rows of A (m x kc) fit in half of L2 reads A in place
 *       (unless its rows fall in one L1 set, below): each B slice stays
 *       in cache while the kernel walks down those rows.
 *       Loop order: K blocks, panels, MR-row tiles.
 *   a taller task runs each MR-row tile across a group of nc panels (kc x
 *       nc of B in half of L2), loop order K blocks, panel groups, MR-row
 *       tiles, panels; when the MR x kc tile fits A_TILE_FLOATS (short K)
 *       it is copied to the stack first (dense rows on fresh cache lines:
 *       a row stride of 4 KiB would put every row of a tile in one L1 set,
 *       and a misaligned A splits lines).  C is prefetched by
 *       the kernel. */
#include <stdlib.h>
#include <string.h>

#include "../../core/cpu.h"
#include "../../core/error.h"
#include "../../core/threadpool.h"
#include "sgemm.h"

typedef struct gemm_job {
    pg_sgemm_ukernel_fn kernel;
    size_t mr, nr;
    size_t M, N, K;
    const float *A;
    size_t lda;
    const float *B;        /* packed panels */
    const float *bias;
    int act;
    float *C;
    size_t ldc;
    size_t kc, nc_panels;
    size_t a_block_max;    /* bytes of A a task keeps in L2 (half of it) */
    /* tasks: tm chunks of M (in MR tiles) x tn chunks of panels */
    size_t m_tiles, panels, tm, tn;
} gemm_job;

static size_t div_up(size_t a, size_t b) { return (a + b - 1) / b; }

/* Room for the A tile copied per (tile, panel group): 12 x 192 floats for
 * the AVX-512 kernel, 6 x 384 for AVX2; a larger tile is read in place. */
#define A_TILE_FLOATS 4096

static void plan_blocks(gemm_job *j)
{
    const pg_cpu_caps *caps = pg_cpu_caps_get();
    size_t l1 = caps->l1d_bytes > 0 ? (size_t)caps->l1d_bytes : 32 * 1024;
    size_t l2 = caps->l2_bytes > 0 ? (size_t)caps->l2_bytes : 512 * 1024;
    size_t slice = j->nr * sizeof(float);   /* bytes of one B panel row */
    /* Long K blocks: a kc x NR slice of B of up to an eighth of L2, which
     * streams from L2 under the kernel's B prefetch as fast as from L1,
     * and every K block saved is one pass less of C through the
     * accumulate epilogue and of the tile set-up.  Measured against
     * L1-sized slices (kc = 176..192 here): BERT-base's 128 x 768 x 2304
     * +8%, 128 x 3072 x 768 +4%, 1024^3 +40%, 2048^3 +10%. */
    size_t kc_max = l2 / 8 / slice;
    if (kc_max < 256)
        kc_max = l1 / 2 / slice > 256 ? l1 / 2 / slice : 256;
    /* equal K blocks, a multiple of 8 floats each, none longer than kc_max */
    size_t nkb = j->K ? div_up(j->K, kc_max) : 1;
    size_t kc = j->K ? div_up(j->K, nkb) : 1;
    kc = (kc + 7) & ~(size_t)7;
    /* A read in place puts row r of a tile at r * lda floats: with lda a
     * multiple of 1024 floats (BERT's 128 x 3072 FFN output) every row of
     * the tile falls in one L1 set, and 12 rows overrun its 8 ways, so
     * each broadcast misses L1 (128 x 3072 x 768 ran at 85% of the FMA
     * peak on Zen 4).  Such an A is copied by tiles instead (the tall
     * path), with K blocks short enough for the copy. */
    int aliases = pg_sgemm_a_aliases(j->mr, j->lda);
    if (aliases && kc * j->mr > A_TILE_FLOATS) {
        size_t fit = A_TILE_FLOATS / j->mr & ~(size_t)15;
        nkb = div_up(j->K, fit);
        kc = (div_up(j->K, nkb) + 15) & ~(size_t)15;
    }
    size_t nc = l2 / 2 / (kc * slice);
    j->kc = kc;
    j->nc_panels = nc ? nc : 1;
    j->a_block_max = aliases ? 0 : l2 / 2;
}

int pg_sgemm_a_aliases(size_t mr, size_t lda)
{
    size_t stride = lda * sizeof(float) % 4096;
    size_t sets = 4096 / (stride ? (stride & -stride) : 4096);   /* L1 sets a tile's rows use */
    return mr / sets > 6;                                          /* rows per set */
}

size_t pg_sgemm_unaliased_lda(size_t mr, size_t K)
{
    size_t lda = (K + 15) & ~(size_t)15;   /* rows start on cache lines */
    while (pg_sgemm_a_aliases(mr, lda))
        lda += 16;
    return lda;
}

/* Split C into tasks along the cheaper dimension: cutting M makes every
 * task read all of its B panels, cutting N makes every task read all of A,
 * so cut the dimension that is larger (M for tall, panels for wide and
 * short shapes like M = 8).  A few tasks per thread let a busy core fall
 * behind without holding up the others. */
static void plan_tasks(gemm_job *j, int threads)
{
    j->m_tiles = div_up(j->M, j->mr);
    j->panels = div_up(j->N, j->nr);
    size_t target = threads > 1 ? (size_t)threads * 4 : 1;
    if (j->M >= j->N) {
        j->tm = j->m_tiles < target ? j->m_tiles : target;
        size_t rest = div_up(target, j->tm);
        j->tn = j->panels < rest ? j->panels : rest;
    } else {
        j->tn = j->panels < target ? j->panels : target;
        size_t rest = div_up(target, j->tn);
        j->tm = j->m_tiles < rest ? j->m_tiles : rest;
    }
}

static void run_task(void *ctx, size_t task)
{
    const gemm_job *j = ctx;
    size_t ti = task / j->tn, tj = task % j->tn;
    /* this task's rows [m0, m1) and panels [p0, p1), split as evenly as whole units allow */
    size_t m0 = ti * j->m_tiles / j->tm * j->mr, m1 = (ti + 1) * j->m_tiles / j->tm * j->mr;
    size_t p0 = tj * j->panels / j->tn, p1 = (tj + 1) * j->panels / j->tn;
    if (m1 > j->M)
        m1 = j->M;
    size_t K = j->K, nr = j->nr, mr = j->mr;
    _Alignas(64) float atile[A_TILE_FLOATS];

    for (size_t pc = 0; pc == 0 || pc < K; pc += j->kc) {
        size_t kb = K - pc < j->kc ? K - pc : j->kc;
        size_t kp = (kb + 15) & ~(size_t)15;   /* copied rows start on a cache line */
        int copy_a = kb > 0 && mr * kp <= A_TILE_FLOATS;
        int last = pc + kb >= K;
        size_t tiles = div_up(m1 - m0, mr);
        /* a tile's share of one B slice (kb x NR) to prefetch, whole lines */
        size_t share = (kb * nr * sizeof(float) / 64 / tiles + 1) * 64;
        pg_sgemm_epilogue_pf epf;
        pg_sgemm_epilogue *ep = &epf.ep;
        ep->act = last ? j->act : PG_ACT_NONE;
        ep->flags = (pc > 0 ? PG_SGEMM_ACCUMULATE : 0) | PG_SGEMM_PREFETCH;
        if ((m1 - m0) * kb * sizeof(float) <= j->a_block_max) {
            /* A's rows of this task stay in L2 as they are: each B slice
             * is read from memory once and serves every tile of the task */
            for (size_t p = p0; p < p1; p++) {
                size_t col = p * nr, w = j->N - col < nr ? j->N - col : nr;
                const float *b = j->B + p * K * nr + pc * nr;
                ep->bias = last && j->bias ? j->bias + col : NULL;
                /* the slice read next (the next panel's, else the first
                 * panel's of the next K block), shared out among the tiles:
                 * each streams its part into L2 as it runs */
                const char *next = p + 1 < p1 ? (const char *)(b + K * nr)
                                 : !last ? (const char *)(j->B + p0 * K * nr + (pc + kb) * nr)
                                 : NULL;
                for (size_t i = m0, t = 0; i < m1; i += mr, t++) {
                    size_t h = m1 - i < mr ? m1 - i : mr;
                    epf.pf = next ? next + t * share : NULL;
                    j->kernel(h, w, kb, j->A + i * j->lda + pc, j->lda, b,
                              j->C + i * j->ldc + col, j->ldc, ep);
                }
            }
        } else {
            /* A too tall for L2: run each tile (copied when short: dense
             * rows on fresh cache lines, in L1) across a group of panels
             * that stays in L2, while the tiles share out the prefetch of
             * the next group's slices */
            for (size_t pg = p0; pg < p1; pg += j->nc_panels) {
                size_t pe = pg + j->nc_panels < p1 ? pg + j->nc_panels : p1;
                for (size_t i = m0, t = 0; i < m1; i += mr, t++) {
                    size_t h = m1 - i < mr ? m1 - i : mr;
                    const float *a = j->A + i * j->lda + pc;
                    size_t lda = j->lda;
                    if (copy_a) {
                        for (size_t r = 0; r < h; r++)
                            memcpy(atile + r * kp, a + r * lda, kb * sizeof(float));
                        a = atile;
                        lda = kp;
                    }
                    for (size_t p = pg; p < pe; p++) {
                        size_t col = p * nr, w = j->N - col < nr ? j->N - col : nr;
                        size_t np = p + (pe - pg);
                        ep->bias = last && j->bias ? j->bias + col : NULL;
                        epf.pf = np < p1 ? (const char *)(j->B + np * K * nr + pc * nr) + t * share
                               : !last ? (const char *)(j->B + (p0 + p - pg) * K * nr + (pc + kb) * nr) +
                                         t * share
                               : NULL;
                        j->kernel(h, w, kb, a, lda, j->B + p * K * nr + pc * nr,
                                  j->C + i * j->ldc + col, j->ldc, ep);
                    }
                }
            }
        }
        if (K == 0)
            break;
    }
}

pg_status pg_sgemm_packed(size_t M, const float *A, size_t lda, const pg_packed_b *B,
                          const float *bias, int act, float *C, size_t ldc, int threads)
{
    if (!B)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_sgemm_packed: packed B is NULL");
    size_t N = B->N, K = B->K;
    if (act < PG_ACT_NONE || act > PG_ACT_GELU)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_sgemm_packed: unknown activation %d", act);
    if (threads < 0)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_sgemm_packed: %d threads", threads);
    if (M == 0 || N == 0)
        return PG_OK;
    if (!C)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_sgemm_packed: C is NULL");
    if (!A && K)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_sgemm_packed: A is NULL");
    if (lda < K)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_sgemm_packed: lda %zu < K %zu", lda, K);
    if (ldc < N)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_sgemm_packed: ldc %zu < N %zu", ldc, N);

    static const float no_a = 0.0f;   /* K = 0: A is never read */
    if (K == 0) {
        A = &no_a;
        lda = 0;
    }
    const pg_sgemm_params *prm = B->variant->params;
    gemm_job j = {
        .kernel = B->variant->fn.sgemm,
        .mr = (size_t)prm->mr, .nr = B->nr,
        .M = M, .N = N, .K = K, .A = A, .lda = lda, .B = B->data,
        .bias = bias, .act = act, .C = C, .ldc = ldc,
    };
    plan_blocks(&j);

    /* small products: about 1 MFLOP of work per extra thread before it
     * pays.  A few rows against large weights (a decoding step) do few
     * flops but stream all of B, which two cores read faster than one:
     * each byte of B counts as 16 flops, about what the FMA peak does
     * while a core streams a byte from DRAM (gpt2's 1 x 512 x 1536, 1.6
     * MFLOP over 3 MiB of weights, went to one thread) */
    double work = 2.0 * (double)M * (double)N * (double)(K ? K : 1) +
                  16.0 * sizeof(float) * (double)N * (double)K;
    int t = pg_threads_for_work(pg_threads_resolve(threads), work, 1e6);
    plan_tasks(&j, t);
    pg_parallel_for(j.tm * j.tn, run_task, &j, t);
    return PG_OK;
}

pg_status pg_sgemm(int variant, size_t M, size_t N, size_t K, const float *A, size_t lda,
                   const float *B, size_t ldb, const float *bias, int act, float *C,
                   size_t ldc, int threads)
{
    pg_packed_b *pb = NULL;
    pg_status s = pg_sgemm_pack(variant, K, N, B, ldb, &pb);
    if (s != PG_OK)
        return s;
    s = pg_sgemm_packed(M, A, lda, pb, bias, act, C, ldc, threads);
    pg_packed_b_free(pb);
    return s;
}

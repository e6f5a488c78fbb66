/* gemm_bf16.c - packing bf16 weights, converting activation rows, and the
 * driver over the microkernel: tasks of MR-row tiles x 32-column panels
 * for the thread pool.  The whole K runs in one call of the kernel (a
 * panel slice of K = 1536 is 96 KiB, streamed from L2 with prefetch). */
#include <string.h>

#include "../../core/error.h"
#include "../../core/threadpool.h"
#include "../../gguf/ggml_types.h"
#include "gemm_bf16.h"

static size_t div_up(size_t a, size_t b) { return (a + b - 1) / b; }

size_t pg_bf16_packed_bytes(size_t K, size_t N)
{
    size_t kp = pg_bf16_kp(K);
    size_t bytes = div_up(N, PG_BF16_NR) * kp * PG_BF16_NR * 2;
    return (bytes + 63) & ~(size_t)63;
}

void pg_bf16_pack_f32(size_t K, size_t N, const float *B, size_t ldb, uint16_t *dst)
{
    size_t kp = pg_bf16_kp(K);
    memset(dst, 0, pg_bf16_packed_bytes(K, N));
    for (size_t k = 0; k < K; k++)
        for (size_t j = 0; j < N; j++)
            dst[(j / PG_BF16_NR) * kp * PG_BF16_NR + (k / 2) * 2 * PG_BF16_NR +
                (j % PG_BF16_NR) * 2 + k % 2] = pg_f32_to_bf16(B[k * ldb + j]);
}

float pg_bf16_packed_at(const uint16_t *packed, size_t K, size_t k, size_t j)
{
    size_t kp = pg_bf16_kp(K);
    return pg_bf16_to_f32(packed[(j / PG_BF16_NR) * kp * PG_BF16_NR + (k / 2) * 2 * PG_BF16_NR +
                                 (j % PG_BF16_NR) * 2 + k % 2]);
}

void pg_bf16_convert_rows(const pg_variant *cvt, size_t M, size_t K, const float *A, size_t lda,
                          uint16_t *Ab, size_t ldab)
{
    for (size_t i = 0; i < M; i++) {
        cvt->fn.cvt_bf16(K, A + i * lda, Ab + i * ldab);
        for (size_t k = K; k < ldab; k++)
            Ab[i * ldab + k] = 0;
    }
}

typedef struct bf_job {
    pg_gemm_bf16_ukernel_fn kernel;
    void (*finish)(void);
    size_t mr, M, N, kp, lda, ldc, col0;
    const uint16_t *A, *B;
    const float *bias;
    int act;
    float *C;
    size_t m_tiles, panels, tm, tn;
} bf_job;

static void run_task(void *ctx, size_t task)
{
    const bf_job *j = ctx;
    size_t ti = task / j->tn, tj = task % j->tn;
    size_t m0 = ti * j->m_tiles / j->tm * j->mr, m1 = (ti + 1) * j->m_tiles / j->tm * j->mr;
    size_t p0 = tj * j->panels / j->tn, p1 = (tj + 1) * j->panels / j->tn;
    if (m1 > j->M)
        m1 = j->M;
    size_t pbase = j->col0 / PG_BF16_NR;
    pg_sgemm_epilogue ep = { NULL, j->act, 0 };
    /* rows that fit in half of L1 stay there while the panels pass; taller
     * ones go tile row by tile row across the panels (gemm_u8s8.c) */
    int rows_outer = (m1 - m0) * j->kp * 2 > 24 * 1024;
    size_t np = p1 - p0, nt = (m1 - m0 + j->mr - 1) / j->mr;
    for (size_t a = 0; a < (rows_outer ? nt : np); a++)
        for (size_t b2 = 0; b2 < (rows_outer ? np : nt); b2++) {
            size_t p = p0 + (rows_outer ? b2 : a), i = m0 + (rows_outer ? a : b2) * j->mr;
            size_t col = p * PG_BF16_NR, w = j->N - col < PG_BF16_NR ? j->N - col : PG_BF16_NR;
            size_t h = m1 - i < j->mr ? m1 - i : j->mr;
            ep.bias = j->bias ? j->bias + col : NULL;
            j->kernel(h, w, j->kp, j->A + i * j->lda, j->lda,
                      j->B + (pbase + p) * j->kp * PG_BF16_NR, j->C + i * j->ldc + col, j->ldc, &ep);
        }
    if (j->finish)
        j->finish();
}

pg_status pg_bf16_gemm_packed(const pg_variant *v, size_t M, size_t N, size_t K,
                              const uint16_t *Ab, size_t ldab, const uint16_t *B, size_t col0,
                              const float *bias, int act, float *C, size_t ldc, int threads)
{
    size_t kp = pg_bf16_kp(K);
    if (!v || !B)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_bf16_gemm_packed: NULL kernel or weights");
    if (col0 % PG_BF16_NR)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_bf16_gemm_packed: first column %zu is not a "
                       "multiple of %d", col0, PG_BF16_NR);
    if (act < PG_ACT_NONE || act > PG_ACT_GELU)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_bf16_gemm_packed: unknown activation %d", act);
    if (M == 0 || N == 0)
        return PG_OK;
    if (!Ab || !C || ldab < kp || ldc < N)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_bf16_gemm_packed: missing buffer or short stride "
                       "(lda %zu, kp %zu, ldc %zu, N %zu)", ldab, kp, ldc, N);
    const pg_bf16_params *prm = v->params;
    bf_job j = { .kernel = v->fn.gemm_bf16, .finish = prm->finish, .mr = (size_t)prm->mr,
                 .M = M, .N = N, .kp = kp, .lda = ldab, .ldc = ldc, .col0 = col0, .A = Ab, .B = B,
                 .bias = bias, .act = act, .C = C };
    double flops = 2.0 * (double)M * (double)N * (double)kp;
    int t = pg_threads_for_work(pg_threads_resolve(threads), flops, prm->thread_work);
    j.m_tiles = div_up(M, j.mr);
    j.panels = div_up(N, PG_BF16_NR);
    size_t target = t > 1 ? (size_t)t * 4 : 1;
    if (M >= N) {
        j.tm = j.m_tiles < target ? j.m_tiles : target;
        size_t rest = div_up(target, j.tm);
        j.tn = j.panels < rest ? j.panels : rest;
    } else {
        j.tn = j.panels < target ? j.panels : target;
        size_t rest = div_up(target, j.tn);
        j.tm = j.m_tiles < rest ? j.m_tiles : rest;
    }
    pg_parallel_for(j.tm * j.tn, run_task, &j, t);
    return PG_OK;
}

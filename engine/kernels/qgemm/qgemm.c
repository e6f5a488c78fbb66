/* qgemm.c - the public entry pg_qgemm: argument checks, then the variant
 * the table picks (or the one named).  Threads take blocks of W's rows
 * (N), each doing every row of X: a weight block is read by one thread
 * only, and each output is computed by exactly one kernel call, so the
 * result does not depend on the thread count. */
#include <stdint.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/threadpool.h"
#include "../../gguf/ggml_types.h"
#include "../qgemv/qgemv.h"
#include "qgemm.h"

#define QGEMM_MT_MIN_WORK ((size_t)1 << 20)  /* M x (bytes of W) */
#define QGEMM_MIN_ROWS 8

typedef struct qgemm_job {
    pg_qgemm_fn fn;
    size_t M, N, K, ldw, ldx, ldc, rows;
    const uint8_t *W;
    const void *X;
    float *C;
} qgemm_job;

static void qgemm_task(void *ctx, size_t t)
{
    const qgemm_job *j = ctx;
    size_t n0 = t * j->rows;
    if (n0 >= j->N)
        return;
    size_t n = j->N - n0 < j->rows ? j->N - n0 : j->rows;
    j->fn(j->M, n, j->K, j->W + n0 * j->ldw, j->ldw, j->X, j->ldx, j->C + n0, j->ldc);
}

pg_status pg_qgemm(int variant, int wtype, size_t M, size_t N, size_t K, const void *W,
                   size_t ldw, const void *X, size_t ldx, float *C, size_t ldc, int threads)
{
    pg_clear_error();
    size_t row_bytes = 0;
    pg_status st = pg_qweights_check("pg_qgemm", wtype, N, K, W, ldw, &row_bytes);
    if (st != PG_OK)
        return st;
    const pg_kernel_family *op = pg_qgemm_family(wtype);
    const pg_variant *v = variant < 0 ? pg_kernel_select(op) : pg_kernel_variant_checked(op, variant);
    if (!v)
        return pg_last_status();
    const pg_ggml_type_traits *at = pg_ggml_traits(pg_qgemv_act_type(wtype));
    size_t x_bytes = K / (size_t)at->block * (size_t)at->bytes;
    if (M > 1 && ldx < x_bytes)
        return pg_fail(PG_ERR_SHAPE, "pg_qgemm: ldx = %zu bytes is less than one %s row of K = %zu (%zu bytes)",
                       ldx, at->name, K, x_bytes);
    if (M > 1 && ldc < N)
        return pg_fail(PG_ERR_SHAPE, "pg_qgemm: ldc = %zu is less than N = %zu", ldc, N);
    if (M > 0 && (M - 1) > (SIZE_MAX / sizeof(float) - N) / (ldc ? ldc : 1))
        return pg_fail(PG_ERR_SHAPE, "pg_qgemm: C of %zu x %zu (ldc %zu) does not fit in memory",
                       M, N, ldc);
    if (M == 0 || N == 0)
        return PG_OK;
    if (!C)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_qgemm: C is NULL");
    if (K == 0) {
        for (size_t m = 0; m < M; m++)
            memset(C + m * ldc, 0, N * sizeof *C);
        return PG_OK;
    }
    if (!X)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_qgemm: X is NULL");

    qgemm_job job = { v->fn.qgemm, M, N, K, ldw, ldx, ldc, N, W, X, C };
    size_t nt = (size_t)pg_threads_resolve(threads);
    if (N / QGEMM_MIN_ROWS < nt)
        nt = N / QGEMM_MIN_ROWS;
    if (nt <= 1 || M * N * row_bytes < QGEMM_MT_MIN_WORK) {
        job.fn(M, N, K, W, ldw, X, ldx, C, ldc);
        return PG_OK;
    }
    job.rows = (N + nt - 1) / nt;
    pg_parallel_for((N + job.rows - 1) / job.rows, qgemm_task, &job, (int)nt);
    return PG_OK;
}

/* gemv_nk.c - the public entry pg_gemv_nk: checks the arguments, picks the
 * variant once, and runs it, on several threads when W is large.  Threads
 * take blocks of rows: each block is one contiguous stretch of W and owns
 * its outputs, so the result does not depend on the thread count. */
#include <stdint.h>

#include "../../core/error.h"
#include "../../core/threadpool.h"
#include "gemv_nk.h"

/* Below this much of W (bytes) one thread streams it faster than waking
 * others costs. */
#define GEMV_NK_MT_MIN_BYTES ((size_t)256 << 10)
/* Row blocks are multiples of the kernels' 4-row group. */
#define GEMV_NK_MIN_ROWS 16

typedef struct gemv_nk_job {
    pg_f32_gemv_nk_fn fn;
    size_t N, K, ldw, rows;
    const float *x, *W, *bias;
    float *y;
} gemv_nk_job;

static void gemv_nk_task(void *ctx, size_t t)
{
    const gemv_nk_job *j = ctx;
    size_t n0 = t * j->rows;
    if (n0 >= j->N)
        return;
    size_t n = j->N - n0 < j->rows ? j->N - n0 : j->rows;
    j->fn(n, j->K, j->x, j->W + n0 * j->ldw, j->ldw, j->bias ? j->bias + n0 : NULL, j->y + n0);
}

pg_status pg_gemv_nk(int variant, size_t N, size_t K, const float *x, const float *W, size_t ldw,
                     const float *bias, float *y)
{
    pg_clear_error();
    const pg_variant *v = pg_kernel_variant_checked(&pg_kernels_gemv_nk, variant);
    if (!v)
        return pg_last_status();
    if (N == 0)
        return PG_OK;
    if (!y)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_gemv_nk: y is NULL");
    if (K > 0 && (!x || !W))
        return pg_fail(PG_ERR_INVALID_ARG, "pg_gemv_nk: %s is NULL", !x ? "x" : "W");
    if (ldw < K)
        return pg_fail(PG_ERR_SHAPE, "pg_gemv_nk: ldw %zu is smaller than K %zu", ldw, K);
    if (K > 0 && (N - 1) > (SIZE_MAX / sizeof(float) - K) / ldw)
        return pg_fail(PG_ERR_SHAPE, "pg_gemv_nk: W of %zu x %zu (ldw %zu) does not fit in memory",
                       N, K, ldw);

    gemv_nk_job job = { v->fn.gemv_nk, N, K, ldw, N, x, W, bias, y };
    size_t threads = (size_t)pg_threads_resolve(0);
    if (N / GEMV_NK_MIN_ROWS < threads)
        threads = N / GEMV_NK_MIN_ROWS;
    if (threads <= 1 || N * K * sizeof(float) < GEMV_NK_MT_MIN_BYTES) {
        job.fn(N, K, x, W, ldw, bias, y);
        return PG_OK;
    }
    job.rows = ((N + threads - 1) / threads + 3) & ~(size_t)3;
    pg_parallel_for((N + job.rows - 1) / job.rows, gemv_nk_task, &job, (int)threads);
    return PG_OK;
}

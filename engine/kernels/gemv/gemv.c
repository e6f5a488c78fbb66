/* gemv.c - the public entry pg_gemv: checks the arguments, picks the
 * variant once, and runs it, on several threads when B is large.
 *
 * Threads split N, not K: each takes a slice of columns (a multiple of 16
 * floats, so slices start on a cache line when B does) and streams its
 * slice of every row, writing its own part of y; nothing is reduced
 * afterwards.  One slice per thread: the work is even by construction, and
 * fewer, longer row streams suit the prefetchers. */
#include <stdint.h>

#include "../../core/error.h"
#include "../../core/threadpool.h"
#include "gemv.h"

/* Below this much of B (bytes) one thread streams it faster than waking
 * others costs. */
#define GEMV_MT_MIN_BYTES ((size_t)256 << 10)
/* The narrowest column slice worth a thread. */
#define GEMV_MIN_SLICE 64

typedef struct gemv_job {
    pg_f32_gemv_fn fn;
    size_t N, K, ldb, slice;
    const float *x, *B, *bias;
    float *y;
} gemv_job;

static void gemv_task(void *ctx, size_t t)
{
    const gemv_job *j = ctx;
    size_t j0 = t * j->slice;
    if (j0 >= j->N)
        return;
    size_t n = j->N - j0 < j->slice ? j->N - j0 : j->slice;
    j->fn(n, j->K, j->x, j->B + j0, j->ldb, j->bias ? j->bias + j0 : NULL, j->y + j0);
}

pg_status pg_gemv(int variant, size_t N, size_t K, const float *x, const float *B, size_t ldb,
                  const float *bias, float *y)
{
    pg_clear_error();
    const pg_variant *v = pg_kernel_variant_checked(&pg_kernels_gemv, variant);
    if (!v)
        return pg_last_status();
    if (N == 0)
        return PG_OK;
    if (!y)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_gemv: y is NULL");
    if (K > 0 && (!x || !B))
        return pg_fail(PG_ERR_INVALID_ARG, "pg_gemv: %s is NULL", !x ? "x" : "B");
    if (ldb < N)
        return pg_fail(PG_ERR_SHAPE, "pg_gemv: ldb %zu is smaller than N %zu", ldb, N);
    if (K > 0 && (K - 1) > (SIZE_MAX / sizeof(float) - N) / ldb)
        return pg_fail(PG_ERR_SHAPE, "pg_gemv: B of %zu x %zu (ldb %zu) does not fit in memory",
                       K, N, ldb);

    gemv_job job = { v->fn.gemv, N, K, ldb, N, x, B, bias, y };
    size_t threads = (size_t)pg_threads_resolve(0);
    if (N / GEMV_MIN_SLICE < threads)
        threads = N / GEMV_MIN_SLICE;
    if (threads <= 1 || N * K * sizeof(float) < GEMV_MT_MIN_BYTES) {
        job.fn(N, K, x, B, ldb, bias, y);
        return PG_OK;
    }
    job.slice = ((N + threads - 1) / threads + 15) & ~(size_t)15;
    pg_parallel_for((N + job.slice - 1) / job.slice, gemv_task, &job, (int)threads);
    return PG_OK;
}

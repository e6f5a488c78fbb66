/* gemv_panels.c - the run of a gemv_panels variant over the thread pool:
 * threads take slices of whole panels (four at a time where the kernel
 * reads four together), each its columns of y; nothing is reduced after. */
#include "../../core/threadpool.h"
#include "gemv_panels.h"

/* Below this much of B (bytes) one thread streams it faster than waking
 * others costs (as gemv.c). */
#define PANELS_MT_MIN_BYTES ((size_t)256 << 10)

typedef struct panels_job {
    pg_f32_gemv_panels_fn fn;
    size_t N, K, nr, slice;   /* slice: columns a task, whole groups of 4 panels */
    const float *x, *b, *bias;
    float *y;
} panels_job;

static void panels_task(void *ctx, size_t t)
{
    const panels_job *j = ctx;
    size_t j0 = t * j->slice;
    if (j0 >= j->N)
        return;
    size_t n = j->N - j0 < j->slice ? j->N - j0 : j->slice;
    j->fn(n, j->K, j->x, j->b + (j0 / j->nr) * j->K * j->nr, j->bias ? j->bias + j0 : NULL,
          j->y + j0, j->nr);
}

void pg_gemv_panels_run(const pg_variant *v, size_t N, size_t K, const float *x, const float *b,
                        size_t nr, const float *bias, float *y, int nthreads)
{
    if (N == 0)
        return;
    panels_job job = { v->fn.gemv_panels, N, K, nr, N, x, b, bias, y };
    size_t threads = (size_t)pg_threads_resolve(nthreads);
    size_t group = 4 * nr;
    if ((N + group - 1) / group < threads)
        threads = (N + group - 1) / group;
    if (threads <= 1 || N * K * sizeof(float) < PANELS_MT_MIN_BYTES) {
        job.fn(N, K, x, b, bias, y, nr);
        return;
    }
    job.slice = ((N + threads - 1) / threads + group - 1) / group * group;
    pg_parallel_for((N + job.slice - 1) / job.slice, panels_task, &job, (int)threads);
}

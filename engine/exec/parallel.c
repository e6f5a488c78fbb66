/* parallel.c - ranges of independent items over the model's threads (see
 * parallel.h). */
#include "../core/threadpool.h"
#include "parallel.h"

typedef struct range_job {
    pg_range_fn fn;
    void *ctx;
    int64_t n, align, tasks;
} range_job;

/* Task t gets [t*n/tasks, (t+1)*n/tasks), boundaries rounded down to align. */
static int64_t bound(const range_job *j, int64_t t)
{
    if (t >= j->tasks)
        return j->n;
    int64_t b = t * j->n / j->tasks;
    return b / j->align * j->align;
}

static void range_task(void *ctx, size_t t)
{
    const range_job *j = ctx;
    int64_t b = bound(j, (int64_t)t), e = bound(j, (int64_t)t + 1);
    if (e > b)
        j->fn(j->ctx, b, e);
}

void pg_exec_parallel(const pg_kctx *k, int64_t n, int64_t cost, int64_t align,
                      pg_range_fn fn, void *ctx)
{
    if (n <= 0)
        return;
    int64_t threads = k->threads > 1 ? k->threads : 1;
    int64_t work = n * (cost > 0 ? cost : 1);
    int64_t useful = work / PG_EXEC_MIN_WORK;
    if (useful < threads)
        threads = useful;
    if (align < 1)
        align = 1;
    if (threads > n / align)
        threads = n / align;
    if (threads <= 1) {
        fn(ctx, 0, n);
        return;
    }
    /* two ranges per thread: a busy core falls behind without holding the
     * others up (the pool hands tasks out one at a time) */
    range_job j = { fn, ctx, n, align, threads * 2 };
    pg_parallel_for((size_t)j.tasks, range_task, &j, (int)threads);
}

/* copy_bw.c - pg_measure_copy_gbps: how fast this machine streams memory,
 * the yardstick for bandwidth-bound kernels.
 *
 * It copies `bytes` from one buffer to another with the assembly copy loop
 * (split into 128-byte-aligned slices, one per thread), repeats the pass
 * until about a quarter second has gone by, and reports the best pass as
 * STREAM's Copy does: (bytes read + bytes written) / time.  Write-allocate
 * traffic is not counted, so a read-only kernel such as GEMV may come close
 * to or above this figure.  Threads are plain pthreads, not the engine's
 * pool: a measurement must not depend on what it measures against. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../core/cpu.h"
#include "../../core/error.h"
#include "copy_bw.h"

#define COPY_MAX_THREADS 256
#define COPY_MIN_PASSES 3
#define COPY_MAX_PASSES 200
#define COPY_TARGET_NS 250000000.0

typedef void (*copy_fn)(void *dst, const void *src, size_t bytes);

static void copy_c(void *dst, const void *src, size_t bytes)
{
    memcpy(dst, src, bytes);
}

static copy_fn copy_select(void)
{
    uint64_t active = pg_cpu_active_flags();
    (void)active;
#if defined(__x86_64__)
    if (active & PG_CPU_AVX2)
        return pg_copy_avx2;
#elif defined(__aarch64__)
    if (active & PG_CPU_NEON)
        return pg_copy_neon;
#endif
    return copy_c;
}

typedef struct copy_job {
    copy_fn fn;
    char *dst;
    const char *src;
    size_t slice;               /* bytes per thread, a multiple of 128 */
    pthread_barrier_t barrier;
    pthread_mutex_t gate_lock;  /* the gate holds the workers until all */
    pthread_cond_t gate_cond;   /* were started: 1 = go, -1 = give up */
    int gate;
    volatile int stop;
} copy_job;

typedef struct copy_worker {
    copy_job *job;
    int index;
} copy_worker;

static void *copy_worker_main(void *arg)
{
    copy_worker *w = arg;
    copy_job *job = w->job;
    size_t off = (size_t)w->index * job->slice;
    pthread_mutex_lock(&job->gate_lock);
    while (job->gate == 0)
        pthread_cond_wait(&job->gate_cond, &job->gate_lock);
    int go = job->gate > 0;
    pthread_mutex_unlock(&job->gate_lock);
    while (go) {
        pthread_barrier_wait(&job->barrier);
        if (job->stop)
            break;
        job->fn(job->dst + off, job->src + off, job->slice);
        pthread_barrier_wait(&job->barrier);
    }
    return NULL;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

double pg_measure_copy_gbps(size_t bytes, int threads)
{
    pg_clear_error();
    if (threads < 1 || threads > COPY_MAX_THREADS) {
        pg_fail(PG_ERR_INVALID_ARG, "pg_measure_copy_gbps: threads %d is not in 1..%d", threads,
                COPY_MAX_THREADS);
        return -1.0;
    }
    if (bytes < 4096 || bytes > ((size_t)1 << 40)) {
        pg_fail(PG_ERR_INVALID_ARG, "pg_measure_copy_gbps: %zu bytes is not in 4 KiB..1 TiB", bytes);
        return -1.0;
    }
    size_t slice = (bytes / (size_t)threads + 127) & ~(size_t)127;
    size_t total = slice * (size_t)threads;
    copy_job job = { .fn = copy_select(), .slice = slice, .gate = 0, .stop = 0 };
    char *src = aligned_alloc(64, total), *dst = aligned_alloc(64, total);
    pthread_t tid[COPY_MAX_THREADS];
    copy_worker workers[COPY_MAX_THREADS];
    int started = 1;
    double best = -1.0;
    if (!src || !dst) {
        pg_fail(PG_ERR_NOMEM, "pg_measure_copy_gbps: cannot allocate 2 x %zu bytes", total);
        goto out;
    }
    /* Fault every page in before timing. */
    memset(src, 1, total);
    memset(dst, 0, total);
    job.src = src;
    job.dst = dst;
    if (pthread_barrier_init(&job.barrier, NULL, (unsigned)threads) != 0) {
        pg_fail(PG_ERR_INTERNAL, "pg_measure_copy_gbps: pthread_barrier_init failed");
        goto out;
    }
    pthread_mutex_init(&job.gate_lock, NULL);
    pthread_cond_init(&job.gate_cond, NULL);
    for (; started < threads; started++) {
        workers[started] = (copy_worker){ &job, started };
        if (pthread_create(&tid[started], NULL, copy_worker_main, &workers[started]) != 0)
            break;
    }
    pthread_mutex_lock(&job.gate_lock);
    job.gate = started == threads ? 1 : -1;
    pthread_cond_broadcast(&job.gate_cond);
    pthread_mutex_unlock(&job.gate_lock);
    if (started < threads) {
        pg_fail(PG_ERR_INTERNAL, "pg_measure_copy_gbps: could not start thread %d", started);
    } else {
        /* The calling thread is worker 0; pass 0 is a warm-up. */
        double spent = 0.0, best_ns = 0.0;
        for (int pass = 0; pass <= COPY_MAX_PASSES; pass++) {
            pthread_barrier_wait(&job.barrier);
            double t0 = now_ns();
            job.fn(dst, src, slice);
            pthread_barrier_wait(&job.barrier);
            double ns = now_ns() - t0;
            if (pass == 0)
                continue;
            spent += ns;
            if (best_ns == 0.0 || ns < best_ns)
                best_ns = ns;
            if (pass >= COPY_MIN_PASSES && spent >= COPY_TARGET_NS)
                break;
        }
        best = 2.0 * (double)total / best_ns;
    }
    job.stop = 1;
    if (started == threads && threads > 1)
        pthread_barrier_wait(&job.barrier);
    for (int i = 1; i < started; i++)
        pthread_join(tid[i], NULL);
    pthread_barrier_destroy(&job.barrier);
    pthread_mutex_destroy(&job.gate_lock);
    pthread_cond_destroy(&job.gate_cond);
out:
    free(src);
    free(dst);
    return best;
}

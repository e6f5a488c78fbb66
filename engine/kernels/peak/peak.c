/* peak.c - pg_measure_fma_peak_gflops: runs the per-ISA FMA loop
 * (asm/<arch>/peak_fma_*.S) on every thread at once and reports the best of
 * a few timed runs, the ceiling the GEMM benchmarks are measured against.
 * With one thread the loop runs on the caller and is timed in its CPU time. */
#include <stdint.h>
#include <time.h>

#include "../../core/cpu.h"
#include "../../core/error.h"
#include "../../core/threadpool.h"
#include "peregrine.h"

#if defined(__x86_64__)
void pg_peak_fma_avx2(uint64_t iterations);
#define PEAK_LOOP pg_peak_fma_avx2
#define PEAK_FLOPS_PER_ITER 192.0
#define PEAK_NEEDS (PG_CPU_AVX2 | PG_CPU_FMA)
#elif defined(__aarch64__)
void pg_peak_fma_neon(uint64_t iterations);
#define PEAK_LOOP pg_peak_fma_neon
#define PEAK_FLOPS_PER_ITER 176.0
#define PEAK_NEEDS PG_CPU_NEON
#endif

#ifdef PEAK_LOOP
/* One thread: the thread's CPU time, so time slices lost to other
 * processes on a shared machine do not count; more: wall time. */
static double now_s(int threads)
{
    struct timespec ts;
    clock_gettime(threads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void peak_task(void *ctx, size_t task)
{
    (void)task;
    PEAK_LOOP(*(const uint64_t *)ctx);
}

/* seconds for every one of `threads` threads to run `iters` iterations */
static double timed_run(uint64_t iters, int threads)
{
    double t0 = now_s(threads);
    pg_parallel_for((size_t)threads, peak_task, &iters, threads);
    return now_s(threads) - t0;
}
#endif

double pg_measure_fma_peak_gflops(int threads)
{
#ifdef PEAK_LOOP
    if (threads < 0) {
        pg_fail(PG_ERR_INVALID_ARG, "pg_measure_fma_peak_gflops: %d threads", threads);
        return -1.0;
    }
    if ((pg_cpu_caps_get()->flags & PEAK_NEEDS) != PEAK_NEEDS) {
        pg_fail(PG_ERR_UNSUPPORTED, "pg_measure_fma_peak_gflops: no FMA loop for this CPU");
        return -1.0;
    }
    threads = pg_threads_resolve(threads);
    /* size one run to about 20 ms, then keep the best of 5 */
    uint64_t iters = 1 << 14;
    double t = timed_run(iters, threads);
    while (t < 0.005 && iters < ((uint64_t)1 << 40)) {
        iters *= 4;
        t = timed_run(iters, threads);
    }
    iters = (uint64_t)((double)iters * 0.02 / (t > 0 ? t : 1e-3)) + 1;
    double best = 0.0;
    for (int rep = 0; rep < 5; rep++) {
        double s = timed_run(iters, threads);
        double g = PEAK_FLOPS_PER_ITER * (double)iters * threads / s * 1e-9;
        if (g > best)
            best = g;
    }
    return best;
#else
    (void)threads;
    pg_fail(PG_ERR_UNSUPPORTED, "pg_measure_fma_peak_gflops: no FMA loop for this architecture");
    return -1.0;
#endif
}

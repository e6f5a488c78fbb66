/* peak.c - pg_measure_fma_peak_gflops: runs the widest FMA loop the mask allows
 * (asm/<arch>/peak_fma_*.S) on every thread at once and reports the best of
 * a few timed runs, the ceiling the GEMM benchmarks are measured against.
 * With one thread the loop runs on the caller and is timed in its CPU time. */
#include <stdint.h>
#include <time.h>

#include "../../core/cpu.h"
#include "../../core/error.h"
#include "../../core/threadpool.h"
#include "peregrine.h"

/* The FMA loops, widest first: the first the active mask allows is the one
 * dispatch's kernels would use, so the peak is that level's (AVX-512 on a
 * Zen 5, the AVX2 one under PEREGRINE_CPU_MASK=avx2). */
typedef struct peak_loop {
    void (*fn)(uint64_t iterations);
    double flops_per_iter;
    uint64_t needs;
} peak_loop;

#if defined(__x86_64__)
void pg_peak_fma_avx512f(uint64_t iterations);
void pg_peak_fma_avx2(uint64_t iterations);
static const peak_loop loops[] = {
    /* the flags of the avx512 level, as f32_gemm_12x32_avx512f needs */
    { pg_peak_fma_avx512f, 512.0,
      PG_CPU_AVX512F | PG_CPU_AVX512BW | PG_CPU_AVX512VL | PG_CPU_AVX512DQ | PG_CPU_AVX2 |
          PG_CPU_FMA },
    { pg_peak_fma_avx2, 192.0, PG_CPU_AVX2 | PG_CPU_FMA },
};
#define PEAK_LOOP 1
#elif defined(__aarch64__)
void pg_peak_fma_neon(uint64_t iterations);
static const peak_loop loops[] = { { pg_peak_fma_neon, 176.0, PG_CPU_NEON } };
#define PEAK_LOOP 1
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

typedef struct peak_run {
    const peak_loop *loop;
    uint64_t iters;
} peak_run;

static void peak_task(void *ctx, size_t task)
{
    (void)task;
    const peak_run *r = ctx;
    r->loop->fn(r->iters);
}

/* seconds for every one of `threads` threads to run `iters` iterations */
static double timed_run(const peak_loop *loop, uint64_t iters, int threads)
{
    peak_run r = { loop, iters };
    double t0 = now_s(threads);
    pg_parallel_for((size_t)threads, peak_task, &r, threads);
    return now_s(threads) - t0;
}

/* the widest loop the active mask allows; under a mask below every loop
 * (c, sse2: no FMA kernel dispatches) the narrowest the CPU runs, as the
 * ceiling of what it could do; NULL if the CPU runs none */
static const peak_loop *pick_loop(void)
{
    size_t n = sizeof loops / sizeof loops[0];
    uint64_t active = pg_cpu_active_flags(), cpu = pg_cpu_caps_get()->flags;
    for (size_t i = 0; i < n; i++)
        if ((active & loops[i].needs) == loops[i].needs)
            return &loops[i];
    for (size_t i = n; i-- > 0;)
        if ((cpu & loops[i].needs) == loops[i].needs)
            return &loops[i];
    return NULL;
}
#endif

double pg_measure_fma_peak_gflops(int threads)
{
#ifdef PEAK_LOOP
    if (threads < 0) {
        pg_fail(PG_ERR_INVALID_ARG, "pg_measure_fma_peak_gflops: %d threads", threads);
        return -1.0;
    }
    const peak_loop *loop = pick_loop();
    if (!loop) {
        pg_fail(PG_ERR_UNSUPPORTED, "pg_measure_fma_peak_gflops: no FMA loop for this CPU");
        return -1.0;
    }
    threads = pg_threads_resolve(threads);
    /* size one run to about 20 ms, then keep the best of 5 */
    uint64_t iters = 1 << 14;
    double t = timed_run(loop, iters, threads);
    while (t < 0.005 && iters < ((uint64_t)1 << 40)) {
        iters *= 4;
        t = timed_run(loop, iters, threads);
    }
    iters = (uint64_t)((double)iters * 0.02 / (t > 0 ? t : 1e-3)) + 1;
    double best = 0.0;
    for (int rep = 0; rep < 5; rep++) {
        double s = timed_run(loop, iters, threads);
        double g = loop->flops_per_iter * (double)iters * threads / s * 1e-9;
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

/* peak_lowp.c - pg_measure_bf16_peak_gflops / pg_measure_vnni_peak_gops:
 * the instruction peaks the bf16 and int8 GEMMs are measured against
 * (asm/x86_64/peak_lowp_avx512.S, peak_madd_avx2.S), timed as pg_measure_fma_peak_gflops
 * times the FMA loop: sized to about 20 ms, the best of 5 runs; one thread
 * in its CPU time, more in wall time. */
#include <stdint.h>
#include <time.h>

#include "../../core/cpu.h"
#include "../../core/error.h"
#include "../../core/threadpool.h"
#include "../gemm_u8s8/gemm_u8s8.h"
#include "peregrine.h"

#define AVX512 (PG_CPU_AVX512F | PG_CPU_AVX512BW | PG_CPU_AVX512VL | PG_CPU_AVX512DQ | \
                PG_CPU_AVX2 | PG_CPU_FMA)

#if defined(__x86_64__)
void pg_peak_bf16_avx512bf16(uint64_t iterations);
void pg_peak_vnni_avx512vnni(uint64_t iterations);
void pg_peak_vnni_avxvnni(uint64_t iterations);
void pg_peak_madd_avx2(uint64_t iterations);
void pg_peak_maddubs_avx2(uint64_t iterations);
void pg_peak_amx_bf16(uint64_t iterations);
void pg_peak_amx_int8(uint64_t iterations);

typedef struct lp_run {
    void (*fn)(uint64_t);
    uint64_t iters;
} lp_run;

static double now_s(int threads)
{
    struct timespec ts;
    clock_gettime(threads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void task(void *ctx, size_t t)
{
    (void)t;
    const lp_run *r = ctx;
    r->fn(r->iters);
}

static double timed(void (*fn)(uint64_t), uint64_t iters, int threads)
{
    lp_run r = { fn, iters };
    double t0 = now_s(threads);
    pg_parallel_for((size_t)threads, task, &r, threads);
    return now_s(threads) - t0;
}

static double measure(void (*fn)(uint64_t), double ops_per_iter, uint64_t needs, int threads,
                      const char *what)
{
    if (threads < 0) {
        pg_fail(PG_ERR_INVALID_ARG, "%s: %d threads", what, threads);
        return -1.0;
    }
    if ((pg_cpu_caps_get()->flags & needs) != needs) {
        pg_fail(PG_ERR_UNSUPPORTED, "%s: this CPU lacks the instruction", what);
        return -1.0;
    }
    threads = pg_threads_resolve(threads);
    uint64_t iters = 1 << 8;
    double t = timed(fn, iters, threads);
    while (t < 0.005 && iters < ((uint64_t)1 << 40)) {
        iters *= 4;
        t = timed(fn, iters, threads);
    }
    iters = (uint64_t)((double)iters * 0.02 / (t > 0 ? t : 1e-3)) + 1;
    double best = 0.0;
    for (int rep = 0; rep < 5; rep++) {
        double s = timed(fn, iters, threads);
        double g = ops_per_iter * (double)iters * threads / s * 1e-9;
        best = g > best ? g : best;
    }
    return best;
}

double pg_measure_bf16_peak_gflops(int threads)
{
    return measure(pg_peak_bf16_avx512bf16, 1024.0, AVX512 | PG_CPU_AVX512BF16, threads,
                   "pg_measure_bf16_peak_gflops");
}

double pg_measure_vnni_peak_gops(int threads)
{
    return measure(pg_peak_vnni_avx512vnni, 2048.0, AVX512 | PG_CPU_AVX512VNNI, threads,
                   "pg_measure_vnni_peak_gops");
}

/* AVX-VNNI's ymm vpdpbusd (gemm_u8s8.h: the avxvnni kernel's yardstick) */
double pg_measure_avxvnni_peak_gops(int threads)
{
    return measure(pg_peak_vnni_avxvnni, 768.0, PG_CPU_AVX2 | PG_CPU_AVXVNNI, threads,
                   "pg_measure_avxvnni_peak_gops");
}

/* AVX2's vpmaddwd + vpaddd ymm (gemm_u8s8.h: the avx2 kernel's yardstick) */
double pg_measure_madd_avx2_peak_gops(int threads)
{
    return measure(pg_peak_madd_avx2, 384.0, PG_CPU_AVX2, threads,
                   "pg_measure_madd_avx2_peak_gops");
}

/* vpmaddubsw + vpmaddwd (ones) + vpaddd ymm (the avx2_maddubs kernel's) */
double pg_measure_maddubs_avx2_peak_gops(int threads)
{
    return measure(pg_peak_maddubs_avx2, 768.0, PG_CPU_AVX2, threads,
                   "pg_measure_maddubs_avx2_peak_gops");
}

double pg_measure_amx_bf16_peak_gflops(int threads)
{
    return measure(pg_peak_amx_bf16, 65536.0, AVX512 | PG_CPU_AMXBF16, threads,
                   "pg_measure_amx_bf16_peak_gflops");
}

double pg_measure_amx_int8_peak_gops(int threads)
{
    return measure(pg_peak_amx_int8, 131072.0, AVX512 | PG_CPU_AMXINT8, threads,
                   "pg_measure_amx_int8_peak_gops");
}
#else
double pg_measure_avxvnni_peak_gops(int threads)
{
    (void)threads;
    pg_fail(PG_ERR_UNSUPPORTED, "pg_measure_avxvnni_peak_gops: no AVX-VNNI on this architecture");
    return -1.0;
}

double pg_measure_madd_avx2_peak_gops(int threads)
{
    (void)threads;
    pg_fail(PG_ERR_UNSUPPORTED, "pg_measure_madd_avx2_peak_gops: no AVX2 on this architecture");
    return -1.0;
}

double pg_measure_maddubs_avx2_peak_gops(int threads)
{
    (void)threads;
    pg_fail(PG_ERR_UNSUPPORTED, "pg_measure_maddubs_avx2_peak_gops: no AVX2 on this architecture");
    return -1.0;
}

double pg_measure_amx_bf16_peak_gflops(int threads)
{
    (void)threads;
    pg_fail(PG_ERR_UNSUPPORTED, "pg_measure_amx_bf16_peak_gflops: no AMX on this architecture");
    return -1.0;
}

double pg_measure_amx_int8_peak_gops(int threads)
{
    (void)threads;
    pg_fail(PG_ERR_UNSUPPORTED, "pg_measure_amx_int8_peak_gops: no AMX on this architecture");
    return -1.0;
}

double pg_measure_bf16_peak_gflops(int threads)
{
    (void)threads;
    pg_fail(PG_ERR_UNSUPPORTED, "pg_measure_bf16_peak_gflops: no bf16 loop for this architecture");
    return -1.0;
}

double pg_measure_vnni_peak_gops(int threads)
{
    (void)threads;
    pg_fail(PG_ERR_UNSUPPORTED, "pg_measure_vnni_peak_gops: no int8 loop for this architecture");
    return -1.0;
}
#endif

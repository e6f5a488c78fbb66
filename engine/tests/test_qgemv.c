/* test_qgemv.c - the public quantised entries from C: pg_quantize_row_q8,
 * pg_qgemv and pg_qgemm.  The threaded split must not change a result
 * (each row of W is one kernel call's, whatever the thread count), qgemm
 * row m must match qgemv on activation row m (to fp32 summation order),
 * the N = 0 / K = 0 / M = 0 edges, and every argument error is a clear
 * status.  The kernels are proven against the C references by checkasm
 * (check_qgemv.c).
 *
 * With --bench: GB/s of weight bytes of qgemv at SmolLM2-135M's shapes on
 * 1 and 2 threads, next to the copy yardstick (pg_measure_copy_gbps).
 * Decode reads every weight once per token, so read bandwidth bounds it. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "peregrine.h"
#include "test_util.h"

static uint32_t rng = 12345;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

static size_t act_bytes(int wtype) { return wtype == PG_GGML_Q4_1 ? 36 : 34; }
static int act_type(int wtype) { return wtype == PG_GGML_Q4_1 ? PG_GGML_Q8_1 : PG_GGML_Q8_0; }

/* Random weight blocks with sane f16 scales (0x2000..0x33ff: ~0.008..0.25). */
static void fill_w(int wtype, uint8_t *W, size_t bytes)
{
    size_t wb = (size_t)pg_ggml_type_block_bytes(wtype);
    for (size_t i = 0; i < bytes; i++)
        W[i] = (uint8_t)rnd();
    for (size_t b = 0; b + wb <= bytes; b += wb) {
        uint16_t d = (uint16_t)(0x2000 + rnd() % 0x1400);
        W[b] = (uint8_t)d;
        W[b + 1] = (uint8_t)(d >> 8);
        if (wtype == PG_GGML_Q4_1) {
            uint16_t m = (uint16_t)(0xa000 + rnd() % 0x1400);
            W[b + 2] = (uint8_t)m;
            W[b + 3] = (uint8_t)(m >> 8);
        }
    }
}

static uint8_t *quantized_acts(int wtype, size_t M, size_t K)
{
    float *x = malloc(M * K * sizeof *x);
    uint8_t *xq = malloc(M * (K / 32) * act_bytes(wtype) + 1);
    for (size_t i = 0; i < M * K; i++)
        x[i] = (float)(int32_t)rnd() / 2147483648.0f;
    for (size_t m = 0; m < M; m++)
        CHECK(pg_quantize_row_q8(-1, act_type(wtype), K, x + m * K,
                                  xq + m * (K / 32) * act_bytes(wtype)) == PG_OK,
               "quantize: %s", pg_last_error());
    free(x);
    return xq;
}

static void check_shapes(int wtype, size_t M, size_t N, size_t K)
{
    size_t ldw = K / 32 * (size_t)pg_ggml_type_block_bytes(wtype) + 8;
    size_t ldx = K / 32 * act_bytes(wtype);
    uint8_t *W = malloc(N * ldw + 1), *X = quantized_acts(wtype, M, K);
    fill_w(wtype, W, N * ldw);
    float *y1 = malloc(N * sizeof *y1), *y2 = malloc(N * sizeof *y2);
    float *C1 = malloc(M * N * sizeof *C1), *C2 = malloc(M * N * sizeof *C2);
    CHECK(pg_qgemm(-1, wtype, M, N, K, W, ldw, X, ldx, C1, N, 1) == PG_OK, "%s", pg_last_error());
    CHECK(pg_qgemm(-1, wtype, M, N, K, W, ldw, X, ldx, C2, N, 2) == PG_OK, "%s", pg_last_error());
    CHECK(!memcmp(C1, C2, M * N * sizeof *C1), "qgemm %s M=%zu N=%zu K=%zu: 1 and 2 threads differ",
           pg_ggml_type_name(wtype), M, N, K);
    for (size_t m = 0; m < M; m++) {
        const uint8_t *xm = X + m * ldx;
        CHECK(pg_qgemv(-1, wtype, N, K, W, ldw, xm, y1, 1) == PG_OK, "%s", pg_last_error());
        CHECK(pg_qgemv(-1, wtype, N, K, W, ldw, xm, y2, 2) == PG_OK, "%s", pg_last_error());
        CHECK(!memcmp(y1, y2, N * sizeof *y1), "qgemv %s N=%zu K=%zu: 1 and 2 threads differ",
               pg_ggml_type_name(wtype), N, K);
        /* different kernels sum in different fp32 orders: allow 1e-4 of
         * the row's largest output (the checkasm bound is per element) */
        float ymax = 1.0f;
        for (size_t n = 0; n < N; n++)
            ymax = fabsf(y1[n]) > ymax ? fabsf(y1[n]) : ymax;
        for (size_t n = 0; n < N; n++) {
            float d = fabsf(y1[n] - C1[m * N + n]);
            if (d > 1e-4f * ymax) {
                CHECK(0, "qgemm %s row %zu col %zu: %g vs qgemv %g", pg_ggml_type_name(wtype), m,
                       n, C1[m * N + n], y1[n]);
                break;
            }
        }
    }
    free(W), free(X), free(y1), free(y2), free(C1), free(C2);
}

static void check_errors(void)
{
    uint8_t W[20 * 4] = { 0 }, x[36 * 2] = { 0 };
    float y[4], f[64] = { 0 };
    CHECK(pg_qgemv(-1, PG_GGML_Q4_1, 2, 48, W, 40, x, y, 1) == PG_ERR_SHAPE, "K = 48");
    CHECK(strstr(pg_last_error(), "multiple of 32"), "message: %s", pg_last_error());
    CHECK(pg_qgemv(-1, PG_GGML_Q5_0, 2, 32, W, 40, x, y, 1) == PG_ERR_DTYPE, "q5_0 weights");
    CHECK(pg_qgemv(-1, PG_GGML_Q2_K, 2, 256, W, 84, x, y, 1) == PG_ERR_DTYPE, "q2_K weights");
    CHECK(pg_qgemv(-1, PG_GGML_Q4_K, 2, 128, W, 400, x, y, 1) == PG_ERR_SHAPE, "q4_K K = 128");
    CHECK(strstr(pg_last_error(), "multiple of 256"), "message: %s", pg_last_error());
    CHECK(pg_qgemv(-1, PG_GGML_Q4_1, 2, 64, W, 39, x, y, 1) == PG_ERR_SHAPE, "ldw too small");
    CHECK(pg_qgemv(-1, PG_GGML_Q4_1, 2, 64, NULL, 40, x, y, 1) == PG_ERR_INVALID_ARG, "W NULL");
    CHECK(pg_qgemv(-1, PG_GGML_Q4_1, 2, 64, W, 40, NULL, y, 1) == PG_ERR_INVALID_ARG, "x NULL");
    CHECK(pg_qgemv(-1, PG_GGML_Q4_1, 2, 64, W, 40, x, NULL, 1) == PG_ERR_INVALID_ARG, "y NULL");
    CHECK(pg_qgemv(99, PG_GGML_Q4_1, 2, 64, W, 40, x, y, 1) != PG_OK, "variant 99");
    CHECK(pg_qgemv(-1, PG_GGML_Q4_1, 0, 64, NULL, 40, NULL, NULL, 1) == PG_OK, "N = 0");
    y[0] = y[1] = 7;
    CHECK(pg_qgemv(-1, PG_GGML_Q4_1, 2, 0, W, 0, NULL, y, 1) == PG_OK && y[0] == 0 && y[1] == 0,
           "K = 0 gives zeros");
    CHECK(pg_qgemm(-1, PG_GGML_Q8_0, 2, 2, 40, W, 40, x, 34, y, 2, 1) == PG_ERR_SHAPE, "gemm K = 40");
    CHECK(pg_qgemm(-1, PG_GGML_Q8_0, 2, 2, 32, W, 34, x, 33, y, 2, 1) == PG_ERR_SHAPE, "ldx small");
    CHECK(pg_qgemm(-1, PG_GGML_Q8_0, 2, 2, 32, W, 34, x, 34, y, 1, 1) == PG_ERR_SHAPE, "ldc small");
    CHECK(pg_qgemm(-1, PG_GGML_Q8_0, 2, 2, 32, W, 34, NULL, 34, y, 2, 1) == PG_ERR_INVALID_ARG, "X NULL");
    CHECK(pg_qgemm(-1, PG_GGML_Q8_0, 0, 2, 32, W, 34, NULL, 34, NULL, 2, 1) == PG_OK, "M = 0");
    CHECK(pg_quantize_row_q8(-1, PG_GGML_Q8_0, 33, f, x) == PG_ERR_SHAPE, "quantize n = 33");
    CHECK(strstr(pg_last_error(), "multiple of 32"), "message: %s", pg_last_error());
    CHECK(pg_quantize_row_q8(-1, PG_GGML_Q4_1, 32, f, x) == PG_ERR_DTYPE, "quantize to q4_1");
    CHECK(pg_quantize_row_q8(-1, PG_GGML_Q8_0, 32, NULL, x) == PG_ERR_INVALID_ARG, "x NULL");
    CHECK(pg_quantize_row_q8(-1, PG_GGML_Q8_1, 32, f, x) == PG_OK, "q8_1 ok");
}

/* One thread is timed in its own CPU time (a busy shared machine then
 * does not lower it by preempting us; memory stalls still count), two in
 * wall time. */
static double now(int threads)
{
    struct timespec t;
    clock_gettime(threads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Best of several timed batches, in GB/s of weight bytes. */
static double bench_one(int wtype, size_t N, size_t K, int threads)
{
    size_t ldw = K / 32 * (size_t)pg_ggml_type_block_bytes(wtype);
    uint8_t *W = malloc(N * ldw), *x = quantized_acts(wtype, 1, K);
    float *y = malloc(N * sizeof *y);
    fill_w(wtype, W, N * ldw);
    pg_qgemv(-1, wtype, N, K, W, ldw, x, y, threads);
    int reps = (int)(2e7 / (double)(N * ldw)) + 1;
    double best = 1e30;
    for (int r = 0; r < 25; r++) {
        double t0 = now(threads);
        for (int i = 0; i < reps; i++)
            pg_qgemv(-1, wtype, N, K, W, ldw, x, y, threads);
        double t = (now(threads) - t0) / reps;
        best = t < best ? t : best;
    }
    free(W), free(x), free(y);
    return (double)(N * ldw) / best * 1e-9;
}

static void bench(void)
{
    static const struct { int t; size_t N, K; } shapes[] = {
        { PG_GGML_Q4_1, 1536, 576 }, { PG_GGML_Q4_1, 576, 1536 }, { PG_GGML_Q8_0, 49152, 576 },
    };
    pg_cpu_info ci;
    pg_cpu_get_info(&ci);
    printf("qgemv, GB/s of weight bytes (dispatch level %s):\n", ci.level);
    for (int s = 0; s < 3; s++) {
        size_t bytes = shapes[s].N * (shapes[s].K / 32) * (size_t)pg_ggml_type_block_bytes(shapes[s].t);
        printf("  %s N=%-6zu K=%-5zu (%6.2f MiB)", pg_ggml_type_name(shapes[s].t), shapes[s].N,
               shapes[s].K, bytes / 1048576.0);
        for (int th = 1; th <= 2; th++)
            printf("  %d thr %6.2f", th, bench_one(shapes[s].t, shapes[s].N, shapes[s].K, th));
        printf("\n");
    }
    for (int th = 1; th <= 2; th++) {
        double c1 = pg_measure_copy_gbps((size_t)1 << 20, th), c2 = pg_measure_copy_gbps((size_t)64 << 20, th);
        printf("  copy yardstick, %d thr: 1 MiB %.2f GB/s, 64 MiB %.2f GB/s (read + write)\n", th, c1, c2);
    }
}

int main(int argc, char **argv)
{
    static const int types[] = { PG_GGML_Q4_0, PG_GGML_Q4_1, PG_GGML_Q8_0 };
    check_errors();
    for (int t = 0; t < 3; t++) {
        check_shapes(types[t], 1, 5, 32);
        check_shapes(types[t], 7, 67, 96);
        check_shapes(types[t], 9, 1100, 576); /* big enough to split over threads */
    }
    if (argc > 1 && !strcmp(argv[1], "--bench"))
        bench();
    printf("%s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}

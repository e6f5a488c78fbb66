/* test_sgemm.c - the public SGEMM API from C: every argument error, a
 * packed B reused across calls, results that do not depend on the thread
 * count (each C element is owned by one task and the blocking does not
 * depend on threads, so they are bitwise equal), two application threads
 * calling at once (the pool serves one; the other runs serially), and the
 * thread-count setting.  The kernels themselves are proven against the
 * oracle by checkasm (check_sgemm.c). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peregrine.h"
#include "test_util.h"

static void fill(float *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (float)(seed >> 8) / 8388608.0f - 1.0f;
    }
}

static void test_errors(void)
{
    float A[64], B[64], C[64];
    fill(A, 64, 1);
    fill(B, 64, 2);
    pg_packed_b *pb = NULL;
    CHECK(pg_sgemm_pack(-1, 4, 4, B, 4, NULL) == PG_ERR_INVALID_ARG, "NULL out");
    CHECK(pg_sgemm_pack(-1, 4, 4, NULL, 4, &pb) == PG_ERR_INVALID_ARG, "NULL B");
    CHECK(pg_sgemm_pack(-1, 4, 4, B, 3, &pb) == PG_ERR_INVALID_ARG, "ldb < N");
    CHECK(strstr(pg_last_error(), "ldb") != NULL, "message names ldb: %s", pg_last_error());
    CHECK(pg_sgemm_pack(99, 4, 4, B, 4, &pb) == PG_ERR_INVALID_ARG, "no variant 99");
    int op = pg_kernel_family_find("sgemm");
    for (int v = 0; v < pg_variant_count(op); v++) {
        pg_variant_info info;
        pg_variant_get_info(op, v, &info);
        if (!info.runnable)
            CHECK(pg_sgemm_pack(v, 4, 4, B, 4, &pb) == PG_ERR_UNSUPPORTED, "%s", info.name);
    }
    CHECK(pg_sgemm_pack(-1, 4, 4, B, 4, &pb) == PG_OK, "pack: %s", pg_last_error());
    CHECK(pg_sgemm_packed(4, A, 4, NULL, NULL, 0, C, 4, 1) == PG_ERR_INVALID_ARG, "NULL B");
    CHECK(pg_sgemm_packed(4, NULL, 4, pb, NULL, 0, C, 4, 1) == PG_ERR_INVALID_ARG, "NULL A");
    CHECK(pg_sgemm_packed(4, A, 4, pb, NULL, 0, NULL, 4, 1) == PG_ERR_INVALID_ARG, "NULL C");
    CHECK(pg_sgemm_packed(4, A, 3, pb, NULL, 0, C, 4, 1) == PG_ERR_INVALID_ARG, "lda < K");
    CHECK(pg_sgemm_packed(4, A, 4, pb, NULL, 0, C, 3, 1) == PG_ERR_INVALID_ARG, "ldc < N");
    CHECK(pg_sgemm_packed(4, A, 4, pb, NULL, 3, C, 4, 1) == PG_ERR_INVALID_ARG, "act 3");
    CHECK(pg_sgemm_packed(4, A, 4, pb, NULL, 0, C, 4, -1) == PG_ERR_INVALID_ARG, "threads");
    CHECK(pg_sgemm_packed(0, NULL, 0, pb, NULL, 0, NULL, 0, 1) == PG_OK, "M = 0 is a no-op");
    size_t K = 0, N = 0;
    int variant = -2;
    CHECK(pg_packed_b_get_info(pb, &K, &N, &variant) == PG_OK && K == 4 && N == 4 &&
               variant == pg_variant_selected(op), "info %zu %zu %d", K, N, variant);
    pg_packed_b_free(pb);
    pg_packed_b_free(NULL);
    CHECK(pg_sgemm(-1, 4, 4, 4, A, 4, B, 2, NULL, 0, C, 4, 1) == PG_ERR_INVALID_ARG, "ldb");
}

typedef struct shape_case { size_t M, N, K; int act; float *out; int threads; } shape_case;

static const float *shared_A, *shared_bias;
static const pg_packed_b *shared_B;

static void *run_case(void *arg)
{
    shape_case *c = arg;
    if (pg_sgemm_packed(c->M, shared_A, c->K, shared_B, shared_bias, c->act, c->out, c->N,
                        c->threads) != PG_OK)
        c->out[0] = -12345.0f;
    return NULL;
}

static void test_threads_agree(size_t M, size_t N, size_t K, int act)
{
    float *A = malloc(M * K * sizeof(float)), *B = malloc(K * N * sizeof(float));
    float *bias = malloc(N * sizeof(float)), *C1 = malloc(M * N * sizeof(float));
    float *Ct = malloc(M * N * sizeof(float)), *Cu = malloc(M * N * sizeof(float));
    fill(A, M * K, (unsigned)M);
    fill(B, K * N, (unsigned)N);
    fill(bias, N, 7);
    pg_packed_b *pb = NULL;
    CHECK(pg_sgemm_pack(-1, K, N, B, N, &pb) == PG_OK, "pack: %s", pg_last_error());
    CHECK(pg_sgemm_packed(M, A, K, pb, bias, act, C1, N, 1) == PG_OK, "1 thread");
    /* the convenience call packs itself and must agree with the packed one */
    CHECK(pg_sgemm(-1, M, N, K, A, K, B, N, bias, act, Cu, N, 1) == PG_OK, "pg_sgemm");
    CHECK(!memcmp(C1, Cu, M * N * sizeof(float)), "pg_sgemm != pg_sgemm_packed");
    static const int counts[] = { 2, 3, 7, 0 };
    for (int i = 0; i < 4; i++) {
        memset(Ct, 0, M * N * sizeof(float));
        CHECK(pg_sgemm_packed(M, A, K, pb, bias, act, Ct, N, counts[i]) == PG_OK, "threads");
        CHECK(!memcmp(C1, Ct, M * N * sizeof(float)), "%zux%zux%zu act %d: %d threads differ",
               M, N, K, act, counts[i]);
    }
    /* two application threads at once */
    shared_A = A;
    shared_B = pb;
    shared_bias = bias;
    shape_case a = { M, N, K, act, Ct, 2 }, b = { M, N, K, act, Cu, 2 };
    pthread_t ta, tb;
    pthread_create(&ta, NULL, run_case, &a);
    pthread_create(&tb, NULL, run_case, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    CHECK(!memcmp(C1, Ct, M * N * sizeof(float)) && !memcmp(C1, Cu, M * N * sizeof(float)),
           "%zux%zux%zu: concurrent callers differ", M, N, K);
    pg_packed_b_free(pb);
    free(A), free(B), free(bias), free(C1), free(Ct), free(Cu);
}

/* The C variant through the driver (the path a CPU without SIMD takes)
 * against the dispatched one: same sums in another order, so close. */
static void test_c_variant(size_t M, size_t N, size_t K)
{
    int op = pg_kernel_family_find("sgemm"), cv = pg_variant_count(op) - 1;
    float *A = malloc(M * K * sizeof(float)), *B = malloc(K * N * sizeof(float));
    float *bias = malloc(N * sizeof(float)), *C1 = malloc(M * N * sizeof(float));
    float *C2 = malloc(M * N * sizeof(float));
    fill(A, M * K, 3);
    fill(B, K * N, 4);
    fill(bias, N, 5);
    CHECK(pg_sgemm(cv, M, N, K, A, K, B, N, bias, PG_ACT_GELU, C1, N, 2) == PG_OK, "C variant");
    CHECK(pg_sgemm(-1, M, N, K, A, K, B, N, bias, PG_ACT_GELU, C2, N, 2) == PG_OK, "dispatch");
    float worst = 0.0f;
    for (size_t i = 0; i < M * N; i++) {
        float d = C1[i] - C2[i];
        d = d < 0 ? -d : d;
        worst = d > worst ? d : worst;
    }
    CHECK(worst < 1e-3f, "C variant and dispatch differ by %g", worst);
    free(A), free(B), free(bias), free(C1), free(C2);
}

int main(void)
{
    test_c_variant(37, 50, 1000);
    test_errors();
    test_threads_agree(128, 384, 384, 2);
    test_threads_agree(8, 1536, 384, 1);
    test_threads_agree(300, 40, 1000, 0);
    test_threads_agree(7, 5, 3, 2);

    CHECK(pg_set_num_threads(-1) == PG_ERR_INVALID_ARG, "-1 threads");
    CHECK(pg_set_num_threads(3) == PG_OK && pg_get_num_threads() == 3, "set 3");
    CHECK(pg_set_num_threads(0) == PG_OK && pg_get_num_threads() >= 1, "set 0");
    double peak = pg_measure_fma_peak_gflops(1);
    CHECK(peak > 0.0, "fma peak %g: %s", peak, pg_last_error());
    printf("sgemm API: %s (FMA peak, 1 thread: %.1f GFLOP/s)\n", failures ? "FAILED" : "ok",
           peak);
    return failures != 0;
}

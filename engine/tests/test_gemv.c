/* test_gemv.c - the public pg_gemv, pg_gemv_nk and pg_measure_copy_gbps from C: the
 * threaded split (results must not depend on the thread count: each thread
 * owns whole columns, so the sums are the same), the K = 0 and N = 0 edges,
 * and every argument error.  The kernels themselves are proven against the
 * C reference by checkasm (check_gemv.c, check_gemv_panels.c).  And a
 * compiled model's one-row product on a packed weight: bound to the
 * gemv_panels reader of the SGEMM kernel's panel width (every assembly
 * SGEMM kernel has one: under qemu the NEON reader runs here), equal to
 * level 0's plain product at panel edges. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peregrine.h"
#include "test_util.h"

static float frand(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)(*s >> 8) / 8388608.0f - 1.0f;
}

static int c_variant(void)
{
    int op = pg_kernel_family_find("gemv");
    return pg_variant_count(op) - 1;
}

static void check_shape(size_t N, size_t K, size_t ldb, int with_bias)
{
    unsigned seed = (unsigned)(N * 131 + K);
    float *x = malloc((K + 1) * sizeof(float)), *B = malloc((K * ldb + 1) * sizeof(float));
    float *bias = malloc(N * sizeof(float));
    float *y1 = malloc(N * sizeof(float)), *y2 = malloc(N * sizeof(float));
    float *yc = malloc(N * sizeof(float));
    for (size_t k = 0; k < K; k++)
        x[k] = frand(&seed);
    for (size_t i = 0; i < K * ldb; i++)
        B[i] = frand(&seed);
    for (size_t j = 0; j < N; j++)
        bias[j] = frand(&seed);
    const float *bp = with_bias ? bias : NULL;

    pg_set_num_threads(1);
    CHECK(pg_gemv(-1, N, K, x, B, ldb, bp, y1) == PG_OK, "1 thread: %s", pg_last_error());
    pg_set_num_threads(2);
    CHECK(pg_gemv(-1, N, K, x, B, ldb, bp, y2) == PG_OK, "2 threads: %s", pg_last_error());
    CHECK(pg_gemv(c_variant(), N, K, x, B, ldb, bp, yc) == PG_OK, "C: %s", pg_last_error());
    pg_set_num_threads(0);
    CHECK(!memcmp(y1, y2, N * sizeof(float)), "N=%zu K=%zu: 1 and 2 threads differ", N, K);
    for (size_t j = 0; j < N; j++) {
        double s = bp ? fabs(bp[j]) : 0.0;
        for (size_t k = 0; k < K; k++)
            s += fabs((double)x[k] * B[k * ldb + j]);
        double tol = 2.0 * 1.1920929e-7 * (1.0 + sqrt((double)K)) * s + 1e-30;
        if (!(fabs((double)y2[j] - yc[j]) <= tol)) {
            CHECK(0, "N=%zu K=%zu y[%zu] = %g, C reference %g", N, K, j, y2[j], yc[j]);
            break;
        }
    }
    free(x), free(B), free(bias), free(y1), free(y2), free(yc);
}

/* gemv_nk on W = B^T must give what gemv gives on B (to rounding), and the
 * same bits on 1 and 2 threads. */
static void check_nk(size_t N, size_t K, size_t ldw)
{
    unsigned seed = (unsigned)(N * 7 + K);
    float *x = malloc((K + 1) * sizeof(float)), *W = malloc((N * ldw + 1) * sizeof(float));
    float *B = malloc((K * N + 1) * sizeof(float)), *bias = malloc(N * sizeof(float));
    float *y1 = malloc(N * sizeof(float)), *y2 = malloc(N * sizeof(float));
    float *yg = malloc(N * sizeof(float));
    for (size_t k = 0; k < K; k++)
        x[k] = frand(&seed);
    for (size_t n = 0; n < N; n++)
        for (size_t k = 0; k < K; k++)
            B[k * N + n] = W[n * ldw + k] = frand(&seed);
    for (size_t n = 0; n < N; n++)
        bias[n] = frand(&seed);
    pg_set_num_threads(1);
    CHECK(pg_gemv_nk(-1, N, K, x, W, ldw, bias, y1) == PG_OK, "nk 1 thread: %s", pg_last_error());
    pg_set_num_threads(2);
    CHECK(pg_gemv_nk(-1, N, K, x, W, ldw, bias, y2) == PG_OK, "nk 2 threads: %s", pg_last_error());
    CHECK(pg_gemv(-1, N, K, x, B, N, bias, yg) == PG_OK, "gemv: %s", pg_last_error());
    pg_set_num_threads(0);
    CHECK(!memcmp(y1, y2, N * sizeof(float)), "nk N=%zu K=%zu: 1 and 2 threads differ", N, K);
    for (size_t n = 0; n < N; n++) {
        double s = fabs(bias[n]);
        for (size_t k = 0; k < K; k++)
            s += fabs((double)x[k] * W[n * ldw + k]);
        if (!(fabs((double)y2[n] - yg[n]) <= 4.0 * 1.1920929e-7 * (1.0 + sqrt((double)K)) * s)) {
            CHECK(0, "nk N=%zu K=%zu y[%zu] = %g, gemv %g", N, K, n, y2[n], yg[n]);
            break;
        }
    }
    free(x), free(W), free(B), free(bias), free(y1), free(y2), free(yg);
}

/* y = x . w + b with x [1, K] at level 3 (w packed, one row: gemv_panels)
 * against level 0 */
static void check_one_row_model(int64_t K, int64_t N)
{
    unsigned seed = (unsigned)(N * 7 + K);
    float *x = malloc(sizeof(float) * (size_t)K), *w = malloc(sizeof(float) * (size_t)(K * N));
    float *b = malloc(sizeof(float) * (size_t)N), *y[2];
    for (int64_t i = 0; i < K; i++)
        x[i] = frand(&seed);
    for (int64_t i = 0; i < K * N; i++)
        w[i] = frand(&seed);
    for (int64_t i = 0; i < N; i++)
        b[i] = frand(&seed);
    pg_graph *g;
    OK(pg_graph_new(&g));
    int64_t xd[2] = { 1, K }, wd[2] = { K, N }, bd[1] = { N };
    OK(pg_graph_add_input(g, "x", PG_DTYPE_FLOAT32, 2, xd));
    OK(pg_graph_add_initializer(g, "w", PG_DTYPE_FLOAT32, 2, wd, w));
    OK(pg_graph_add_initializer(g, "b", PG_DTYPE_FLOAT32, 1, bd, b));
    const char *i1[2] = { "x", "w" }, *o1[1] = { "mm" }, *i2[2] = { "mm", "b" }, *o2[1] = { "y" };
    OK(pg_graph_add_node(g, "MatMul", "mm", i1, 2, o1, 1));
    OK(pg_graph_add_node(g, "Add", "add", i2, 2, o2, 1));
    OK(pg_graph_add_output(g, "y"));
    const char *names[1] = { "x" };
    const void *data[1] = { x };
    int ranks[1] = { 2 };
    const int64_t *shapes[1] = { xd };
    for (int level = 0; level < 2; level++) {
        pg_compile_options o = { .level = level ? 3 : 0, .threads = 1 };
        pg_model *m;
        OK(pg_compile(g, &o, &m));
        if (level) {
            /* the product's step names its kernels: a reader wherever SGEMM is assembly */
            int asm_sgemm = 0, reader = 0;
            for (int i = 0; i < pg_model_step_count(m); i++) {
                pg_step_info si;
                OK(pg_model_step_info(m, i, &si));
                asm_sgemm |= si.detail && strstr(si.detail, "kernel=f32_gemm_") &&
                             !strstr(si.detail, "kernel=f32_gemm_4x8_c");
                reader |= si.detail && strstr(si.detail, "kernel=f32_gemv_panels") != NULL;
            }
            CHECK(reader == asm_sgemm, "K %lld N %lld: gemv_panels bound %d, assembly SGEMM %d",
                  (long long)K, (long long)N, reader, asm_sgemm);
        }
        OK(pg_model_run(m, 1, names, data, ranks, shapes));
        pg_tensor_info ti;
        OK(pg_model_output_info(m, 0, &ti));
        y[level] = malloc(sizeof(float) * (size_t)N);
        memcpy(y[level], ti.data, sizeof(float) * (size_t)N);
        pg_model_free(m);
    }
    for (int64_t j = 0; j < N; j++)
        CHECK(fabsf(y[0][j] - y[1][j]) <= 1e-4f * (1.0f + (float)K),
              "K %lld N %lld: y[%lld] %g at level 3, %g at level 0", (long long)K, (long long)N,
              (long long)j, y[1][j], y[0][j]);
    pg_graph_free(g);
    free(x), free(w), free(b), free(y[0]), free(y[1]);
}

int main(void)
{
    /* Big enough to be split across threads, with ragged slices. */
    check_shape(1000, 300, 1000, 1);
    check_shape(1001, 259, 1013, 0);
    check_shape(70, 5000, 70, 1);
    check_shape(17, 3, 17, 1);

    check_nk(1000, 301, 301);
    check_nk(67, 2000, 2005);
    check_nk(3, 5, 5);

    /* panel edges of every reader: 12 (NEON), 16 (AVX2), 32 (AVX-512), groups of four */
    static const int64_t ns[] = { 1, 11, 12, 13, 16, 33, 47, 48, 49, 64, 127, 128, 129, 200 };
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        check_one_row_model(37, ns[i]);
    check_one_row_model(1, 50);

    float x[4] = { 1, 2, 3, 4 }, B[8] = { 0 }, bias[2] = { 5, -6 }, y[2] = { 9, 9 };
    CHECK(pg_gemv(-1, 2, 0, NULL, NULL, 2, bias, y) == PG_OK && y[0] == 5 && y[1] == -6,
           "K = 0 gives y = bias");
    CHECK(pg_gemv(-1, 2, 0, NULL, NULL, 2, NULL, y) == PG_OK && y[0] == 0 && y[1] == 0,
           "K = 0 without bias gives 0");
    CHECK(pg_gemv(-1, 0, 4, x, B, 0, NULL, NULL) == PG_OK, "N = 0 is a no-op");
    CHECK(pg_gemv(-1, 2, 4, x, B, 2, NULL, NULL) == PG_ERR_INVALID_ARG, "NULL y");
    CHECK(pg_gemv(-1, 2, 4, NULL, B, 2, NULL, y) == PG_ERR_INVALID_ARG, "NULL x");
    CHECK(pg_gemv(-1, 2, 4, x, NULL, 2, NULL, y) == PG_ERR_INVALID_ARG, "NULL B");
    CHECK(pg_gemv(-1, 2, 4, x, B, 1, NULL, y) == PG_ERR_SHAPE, "ldb < N");
    CHECK(strstr(pg_last_error(), "ldb") != NULL, "message names ldb: %s", pg_last_error());
    CHECK(pg_gemv(-1, 2, (size_t)1 << 62, x, B, 2, NULL, y) == PG_ERR_SHAPE, "B too large");
    CHECK(pg_gemv(99, 2, 4, x, B, 2, NULL, y) == PG_ERR_INVALID_ARG, "bad variant");
    CHECK(pg_gemv_nk(-1, 2, 4, x, B, 3, NULL, y) == PG_ERR_SHAPE, "nk: ldw < K");
    CHECK(pg_gemv_nk(-1, 2, 4, x, NULL, 4, NULL, y) == PG_ERR_INVALID_ARG, "nk: NULL W");
    CHECK(pg_gemv_nk(-1, 2, 0, NULL, NULL, 0, bias, y) == PG_OK && y[0] == 5 && y[1] == -6,
           "nk: K = 0 gives y = bias");

    CHECK(pg_measure_copy_gbps(100, 1) < 0, "copy of 100 bytes is refused");
    CHECK(pg_measure_copy_gbps(1 << 20, 0) < 0, "0 threads is refused");
    double gbps = pg_measure_copy_gbps(1 << 20, 2);
    CHECK(gbps > 0, "copy bandwidth %g: %s", gbps, pg_last_error());
    printf("copy of 1 MiB on 2 threads: %.1f GB/s\n", gbps);

    printf("%s\n", failures ? "gemv test FAILED" : "gemv test ok");
    return failures ? 1 : 0;
}

/* test_shared_consts.c - models compiled from the same weights hold one
 * copy of them (exec/shared_consts.h): the store gains one entry per large
 * constant for the first model and none for the second (another batch
 * size, level 0 or 3), different weights get their own, each model still
 * runs right while the other is freed, and the last free empties the
 * store.  The second model's weight is lent (pg_graph_add_initializer_view,
 * read in place by its compile): it finds the first's copy, and the lent
 * bytes can change once the compile returns. */
#include <stdint.h>
#include <string.h>

#include "../exec/shared_consts.h"
#include "test_util.h"

#define K 256
#define N 128   /* the weight: 128 KiB, past PG_SHARE_MIN_BYTES */

static float w[K * N], w2[K * N];
static _Alignas(64) float wv[K * N];   /* lent to the second model's graph */

/* y = relu(x . w) for x [batch, K] */
static pg_model *compile_mlp(const float *wt, int batch, int level, int view)
{
    pg_graph *g;
    OK(pg_graph_new(&g));
    int64_t xd[2] = { batch, K }, wd[2] = { K, N };
    OK(pg_graph_add_input(g, "x", PG_DTYPE_FLOAT32, 2, xd));
    OK((view ? pg_graph_add_initializer_view : pg_graph_add_initializer)(g, "w", PG_DTYPE_FLOAT32,
                                                                        2, wd, wt));
    const char *mm_in[2] = { "x", "w" }, *mm_out[1] = { "h" }, *r_out[1] = { "y" };
    OK(pg_graph_add_node(g, "MatMul", "mm", mm_in, 2, mm_out, 1));
    OK(pg_graph_add_node(g, "Relu", "relu", mm_out, 1, r_out, 1));
    OK(pg_graph_add_output(g, "y"));
    pg_compile_options o = { .level = level, .threads = 1, .precision = PG_PRECISION_FP32 };
    pg_model *m;
    OK(pg_compile(g, &o, &m));
    pg_graph_free(g);
    return m;
}

static uint64_t shared_bytes(const pg_model *m)
{
    pg_model_stats st;
    OK(pg_model_get_stats(m, &st));
    return st.shared_weight_bytes;
}

/* row 0 of y against the sums in double, loose enough for any kernel */
static void check_runs(pg_model *m, const float *wt, int batch, const char *what)
{
    static float x[4 * K];
    run_on_pattern(m, x, batch, K);
    pg_tensor_info out;
    OK(pg_model_output_info(m, 0, &out));
    const float *y = out.data;
    int bad = 0;
    for (int j = 0; j < N; j++) {
        double s = 0;
        for (int k = 0; k < K; k++)
            s += (double)x[k] * wt[k * N + j];
        s = s > 0 ? s : 0;
        bad += (y[j] - s) * (y[j] - s) > 1e-8;
    }
    CHECK(bad == 0, "%s: %d of %d outputs wrong", what, bad, N);
}

int main(void)
{
    for (int i = 0; i < K * N; i++) {
        w[i] = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;
        w2[i] = -w[i];
    }
    size_t c0, b0, c, b;
    pg_share_stats(&c0, &b0);

    for (int level = 0; level <= 3; level += 3) {
        pg_model *a = compile_mlp(w, 1, level, 0);
        CHECK(shared_bytes(a) == 0, "level %d: a model alone shares %llu bytes", level,
              (unsigned long long)shared_bytes(a));
        pg_share_stats(&c, &b);
        CHECK(c == c0 + 1 && b >= b0 + sizeof w, "level %d: first model: %zu entries, %zu bytes "
              "(before: %zu, %zu)", level, c, b, c0, b0);
        memcpy(wv, w, sizeof w);
        pg_model *a4 = compile_mlp(wv, 4, level, 1);
        memset(wv, 0xff, sizeof wv);
        size_t c2, b2;
        pg_share_stats(&c2, &b2);
        CHECK(c2 == c && b2 == b, "level %d: a second model of the same weights added %zu "
              "entries, %zu bytes", level, c2 - c, b2 - b);
        CHECK(shared_bytes(a) >= sizeof w && shared_bytes(a4) == shared_bytes(a),
              "level %d: two models of the same weights share %llu and %llu bytes", level,
              (unsigned long long)shared_bytes(a), (unsigned long long)shared_bytes(a4));
        pg_model *other = compile_mlp(w2, 1, level, 0);
        pg_share_stats(&c2, &b2);
        CHECK(c2 == c + 1, "level %d: other weights: %zu entries, want %zu", level, c2, c + 1);

        check_runs(a, w, 1, "first model");
        check_runs(other, w2, 1, "other weights");
        pg_model_free(a);
        check_runs(a4, w, 4, "second model, the first freed");
        CHECK(shared_bytes(a4) == 0, "level %d: the first freed, the second still shares %llu "
              "bytes", level, (unsigned long long)shared_bytes(a4));
        pg_model_free(a4);
        pg_model_free(other);
        pg_share_stats(&c, &b);
        CHECK(c == c0 && b == b0, "level %d: after the last free: %zu entries, %zu bytes", level,
              c, b);
    }

    printf("shared_consts: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}

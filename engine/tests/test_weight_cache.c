/* test_weight_cache.c - compiles that name one pg_weight_cache pack each
 * weight once (exec/weight_cache.h).  Three projections of one input with
 * lent weights: level 3 puts them side by side (qkv_fusion) and packs the
 * result.  The first compile misses; a second at another batch size finds
 * the packing (a hit, no new entry, the same bytes as the first model's);
 * other lent bytes at another address miss; a compile without the cache
 * does not touch it; every model runs right, also after the cache is
 * freed before them; the store is empty once the last model goes.  NULL
 * arguments are refused. */
#include <stdint.h>
#include <string.h>

#include "../exec/shared_consts.h"
#include "test_util.h"

#define K 128
#define N 128   /* three 64 KiB weights, side by side 192 KiB */

static _Alignas(64) float wq[K * N], wk[K * N], wv[K * N], wq2[K * N];

/* y_i = x . w_i for x [batch, K], the weights lent */
static pg_model *compile_qkv(const float *q, int batch, pg_weight_cache *cache)
{
    pg_graph *g;
    OK(pg_graph_new(&g));
    int64_t xd[2] = { batch, K }, wd[2] = { K, N };
    OK(pg_graph_add_input(g, "x", PG_DTYPE_FLOAT32, 2, xd));
    const char *wn[3] = { "wq", "wk", "wv" }, *yn[3] = { "yq", "yk", "yv" };
    const float *wt[3] = { q, wk, wv };
    for (int i = 0; i < 3; i++) {
        OK(pg_graph_add_initializer_view(g, wn[i], PG_DTYPE_FLOAT32, 2, wd, wt[i]));
        const char *in[2] = { "x", wn[i] }, *out[1] = { yn[i] };
        OK(pg_graph_add_node(g, "MatMul", yn[i], in, 2, out, 1));
        OK(pg_graph_add_output(g, yn[i]));
    }
    pg_compile_options o = { .level = 3, .threads = 1, .weight_cache = cache };
    pg_model *m;
    OK(pg_compile(g, &o, &m));
    pg_graph_free(g);
    return m;
}

/* every output against the sums in double */
static void check_runs(pg_model *m, const float *q, int batch, const char *what)
{
    static float x[4 * K];
    run_on_pattern(m, x, batch, K);
    const float *wt[3] = { q, wk, wv };
    int bad = 0;
    for (int o = 0; o < 3; o++) {
        pg_tensor_info out;
        OK(pg_model_output_info(m, o, &out));
        const float *y = out.data;
        for (int r = 0; r < batch; r++)
            for (int j = 0; j < N; j++) {
                double s = 0;
                for (int k = 0; k < K; k++)
                    s += (double)x[r * K + k] * wt[o][k * N + j];
                bad += (y[r * N + j] - s) * (y[r * N + j] - s) > 1e-8;
            }
    }
    CHECK(bad == 0, "%s: %d of %d outputs wrong", what, bad, 3 * batch * N);
}

static pg_weight_cache_stats stats(const pg_weight_cache *c)
{
    pg_weight_cache_stats s;
    OK(pg_weight_cache_get_stats(c, &s));
    return s;
}

static uint64_t shared_bytes(const pg_model *m)
{
    pg_model_stats st;
    OK(pg_model_get_stats(m, &st));
    return st.shared_weight_bytes;
}

int main(void)
{
    for (int i = 0; i < K * N; i++) {
        wq[i] = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;
        wk[i] = (float)((i * 104729) % 997) / 997.0f - 0.5f;
        wv[i] = (float)((i * 31) % 101) / 101.0f - 0.5f;
        wq2[i] = -wq[i];
    }
    size_t c0, b0, c1, b1, c2, b2;
    pg_share_stats(&c0, &b0);
    pg_weight_cache *cache;
    pg_weight_cache_stats none;
    CHECK(pg_weight_cache_new(NULL) == PG_ERR_INVALID_ARG && *pg_last_error(),
          "pg_weight_cache_new(NULL) is not refused with a message");
    CHECK(pg_weight_cache_get_stats(NULL, &none) == PG_ERR_INVALID_ARG,
          "pg_weight_cache_get_stats(NULL) is not refused");
    pg_weight_cache_free(NULL);
    OK(pg_weight_cache_new(&cache));

    pg_model *a = compile_qkv(wq, 1, cache);
    pg_weight_cache_stats s1 = stats(cache);
    CHECK(s1.hits == 0 && s1.misses >= 1 && s1.entries >= 1 && s1.bytes >= 3 * sizeof wq,
          "first compile: %llu hits, %llu misses, %d entries, %llu bytes",
          (unsigned long long)s1.hits, (unsigned long long)s1.misses, s1.entries,
          (unsigned long long)s1.bytes);
    pg_share_stats(&c1, &b1);

    pg_model *a4 = compile_qkv(wq, 4, cache);
    pg_weight_cache_stats s2 = stats(cache);
    pg_share_stats(&c2, &b2);
    CHECK(s2.hits >= 1 && s2.misses == s1.misses && s2.entries == s1.entries,
          "second compile, same weights: %llu hits, %llu misses (first: %llu), %d entries "
          "(first: %d)", (unsigned long long)s2.hits, (unsigned long long)s2.misses,
          (unsigned long long)s1.misses, s2.entries, s1.entries);
    CHECK(c2 == c1 && b2 == b1, "second compile added %zu store entries, %zu bytes", c2 - c1,
          b2 - b1);
    CHECK(shared_bytes(a4) >= 3 * sizeof wq, "the second model shares %llu bytes",
          (unsigned long long)shared_bytes(a4));

    /* other bytes at another address: packed anew */
    pg_model *other = compile_qkv(wq2, 1, cache);
    pg_weight_cache_stats s3 = stats(cache);
    CHECK(s3.misses > s2.misses && s3.entries > s2.entries,
          "other weights: %llu misses (before %llu), %d entries (before %d)",
          (unsigned long long)s3.misses, (unsigned long long)s2.misses, s3.entries, s2.entries);
    /* no cache named: the cache is not asked */
    pg_model *plain = compile_qkv(wq, 2, NULL);
    pg_weight_cache_stats s4 = stats(cache);
    CHECK(s4.hits == s3.hits && s4.misses == s3.misses, "a compile without the cache asked it");

    pg_weight_cache_free(cache);   /* before the models: they keep what they read */
    check_runs(a, wq, 1, "first model");
    check_runs(a4, wq, 4, "second model (packing from the cache)");
    check_runs(other, wq2, 1, "other weights");
    check_runs(plain, wq, 2, "compiled without the cache");
    pg_model_free(a);
    check_runs(a4, wq, 4, "second model, the first freed");
    pg_model_free(a4);
    pg_model_free(other);
    pg_model_free(plain);
    pg_share_stats(&c1, &b1);
    CHECK(c1 == c0 && b1 == b0, "after the last free: %zu store entries, %zu bytes (before: %zu, "
          "%zu)", c1, b1, c0, b0);

    printf("weight_cache: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}

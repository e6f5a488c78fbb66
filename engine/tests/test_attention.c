/* test_attention.c - FusedAttention (engine/exec/ops_attention.c) through
 * the public API against a double-precision reference: query and key
 * lengths around the tiles of every SGEMM variant (AVX-512 12x32, AVX2
 * 6x16, NEON 8x12, C 4x8), head sizes on and off the panel width, K as
 * [Sk, D] or [D, Sk], float / bool / causal masks, 1 and 2 threads (which
 * must agree bit for bit), and no heap allocation during a run; the same
 * with qkv_layout = "bshd" (Q, K, V, O as [B, S, H*D] rows: head h at a
 * column offset, rows H*D apart); grouped-query attention (K and V with
 * fewer heads than Q, query head h reading K/V head h / (H/Hkv)) in both
 * layouts; nan_to_zero (a fully masked row gives zeros, not NaN).  Small
 * enough for qemu. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peregrine.h"
#include "test_util.h"

static uint32_t seed = 2024;
static float frand(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
}

typedef struct cfg {
    int B, H, Sq, Sk, D, Dv;
    int kt, causal;
    int mask;   /* 0 none, 1 float [B,1,1,Sk], 2 bool [B,1,Sq,Sk] */
    int bshd;   /* qkv_layout = "bshd" (kt must be 0) */
    int kvh;    /* K/V heads (0: H) */
    int nz;     /* nan_to_zero = 1, and a fully masked query row (bool mask) */
} cfg;

static int kv_heads(const cfg *c) { return c->kvh ? c->kvh : c->H; }

/* [B, H, S, D] <-> [B, S, H*D]; to_bshd 0 goes back. */
static void relayout(const float *src, float *dst, int B, int H, int S, int D, int to_bshd)
{
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < S; i++)
                for (int e = 0; e < D; e++) {
                    size_t hs = (((size_t)b * H + h) * S + i) * D + e;
                    size_t sh = (((size_t)b * S + i) * H + h) * D + e;
                    if (to_bshd)
                        dst[sh] = src[hs];
                    else
                        dst[hs] = src[sh];
                }
}

/* O[b,h,i,:] in double from the logical Q, K [Sk, D], V, mask. */
static void reference(const cfg *c, const float *q, const float *k, const float *v,
                      const float *fm, const unsigned char *bm, float scale, double *o)
{
    double *s = malloc(sizeof(double) * (size_t)c->Sk);
    int hkv = kv_heads(c), grp = c->H / hkv;
    for (int b = 0; b < c->B; b++)
        for (int h = 0; h < c->H; h++)
            for (int i = 0; i < c->Sq; i++) {
                int kh = h / grp;
                const float *qi = q + (((size_t)b * c->H + h) * c->Sq + i) * c->D;
                double mx = -INFINITY, sum = 0;
                for (int j = 0; j < c->Sk; j++) {
                    const float *kj = k + (((size_t)b * hkv + kh) * c->Sk + j) * c->D;
                    double d = 0;
                    for (int e = 0; e < c->D; e++)
                        d += (double)qi[e] * kj[e];
                    d *= scale;
                    if (c->mask == 1)
                        d += fm[(size_t)b * c->Sk + j];
                    if (c->mask == 2 && !bm[((size_t)b * c->Sq + i) * c->Sk + j])
                        d = -INFINITY;
                    if (c->causal && j > i + (c->Sk - c->Sq))
                        d = -INFINITY;
                    s[j] = d;
                    mx = d > mx ? d : mx;
                }
                for (int j = 0; j < c->Sk; j++)
                    sum += (s[j] = s[j] == -INFINITY ? 0 : exp(s[j] - mx));
                double *oi = o + (((size_t)b * c->H + h) * c->Sq + i) * c->Dv;
                for (int e = 0; e < c->Dv; e++) {
                    double a = 0;
                    for (int j = 0; j < c->Sk; j++)
                        a += s[j] * v[(((size_t)b * hkv + kh) * c->Sk + j) * c->Dv + e];
                    oi[e] = a / sum;
                    if (c->nz && sum == 0)
                        oi[e] = 0;   /* Where(IsNaN(P), 0, P) */
                }
            }
    free(s);
}

static void run_case(const cfg *c)
{
    int hkv = kv_heads(c);
    size_t nq = (size_t)c->B * c->H * c->Sq * c->D, nk = (size_t)c->B * hkv * c->Sk * c->D;
    size_t nv = (size_t)c->B * hkv * c->Sk * c->Dv, no = (size_t)c->B * c->H * c->Sq * c->Dv;
    float *q = malloc(nq * 4), *k = malloc(nk * 4), *kt = malloc(nk * 4), *v = malloc(nv * 4);
    float *fm = malloc((size_t)c->B * c->Sk * 4);
    unsigned char *bm = malloc((size_t)c->B * c->Sq * c->Sk);
    double *ref = malloc(no * sizeof(double));
    float *out[2] = { malloc(no * 4), malloc(no * 4) };
    for (size_t i = 0; i < nq; i++) q[i] = 2 * frand();
    for (size_t i = 0; i < nk; i++) k[i] = 2 * frand();
    for (size_t i = 0; i < nv; i++) v[i] = frand();
    for (int i = 0; i < c->B * c->Sk; i++) fm[i] = frand() > 0.5f ? -1e4f : 0.0f;
    for (int i = 0; i < c->B * c->Sq * c->Sk; i++) bm[i] = frand() > -0.4f || i % c->Sk == 0;
    if (c->nz)   /* query row 1 of batch 0 sees no key */
        for (int j = 0; j < c->Sk; j++)
            bm[(size_t)1 * c->Sk + j] = 0;
    /* K^T per (b, h): [D, Sk] */
    for (int bh = 0; bh < c->B * hkv; bh++)
        for (int j = 0; j < c->Sk; j++)
            for (int e = 0; e < c->D; e++)
                kt[((size_t)bh * c->D + e) * c->Sk + j] = k[((size_t)bh * c->Sk + j) * c->D + e];
    float scale = 0.37f;
    reference(c, q, k, v, fm, bm, scale, ref);
    float *feed_q = q, *feed_k = c->kt ? kt : k, *feed_v = v;
    if (c->bshd) {
        feed_q = malloc(nq * 4);
        feed_k = malloc(nk * 4);
        feed_v = malloc(nv * 4);
        relayout(q, feed_q, c->B, c->H, c->Sq, c->D, 1);
        relayout(k, feed_k, c->B, hkv, c->Sk, c->D, 1);
        relayout(v, feed_v, c->B, hkv, c->Sk, c->Dv, 1);
    }

    for (int t = 0; t < 2; t++) {
        pg_graph *g;
        OK(pg_graph_new(&g));
        int64_t dq[4] = { c->B, c->H, c->Sq, c->D }, dv[4] = { c->B, hkv, c->Sk, c->Dv };
        int64_t dk[4] = { c->B, hkv, c->kt ? c->D : c->Sk, c->kt ? c->Sk : c->D };
        if (c->bshd) {
            /* [B, S, H*D]: the first three entries, read as rank 3 */
            int64_t q3[3] = { c->B, c->Sq, (int64_t)c->H * c->D }, k3[3] = { c->B, c->Sk, (int64_t)hkv * c->D };
            int64_t v3[3] = { c->B, c->Sk, (int64_t)hkv * c->Dv };
            memcpy(dq, q3, sizeof q3);
            memcpy(dk, k3, sizeof k3);
            memcpy(dv, v3, sizeof v3);
        }
        int rk = c->bshd ? 3 : 4;
        int64_t dfm[4] = { c->B, 1, 1, c->Sk }, dbm[4] = { c->B, 1, c->Sq, c->Sk };
        OK(pg_graph_add_input(g, "q", PG_DTYPE_FLOAT32, rk, dq));
        OK(pg_graph_add_input(g, "k", PG_DTYPE_FLOAT32, rk, dk));
        OK(pg_graph_add_input(g, "v", PG_DTYPE_FLOAT32, rk, dv));
        if (c->mask)
            OK(pg_graph_add_input(g, "m", c->mask == 1 ? PG_DTYPE_FLOAT32 : PG_DTYPE_BOOL, 4,
                                  c->mask == 1 ? dfm : dbm));
        const char *ins[4] = { "q", "k", "v", "m" }, *outs[1] = { "o" };
        OK(pg_graph_add_node(g, "FusedAttention", "attn", ins, c->mask ? 4 : 3, outs, 1));
        OK(pg_graph_set_attr_float(g, "attn", "scale", scale));
        OK(pg_graph_set_attr_int(g, "attn", "k_transposed", c->kt));
        OK(pg_graph_set_attr_int(g, "attn", "causal", c->causal));
        if (c->nz)
            OK(pg_graph_set_attr_int(g, "attn", "nan_to_zero", 1));
        if (c->bshd) {
            OK(pg_graph_set_attr_string(g, "attn", "qkv_layout", "bshd"));
            OK(pg_graph_set_attr_int(g, "attn", "num_heads", c->H));
        }
        OK(pg_graph_add_output(g, "o"));
        pg_compile_options o = { .level = 0, .threads = t + 1 };
        pg_model *m;
        OK(pg_compile(g, &o, &m));
        const char *names[4] = { "q", "k", "v", "m" };
        const void *data[4] = { feed_q, feed_k, feed_v, c->mask == 1 ? (const void *)fm : bm };
        int ranks[4] = { rk, rk, rk, 4 };
        const int64_t *shapes[4] = { dq, dk, dv, c->mask == 1 ? dfm : dbm };
        OK(pg_model_run(m, c->mask ? 4 : 3, names, data, ranks, shapes));   /* warm-up */
        uint64_t allocs = pg_alloc_count();
        OK(pg_model_run(m, c->mask ? 4 : 3, names, data, ranks, shapes));
        CHECK(pg_alloc_count() == allocs, "a run allocated");
        pg_tensor_info info;
        OK(pg_model_output_info(m, 0, &info));
        CHECK(info.rank == rk, "output rank %d", info.rank);
        if (c->bshd)
            relayout(info.data, out[t], c->B, c->H, c->Sq, c->Dv, 0);
        else
            memcpy(out[t], info.data, no * 4);
        pg_model_free(m);
        pg_graph_free(g);
    }
    double worst = 0;
    for (size_t i = 0; i < no; i++) {
        double e = fabs(out[0][i] - ref[i]) / (1e-3 + fabs(ref[i]));
        if (isnan(ref[i]) && isnan(out[0][i]))
            e = 0;   /* a row of no keys: NaN on both sides */
        worst = e > worst || isnan(e) ? (isnan(e) ? INFINITY : e) : worst;
    }
    CHECK(worst < 2e-4, "B%d H%d Sq%d Sk%d D%d Dv%d kt%d causal%d mask%d bshd%d: rel err %.2e",
          c->B, c->H, c->Sq, c->Sk, c->D, c->Dv, c->kt, c->causal, c->mask, c->bshd, worst);
    CHECK(!memcmp(out[0], out[1], no * 4), "B%d H%d Sq%d Sk%d: 1 and 2 threads differ",
          c->B, c->H, c->Sq, c->Sk);
    if (c->bshd) {
        free(feed_q); free(feed_k); free(feed_v);
    }
    free(q); free(k); free(kt); free(v); free(fm); free(bm); free(ref);
    free(out[0]); free(out[1]);
}

int main(void)
{
    static const cfg cases[] = {
        { 1, 1, 1, 1, 4, 4, 0, 0, 0, 0, 0, 0 },
        { 1, 2, 13, 13, 8, 8, 0, 0, 1, 0, 0, 0 },
        { 2, 3, 25, 25, 12, 12, 1, 0, 1, 0, 0, 0 },     /* NEON panel width */
        { 1, 2, 33, 47, 16, 16, 0, 1, 0, 0, 0, 0 },     /* AVX2 panel width, Sq != Sk, causal */
        { 2, 2, 37, 37, 32, 32, 1, 0, 2, 0, 0, 0 },     /* AVX-512 panel width, bool mask */
        { 1, 3, 70, 70, 17, 5, 0, 1, 1, 0, 0, 0 },      /* odd head sizes, causal + mask */
        { 1, 2, 130, 130, 24, 40, 1, 0, 1, 0, 0, 0 },   /* several query tiles, odd key panel */
        /* qkv_layout = bshd */
        { 1, 1, 5, 5, 8, 8, 0, 0, 1, 1, 0, 0 },
        { 2, 3, 25, 25, 12, 12, 0, 0, 1, 1, 0, 0 },  /* NEON panel width */
        { 1, 4, 33, 47, 16, 16, 0, 1, 0, 1, 0, 0 },  /* AVX2 panel width (V rows strided), causal */
        { 2, 2, 37, 37, 32, 32, 0, 0, 2, 1, 0, 0 },  /* AVX-512 panel width, bool mask */
        { 1, 3, 70, 70, 17, 5, 0, 1, 1, 1, 0, 0 },   /* odd head sizes, causal + mask */
        /* grouped-query attention (K/V heads dividing H), nan_to_zero */
        { 2, 4, 13, 13, 8, 8, 0, 0, 1, 0, 2, 0 },
        { 1, 6, 33, 47, 16, 16, 1, 1, 0, 0, 3, 0 },
        { 2, 4, 25, 25, 12, 12, 0, 0, 1, 1, 2, 0 },
        { 1, 8, 37, 37, 32, 32, 0, 1, 0, 1, 2, 0 },
        { 2, 2, 9, 9, 8, 8, 0, 0, 2, 0, 0, 1 },
        { 2, 4, 9, 11, 8, 8, 0, 0, 2, 1, 1, 1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i]);
    if (failures) {
        printf("attention: %d failures\n", failures);
        return 1;
    }
    printf("attention: all checks passed\n");
    return 0;
}

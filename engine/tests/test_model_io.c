/* test_model_io.c - saved compiled models (pg_model_save / pg_model_load):
 * a small graph (a Constant with a tensor attribute, MatMul + Add + Relu,
 * Reshape, Softmax) compiled at levels 0 and 3, saved and loaded back:
 * outputs bit-equal, constants read in place from the mapping, the
 * threads and planner overrides.  Then the files are damaged: every
 * truncation, the version strings, and random bytes of the header and the
 * graph section with their checksums fixed up (so that the parser's own
 * checks are what stands between the damage and a crash) - every load must
 * fail with PG_ERR_FORMAT or PG_ERR_UNSUPPORTED (or load a graph that
 * still checks), never crash.  Runs under ASan + UBSan in CI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "peregrine.h"
#include "test_util.h"

enum { M = 4, K = 64, N = 48 };

static uint32_t seed = 777;
static uint32_t next_rand(void)
{
    seed = seed * 1664525u + 1013904223u;
    return seed >> 8;
}
static float frand(void) { return (float)(next_rand() & 0xffff) / 32768.0f - 1.0f; }

static pg_graph *build(void)
{
    pg_graph *g;
    OK(pg_graph_new(&g));
    int64_t xd[2] = { M, K }, wd[2] = { K, N }, bd[1] = { N }, sd[1] = { 2 };
    OK(pg_graph_add_input(g, "x", PG_DTYPE_FLOAT32, 2, xd));
    float *w = malloc(sizeof(float) * K * N), b[N];
    for (int i = 0; i < K * N; i++)
        w[i] = frand() * 0.2f;
    for (int i = 0; i < N; i++)
        b[i] = frand();
    OK(pg_graph_add_initializer(g, "w", PG_DTYPE_FLOAT32, 2, wd, w));
    free(w);
    int64_t shape[2] = { 2 * M, N / 2 };
    OK(pg_graph_add_initializer(g, "shape", PG_DTYPE_INT64, 1, sd, shape));
    const char *cb[1] = { "cb" };
    OK(pg_graph_add_node(g, "Constant", "const_b", NULL, 0, cb, 1));
    OK(pg_graph_set_attr_tensor(g, "const_b", "value", PG_DTYPE_FLOAT32, 1, bd, b));
    const char *mm_in[2] = { "x", "w" }, *mm_out[1] = { "xw" };
    OK(pg_graph_add_node(g, "MatMul", "mm", mm_in, 2, mm_out, 1));
    const char *add_in[2] = { "xw", "cb" }, *add_out[1] = { "h" };
    OK(pg_graph_add_node(g, "Add", "add", add_in, 2, add_out, 1));
    const char *relu_in[1] = { "h" }, *relu_out[1] = { "r" };
    OK(pg_graph_add_node(g, "Relu", "relu", relu_in, 1, relu_out, 1));
    const char *rs_in[2] = { "r", "shape" }, *rs_out[1] = { "rs" };
    OK(pg_graph_add_node(g, "Reshape", "reshape", rs_in, 2, rs_out, 1));
    const char *sm_in[1] = { "rs" }, *sm_out[1] = { "y" };
    OK(pg_graph_add_node(g, "Softmax", "softmax", sm_in, 1, sm_out, 1));
    OK(pg_graph_set_attr_int(g, "softmax", "axis", -1));
    OK(pg_graph_add_output(g, "y"));
    OK(pg_graph_add_output(g, "h"));
    return g;
}

static float x_feed[M * K];

static pg_status run(pg_model *m, float *y, float *h)
{
    const char *names[1] = { "x" };
    const void *data[1] = { x_feed };
    int ranks[1] = { 2 };
    int64_t xd[2] = { M, K };
    const int64_t *shapes[1] = { xd };
    pg_status st = pg_model_run(m, 1, names, data, ranks, shapes);
    if (st)
        return st;
    pg_tensor_info ti;
    OK(pg_model_output_info(m, 0, &ti));
    memcpy(y, ti.data, (size_t)ti.nbytes);
    OK(pg_model_output_info(m, 1, &ti));
    memcpy(h, ti.data, (size_t)ti.nbytes);
    return PG_OK;
}

static unsigned char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc((size_t)len + 1);
    *n = fread(p, 1, (size_t)len, f);
    fclose(f);
    return p;
}

static void write_file(const char *path, const unsigned char *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        printf("FAIL cannot write %s\n", path);
        exit(1);
    }
    if (n)
        fwrite(p, 1, n, f);
    fclose(f);
}

/* The file's checksum (peregrine.h: FNV-1a over 64-bit words, bytes for the tail). */
static uint64_t fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
    }
    for (; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t get64(const unsigned char *p, size_t o)
{
    uint64_t v;
    memcpy(&v, p + o, 8);
    return v;
}

/* Recomputes the checksums after a change: model 0's graph, the table,
 * the header. */
static void fix_sums(unsigned char *p, size_t n)
{
    uint64_t go = get64(p, 256), gb = get64(p, 264);
    if (go <= n && gb <= n - go) {
        uint64_t s = fnv(p + go, (size_t)gb);
        memcpy(p + 272, &s, 8);
    }
    uint32_t nm;
    memcpy(&nm, p + 88, 4);
    if (nm >= 1 && nm < 64 && 256 + (size_t)nm * 128 <= n) {
        uint64_t s = fnv(p + 256, (size_t)nm * 128);
        memcpy(p + 96, &s, 8);
    }
    uint64_t s = fnv(p, 128);
    memcpy(p + 128, &s, 8);
}

/* Loads a damaged file: it must fail cleanly (or load a graph that checks). */
static int n_loaded_anyway;
static void load_damaged(const char *path, const char *what, long at)
{
    pg_model *m = NULL;
    pg_status st = pg_model_load(path, NULL, &m);
    if (st == PG_OK) {
        n_loaded_anyway++;
        pg_model_free(m);
        return;
    }
    CHECK(st == PG_ERR_FORMAT || st == PG_ERR_UNSUPPORTED, "%s at %ld: %s: %s", what, at,
          pg_status_name(st), pg_last_error());
    CHECK(strlen(pg_last_error()) > 10, "%s at %ld: no message", what, at);
    CHECK(m == NULL, "%s at %ld: a model handed out on failure", what, at);
}

static void round_trip(int level, const char *path)
{
    pg_graph *g = build();
    pg_compile_options o = { .level = level, .threads = 1 };
    pg_model *m;
    OK(pg_compile(g, &o, &m));
    float y0[M * N], h0[M * N], y1[M * N], h1[M * N];
    OK(run(m, y0, h0));
    OK(pg_model_save(m, path));

    pg_model_file_info fi;
    OK(pg_model_file_info_get(path, 0, &fi));
    CHECK(fi.format_version == 2 && fi.n_models == 1 && !strcmp(fi.engine_version, pg_version()), "header: %u %s",
          fi.format_version, fi.engine_version);
    CHECK(fi.level == level && fi.threads == 1 && !strcmp(fi.planner, "greedy_by_size"),
          "header: level %d threads %d planner %s", fi.level, fi.threads, fi.planner);
    CHECK(fi.data_bytes >= (uint64_t)K * N * 4, "data %llu", (unsigned long long)fi.data_bytes);

    pg_model *l;
    OK(pg_model_load(path, NULL, &l));
    OK(run(l, y1, h1));
    CHECK(!memcmp(y0, y1, sizeof y0) && !memcmp(h0, h1, sizeof h0), "level %d: outputs differ", level);
    CHECK(pg_model_step_count(l) == pg_model_step_count(m), "steps %d vs %d", pg_model_step_count(l),
          pg_model_step_count(m));
    for (int s = 0; s < pg_model_step_count(m); s++) {
        pg_step_info a, b;
        OK(pg_model_step_info(m, s, &a));
        OK(pg_model_step_info(l, s, &b));
        CHECK(!strcmp(a.node, b.node) && !strcmp(a.detail, b.detail), "step %d: %s [%s] vs %s [%s]", s,
              a.node, a.detail, b.node, b.detail);
    }
    CHECK(!strcmp(pg_model_text(m), pg_model_text(l)), "level %d: graph text differs", level);
    pg_model_load_info li;
    OK(pg_model_get_load_info(l, &li));
    CHECK(li.loaded && li.mapped_bytes >= (uint64_t)K * N * 4 && li.owned_bytes < 64 && !li.repacked &&
          !li.rebound, "load info: loaded %d mapped %llu owned %llu repacked %d rebound %d", li.loaded,
          (unsigned long long)li.mapped_bytes, (unsigned long long)li.owned_bytes, li.repacked, li.rebound);
    OK(pg_model_get_load_info(m, &li));
    CHECK(!li.loaded && !li.mapped_bytes && li.owned_bytes >= (uint64_t)K * N * 4, "compiled model's info");
    /* a loaded model saves and reloads the same */
    char path2[256];
    snprintf(path2, sizeof path2, "%s.again", path);
    OK(pg_model_save(l, path2));
    size_t n1, n2;
    unsigned char *a = read_file(path, &n1), *b = read_file(path2, &n2);
    CHECK(a && b && n1 == n2 && !memcmp(a, b, n1), "level %d: saving a loaded model writes another file", level);
    free(a);
    free(b);
    unlink(path2);
    /* rebinding a loaded model re-packs into owned memory and still agrees */
    OK(pg_model_rebind(l));
    OK(run(l, y1, h1));
    CHECK(!memcmp(y0, y1, sizeof y0), "level %d: rebound loaded model differs", level);
    pg_model_free(l);

    /* overrides: threads and planner */
    pg_model_load_options lo = { 0, 2, "naive", 1 };
    OK(pg_model_load(path, &lo, &l));
    pg_model_stats ms;
    OK(pg_model_get_stats(l, &ms));
    CHECK(!strcmp(ms.planner, "naive"), "planner %s", ms.planner);
    OK(run(l, y1, h1));
    CHECK(!memcmp(h0, h1, sizeof h0), "level %d: the naive plan on 2 threads differs", level);
    pg_model_free(l);
    lo.planner = "no_such_planner";
    CHECK(pg_model_load(path, &lo, &l) != PG_OK, "an unknown planner loaded");
    pg_model_free(m);
    pg_graph_free(g);
}

/* Two models of one graph in one file: the weights stored once, each
 * model loaded by its index. */
static void many(const char *path)
{
    pg_graph *g = build();
    pg_compile_options o0 = { .level = 0, .threads = 1 }, o3 = { .level = 3, .threads = 1 },
                       o3b = { .level = 3, .threads = 1, .planner = "naive" };
    pg_model *m[3];
    OK(pg_compile(g, &o0, &m[0]));
    OK(pg_compile(g, &o3, &m[1]));
    OK(pg_compile(g, &o3b, &m[2]));
    float y[3][M * N], h[3][M * N], y1[M * N], h1[M * N];
    for (int i = 0; i < 3; i++)
        OK(run(m[i], y[i], h[i]));
    const pg_model *list[3] = { m[0], m[1], m[2] };
    OK(pg_model_save_many(list, 3, path));
    pg_model_file_info fi;
    OK(pg_model_file_info_get(path, 2, &fi));
    CHECK(fi.n_models == 3 && fi.level == 3 && !strcmp(fi.planner, "naive"), "models %d level %d planner %s",
          fi.n_models, fi.level, fi.planner);
    /* level 0 keeps w row-major, level 3 packs it: two copies; the two level-3 models share one */
    CHECK(fi.data_bytes < 3 * (uint64_t)K * N * 4, "data %llu: the packed weight is stored twice",
          (unsigned long long)fi.data_bytes);
    for (int i = 0; i < 3; i++) {
        pg_model_load_options lo = { i, 0, NULL, 1 };
        pg_model *l;
        OK(pg_model_load(path, &lo, &l));
        OK(run(l, y1, h1));
        CHECK(!memcmp(y[i], y1, sizeof y1) && !memcmp(h[i], h1, sizeof h1), "model %d of the file differs", i);
        pg_model_free(l);
    }
    pg_model_load_options lo = { 3, 0, NULL, 0 };
    pg_model *l = NULL;
    CHECK(pg_model_load(path, &lo, &l) == PG_ERR_INVALID_ARG && strstr(pg_last_error(), "3 model(s)"),
          "index 3: %s", pg_last_error());
    const pg_model *twice[2] = { m[0], m[0] };
    CHECK(pg_model_save_many(twice, 2, path) == PG_ERR_INVALID_ARG, "the same model twice");
    for (int i = 0; i < 3; i++)
        pg_model_free(m[i]);
    pg_graph_free(g);
}

static void damage(const char *path, int exhaustive)
{
    size_t n;
    unsigned char *orig = read_file(path, &n);
    char bad[256];
    snprintf(bad, sizeof bad, "%s.bad", path);
    uint64_t graph_end = get64(orig, 256) + get64(orig, 264);
    /* every truncation of the header and graph, then a stride through the data */
    for (size_t len = 0; len < n; len += len < graph_end + 64 ? 1 : 509) {
        write_file(bad, orig, len);
        pg_model *m = NULL;
        pg_status st = pg_model_load(bad, NULL, &m);
        CHECK(st == PG_ERR_FORMAT && !m, "truncated to %zu of %zu: %s %s", len, n, pg_status_name(st),
              pg_last_error());
        if (len == 100 || len == graph_end)
            CHECK(strstr(pg_last_error(), len < 256 ? "header" : "truncated") != NULL, "message: %s",
                  pg_last_error());
    }
    unsigned char *p = malloc(n);
    /* another engine version, another format version: named as such */
    memcpy(p, orig, n);
    memcpy(p + 16, "9.9.9", 6);
    write_file(bad, p, n);
    pg_model *m = NULL;
    CHECK(pg_model_load(bad, NULL, &m) == PG_ERR_FORMAT && strstr(pg_last_error(), "saved by Peregrine 9.9.9"),
          "version: %s", pg_last_error());
    memcpy(p, orig, n);
    p[8] = 7;
    write_file(bad, p, n);
    CHECK(pg_model_load(bad, NULL, &m) == PG_ERR_FORMAT && strstr(pg_last_error(), "format version 7"),
          "format: %s", pg_last_error());
    pg_model_file_info fi;
    CHECK(pg_model_file_info_get(bad, 0, &fi) == PG_ERR_FORMAT, "file info of a bad file");
    memcpy(p, orig, n);
    p[3] = 'X';
    write_file(bad, p, n);
    CHECK(pg_model_load(bad, NULL, &m) == PG_ERR_FORMAT && strstr(pg_last_error(), "magic"), "magic: %s",
          pg_last_error());
    /* one byte of the graph, checksums left alone: the checksum says so */
    memcpy(p, orig, n);
    p[400] ^= 0x40;
    write_file(bad, p, n);
    CHECK(pg_model_load(bad, NULL, &m) == PG_ERR_FORMAT && strstr(pg_last_error(), "checksum"),
          "graph damage: %s", pg_last_error());
    /* a weight byte: found only with verify_data */
    memcpy(p, orig, n);
    p[n - 7] ^= 0x01;
    write_file(bad, p, n);
    pg_model_load_options vo = { 0, 0, NULL, 1 };
    CHECK(pg_model_load(bad, &vo, &m) == PG_ERR_FORMAT && strstr(pg_last_error(), "weights"),
          "data damage: %s", pg_last_error());
    OK(pg_model_load(bad, NULL, &m));
    pg_model_free(m);
    /* random damage with the checksums fixed up: the parser's checks alone */
    int rounds = exhaustive ? 3000 : 600;
    for (int r = 0; r < rounds; r++) {
        memcpy(p, orig, n);
        int flips = 1 + (int)(next_rand() % 4);
        long at = 0;
        for (int f = 0; f < flips; f++) {
            int header = next_rand() % 8 == 0;
            /* header fields past the version checks, the table entry, the graph */
            at = header ? (next_rand() % 2 ? 56 + (long)(next_rand() % 72) : 256 + (long)(next_rand() % 104))
                        : 384 + (long)(next_rand() % (graph_end - 384));
            uint32_t kind = next_rand() % 4;
            p[at] = kind == 0 ? 0xff : kind == 1 ? 0 : (unsigned char)(p[at] ^ (1u << (next_rand() % 8)));
        }
        fix_sums(p, n);
        write_file(bad, p, n);
        load_damaged(bad, "damage", at);
    }
    printf("%d damaged files loaded anyway (a name or value changed to another valid one)\n",
           n_loaded_anyway);
    unlink(bad);
    free(p);
    free(orig);
}

int main(void)
{
    for (int i = 0; i < M * K; i++)
        x_feed[i] = frand();
    char dir[] = "/tmp/pg_model_io_XXXXXX";
    if (!mkdtemp(dir)) {
        printf("FAIL mkdtemp\n");
        return 1;
    }
    char p0[128], p3[128];
    snprintf(p0, sizeof p0, "%s/level0.pgm", dir);
    snprintf(p3, sizeof p3, "%s/level3.pgm", dir);
    round_trip(0, p0);
    round_trip(3, p3);
    char pm[128];
    snprintf(pm, sizeof pm, "%s/many.pgm", dir);
    many(pm);
    damage(pm, 0);
    unlink(pm);
    damage(p0, 0);
    damage(p3, 1);
    pg_model *m = NULL;
    char missing[160];
    snprintf(missing, sizeof missing, "%s/missing.pgm", dir);
    CHECK(pg_model_load(missing, NULL, &m) == PG_ERR_IO, "a missing file: %s", pg_last_error());
    CHECK(pg_model_load(dir, NULL, &m) == PG_ERR_IO, "a directory: %s", pg_last_error());
    unlink(p0);
    unlink(p3);
    rmdir(dir);
    printf(failures ? "model_io: %d FAILED\n" : "model_io: all passed\n", failures);
    return failures ? 1 : 0;
}

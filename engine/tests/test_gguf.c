/* test_gguf.c - the GGUF reader on a synthetic file, on truncated and
 * corrupted copies of it, and (when a path is given) on a real model file.
 *
 *   test_gguf [model.gguf]
 *
 * The robustness part is the point: every truncation and every corrupted
 * header field must give PG_ERR_FORMAT, and random byte damage must never
 * crash (run it under -Db_sanitize=address,undefined to see over-reads: the
 * damaged images are copied into buffers of exactly their size). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peregrine.h"
#include "test_util.h"
#include "../gguf/ggml_types.h"
#include "../gguf/gguf.h"

/* ---- a tiny GGUF writer ------------------------------------------------ */

typedef struct buf {
    uint8_t *p;
    size_t   n, cap;
} buf;

static void put(buf *b, const void *src, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (!b->p)
            abort();
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}

static void put_le(buf *b, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++) {
        uint8_t c = (uint8_t)(v >> (8 * i));
        put(b, &c, 1);
    }
}

static void put_str(buf *b, const char *s)
{
    put_le(b, strlen(s), 8);
    put(b, s, strlen(s));
}

static void put_key(buf *b, const char *key, uint32_t type)
{
    put_str(b, key);
    put_le(b, type, 4);
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* f16 of small exact values: 1.0 = 0x3c00, 0.5 = 0x3800, 2.0 = 0x4000, -1 = 0xbc00 */

typedef struct synth_tensor {
    const char *name;
    int type, n_dims;
    uint64_t dims[4];
    uint64_t bytes;
} synth_tensor;

/* Builds the synthetic file: every metadata type, alignment 64, tensors of
 * f32, f16, q8_0, q4_1 and q4_0 with known contents. */
static buf make_synthetic(void)
{
    buf b = { 0 };
    const synth_tensor ts[] = {
        { "a.f32", PG_GGML_F32, 2, { 4, 2 }, 32 },
        { "b.f16", PG_GGML_F16, 1, { 3 }, 6 },
        { "c.q8_0", PG_GGML_Q8_0, 2, { 32, 2 }, 68 },
        { "d.q4_1", PG_GGML_Q4_1, 1, { 64 }, 40 },
        { "e.q4_0", PG_GGML_Q4_0, 1, { 32 }, 18 },
    };
    const int nt = 5;
    put_le(&b, PG_GGUF_MAGIC, 4);
    put_le(&b, 3, 4);
    put_le(&b, nt, 8);
    put_le(&b, 16, 8);
    put_key(&b, "t.u8", PG_GGUF_UINT8);    put_le(&b, 200, 1);
    put_key(&b, "t.i8", PG_GGUF_INT8);     put_le(&b, (uint8_t)-5, 1);
    put_key(&b, "t.u16", PG_GGUF_UINT16);  put_le(&b, 60000, 2);
    put_key(&b, "t.i16", PG_GGUF_INT16);   put_le(&b, (uint16_t)-300, 2);
    put_key(&b, "t.u32", PG_GGUF_UINT32);  put_le(&b, 4000000000u, 4);
    put_key(&b, "t.i32", PG_GGUF_INT32);   put_le(&b, (uint32_t)-70000, 4);
    put_key(&b, "t.f32", PG_GGUF_FLOAT32); put_le(&b, f32_bits(1.5f), 4);
    put_key(&b, "t.bool", PG_GGUF_BOOL);   put_le(&b, 1, 1);
    put_key(&b, "t.str", PG_GGUF_STRING);  put_str(&b, "hello");
    put_key(&b, "t.u64", PG_GGUF_UINT64);  put_le(&b, 1ull << 40, 8);
    put_key(&b, "t.i64", PG_GGUF_INT64);   put_le(&b, (uint64_t)-(1ll << 41), 8);
    double dv = -2.25;
    uint64_t db;
    memcpy(&db, &dv, 8);
    put_key(&b, "t.f64", PG_GGUF_FLOAT64); put_le(&b, db, 8);
    put_key(&b, "t.arr_u32", PG_GGUF_ARRAY);
    put_le(&b, PG_GGUF_UINT32, 4); put_le(&b, 3, 8);
    put_le(&b, 7, 4); put_le(&b, 8, 4); put_le(&b, 9, 4);
    put_key(&b, "t.arr_str", PG_GGUF_ARRAY);
    put_le(&b, PG_GGUF_STRING, 4); put_le(&b, 3, 8);
    put_str(&b, "x"); put_str(&b, ""); put_str(&b, "zz");
    put_key(&b, "t.arr_empty", PG_GGUF_ARRAY);
    put_le(&b, PG_GGUF_FLOAT32, 4); put_le(&b, 0, 8);
    put_key(&b, "general.alignment", PG_GGUF_UINT32); put_le(&b, 64, 4);
    uint64_t off = 0;
    for (int i = 0; i < nt; i++) {
        put_str(&b, ts[i].name);
        put_le(&b, (uint64_t)ts[i].n_dims, 4);
        for (int d = 0; d < ts[i].n_dims; d++)
            put_le(&b, ts[i].dims[d], 8);
        put_le(&b, (uint64_t)ts[i].type, 4);
        put_le(&b, off, 8);
        off += (ts[i].bytes + 63) / 64 * 64;
    }
    while (b.n % 64)
        put_le(&b, 0, 1);
    /* data */
    for (int i = 0; i < nt; i++) {
        size_t start = b.n;
        switch (ts[i].type) {
        case PG_GGML_F32:
            for (int k = 0; k < 8; k++)
                put_le(&b, f32_bits((float)k - 3.0f), 4);
            break;
        case PG_GGML_F16:
            put_le(&b, 0x3c00, 2); put_le(&b, 0xbc00, 2); put_le(&b, 0x0001, 2);
            break;
        case PG_GGML_Q8_0:   /* block 0: d = 0.5, q = k - 16; block 1: d = 2, q = -k */
            put_le(&b, 0x3800, 2);
            for (int k = 0; k < 32; k++) put_le(&b, (uint8_t)(k - 16), 1);
            put_le(&b, 0x4000, 2);
            for (int k = 0; k < 32; k++) put_le(&b, (uint8_t)(-k), 1);
            break;
        case PG_GGML_Q4_1:   /* d = 1, m = -1 (block 0), d = 0.5, m = 2 (block 1) */
            put_le(&b, 0x3c00, 2); put_le(&b, 0xbc00, 2);
            for (int k = 0; k < 16; k++) put_le(&b, (uint8_t)(k | (15 - k) << 4), 1);
            put_le(&b, 0x3800, 2); put_le(&b, 0x4000, 2);
            for (int k = 0; k < 16; k++) put_le(&b, (uint8_t)(k | k << 4), 1);
            break;
        case PG_GGML_Q4_0:   /* d = 2 */
            put_le(&b, 0x4000, 2);
            for (int k = 0; k < 16; k++) put_le(&b, (uint8_t)(k | (15 - k) << 4), 1);
            break;
        }
        if (i + 1 < nt)
            while ((b.n - start) % 64)
                put_le(&b, 0, 1);
    }
    return b;
}

static float tensor_expected(int t, int k)
{
    switch (t) {
    case 0: return (float)k - 3.0f;
    case 1: return k == 0 ? 1.0f : k == 1 ? -1.0f : 5.9604645e-08f;
    case 2: return k < 32 ? 0.5f * (float)(k - 16) : 2.0f * (float)-(k - 32);
    case 3: if (k < 16) return (float)k - 1.0f;
            if (k < 32) return (float)(15 - (k - 16)) - 1.0f;
            return 0.5f * (float)((k - 32) % 16) + 2.0f;
    default: return 2.0f * (float)((k < 16 ? k : 15 - (k - 16)) - 8);
    }
}

static void test_synthetic_contents(const buf *img)
{
    pg_gguf *g = NULL;
    pg_status st = pg_gguf_open_image(img->p, img->n, "synthetic", &g);
    CHECK(st == PG_OK, "%s", pg_last_error());
    if (st != PG_OK)
        return;
    int64_t v;
    double f;
    const char *s;
    uint64_t len;
    CHECK(pg_gguf_version(g) == 3, "version");
    CHECK(pg_gguf_alignment(g) == 64, "alignment %u", pg_gguf_alignment(g));
    CHECK(pg_gguf_kv_count(g) == 16, "kv count");
    struct { const char *k; int64_t v; } ints[] = {
        { "t.u8", 200 }, { "t.i8", -5 }, { "t.u16", 60000 }, { "t.i16", -300 },
        { "t.u32", 4000000000ll }, { "t.i32", -70000 }, { "t.bool", 1 },
        { "t.u64", 1ll << 40 }, { "t.i64", -(1ll << 41) },
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        int64_t k = pg_gguf_find_key(g, ints[i].k);
        CHECK(k >= 0 && pg_gguf_get_int(g, k, &v) == PG_OK && v == ints[i].v, "%s", ints[i].k);
    }
    CHECK(pg_gguf_get_float(g, pg_gguf_find_key(g, "t.f32"), &f) == PG_OK && f == 1.5, "f32");
    CHECK(pg_gguf_get_float(g, pg_gguf_find_key(g, "t.f64"), &f) == PG_OK && f == -2.25, "f64");
    CHECK(pg_gguf_get_float(g, pg_gguf_find_key(g, "t.u8"), &f) == PG_ERR_DTYPE, "dtype check");
    CHECK(pg_gguf_get_string(g, pg_gguf_find_key(g, "t.str"), &s, &len) == PG_OK && len == 5 &&
          memcmp(s, "hello", 5) == 0, "string");
    CHECK(pg_gguf_get_int(g, pg_gguf_find_key(g, "t.str"), &v) == PG_ERR_DTYPE, "string as int");
    CHECK(pg_gguf_find_key(g, "no.such.key") == -1, "missing key");
    int64_t a = pg_gguf_find_key(g, "t.arr_u32");
    CHECK(pg_gguf_kv_type(g, a) == PG_GGUF_ARRAY && pg_gguf_kv_array_type(g, a) == PG_GGUF_UINT32, "arr type");
    CHECK(pg_gguf_array_len(g, a, &len) == PG_OK && len == 3, "arr len");
    CHECK(pg_gguf_array_get_int(g, a, 2, &v) == PG_OK && v == 9, "arr elem");
    CHECK(pg_gguf_array_get_int(g, a, 3, &v) == PG_ERR_INVALID_ARG, "arr bound");
    a = pg_gguf_find_key(g, "t.arr_str");
    CHECK(pg_gguf_array_get_string(g, a, 0, &s, &len) == PG_OK && len == 1 && s[0] == 'x', "arr str 0");
    CHECK(pg_gguf_array_get_string(g, a, 1, &s, &len) == PG_OK && len == 0, "arr str 1");
    CHECK(pg_gguf_array_get_string(g, a, 2, &s, &len) == PG_OK && len == 2 && s[1] == 'z', "arr str 2");
    CHECK(pg_gguf_kv_key(g, 99) == NULL && pg_last_status() == PG_ERR_INVALID_ARG, "bad kv index");

    CHECK(pg_gguf_tensor_count(g) == 5, "tensor count");
    const int64_t n_el[5] = { 8, 3, 64, 64, 32 };
    for (int t = 0; t < 5; t++) {
        pg_gguf_tensor_info ti;
        CHECK(pg_gguf_tensor_info_get(g, t, &ti) == PG_OK, "info %d", t);
        CHECK(ti.n_elements == n_el[t], "elements of %s", ti.name);
        CHECK(pg_gguf_find_tensor(g, ti.name) == t, "find %s", ti.name);
        CHECK(ti.file_offset % 64 == 0, "aligned %s", ti.name);
        float out[64];
        CHECK(pg_gguf_dequantize(g, t, out, n_el[t]) == PG_OK, "%s", pg_last_error());
        for (int k = 0; k < n_el[t]; k++)
            CHECK(out[k] == tensor_expected(t, k), "%s[%d] = %g, want %g", ti.name, k, out[k],
                  tensor_expected(t, k));
        CHECK(pg_gguf_dequantize(g, t, out, n_el[t] - 1) == PG_ERR_SHAPE, "short output");
    }
    float row[32];
    CHECK(pg_gguf_dequantize_rows(g, 2, 1, 1, row) == PG_OK && row[5] == -10.0f, "row 1 of q8_0");
    CHECK(pg_gguf_dequantize_rows(g, 2, 1, 2, row) == PG_ERR_SHAPE, "rows past the end");
    CHECK(pg_gguf_find_tensor(g, "nope") == -1 && pg_last_status() == PG_ERR_INVALID_ARG, "no tensor");
    pg_gguf_close(g);
}

/* Open a copy of image[0..n) in a buffer of exactly n bytes. */
static pg_status open_copy(const uint8_t *image, size_t n, pg_gguf **g)
{
    uint8_t *copy = malloc(n ? n : 1);
    memcpy(copy, image, n);
    pg_status st = pg_gguf_open_image(copy, n, "copy", g);
    if (st == PG_OK) {
        /* walk everything the handle offers: it must stay inside the copy */
        for (int64_t i = 0; i < pg_gguf_kv_count(*g); i++) {
            int64_t v;
            double f;
            const char *s;
            uint64_t len, m = 0;
            pg_gguf_get_int(*g, i, &v);
            pg_gguf_get_float(*g, i, &f);
            if (pg_gguf_get_string(*g, i, &s, &len) == PG_OK && len)
                v = s[len - 1];
            pg_gguf_array_len(*g, i, &m);
            for (uint64_t j = 0; j < m && j < 64; j++) {
                if (pg_gguf_array_get_string(*g, i, m - 1 - j, &s, &len) == PG_OK && len)
                    v = s[len - 1];
                pg_gguf_array_get_int(*g, i, m - 1 - j, &v);
            }
        }
        for (int64_t t = 0; t < pg_gguf_tensor_count(*g); t++) {
            pg_gguf_tensor_info ti;
            pg_gguf_tensor_info_get(*g, t, &ti);
            if (ti.n_elements <= 4096) {
                float *out = malloc((size_t)(ti.n_elements ? ti.n_elements : 1) * sizeof(float));
                pg_gguf_dequantize(*g, t, out, ti.n_elements);
                free(out);
            }
        }
        pg_gguf_close(*g);
    }
    free(copy);
    *g = NULL;
    return st;
}

static void test_truncation_and_damage(const buf *img)
{
    pg_gguf *g;
    for (size_t n = 0; n < img->n; n++) {
        pg_status st = open_copy(img->p, n, &g);
        CHECK(st == PG_ERR_FORMAT, "truncated at %zu: status %d (%s)", n, st, pg_last_error());
    }
    CHECK(open_copy(img->p, img->n, &g) == PG_OK, "%s", pg_last_error());
    /* random damage: 1 to 4 bytes, anywhere */
    uint8_t *work = malloc(img->n);
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    int ok = 0, bad = 0;
    for (int trial = 0; trial < 20000; trial++) {
        memcpy(work, img->p, img->n);
        int hits = 1 + (int)((rng >> 60) & 3);
        for (int h = 0; h < hits; h++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            size_t at = (size_t)(rng >> 33) % img->n;
            work[at] = (uint8_t)(rng >> 13);
        }
        pg_status st = open_copy(work, img->n, &g);
        if (st == PG_OK)
            ok++;
        else
            bad++;
        CHECK(st == PG_OK || st == PG_ERR_FORMAT, "damage trial %d: status %d", trial, st);
    }
    free(work);
    printf("synthetic: %zu truncations rejected, random damage %d opened / %d rejected\n", img->n,
           ok, bad);
}

/* ---- the real model file ----------------------------------------------- */

static uint8_t *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc((size_t)size);
    if (p && fread(p, 1, (size_t)size, f) != (size_t)size) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *n = (size_t)size;
    return p;
}

/* Damage one field of the real file in a copy of its header region (plus
 * the data, borrowed: only the header is copied and patched). */
static void expect_corrupt(const uint8_t *file, size_t n, size_t at, const void *bytes, size_t len,
                           const char *what)
{
    uint8_t *copy = malloc(n);
    memcpy(copy, file, n);
    memcpy(copy + at, bytes, len);
    pg_gguf *g = NULL;
    pg_status st = pg_gguf_open_image(copy, n, "model", &g);
    CHECK(st == PG_ERR_FORMAT, "%s: status %d", what, st);
    if (st == PG_ERR_FORMAT)
        printf("  %-28s -> %s\n", what, pg_last_error());
    pg_gguf_close(g);
    free(copy);
}

static void test_model(const char *path)
{
    pg_gguf *g = NULL;
    pg_status st = pg_gguf_open(path, &g);
    CHECK(st == PG_OK, "%s", pg_last_error());
    if (st != PG_OK)
        return;
    const char *s;
    uint64_t len;
    int64_t v;
    CHECK(pg_gguf_get_string(g, pg_gguf_find_key(g, "general.architecture"), &s, &len) == PG_OK &&
          len == 5 && memcmp(s, "llama", 5) == 0, "architecture");
    CHECK(pg_gguf_get_int(g, pg_gguf_find_key(g, "llama.block_count"), &v) == PG_OK && v == 30, "blocks");
    int64_t tk = pg_gguf_find_key(g, "tokenizer.ggml.tokens");
    CHECK(pg_gguf_array_len(g, tk, &len) == PG_OK && len == 49152, "vocab");
    CHECK(pg_gguf_array_get_string(g, tk, 1, &s, &len) == PG_OK && len == 12 &&
          memcmp(s, "<|im_start|>", 12) == 0, "token 1");
    CHECK(pg_gguf_tensor_count(g) == 272, "tensors");
    int64_t e = pg_gguf_find_tensor(g, "token_embd.weight");
    pg_gguf_tensor_info ti;
    CHECK(e >= 0 && pg_gguf_tensor_info_get(g, e, &ti) == PG_OK && ti.type == PG_GGML_Q8_0 &&
          ti.dims[0] == 576 && ti.dims[1] == 49152 && ti.bytes == 576 / 32 * 34 * 49152ull, "embd");
    /* a whole q4_1 matrix: finite, not all zero, and row access agrees */
    int64_t q = pg_gguf_find_tensor(g, "blk.0.attn_q.weight");
    CHECK(q >= 0 && pg_gguf_tensor_info_get(g, q, &ti) == PG_OK && ti.type == PG_GGML_Q4_1, "attn_q");
    float *w = malloc((size_t)ti.n_elements * sizeof(float));
    CHECK(pg_gguf_dequantize(g, q, w, ti.n_elements) == PG_OK, "%s", pg_last_error());
    double sum2 = 0;
    int finite = 1;
    for (int64_t k = 0; k < ti.n_elements; k++) {
        finite &= isfinite(w[k]);
        sum2 += (double)w[k] * w[k];
    }
    CHECK(finite && sum2 > 0, "q4_1 values");
    float row[576];
    CHECK(pg_gguf_dequantize_rows(g, q, 7, 1, row) == PG_OK && memcmp(row, w + 7 * 576, sizeof row) == 0,
          "row 7");
    free(w);
    printf("model: %lld keys, %lld tensors, data at %llu, attn_q rms %.4f\n",
           (long long)pg_gguf_kv_count(g), (long long)pg_gguf_tensor_count(g),
           (unsigned long long)pg_gguf_data_offset(g), sqrt(sum2 / (double)(576 * 576)));

    /* positions of fields to damage, from the parse */
    uint64_t data_off = g->data_offset;
    uint64_t tokens_pos = g->kv[tk].pos;            /* first token's length */
    uint64_t first_key = 24;
    size_t t0 = 0;                                  /* tensor 0 info: find its name */
    uint64_t t0_off = g->tensors[0].offset;
    pg_gguf_close(g);

    size_t n;
    uint8_t *file = read_file(path, &n);
    CHECK(file != NULL, "read %s", path);
    if (!file)
        return;
    /* truncations: every 4 KiB... of the header in exact-size copies, and
     * spots in the data (header copied, data borrowed would need the whole
     * file: use the full buffer with a smaller size instead) */
    int rejected = 0;
    for (uint64_t cut = 0; cut < data_off + 64; cut += (cut < 256 ? 1 : 4093)) {
        pg_gguf *h;
        pg_status st2 = open_copy(file, (size_t)cut, &h);
        CHECK(st2 == PG_ERR_FORMAT, "cut at %llu: %d", (unsigned long long)cut, st2);
        rejected += st2 == PG_ERR_FORMAT;
    }
    for (int k = 1; k <= 16; k++) {
        uint64_t cut = data_off + (n - data_off) / 17 * (uint64_t)k;
        pg_gguf *h = NULL;
        pg_status st2 = pg_gguf_open_image(file, cut, "model", &h);
        CHECK(st2 == PG_ERR_FORMAT, "cut in data at %llu: %d", (unsigned long long)cut, st2);
        rejected += st2 == PG_ERR_FORMAT;
        pg_gguf_close(h);
    }
    {
        pg_gguf *h = NULL;
        CHECK(pg_gguf_open_image(file, n - 1, "model", &h) == PG_ERR_FORMAT, "cut last byte");
        pg_gguf_close(h);
    }
    printf("model: %d truncations rejected\n", rejected);

    /* the tensor-info section starts after the last kv; find tensor 0's name
     * by searching for it */
    for (size_t p = 0; p + 17 < data_off; p++)
        if (memcmp(file + p, "token_embd.weight", 17) == 0 && file[p - 8] == 17) {
            t0 = p - 8;
            break;
        }
    CHECK(t0 != 0, "tensor 0 info found");
    uint64_t big = 0x7fffffffffffffffull, huge = 1ull << 40, five = 5, ninety = 99, odd = 3;
    uint32_t v1 = 1, v4 = 4, vbe = 0x03000000u, bad_type = 99;
    printf("model: damaged header fields:\n");
    expect_corrupt(file, n, 0, "GGUX", 4, "magic");
    expect_corrupt(file, n, 4, &v1, 4, "version 1");
    expect_corrupt(file, n, 4, &v4, 4, "version 4");
    expect_corrupt(file, n, 4, &vbe, 4, "big-endian version");
    expect_corrupt(file, n, 8, &big, 8, "tensor count huge");
    expect_corrupt(file, n, 16, &big, 8, "kv count huge");
    expect_corrupt(file, n, 8, &(uint64_t){ 273 }, 8, "tensor count + 1");
    expect_corrupt(file, n, 16, &(uint64_t){ 34 }, 8, "kv count + 1");
    expect_corrupt(file, n, first_key, &huge, 8, "first key length huge");
    expect_corrupt(file, n, first_key + 8 + 20, &bad_type, 4, "first value type 99");
    expect_corrupt(file, n, tokens_pos - 8, &big, 8, "token array count huge");
    expect_corrupt(file, n, tokens_pos - 12, &ninety, 4, "token array elem type");
    expect_corrupt(file, n, tokens_pos, &huge, 8, "first token length huge");
    expect_corrupt(file, n, t0 + 25, &five, 4, "tensor n_dims 5");
    expect_corrupt(file, n, t0 + 29, &big, 8, "tensor dim huge");
    expect_corrupt(file, n, t0 + 29, &(uint64_t){ 577 }, 8, "tensor dim not block multiple");
    expect_corrupt(file, n, t0 + 45, &bad_type, 4, "tensor type 99");
    expect_corrupt(file, n, t0 + 49, &(uint64_t){ t0_off + odd }, 8, "tensor offset misaligned");
    expect_corrupt(file, n, t0 + 49, &(uint64_t){ n }, 8, "tensor offset past end");
    expect_corrupt(file, n, t0 + 49, &big, 8, "tensor offset huge");
    free(file);
}

int main(int argc, char **argv)
{
    buf img = make_synthetic();
    test_synthetic_contents(&img);
    test_truncation_and_damage(&img);
    free(img.p);
    const char *model = argc > 1 ? argv[1] : getenv("PG_TEST_GGUF");
    if (model && *model)
        test_model(model);
    else
        printf("no model file given: the real-file checks are skipped\n");
    /* bad arguments */
    pg_gguf *g = (pg_gguf *)1;
    CHECK(pg_gguf_open("/nonexistent/file.gguf", &g) == PG_ERR_IO && g == NULL, "missing file");
    CHECK(pg_gguf_open(NULL, &g) == PG_ERR_INVALID_ARG, "NULL path");
    CHECK(pg_gguf_open("/", &g) == PG_ERR_IO, "a directory");
    CHECK(pg_gguf_kv_count(NULL) == 0 && pg_gguf_tensor_count(NULL) == 0, "NULL handle");
    CHECK(pg_dequantize(PG_GGML_Q4_1, "", NULL, 32) == PG_ERR_INVALID_ARG, "NULL out");
    float out[32];
    CHECK(pg_dequantize(PG_GGML_Q4_1, out, out, 31) == PG_ERR_SHAPE, "partial block");
    CHECK(pg_dequantize(77, out, out, 32) == PG_ERR_DTYPE, "unknown type");
    CHECK(pg_dequantize(PG_GGML_I64, out, out, 4) == PG_ERR_UNSUPPORTED, "i64");
    if (failures) {
        printf("%d failures\n", failures);
        return 1;
    }
    printf("all GGUF checks passed\n");
    return 0;
}

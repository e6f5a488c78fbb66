/* fuzz_gguf.c - the GGUF reader on arbitrary bytes.
 *
 * The bytes are parsed as a file image in memory (pg_gguf_open_image) and,
 * through a memfd, by the path-based pg_gguf_open: both must agree.  When
 * the image opens, every metadata key and value is read through the public
 * getters (array elements too, capped), every tensor info is read and its
 * bytes touched, small tensors are dequantised whole and a few rows of
 * every tensor; then the tokenizer is built from the metadata when it
 * allows, and a few strings are encoded and decoded with it.  A PG_ERR_*
 * status anywhere is fine; a crash, a sanitizer report, a leak or a broken
 * invariant (FZ_ASSERT) is a bug. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../gguf/gguf.h"
#include "fuzz_common.h"

#define MAX_ARRAY_WALK 64
#define MAX_DEQUANT_ELEMENTS 65536

static size_t elem_bytes(int type)
{
    switch (type) {
    case PG_GGUF_UINT8: case PG_GGUF_INT8: case PG_GGUF_BOOL: return 1;
    case PG_GGUF_UINT16: case PG_GGUF_INT16: return 2;
    case PG_GGUF_UINT32: case PG_GGUF_INT32: case PG_GGUF_FLOAT32: return 4;
    case PG_GGUF_UINT64: case PG_GGUF_INT64: case PG_GGUF_FLOAT64: return 8;
    default: return 0;
    }
}

static void walk_metadata(const pg_gguf *g)
{
    int64_t n_kv = pg_gguf_kv_count(g);
    FZ_ASSERT(n_kv >= 0, "kv count %lld", (long long)n_kv);
    for (int64_t i = 0; i < n_kv; i++) {
        const char *key = pg_gguf_kv_key(g, i);
        FZ_ASSERT(key != NULL, "key %lld is NULL", (long long)i);
        fz_touch_str(key);
        FZ_ASSERT(pg_gguf_find_key(g, key) == i, "find_key('%s') != %lld", key, (long long)i);
        int type = pg_gguf_kv_type(g, i);
        int64_t iv;
        double fv;
        const char *s;
        uint64_t len, n;
        fz_check_status(pg_gguf_get_int(g, i, &iv), "pg_gguf_get_int");
        fz_check_status(pg_gguf_get_float(g, i, &fv), "pg_gguf_get_float");
        pg_status st = pg_gguf_get_string(g, i, &s, &len);
        fz_check_status(st, "pg_gguf_get_string");
        if (st == PG_OK)
            fz_touch(s, (size_t)len);
        FZ_ASSERT((st == PG_OK) == (type == PG_GGUF_STRING), "string getter vs type %d", type);
        st = pg_gguf_array_len(g, i, &n);
        fz_check_status(st, "pg_gguf_array_len");
        FZ_ASSERT((st == PG_OK) == (type == PG_GGUF_ARRAY), "array getter vs type %d", type);
        if (st != PG_OK)
            continue;
        int et = pg_gguf_kv_array_type(g, i);
        const void *data;
        st = pg_gguf_array_data(g, i, &data);
        fz_check_status(st, "pg_gguf_array_data");
        if (st == PG_OK) {
            uint64_t walk = n < MAX_ARRAY_WALK ? n : MAX_ARRAY_WALK;
            fz_touch(data, (size_t)(walk * elem_bytes(et)));
            if (n)   /* the last element too: the whole array lies in the file */
                fz_touch((const uint8_t *)data + (n - 1) * elem_bytes(et), elem_bytes(et));
        }
        for (uint64_t j = 0; j < n && j < MAX_ARRAY_WALK; j++) {
            fz_check_status(pg_gguf_array_get_int(g, i, j, &iv), "pg_gguf_array_get_int");
            fz_check_status(pg_gguf_array_get_float(g, i, j, &fv), "pg_gguf_array_get_float");
            if (pg_gguf_array_get_string(g, i, j, &s, &len) == PG_OK)
                fz_touch(s, (size_t)len);
        }
        if (n > MAX_ARRAY_WALK && pg_gguf_array_get_string(g, i, n - 1, &s, &len) == PG_OK)
            fz_touch(s, (size_t)len);
        /* one past the end is an error, not a read */
        FZ_ASSERT(pg_gguf_array_get_int(g, i, n, &iv) != PG_OK, "element n of an array");
    }
    FZ_ASSERT(pg_gguf_kv_key(g, n_kv) == NULL, "key past the end");
}

static void walk_tensors(const pg_gguf *g)
{
    int64_t n_t = pg_gguf_tensor_count(g);
    uint64_t size = pg_gguf_file_size(g), data_off = pg_gguf_data_offset(g);
    FZ_ASSERT(data_off <= size, "data offset %llu past the file (%llu)",
              (unsigned long long)data_off, (unsigned long long)size);
    for (int64_t i = 0; i < n_t; i++) {
        pg_gguf_tensor_info ti;
        pg_status st = pg_gguf_tensor_info_get(g, i, &ti);
        FZ_ASSERT(st == PG_OK, "tensor info %lld: %s", (long long)i, pg_last_error());
        fz_touch_str(ti.name);
        FZ_ASSERT(pg_gguf_find_tensor(g, ti.name) == i, "find_tensor('%s')", ti.name);
        FZ_ASSERT(ti.n_dims >= 1 && ti.n_dims <= 4, "n_dims %d", ti.n_dims);
        FZ_ASSERT(ti.file_offset <= size && ti.bytes <= size - ti.file_offset,
                  "tensor '%s' bytes [%llu, +%llu) past the file (%llu)", ti.name,
                  (unsigned long long)ti.file_offset, (unsigned long long)ti.bytes,
                  (unsigned long long)size);
        if (ti.bytes) {   /* the first and last bytes of the tensor are readable */
            fz_touch(ti.data, 1);
            fz_touch((const uint8_t *)ti.data + ti.bytes - 1, 1);
        }
        const char *tn = pg_ggml_type_name(ti.type);
        FZ_ASSERT(tn != NULL, "tensor '%s' of unknown type %d opened", ti.name, ti.type);
        if (ti.n_elements <= MAX_DEQUANT_ELEMENTS) {
            float *out = malloc((size_t)(ti.n_elements ? ti.n_elements : 1) * sizeof *out);
            if (out) {
                fz_check_status(pg_gguf_dequantize(g, i, out, ti.n_elements), "pg_gguf_dequantize");
                free(out);
            }
        }
        /* a few rows: the first two and the last */
        int64_t row = ti.dims[0];
        if (row > 0 && row <= MAX_DEQUANT_ELEMENTS) {
            int64_t rows = ti.n_elements / row;
            float *out = malloc((size_t)row * 2 * sizeof *out);
            if (out) {
                int64_t k = rows < 2 ? rows : 2;
                fz_check_status(pg_gguf_dequantize_rows(g, i, 0, k, out), "pg_gguf_dequantize_rows");
                if (rows > 0)
                    fz_check_status(pg_gguf_dequantize_rows(g, i, rows - 1, 1, out),
                                    "pg_gguf_dequantize_rows");
                FZ_ASSERT(pg_gguf_dequantize_rows(g, i, rows, 1, out) != PG_OK, "row past the end");
                free(out);
            }
        }
    }
}

/* The tokenizer on the fuzzed metadata: build it, encode and decode. */
static void try_tokenizer(const pg_gguf *g)
{
    pg_tokenizer *t = NULL;
    pg_status st = pg_tokenizer_from_gguf(g, &t);
    fz_check_status(st, "pg_tokenizer_from_gguf");
    if (st != PG_OK)
        return;
    int32_t n_vocab = pg_tokenizer_vocab_size(t);
    FZ_ASSERT(n_vocab > 0, "vocabulary of %d", n_vocab);
    fz_touch_str(pg_tokenizer_pre(t));
    for (int32_t id = 0; id < n_vocab && id < 512; id++) {
        const char *txt = pg_tokenizer_token_text(t, id);
        FZ_ASSERT(txt != NULL, "token %d has no text", id);
        fz_touch_str(txt);
        int32_t back = pg_tokenizer_find(t, txt);   /* -1 for a text with a NUL inside */
        FZ_ASSERT(back >= -1 && back < n_vocab, "find(text of %d) = %d", id, back);
        char piece[64];
        size_t pn = 0;
        fz_check_status(pg_token_to_piece(t, id, id & 1, piece, sizeof piece, &pn), "pg_token_to_piece");
    }
    static const char *const texts[] = {
        "Hello, world! 123 <|im_start|>user\nhi<|im_end|>", "  \t\n  x", "\xff\xfe abc \xe2\x82",
        "日本語のテキスト", "I'm you're they'll", "",
    };
    for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) {
        int32_t ids[256];
        size_t n = 0, m = 0;
        st = pg_tokenize(t, texts[k], strlen(texts[k]), (int)(k & 1), (int)(k >> 1 & 1), ids, 256, &n);
        fz_check_status(st, "pg_tokenize");
        if (st != PG_OK)
            continue;
        char buf[4096];
        fz_check_status(pg_detokenize(t, ids, n, 1, buf, sizeof buf, &m), "pg_detokenize");
    }
    pg_tokenizer_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pg_gguf *g = NULL;
    pg_status st = pg_gguf_open_image(data, size, "fuzz.gguf", &g);
    fz_check_status(st, "pg_gguf_open_image");
    FZ_ASSERT((st == PG_OK) == (g != NULL), "status %d with handle %p", (int)st, (void *)g);

    /* the path-based open must agree (a memfd: no file system involved) */
    int fd = memfd_create("fuzz.gguf", MFD_CLOEXEC);
    if (fd >= 0) {
        size_t done = 0;
        while (done < size) {
            ssize_t w = write(fd, data + done, size - done);
            if (w <= 0)
                break;
            done += (size_t)w;
        }
        if (done == size) {
            char path[64];
            snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
            pg_gguf *g2 = NULL;
            pg_status st2 = pg_gguf_open(path, &g2);
            fz_check_status(st2, "pg_gguf_open");
            FZ_ASSERT(st2 == st, "pg_gguf_open gave %s, pg_gguf_open_image %s (%s)",
                      pg_status_name(st2), pg_status_name(st), pg_last_error());
            if (g2)
                FZ_ASSERT(pg_gguf_kv_count(g2) == pg_gguf_kv_count(g) &&
                          pg_gguf_tensor_count(g2) == pg_gguf_tensor_count(g), "counts differ");
            pg_gguf_close(g2);
        }
        close(fd);
    }
    if (st != PG_OK)
        return 0;
    FZ_ASSERT(pg_gguf_version(g) == 2 || pg_gguf_version(g) == 3, "version %u", pg_gguf_version(g));
    uint32_t a = pg_gguf_alignment(g);
    FZ_ASSERT(a && !(a & (a - 1)), "alignment %u", a);
    walk_metadata(g);
    walk_tensors(g);
    try_tokenizer(g);
    pg_gguf_close(g);
    return 0;
}

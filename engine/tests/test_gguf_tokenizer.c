/* test_gguf_tokenizer.c - the BPE tokenizer of a real GGUF file: known ids
 * for a few strings, round trips of random text (valid and invalid UTF-8),
 * buffer-size errors.  Agreement with llama.cpp on a wide set of strings is
 * tests/test_tokenizer.py's job (golden ids made by llama.cpp).
 *
 *   test_gguf_tokenizer model.gguf      (skips, exit 77, without a model) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peregrine.h"
#include "test_util.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

/* A random code point from mixed ranges: ASCII (letters, digits,
 * punctuation, white space), Latin, Greek, CJK, emoji. */
static uint32_t random_cp(void)
{
    static const uint32_t lo[] = { 0x20, 0x09, 0x30, 0xc0, 0x391, 0x4e00, 0x1f600, 0x2000, 0x0a };
    static const uint32_t span[] = { 95, 5, 10, 64, 40, 500, 80, 16, 1 };
    int k = (int)(next() % 9);
    return lo[k] + next() % span[k];
}

static size_t put_utf8(uint32_t cp, char *out)
{
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) { out[0] = (char)(0xc0 | cp >> 6); out[1] = (char)(0x80 | (cp & 0x3f)); return 2; }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12); out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f)); return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18); out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f)); out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

static void roundtrip(const pg_tokenizer *t, const char *s, size_t len, int exact)
{
    int32_t ids[4096];
    size_t n = 0, m = 0;
    char back[16384];
    pg_status st = pg_tokenize(t, s, len, 0, 1, ids, 4096, &n);
    CHECK(st == PG_OK, "%s", pg_last_error());
    st = pg_detokenize(t, ids, n, 1, back, sizeof back, &m);
    CHECK(st == PG_OK, "%s", pg_last_error());
    if (exact)
        CHECK(m == len && memcmp(back, s, len) == 0, "round trip of %zu bytes gave %zu", len, m);
}

int main(int argc, char **argv)
{
    const char *model = argc > 1 ? argv[1] : getenv("PG_TEST_GGUF");
    if (!model || !*model) {
        printf("no model file given: skipped\n");
        return 77;
    }
    pg_gguf *g = NULL;
    pg_tokenizer *t = NULL;
    if (pg_gguf_open(model, &g) != PG_OK || pg_tokenizer_from_gguf(g, &t) != PG_OK) {
        fprintf(stderr, "FAIL: %s\n", pg_last_error());
        return 1;
    }
    pg_gguf_close(g);   /* the tokenizer keeps its own copies */
    CHECK(pg_tokenizer_vocab_size(t) == 49152, "vocab");
    CHECK(strcmp(pg_tokenizer_pre(t), "smollm") == 0, "pre");
    CHECK(pg_tokenizer_bos(t) == 1 && pg_tokenizer_eos(t) == 2, "bos/eos");
    CHECK(pg_tokenizer_find(t, "<|im_start|>") == 1, "find");
    CHECK(pg_tokenizer_token_type(t, 1) == PG_TOKEN_CONTROL, "type");

    /* special tokens: parsed or not */
    int32_t ids[256];
    size_t n = 0;
    const char *chat = "<|im_start|>user\nHi<|im_end|>\n";
    CHECK(pg_tokenize(t, chat, strlen(chat), 0, 1, ids, 256, &n) == PG_OK && n >= 5 &&
          ids[0] == 1, "chat start");
    int has_end = 0;
    for (size_t i = 0; i < n; i++)
        has_end |= ids[i] == 2;
    CHECK(has_end, "<|im_end|> recognised");
    CHECK(pg_tokenize(t, chat, strlen(chat), 0, 0, ids, 256, &n) == PG_OK && ids[0] != 1,
          "not parsed without parse_special");
    CHECK(pg_tokenize(t, "Hello", 5, 1, 1, ids, 256, &n) == PG_OK && n == 2 && ids[0] == 1, "bos");
    /* digits are single tokens with this pre-tokenizer */
    CHECK(pg_tokenize(t, "1234567", 7, 0, 1, ids, 256, &n) == PG_OK && n == 7, "digits: %zu", n);

    /* buffer too small: an error, and the size needed */
    CHECK(pg_tokenize(t, "hello world again", 17, 0, 1, ids, 1, &n) == PG_ERR_SHAPE && n == 3,
          "capacity: %zu", n);
    char piece[8];
    size_t pn = 0;
    CHECK(pg_token_to_piece(t, 1, 1, piece, 4, &pn) == PG_ERR_SHAPE && pn == 12, "piece size");
    CHECK(pg_token_to_piece(t, 1, 0, piece, 8, &pn) == PG_OK && pn == 0, "control hidden");
    CHECK(pg_token_to_piece(t, 49152, 0, piece, 8, &pn) == PG_ERR_INVALID_ARG, "bad id");
    CHECK(pg_tokenize(NULL, "x", 1, 0, 0, ids, 4, &n) == PG_ERR_INVALID_ARG, "NULL tokenizer");
    CHECK(pg_tokenize(t, "", 0, 0, 0, ids, 4, &n) == PG_OK && n == 0, "empty text");

    /* random valid UTF-8 round-trips exactly; random bytes never crash */
    char s[2048];
    for (int trial = 0; trial < 300; trial++) {
        size_t len = 0;
        int cps = (int)(next() % 200);
        for (int k = 0; k < cps; k++)
            len += put_utf8(random_cp(), s + len);
        roundtrip(t, s, len, 1);
    }
    for (int trial = 0; trial < 300; trial++) {
        size_t len = next() % 512;
        for (size_t k = 0; k < len; k++)
            s[k] = (char)next();
        roundtrip(t, s, len, 0);
    }
    /* a long run of one character: the merge loop stays fast */
    char *spaces = malloc(200000);
    memset(spaces, ' ', 200000);
    int32_t *many = malloc(200000 * sizeof *many);
    CHECK(pg_tokenize(t, spaces, 200000, 0, 0, many, 200000, &n) == PG_OK && n > 0, "long run");
    free(spaces);
    free(many);
    pg_tokenizer_free(t);
    if (failures) {
        printf("%d failures\n", failures);
        return 1;
    }
    printf("all tokenizer checks passed\n");
    return 0;
}

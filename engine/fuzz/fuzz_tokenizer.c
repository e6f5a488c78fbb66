/* fuzz_tokenizer.c - the BPE and SentencePiece tokenizers on arbitrary text.
 *
 * Four tokenizers are built once, from the small vocabularies in
 * tests/fuzz/vocab/ (written by tests/fuzz/make_seeds.py): three BPE ones
 * (the 256 GPT-2 byte symbols, merges trained on a little text, control,
 * user-defined, unknown, byte and unused tokens), one per pre-tokenizer
 * family: smollm (digits split), gpt-2 and llama-bpe; and a SentencePiece
 * one (tok_spm.gguf: scores, <0xNN> byte tokens, a space prefix).  The
 * directory is compiled in (PG_FUZZ_VOCAB_DIR) and may be overridden with
 * $PG_FUZZ_VOCAB_DIR.
 *
 * Input: byte 0 picks the tokenizer (bits 0-1: smollm, gpt-2, llama-bpe,
 * spm), add_bos (bit 2) and parse_special (bit 3); the rest is the text.
 * Checked:
 *   - encoding succeeds, ids in range, BOS first when asked for;
 *   - a buffer one id short is PG_ERR_SHAPE with the count needed;
 *   - the text's ids decode (special = 1) to the concatenated pieces (spm:
 *     less the first piece's leading space, as llama_detokenize), and a
 *     buffer one byte short is PG_ERR_SHAPE with the size needed;
 *   - valid UTF-8 round-trips exactly (BPE: every vocabulary text is
 *     reachable; spm: when the ids are all normal or byte tokens and the
 *     text has no U+2581 of its own; a stray lead byte would swallow the
 *     U+2581 of a space after it);
 *   - the same bytes read as ids (2 bytes each, some out of range) decode
 *     without harm, with and without special tokens. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

#ifndef PG_FUZZ_VOCAB_DIR
#define PG_FUZZ_VOCAB_DIR "tests/fuzz/vocab"
#endif

static pg_tokenizer *toks[4];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    static const char *const files[4] = { "tok_smollm.gguf", "tok_gpt2.gguf", "tok_llama3.gguf",
                                          "tok_spm.gguf" };
    const char *dir = getenv("PG_FUZZ_VOCAB_DIR");
    if (!dir || !*dir)
        dir = PG_FUZZ_VOCAB_DIR;
    for (int i = 0; i < 4; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        pg_gguf *g = NULL;
        if (pg_gguf_open(path, &g) != PG_OK || pg_tokenizer_from_gguf(g, &toks[i]) != PG_OK) {
            fprintf(stderr, "fuzz_tokenizer: cannot build a tokenizer from %s: %s\n"
                    "(set PG_FUZZ_VOCAB_DIR to tests/fuzz/vocab)\n", path, pg_last_error());
            exit(2);
        }
        pg_gguf_close(g);
    }
    return 0;
}

/* Strict UTF-8: no overlong forms, no surrogates, nothing past U+10FFFF. */
static int valid_utf8(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t b = s[i];
        if (b < 0x80) {
            i++;
            continue;
        }
        int need;
        uint32_t cp, min;
        if ((b & 0xe0) == 0xc0) { need = 1; cp = b & 0x1f; min = 0x80; }
        else if ((b & 0xf0) == 0xe0) { need = 2; cp = b & 0x0f; min = 0x800; }
        else if ((b & 0xf8) == 0xf0) { need = 3; cp = b & 0x07; min = 0x10000; }
        else return 0;
        if (i + (size_t)need >= n)
            return 0;
        for (int k = 1; k <= need; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return 0;
            cp = cp << 6 | (s[i + k] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        i += (size_t)need + 1;
    }
    return 1;
}

/* ids -> bytes (special as given); exact-size buffer, checked against the
 * size query and a buffer one byte short.  Returns malloc'd bytes. */
static char *decode(const pg_tokenizer *t, const int32_t *ids, size_t n, int special, size_t *len)
{
    size_t need = 0;
    pg_status st = pg_detokenize(t, ids, n, special, NULL, 0, &need);
    fz_check_status(st, "pg_detokenize (size)");
    if (st != PG_OK && st != PG_ERR_SHAPE)
        return NULL;
    FZ_ASSERT((st == PG_OK) == (need == 0), "size query: %s for %zu bytes", pg_status_name(st), need);
    char *buf = malloc(need ? need : 1);
    if (!buf)
        return NULL;
    size_t got = 0;
    st = pg_detokenize(t, ids, n, special, buf, need, &got);
    FZ_ASSERT(st == PG_OK && got == need, "decode into %zu bytes: %s, %zu", need,
              pg_status_name(st), got);
    if (need) {
        size_t short_n = 0;
        st = pg_detokenize(t, ids, n, special, buf, need - 1, &short_n);
        FZ_ASSERT(st == PG_ERR_SHAPE && short_n == need, "one byte short: %s, %zu", pg_status_name(st),
                  short_n);
        /* the short call may only have written need - 1 bytes: decode again */
        st = pg_detokenize(t, ids, n, special, buf, need, &got);
        FZ_ASSERT(st == PG_OK && got == need, "decode again");
    }
    *len = need;
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t flags = data[0];
    const pg_tokenizer *t = toks[flags & 3];
    int spm = (flags & 3) == 3;
    int add_bos = flags >> 2 & 1, parse_special = flags >> 3 & 1;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    int32_t n_vocab = pg_tokenizer_vocab_size(t);

    size_t cap = len + 2, n = 0;
    int32_t *ids = malloc(cap * sizeof *ids);
    if (!ids)
        return 0;
    pg_status st = pg_tokenize(t, text, len, add_bos, parse_special, ids, cap, &n);
    fz_check_status(st, "pg_tokenize");
    if (st == PG_ERR_SHAPE) {
        FZ_ASSERT(n > cap, "PG_ERR_SHAPE with %zu ids needed for a buffer of %zu", n, cap);
        cap = n;
        int32_t *more = realloc(ids, cap * sizeof *ids);
        if (!more) {
            free(ids);
            return 0;
        }
        ids = more;
        size_t n2 = 0;
        st = pg_tokenize(t, text, len, add_bos, parse_special, ids, cap, &n2);
        FZ_ASSERT(st == PG_OK && n2 == n, "retry with %zu ids: %s, %zu", cap, pg_status_name(st), n2);
    }
    FZ_ASSERT(st == PG_OK, "pg_tokenize: %s", pg_last_error());
    FZ_ASSERT(!add_bos || (n >= 1 && ids[0] == pg_tokenizer_bos(t)), "BOS first");
    FZ_ASSERT(len == 0 || n > (size_t)add_bos, "%zu bytes of text gave no ids", len);
    for (size_t i = 0; i < n; i++)
        FZ_ASSERT(ids[i] >= 0 && ids[i] < n_vocab, "id %d at %zu", ids[i], i);
    if (n >= 1) {
        size_t need = 0;
        st = pg_tokenize(t, text, len, add_bos, parse_special, ids, n - 1, &need);
        FZ_ASSERT(st == PG_ERR_SHAPE && need == n, "one id short: %s, %zu of %zu",
                  pg_status_name(st), need, n);
        st = pg_tokenize(t, text, len, add_bos, parse_special, ids, n, &need);   /* ids again */
        FZ_ASSERT(st == PG_OK && need == n, "encode again");
    }

    /* decode: the pieces, concatenated (spm: the first one's space off) */
    size_t dlen = 0;
    char *dec = decode(t, ids, n, 1, &dlen);
    if (dec) {
        size_t at = 0;
        int plain = 1;   /* only normal and byte tokens */
        for (size_t i = 0; i < n; i++) {
            char piece[256];
            size_t pn = 0;
            st = pg_token_to_piece(t, ids[i], 1, piece, sizeof piece, &pn);
            FZ_ASSERT(st == PG_OK, "piece of %d: %s", ids[i], pg_last_error());
            int ty = pg_tokenizer_token_type(t, ids[i]);
            plain &= i < (size_t)add_bos || ty == PG_TOKEN_NORMAL || ty == PG_TOKEN_BYTE;
            size_t off = spm && i == 0 && pn && piece[0] == ' ';
            FZ_ASSERT(at + pn - off <= dlen && memcmp(dec + at, piece + off, pn - off) == 0,
                      "piece %zu differs", i);
            at += pn - off;
        }
        FZ_ASSERT(at == dlen, "pieces give %zu bytes, the decode %zu", at, dlen);
        int has_mark = 0;
        for (size_t i = 0; i + 3 <= len && !has_mark; i++)
            has_mark = memcmp(text + i, "\xe2\x96\x81", 3) == 0;
        if (valid_utf8((const uint8_t *)text, len) && (!spm || (plain && !has_mark))) {
            size_t skip = add_bos ? 1 : 0, rlen = 0;
            char *rt = decode(t, ids + skip, n - skip, 1, &rlen);
            if (rt)
                FZ_ASSERT(rlen == len && memcmp(rt, text, len) == 0,
                          "%zu bytes of text round-trip to %zu bytes", len, rlen);
            free(rt);
        }
        free(dec);
    }
    size_t plain_len = 0;
    free(decode(t, ids, n, 0, &plain_len));

    /* the bytes as ids, some out of range */
    size_t n_raw = len / 2;
    for (size_t i = 0; i < n_raw; i++) {
        uint32_t v = (uint32_t)(uint8_t)text[2 * i] | (uint32_t)(uint8_t)text[2 * i + 1] << 8;
        ids[i] = (int32_t)(v % (uint32_t)(n_vocab + 2)) - 1;   /* -1 .. n_vocab */
    }
    int bad = 0;
    for (size_t i = 0; i < n_raw; i++)
        bad |= ids[i] < 0 || ids[i] >= n_vocab;
    for (int special = 0; special < 2; special++) {
        size_t need = 0;
        st = pg_detokenize(t, ids, n_raw, special, NULL, 0, &need);
        fz_check_status(st, "pg_detokenize (ids)");
        if (bad) {
            FZ_ASSERT(st == PG_ERR_INVALID_ARG, "an id out of range: %s", pg_status_name(st));
            continue;
        }
        size_t dl = 0;
        free(decode(t, ids, n_raw, special, &dl));
    }
    for (size_t i = 0; i < n_raw && i < 8; i++) {
        char piece[8];
        size_t pn = 0;
        st = pg_token_to_piece(t, ids[i], (int)(i & 1), piece, sizeof piece, &pn);
        fz_check_status(st, "pg_token_to_piece");
        fz_touch_str(pg_tokenizer_token_text(t, ids[i]));
        pg_tokenizer_token_type(t, ids[i]);
    }
    free(ids);
    return 0;
}

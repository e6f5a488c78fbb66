/* spm.c - SentencePiece tokenization of a GGUF "llama" vocabulary, as
 * llama.cpp's llm_tokenizer_spm does it (Llama 2, Mistral, Gemma, Phi-3).
 *
 * One stretch of text (special tokens were cut out before, tokenizer.c):
 *   1. a space goes in front when the stretch opens the text or follows a
 *      special token and the vocabulary says add_space_prefix (Gemma's
 *      files say no); every space becomes U+2581 ("▁");
 *   2. the text starts as one symbol per UTF-8 character (by the lead
 *      byte; the bytes are not validated, as in llama.cpp);
 *   3. (merge.c's loop, keyed by the score) repeatedly the adjacent pair whose concatenation is a vocabulary
 *      token with the highest score (the leftmost among equal scores)
 *      becomes one symbol, until no adjacent pair forms a token;
 *   4. each final symbol is its token, or, when it is none (a character
 *      the vocabulary lacks), one <0xNN> byte token per byte (the single
 *      byte's own text where there is no <0xNN>, as llama.cpp falls back;
 *      the unknown token when neither exists).
 *
 * Decoding: U+2581 back to a space, a byte token to its byte. */
#include <stdlib.h>
#include <string.h>

#include "tokenizer.h"

static const uint8_t SPACE_MARK[3] = { 0xE2, 0x96, 0x81 };   /* U+2581 */

/* a pair merges when together they are a token; a higher score goes first */
static int score_key(const void *ctx, const uint8_t *piece, size_t a_len, size_t b_len, double *key)
{
    const pg_tokenizer *t = ctx;
    int32_t id = pg_strmap_get(&t->vocab, (const char *)piece, a_len + b_len, NULL, 0);
    if (id < 0)
        return 0;
    *key = t->score[id];
    return 1;
}

void pg_spm_fragment(const pg_tokenizer *t, pg_spm_scratch *s, const uint8_t *in, size_t len,
                     int space_prefix, void (*emit)(void *ctx, int32_t id), void *ctx)
{
    /* the text with its spaces as U+2581: at most 3 bytes per byte, + 3 */
    if (len > (SIZE_MAX - 3) / 3 ||
        !pg_grow((void **)&s->text, &s->text_cap, 3 * len + 3, 1)) {
        s->oom = 1;
        return;
    }
    size_t n = 0;
    if (space_prefix) {
        memcpy(s->text, SPACE_MARK, 3);
        n = 3;
    }
    for (size_t i = 0; i < len; i++) {
        if (in[i] == ' ') {
            memcpy(s->text + n, SPACE_MARK, 3);
            n += 3;
        } else {
            s->text[n++] = in[i];
        }
    }
    long ns = pg_merge_run(&s->merge, s->text, n, score_key, t);
    if (s->merge.oom) {
        s->oom = 1;
        return;
    }
    for (long i = 0; i >= 0 && i < ns; i = s->merge.sym[i].next) {
        const pg_merge_sym *y = &s->merge.sym[i];
        int32_t id = pg_strmap_get(&t->vocab, (const char *)s->text + y->start, y->len, NULL, 0);
        if (id >= 0) {
            emit(ctx, id);
            continue;
        }
        for (size_t k = 0; k < y->len; k++) {
            int32_t bid = t->byte_tok[s->text[y->start + k]];
            if (bid < 0)
                bid = t->unk;
            if (bid >= 0)
                emit(ctx, bid);
        }
    }
}

void pg_spm_scratch_free(pg_spm_scratch *s)
{
    free(s->text);
    s->text = NULL;
    pg_merge_scratch_free(&s->merge);
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int pg_spm_byte_of(const char *s, size_t len)
{
    if (len != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>')
        return -1;
    int hi = hex_digit(s[3]), lo = hex_digit(s[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

size_t pg_spm_piece(const pg_tokenizer *t, int32_t id, char *buf, size_t room)
{
    const char *s = t->text + t->tok_off[id];
    size_t len = t->tok_len[id], n = 0;
    if (t->tok_type[id] == PG_TOKEN_BYTE) {
        /* llama.cpp reads the two hex digits after "<0x" */
        int b = pg_spm_byte_of(s, len);
        if (buf && room)
            buf[0] = (char)(b < 0 ? 0 : b);
        return 1;
    }
    for (size_t i = 0; i < len;) {
        char c = ' ';
        size_t step = 3;
        if (!(len - i >= 3 && memcmp(s + i, SPACE_MARK, 3) == 0)) {
            c = s[i];
            step = 1;
        }
        if (buf && n < room)
            buf[n] = c;
        n++;
        i += step;
    }
    return n;
}

/* spm.c - SentencePiece tokenization of a GGUF "llama" vocabulary, as
 * llama.cpp's llm_tokenizer_spm does it (Llama 2, Mistral, Gemma, Phi-3).
 *
 * One stretch of text (special tokens were cut out before, tokenizer.c):
 *   1. a space goes in front when the stretch opens the text or follows a
 *      special token and the vocabulary says add_space_prefix (Gemma's
 *      files say no); every space becomes U+2581 ("▁");
 *   2. the text starts as one symbol per UTF-8 character (by the lead
 *      byte; the bytes are not validated, as in llama.cpp);
 *   3. repeatedly the adjacent pair whose concatenation is a vocabulary
 *      token with the highest score (the leftmost among equal scores)
 *      becomes one symbol, until no adjacent pair forms a token;
 *   4. each final symbol is its token, or, when it is none (a character
 *      the vocabulary lacks), one <0xNN> byte token per byte (the single
 *      byte's own text where there is no <0xNN>, as llama.cpp falls back;
 *      the unknown token when neither exists).
 * A binary heap keeps the merging O(n log n); a queued pair is stale once
 * either side has merged (its length no longer adds up).
 *
 * Decoding: U+2581 back to a space, a byte token to its byte. */
#include <stdlib.h>
#include <string.h>

#include "tokenizer.h"

typedef struct pg_spm_sym {
    size_t start, len;   /* len 0: merged into its left neighbour */
    long   prev, next;   /* -1 at the ends */
} pg_spm_sym;

typedef struct pg_spm_pair {
    float  score;
    long   left, right;
    size_t size;         /* bytes of the two together when queued */
} pg_spm_pair;

static const uint8_t SPACE_MARK[3] = { 0xE2, 0x96, 0x81 };   /* U+2581 */

/* a goes before b in the heap: higher score, then further left */
static int before(const pg_spm_pair *a, const pg_spm_pair *b)
{
    return a->score > b->score || (a->score == b->score && a->left < b->left);
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 1;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q)
        return 0;
    *p = q;
    *cap = c;
    return 1;
}

static void heap_push(pg_spm_scratch *s, pg_spm_pair pr)
{
    if (!grow((void **)&s->heap, &s->heap_cap, s->heap_n + 1, sizeof *s->heap)) {
        s->oom = 1;
        return;
    }
    size_t i = s->heap_n++;
    while (i > 0 && before(&pr, &s->heap[(i - 1) / 2])) {
        s->heap[i] = s->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    s->heap[i] = pr;
}

static pg_spm_pair heap_pop(pg_spm_scratch *s)
{
    pg_spm_pair top = s->heap[0], last = s->heap[--s->heap_n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->heap_n)
            break;
        if (c + 1 < s->heap_n && before(&s->heap[c + 1], &s->heap[c]))
            c++;
        if (!before(&s->heap[c], &last))
            break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (s->heap_n)
        s->heap[i] = last;
    return top;
}

static void try_pair(const pg_tokenizer *t, pg_spm_scratch *s, long l, long r)
{
    if (l < 0 || r < 0)
        return;
    const pg_spm_sym *a = &s->sym[l], *b = &s->sym[r];
    size_t size = a->len + b->len;   /* b starts where a ends */
    int32_t id = pg_strmap_get(&t->vocab, (const char *)s->text + a->start, size, NULL, 0);
    if (id >= 0)
        heap_push(s, (pg_spm_pair){ t->score[id], l, r, size });
}

static size_t utf8_char_len(uint8_t b)
{
    static const uint8_t lookup[16] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4 };
    return lookup[b >> 4];
}

void pg_spm_fragment(const pg_tokenizer *t, pg_spm_scratch *s, const uint8_t *in, size_t len,
                     int space_prefix, void (*emit)(void *ctx, int32_t id), void *ctx)
{
    /* the text with its spaces as U+2581: at most 3 bytes per byte, + 3 */
    if (len > (SIZE_MAX - 3) / 3 ||
        !grow((void **)&s->text, &s->text_cap, 3 * len + 3, 1)) {
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
    if (!grow((void **)&s->sym, &s->sym_cap, n ? n : 1, sizeof *s->sym)) {
        s->oom = 1;
        return;
    }
    long ns = 0;
    for (size_t off = 0; off < n; ns++) {
        size_t cl = utf8_char_len(s->text[off]);
        if (cl > n - off)
            cl = n - off;
        s->sym[ns] = (pg_spm_sym){ off, cl, ns - 1, -1 };
        if (ns)
            s->sym[ns - 1].next = ns;
        off += cl;
    }
    s->heap_n = 0;
    for (long i = 1; i < ns; i++)
        try_pair(t, s, i - 1, i);
    while (s->heap_n) {
        pg_spm_pair p = heap_pop(s);
        pg_spm_sym *a = &s->sym[p.left], *b = &s->sym[p.right];
        if (a->len == 0 || b->len == 0 || a->len + b->len != p.size)
            continue;   /* stale: one side merged since it was queued */
        a->len += b->len;
        b->len = 0;
        a->next = b->next;
        if (b->next >= 0)
            s->sym[b->next].prev = p.left;
        try_pair(t, s, a->prev, p.left);
        try_pair(t, s, p.left, a->next);
    }
    for (long i = 0; i >= 0 && i < ns; i = s->sym[i].next) {
        const pg_spm_sym *y = &s->sym[i];
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
    free(s->sym);
    free(s->heap);
    s->text = NULL;
    s->sym = NULL;
    s->heap = NULL;
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

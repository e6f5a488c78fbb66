/* bpe.c - byte-pair merges inside one word, lowest rank first.
 *
 * The word starts as one symbol per UTF-8 character of its byte-mapped
 * text.  Repeatedly the adjacent pair with the lowest merge rank (the
 * leftmost among equal ranks) becomes one symbol, until no adjacent pair
 * has a rank.  A binary heap of candidate pairs keeps that O(n log n); a
 * candidate is stale once either side has changed, which the recorded
 * lengths reveal (a symbol only ever grows to the right or dies).  Each
 * final symbol is then looked up in the vocabulary; one that is missing
 * falls back to its single bytes, as llama.cpp does. */
#include <stdlib.h>

#include "tokenizer.h"

typedef struct pg_bpe_sym {
    size_t start, len;   /* len 0: merged into its left neighbour */
    long   prev, next;   /* -1 at the ends */
} pg_bpe_sym;

typedef struct pg_bpe_pair {
    int32_t rank;
    long    left, right;
    size_t  left_len, right_len;
} pg_bpe_pair;

static int before(const pg_bpe_pair *a, const pg_bpe_pair *b)
{
    return a->rank < b->rank || (a->rank == b->rank && a->left < b->left);
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

static void heap_push(pg_bpe_scratch *s, pg_bpe_pair pr)
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

static pg_bpe_pair heap_pop(pg_bpe_scratch *s)
{
    pg_bpe_pair top = s->heap[0], last = s->heap[--s->heap_n];
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

static void try_pair(const pg_tokenizer *t, pg_bpe_scratch *s, const char *w, long l, long r)
{
    if (l < 0 || r < 0)
        return;
    const pg_bpe_sym *a = &s->sym[l], *b = &s->sym[r];
    int32_t rank = pg_strmap_get(&t->merges, w + a->start, a->len, w + b->start, b->len);
    if (rank >= 0)
        heap_push(s, (pg_bpe_pair){ rank, l, r, a->len, b->len });
}

static size_t utf8_char_len(uint8_t b)
{
    static const uint8_t lookup[16] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4 };
    return lookup[b >> 4];
}

void pg_bpe_word(const pg_tokenizer *t, pg_bpe_scratch *s, const char *w, size_t len,
                 void (*emit)(void *ctx, int32_t id), void *ctx)
{
    if (t->ignore_merges) {
        int32_t whole = pg_strmap_get(&t->vocab, w, len, NULL, 0);
        if (whole >= 0) {
            emit(ctx, whole);
            return;
        }
    }
    if (!grow((void **)&s->sym, &s->sym_cap, len, sizeof *s->sym)) {
        s->oom = 1;
        return;
    }
    long n = 0;
    for (size_t off = 0; off < len; n++) {
        size_t cl = utf8_char_len((uint8_t)w[off]);
        if (cl > len - off)
            cl = len - off;
        s->sym[n] = (pg_bpe_sym){ off, cl, n - 1, -1 };
        if (n)
            s->sym[n - 1].next = n;
        off += cl;
    }
    s->heap_n = 0;
    for (long i = 1; i < n; i++)
        try_pair(t, s, w, i - 1, i);
    while (s->heap_n) {
        pg_bpe_pair p = heap_pop(s);
        pg_bpe_sym *a = &s->sym[p.left], *b = &s->sym[p.right];
        if (a->len != p.left_len || b->len != p.right_len || a->next != p.right)
            continue;   /* stale: one side changed since it was queued */
        a->len += b->len;
        b->len = 0;
        a->next = b->next;
        if (b->next >= 0)
            s->sym[b->next].prev = p.left;
        try_pair(t, s, w, a->prev, p.left);
        try_pair(t, s, w, p.left, a->next);
    }
    for (long i = 0; i >= 0 && i < n; i = s->sym[i].next) {
        const pg_bpe_sym *y = &s->sym[i];
        int32_t id = pg_strmap_get(&t->vocab, w + y->start, y->len, NULL, 0);
        if (id >= 0) {
            emit(ctx, id);
            continue;
        }
        for (size_t k = 0; k < y->len; k++) {
            int32_t bid = pg_strmap_get(&t->vocab, w + y->start + k, 1, NULL, 0);
            if (bid >= 0)
                emit(ctx, bid);
        }
    }
}

void pg_bpe_scratch_free(pg_bpe_scratch *s)
{
    free(s->sym);
    free(s->heap);
    s->sym = NULL;
    s->heap = NULL;
}

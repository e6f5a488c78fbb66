/* merge.c - the merge loop byte-level BPE (bpe.c) and SentencePiece
 * (spm.c) share.
 *
 * A piece of text starts as one symbol per UTF-8 character (by the lead
 * byte; the bytes are not validated, as in llama.cpp).  Repeatedly the
 * adjacent pair with the highest key (the leftmost among equal keys)
 * becomes one symbol, until no adjacent pair has a key.  What the key is
 * is the caller's: minus the merge rank for BPE, the merged token's score
 * for SentencePiece.  A binary heap of candidate pairs keeps that
 * O(n log n); a candidate is stale once either side has changed, which the
 * recorded lengths reveal (a symbol only ever grows to the right or dies). */
#include <stdlib.h>

#include "tokenizer.h"

int pg_grow(void **p, size_t *cap, size_t need, size_t elem)
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

/* a goes before b in the heap: higher key, then further left */
static int before(const pg_merge_pair *a, const pg_merge_pair *b)
{
    return a->key > b->key || (a->key == b->key && a->left < b->left);
}

static void heap_push(pg_merge_scratch *s, pg_merge_pair pr)
{
    if (!pg_grow((void **)&s->heap, &s->heap_cap, s->heap_n + 1, sizeof *s->heap)) {
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

static pg_merge_pair heap_pop(pg_merge_scratch *s)
{
    pg_merge_pair top = s->heap[0], last = s->heap[--s->heap_n];
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

static void try_pair(pg_merge_scratch *s, const uint8_t *text, long l, long r,
                     pg_merge_key_fn key_of, const void *ctx)
{
    if (l < 0 || r < 0)
        return;
    const pg_merge_sym *a = &s->sym[l], *b = &s->sym[r];
    double key;
    if (key_of(ctx, text + a->start, a->len, b->len, &key))   /* b starts where a ends */
        heap_push(s, (pg_merge_pair){ key, l, r, a->len, b->len });
}

static size_t utf8_char_len(uint8_t b)
{
    static const uint8_t lookup[16] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4 };
    return lookup[b >> 4];
}

long pg_merge_run(pg_merge_scratch *s, const uint8_t *text, size_t len,
                  pg_merge_key_fn key_of, const void *ctx)
{
    if (!pg_grow((void **)&s->sym, &s->sym_cap, len ? len : 1, sizeof *s->sym)) {
        s->oom = 1;
        return 0;
    }
    long n = 0;
    for (size_t off = 0; off < len; n++) {
        size_t cl = utf8_char_len(text[off]);
        if (cl > len - off)
            cl = len - off;
        s->sym[n] = (pg_merge_sym){ off, cl, n - 1, -1 };
        if (n)
            s->sym[n - 1].next = n;
        off += cl;
    }
    s->heap_n = 0;
    for (long i = 1; i < n; i++)
        try_pair(s, text, i - 1, i, key_of, ctx);
    while (s->heap_n) {
        pg_merge_pair p = heap_pop(s);
        pg_merge_sym *a = &s->sym[p.left], *b = &s->sym[p.right];
        if (a->len != p.left_len || b->len != p.right_len || a->next != p.right)
            continue;   /* stale: one side changed since it was queued */
        a->len += b->len;
        b->len = 0;
        a->next = b->next;
        if (b->next >= 0)
            s->sym[b->next].prev = p.left;
        try_pair(s, text, a->prev, p.left, key_of, ctx);
        try_pair(s, text, p.left, a->next, key_of, ctx);
    }
    return n;
}

void pg_merge_scratch_free(pg_merge_scratch *s)
{
    free(s->sym);
    free(s->heap);
    s->sym = NULL;
    s->heap = NULL;
}

/* bpe.c - byte-pair merges inside one word, lowest rank first.
 *
 * The word starts as one symbol per UTF-8 character of its byte-mapped
 * text.  Repeatedly the adjacent pair with the lowest merge rank (the
 * leftmost among equal ranks) becomes one symbol, until no adjacent pair
 * has a rank (merge.c's loop, keyed by minus the rank).  Each final
 * symbol is then looked up in the vocabulary; one that is missing falls
 * back to its single bytes, as llama.cpp does. */
#include "tokenizer.h"

/* a pair merges when the merges table ranks it; a lower rank goes first */
static int rank_key(const void *ctx, const uint8_t *piece, size_t a_len, size_t b_len, double *key)
{
    const pg_tokenizer *t = ctx;
    int32_t rank = pg_strmap_get(&t->merges, (const char *)piece, a_len,
                                 (const char *)piece + a_len, b_len);
    *key = -(double)rank;
    return rank >= 0;
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
    long n = pg_merge_run(s, (const uint8_t *)w, len, rank_key, t);
    for (long i = 0; i >= 0 && i < n; i = s->sym[i].next) {
        const pg_merge_sym *y = &s->sym[i];
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

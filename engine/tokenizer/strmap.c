/* strmap.c - open-addressing string -> int32 tables over a shared arena.
 *
 * The vocabulary (49k texts) and the merge ranks (49k pairs) are looked up
 * once per symbol and per candidate pair while encoding, so they are hash
 * tables; keys stay in the tokenizer's text arena, entries hold offsets. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "tokenizer.h"

#define FNV_OFFSET 1469598103934665603ull
#define FNV_PRIME 1099511628211ull

static uint64_t fnv(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * FNV_PRIME;
    return h;
}

pg_status pg_strmap_init(pg_strmap *m, const char *arena, uint32_t n)
{
    uint64_t cap = 16;
    while (cap < (uint64_t)n * 2)
        cap <<= 1;
    m->arena = arena;
    m->n = 0;
    m->mask = cap - 1;
    m->entries = malloc((n ? n : 1) * sizeof *m->entries);
    m->slots = calloc(cap, sizeof *m->slots);
    if (!m->entries || !m->slots) {
        pg_strmap_free(m);
        return pg_fail(PG_ERR_NOMEM, "tokenizer: out of memory for a table of %u strings", n);
    }
    return PG_OK;
}

void pg_strmap_free(pg_strmap *m)
{
    free(m->entries);
    free(m->slots);
    m->entries = NULL;
    m->slots = NULL;
}

/* The slot holding a + sep + b, or the empty slot where it would go. */
static uint64_t find_slot(const pg_strmap *m, const char *a, size_t alen, const char *b, size_t blen)
{
    uint64_t h = fnv(FNV_OFFSET, a, alen);
    size_t total = alen;
    if (b) {
        h = fnv(h, " ", 1);
        h = fnv(h, b, blen);
        total += 1 + blen;
    }
    for (h &= m->mask;; h = (h + 1) & m->mask) {
        uint32_t s = m->slots[h];
        if (!s)
            return h;
        const pg_strmap_entry *e = &m->entries[s - 1];
        if (e->len != total)
            continue;
        const char *k = m->arena + e->off;
        if (memcmp(k, a, alen) != 0)
            continue;
        if (!b || (k[alen] == ' ' && memcmp(k + alen + 1, b, blen) == 0))
            return h;
    }
}

void pg_strmap_put(pg_strmap *m, uint64_t off, uint32_t len, int32_t val, int replace)
{
    uint64_t h = find_slot(m, m->arena + off, len, NULL, 0);
    if (m->slots[h]) {
        if (replace)
            m->entries[m->slots[h] - 1].val = val;
        return;
    }
    m->entries[m->n] = (pg_strmap_entry){ off, len, val };
    m->slots[h] = ++m->n;
}

int32_t pg_strmap_get(const pg_strmap *m, const char *a, size_t alen, const char *b, size_t blen)
{
    uint64_t h = find_slot(m, a, alen, b, blen);
    return m->slots[h] ? m->entries[m->slots[h] - 1].val : -1;
}

/* weight_cache.c - pg_weight_cache (weight_cache.h): keys and store
 * entries in a growing array (a model's weights are a few hundred; a
 * compile looks each up once), guarded by a mutex. */
#include <pthread.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "weight_cache.h"

typedef struct entry {
    uint64_t key;
    pg_shared_const *e;
} entry;

struct pg_weight_cache {
    pthread_mutex_t lock;
    entry *v;
    int n, cap;
    uint64_t hits, misses;
};

uint64_t pg_key_mix(uint64_t h, uint64_t v)
{
    /* splitmix64's finaliser over h and v: a change in either moves every bit */
    uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return z ? z : 1;
}

uint64_t pg_key_derive(uint64_t from, uint64_t tag, const uint64_t *v, int n)
{
    uint64_t h = pg_key_mix(from, tag);
    for (int i = 0; i < n; i++)
        h = pg_key_mix(h, v[i]);
    return h;
}

/* The entry of key, or NULL; the lock held. */
static entry *lookup(pg_weight_cache *c, uint64_t key, size_t nbytes)
{
    for (int i = 0; i < c->n; i++)
        if (c->v[i].key == key && pg_share_nbytes(c->v[i].e) == nbytes)
            return &c->v[i];
    return NULL;
}

const void *pg_weight_cache_find(pg_weight_cache *c, uint64_t key, size_t nbytes)
{
    pthread_mutex_lock(&c->lock);
    entry *x = lookup(c, key, nbytes);
    pthread_mutex_unlock(&c->lock);
    return x ? pg_share_data(x->e) : NULL;
}

pg_shared_const *pg_weight_cache_take(pg_weight_cache *c, uint64_t key, size_t nbytes)
{
    pthread_mutex_lock(&c->lock);
    entry *x = lookup(c, key, nbytes);
    if (x) {
        pg_share_retain(x->e);
        c->hits++;
    } else {
        c->misses++;
    }
    pthread_mutex_unlock(&c->lock);
    return x ? x->e : NULL;
}

int pg_weight_cache_put(pg_weight_cache *c, uint64_t key, pg_shared_const *e)
{
    int rc = 0;
    pthread_mutex_lock(&c->lock);
    if (!lookup(c, key, pg_share_nbytes(e))) {
        if (c->n == c->cap) {
            int nc = c->cap ? 2 * c->cap : 64;
            entry *v = pg_realloc(c->v, sizeof *v * (size_t)c->cap, sizeof *v * (size_t)nc);
            if (v) {
                c->v = v;
                c->cap = nc;
            }
        }
        if (c->n < c->cap) {
            pg_share_pin(e);
            c->v[c->n++] = (entry){ key, e };
        } else {
            rc = -1;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

pg_status pg_weight_cache_new(pg_weight_cache **out)
{
    pg_clear_error();
    if (!out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_weight_cache_new: NULL output");
    pg_weight_cache *c = pg_calloc(1, sizeof *c);
    if (!c)
        return pg_fail(PG_ERR_NOMEM, "out of memory for a weight cache");
    pthread_mutex_init(&c->lock, NULL);
    *out = c;
    return PG_OK;
}

void pg_weight_cache_free(pg_weight_cache *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->n; i++)
        pg_share_unpin(c->v[i].e);
    pg_free(c->v);
    pthread_mutex_destroy(&c->lock);
    pg_free(c);
}

pg_status pg_weight_cache_get_stats(const pg_weight_cache *c, pg_weight_cache_stats *out)
{
    pg_clear_error();
    if (!c || !out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_weight_cache_get_stats: NULL argument");
    pg_weight_cache *m = (pg_weight_cache *)c;   /* the lock only */
    pthread_mutex_lock(&m->lock);
    *out = (pg_weight_cache_stats){ c->n, 0, c->hits, c->misses };
    for (int i = 0; i < c->n; i++)
        out->bytes += pg_share_nbytes(c->v[i].e);
    pthread_mutex_unlock(&m->lock);
    return PG_OK;
}

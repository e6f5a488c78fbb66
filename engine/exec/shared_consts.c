/* shared_consts.c - the store of shared_consts.h: a process-wide list of
 * copies, each with its key (length and a hash of sampled bytes, to skip
 * most comparisons), guarded by one mutex. */
#include <pthread.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "shared_consts.h"
#include "weight_cache.h"

struct pg_shared_const {
    void            *data;     /* pg_malloc'd, the store's */
    size_t           nbytes;
    uint64_t         hash;
    int              refs;
    int              pins;     /* of the refs, the weight caches' (not a model's) */
    pg_shared_const *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pg_shared_const *head;

/* 64 bytes every 4 KiB and the last 64: cheap next to the full compare a
 * candidate gets, and enough to tell different weights of the same length
 * apart almost always */
static uint64_t sample_hash(const unsigned char *p, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    for (size_t off = 0; off < n; off += 4096) {
        size_t take = n - off < 64 ? n - off : 64;
        for (size_t i = 0; i < take; i++)
            h = (h ^ p[off + i]) * 0x100000001b3ull;
    }
    for (size_t i = n > 64 ? n - 64 : 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* The entry holding t's bytes: an existing one, or a new one that takes
 * t's own bytes (or, when they are lent by the graph being compiled, a
 * copy of them).  t's own bytes are freed when an entry had them already.
 * NULL when out of memory (t unchanged). */
static pg_shared_const *share_one(pg_tensor *t)
{
    int lent = t->data_borrowed == PG_DATA_LENT;
    uint64_t h = sample_hash(t->data, t->nbytes);
    pthread_mutex_lock(&lock);
    pg_shared_const *e = head;
    while (e && !(e->nbytes == t->nbytes && e->hash == h && !memcmp(e->data, t->data, t->nbytes)))
        e = e->next;
    if (e) {
        e->refs++;
        if (!lent)
            pg_free(t->data);
    } else if ((e = pg_malloc(sizeof *e))) {
        void *bytes = lent ? pg_malloc(t->nbytes) : t->data;
        if (bytes) {
            if (lent)
                memcpy(bytes, t->data, t->nbytes);
            *e = (pg_shared_const){ bytes, t->nbytes, h, 1, 0, head };
            head = e;
        } else {
            pg_free(e);
            e = NULL;
        }
    }
    pthread_mutex_unlock(&lock);
    if (e) {
        t->data = e->data;
        t->data_borrowed = 1;
    }
    return e;
}

/* A lent constant too small to share: a copy of its own. */
static pg_status own_copy(pg_tensor *t)
{
    void *d = pg_malloc(t->nbytes ? t->nbytes : 1);
    if (!d)
        return pg_fail(PG_ERR_NOMEM, "out of memory copying constant '%s'", t->name);
    memcpy(d, t->data, t->nbytes);
    t->data = d;
    t->data_borrowed = 0;
    return PG_OK;
}

/* Releases the references no constant of g reads any more (a rebind's
 * relayout replaced those weights: the IR does not free borrowed data, so
 * without this the old copy lived as long as the model). */
static void prune(const pg_graph *g, pg_shared_const **refs, int *n)
{
    int kept = 0;
    for (int r = 0; r < *n; r++) {
        int used = 0;
        for (int i = 0; i < g->n_tensors && !used; i++)
            used = g->tensors[i] && g->tensors[i]->data == refs[r]->data;
        if (used)
            refs[kept++] = refs[r];
        else
            pg_share_release(&refs[r], 1);
    }
    *n = kept;
}

pg_status pg_share_consts(pg_graph *g, pg_weight_cache *cache, pg_shared_const ***refs, int *n,
                          int *cap)
{
    prune(g, *refs, n);
    for (int i = 0; i < g->n_tensors; i++) {
        pg_tensor *t = g->tensors[i];
        if (!t || !t->is_const || !t->data)
            continue;
        int lent = t->data_borrowed == PG_DATA_LENT;
        int keyed = cache && t->origin && t->nbytes >= PG_SHARE_MIN_BYTES;
        if (t->data_borrowed && !lent && !keyed)
            continue;
        if (t->nbytes < PG_SHARE_MIN_BYTES) {
            pg_status st = lent ? own_copy(t) : PG_OK;
            if (st)
                return st;
            continue;
        }
        if (*n == *cap) {
            int nc = *cap ? 2 * *cap : 16;
            pg_shared_const **r = pg_realloc(*refs, sizeof **refs * (size_t)*cap,
                                             sizeof **refs * (size_t)nc);
            if (!r)
                return pg_fail(PG_ERR_NOMEM, "out of memory sharing constants");
            *refs = r;
            *cap = nc;
        }
        pg_shared_const *e = keyed ? pg_weight_cache_take(cache, t->origin, t->nbytes) : NULL;
        if (e) {
            /* bytes a compile before this one kept: no comparison */
            pg_ir_set_const_view(t, e->data, t->nbytes, t->origin);
        } else if (t->data_borrowed && !lent) {
            continue;   /* borrowed from elsewhere (not from the store) */
        } else {
            if (!(e = share_one(t)))
                return pg_fail(PG_ERR_NOMEM, "out of memory sharing constants");
            if (keyed)   /* out of memory here is only a later compile's miss */
                (void)pg_weight_cache_put(cache, t->origin, e);
        }
        (*refs)[(*n)++] = e;
    }
    return PG_OK;
}

void pg_share_retain(pg_shared_const *e)
{
    pthread_mutex_lock(&lock);
    e->refs++;
    pthread_mutex_unlock(&lock);
}

const void *pg_share_data(const pg_shared_const *e) { return e->data; }

size_t pg_share_nbytes(const pg_shared_const *e) { return e->nbytes; }

void pg_share_pin(pg_shared_const *e)
{
    pthread_mutex_lock(&lock);
    e->refs++;
    e->pins++;
    pthread_mutex_unlock(&lock);
}

static void release(pg_shared_const **refs, int n, int pinned)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n; i++) {
        pg_shared_const *e = refs[i];
        e->pins -= pinned;
        if (--e->refs)
            continue;
        pg_shared_const **p = &head;
        while (*p != e)
            p = &(*p)->next;
        *p = e->next;
        pg_free(e->data);
        pg_free(e);
    }
    pthread_mutex_unlock(&lock);
}

void pg_share_release(pg_shared_const **refs, int n) { release(refs, n, 0); }

void pg_share_unpin(pg_shared_const *e) { release(&e, 1, 1); }

size_t pg_share_bytes_held_elsewhere(pg_shared_const *const *refs, int n)
{
    size_t b = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n; i++)
        b += refs[i]->refs - refs[i]->pins > 1 ? refs[i]->nbytes : 0;
    pthread_mutex_unlock(&lock);
    return b;
}

void pg_share_stats(size_t *count, size_t *bytes)
{
    size_t c = 0, b = 0;
    pthread_mutex_lock(&lock);
    for (const pg_shared_const *e = head; e; e = e->next) {
        c++;
        b += e->nbytes;
    }
    pthread_mutex_unlock(&lock);
    if (count)
        *count = c;
    if (bytes)
        *bytes = b;
}

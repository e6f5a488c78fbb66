/* namemap.c - the IR's name tables (see namemap.h). */
#include <string.h>

#include "../core/alloc.h"
#include "namemap.h"

static const char gone_[1];
#define GONE gone_

int pg_namemap_get(const pg_namemap *m, const char *name)
{
    if (!m->cap || !name)
        return -1;
    size_t h = pg_name_hash(name);
    for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        const char *k = m->keys[i];
        if (!k)
            return -1;
        if (m->tags[i] == (unsigned)h && k != GONE && !strcmp(k, name))
            return m->vals[i];
    }
}

static int grow(pg_namemap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    const char **keys = pg_obj_calloc(cap, sizeof *keys);
    int *vals = pg_obj_malloc(cap * sizeof *vals);
    unsigned *tags = pg_obj_malloc(cap * sizeof *tags);
    if (!keys || !vals || !tags) {
        pg_free(keys);
        pg_free(vals);
        pg_free(tags);
        return -1;
    }
    size_t used = 0;
    for (size_t i = 0; i < m->cap; i++) {
        const char *k = m->keys[i];
        if (!k || k == GONE)
            continue;
        size_t j = m->tags[i] & (cap - 1);   /* the hash's low bits (cap < 2^32) */
        while (keys[j])
            j = (j + 1) & (cap - 1);
        keys[j] = k;
        vals[j] = m->vals[i];
        tags[j] = m->tags[i];
        used++;
    }
    pg_free(m->keys);
    pg_free(m->vals);
    pg_free(m->tags);
    m->keys = keys;
    m->vals = vals;
    m->tags = tags;
    m->cap = cap;
    m->used = used;
    return 0;
}

int pg_namemap_copy(pg_namemap *dst, const pg_namemap *src,
                    const char *(*name_of)(void *ctx, int id), void *ctx)
{
    *dst = (pg_namemap){ 0 };
    if (!src->cap)
        return 0;
    const char **keys = pg_obj_malloc(src->cap * sizeof *keys);
    int *vals = pg_obj_malloc(src->cap * sizeof *vals);
    unsigned *tags = pg_obj_malloc(src->cap * sizeof *tags);
    if (!keys || !vals || !tags)
        goto fail;
    for (size_t i = 0; i < src->cap; i++) {
        const char *k = src->keys[i];
        keys[i] = k && k != GONE ? name_of(ctx, src->vals[i]) : k;
        if (k && k != GONE && !keys[i])
            goto fail;
    }
    memcpy(vals, src->vals, src->cap * sizeof *vals);
    memcpy(tags, src->tags, src->cap * sizeof *tags);
    *dst = (pg_namemap){ keys, vals, tags, src->cap, src->used };
    return 0;
fail:
    pg_free(keys);
    pg_free(vals);
    pg_free(tags);
    return -1;
}

int pg_namemap_put(pg_namemap *m, const char *name, int id, unsigned *tag)
{
    if ((m->used + 1) * 4 >= m->cap * 3 && grow(m))
        return -1;
    size_t h = pg_name_hash(name), i = h & (m->cap - 1), tomb = (size_t)-1;
    if (tag)
        *tag = (unsigned)h;
    for (;; i = (i + 1) & (m->cap - 1)) {
        const char *k = m->keys[i];
        if (!k)
            break;
        if (k == GONE) {
            if (tomb == (size_t)-1)
                tomb = i;
        } else if (m->tags[i] == (unsigned)h && !strcmp(k, name)) {
            m->keys[i] = name;   /* the newest owner's string */
            m->vals[i] = id;
            return 0;
        }
    }
    if (tomb != (size_t)-1)
        i = tomb;
    else
        m->used++;
    m->keys[i] = name;
    m->vals[i] = id;
    m->tags[i] = (unsigned)h;
    return 0;
}

void pg_namemap_del(pg_namemap *m, const char *name, unsigned tag, int id)
{
    if (!m->cap || !name)
        return;
    /* a tag is the hash's low 32 bits, all the probe start reads (cap is a
     * power of two under 2^32); the entry's key is usually the owner's own
     * string */
    for (size_t i = tag & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        const char *k = m->keys[i];
        if (!k)
            return;
        if (m->tags[i] == tag && k != GONE && (k == name || !strcmp(k, name))) {
            if (m->vals[i] == id)
                m->keys[i] = GONE;
            return;
        }
    }
}

void pg_namemap_free(pg_namemap *m)
{
    pg_free(m->keys);
    pg_free(m->vals);
    pg_free(m->tags);
    memset(m, 0, sizeof *m);
}

/* namemap.h - name -> id for the IR's tensors and nodes, so looking a name
 * up (the builder, pg_ir_unique_name) costs O(1) rather than a scan of the
 * graph: graphs of 100,000 nodes build and compile in linear time.
 *
 * Open addressing with linear probing and tombstones.  Keys are borrowed:
 * the name strings the tensors and nodes own, which outlive their entries
 * (an entry is deleted before its object is freed). */
#ifndef PG_GRAPH_NAMEMAP_H
#define PG_GRAPH_NAMEMAP_H

#include <stddef.h>

typedef struct pg_namemap {
    const char **keys;   /* NULL: empty; PG_NAMEMAP_GONE: deleted */
    int *vals;
    /* each slot's key's hash (its low 32 bits): a probe past another name
     * compares these, not the strings ("/m/transformer/h.0/attn/..." share
     * long prefixes: strcmp was ~7% of a decode step's recompile) */
    unsigned *tags;
    size_t cap, used;    /* used: live + deleted slots */
} pg_namemap;

/* A name's hash (FNV-1a), for this table and the op table (opdefs.c). */
static inline size_t pg_name_hash(const char *s)
{
    size_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* The id stored for name, -1 if none. */
int  pg_namemap_get(const pg_namemap *m, const char *name);
/* Stores (or replaces) name -> id; -1 when out of memory.  *tag (when not
 * NULL) gets the name's tag, for its owner to keep and hand to
 * pg_namemap_del. */
int  pg_namemap_put(pg_namemap *m, const char *name, int id, unsigned *tag);
/* Removes name (tag: put's) if it maps to id (a later object of the same
 * name keeps its own entry).  The owner's tag spares hashing the name
 * again: a compile removes ~1,300 constants and nodes, and hashing their
 * long names was half of each removal. */
void pg_namemap_del(pg_namemap *m, const char *name, unsigned tag, int id);
void pg_namemap_free(pg_namemap *m);
/* dst (empty) as a copy of src, slot for slot, with each key replaced by
 * name_of(ctx, its id): a cloned graph's table over its own strings,
 * without hashing a name again.  -1 when out of memory, or when name_of
 * gives NULL for an id (dst is then left empty). */
int  pg_namemap_copy(pg_namemap *dst, const pg_namemap *src,
                     const char *(*name_of)(void *ctx, int id), void *ctx);

#endif

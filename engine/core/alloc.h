/* alloc.h - the engine's own allocator wrappers.
 *
 * Every heap allocation the graph compiler, planner and executor make goes
 * through these, for two reasons: every buffer is 64-byte aligned (one cache
 * line, the widest vector), and a global counter lets a test prove that a
 * model run allocates nothing (pg_alloc_count() before and after). */
#ifndef PG_CORE_ALLOC_H
#define PG_CORE_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#define PG_ALIGN 64

/* 64-byte aligned; size 0 gives a valid unique pointer.  NULL on OOM (no
 * error set: the caller knows what it was allocating and says so). */
void *pg_malloc(size_t size);
void *pg_calloc(size_t count, size_t size);   /* zeroed, overflow-checked */
/* Like realloc; old contents (min of old/new size) kept.  Needs old size
 * because aligned blocks cannot be resized in place portably. */
void *pg_realloc(void *p, size_t old_size, size_t new_size);
void  pg_free(void *p);
char *pg_strdup(const char *s);               /* NULL in -> NULL out */
/* Round up to a multiple of PG_ALIGN. */
static inline size_t pg_align_up(size_t n) { return (n + PG_ALIGN - 1) & ~(size_t)(PG_ALIGN - 1); }

#endif

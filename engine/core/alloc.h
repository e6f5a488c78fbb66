/* alloc.h - the engine's own allocator wrappers.
 *
 * Every heap allocation the graph compiler, planner and executor make goes
 * through these, for two reasons: every buffer is 64-byte aligned (one cache
 * line, the widest vector), and a global counter lets a test prove that a
 * model run allocates nothing (pg_alloc_count() before and after).  The
 * graph's own records, which no kernel reads, take the cheaper pg_obj_*. */
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
/* Objects no kernel reads - graph nodes and tensor records, index arrays,
 * names - by plain malloc (the C library's alignment), counted the same
 * way and freed by pg_free too.  posix_memalign splits a chunk for every
 * small block: recompiling a 620-node GPT-2 for each step of a decode loop
 * spent ~40% of its time in the allocator, mostly on these. */
void *pg_obj_malloc(size_t size);
void *pg_obj_calloc(size_t count, size_t size);   /* zeroed, overflow-checked */
void *pg_obj_realloc(void *p, size_t size);       /* realloc; NULL on OOM (p kept) */
char *pg_strdup(const char *s);               /* an object; NULL in -> NULL out */
/* Round up to a multiple of PG_ALIGN. */
static inline size_t pg_align_up(size_t n) { return (n + PG_ALIGN - 1) & ~(size_t)(PG_ALIGN - 1); }

#endif

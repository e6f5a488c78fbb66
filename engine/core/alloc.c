/* alloc.c - aligned, counted allocation (see alloc.h). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "alloc.h"
#include "peregrine.h"

static atomic_uint_fast64_t alloc_count;

uint64_t pg_alloc_count(void) { return (uint64_t)atomic_load(&alloc_count); }

/* A buffer of at least one huge page (2 MiB: packed weights, the arena)
 * starts on a huge-page boundary and asks the kernel for transparent huge
 * pages on its whole ones, where the system leaves that to madvise (the
 * usual setting).  Weights stream from DRAM through every product and the
 * hardware prefetchers stop at each 4 KiB page; measured on Zen 4 with
 * BERT-base's products, weights beyond L3: 128 x 3072 x 768 +9%, 128 x 768
 * x 768 +4%.  Only a hint: where it is refused the buffer is as good as
 * before, and a region already faulted in (the allocator's reused heap)
 * keeps its small pages. */
#define PG_HUGE_PAGE ((size_t)2 << 20)

void *pg_malloc(size_t size)
{
    void *p = NULL;
    size_t n = pg_align_up(size ? size : 1);
    size_t align = n >= PG_HUGE_PAGE ? PG_HUGE_PAGE : PG_ALIGN;
    if (n < size || posix_memalign(&p, align, n) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    if (align == PG_HUGE_PAGE)
        (void)madvise(p, n & ~(PG_HUGE_PAGE - 1), MADV_HUGEPAGE);
#endif
    atomic_fetch_add(&alloc_count, 1);
    return p;
}

void *pg_calloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    void *p = pg_malloc(count * size);
    if (p)
        memset(p, 0, count * size);
    return p;
}

void *pg_realloc(void *p, size_t old_size, size_t new_size)
{
    void *q = pg_malloc(new_size);
    if (!q)
        return NULL;
    if (p) {
        memcpy(q, p, old_size < new_size ? old_size : new_size);
        pg_free(p);
    }
    return q;
}

void pg_free(void *p) { free(p); }

void *pg_obj_malloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (p)
        atomic_fetch_add(&alloc_count, 1);
    return p;
}

void *pg_obj_calloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (p)
        atomic_fetch_add(&alloc_count, 1);
    return p;
}

void *pg_obj_realloc(void *p, size_t size)
{
    void *q = realloc(p, size ? size : 1);
    if (q)
        atomic_fetch_add(&alloc_count, 1);
    return q;
}

char *pg_strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = pg_obj_malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

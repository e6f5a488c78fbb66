/* limits.c - the largest tensor or arena the compiler accepts.
 *
 * A model file can declare any shape; a 2^40 x 2^40 input must be refused
 * when it is compiled, naming the tensor, not when the arena allocation
 * fails (or silently wraps) later.  The default is the machine's physical
 * memory; PEREGRINE_MEMORY_LIMIT (bytes) or pg_set_memory_limit lower it. */
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "error.h"
#include "limits.h"

static _Atomic uint64_t limit_bytes;   /* 0: not set yet */

static uint64_t default_limit(void)
{
    const char *env = getenv("PEREGRINE_MEMORY_LIMIT");
    if (env && *env) {
        char *end;
        unsigned long long v = strtoull(env, &end, 10);
        if (!*end && v > 0)
            return v;
    }
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0)
        return (uint64_t)pages * (uint64_t)page;
    return UINT64_C(1) << 40;
}

uint64_t pg_memory_limit(void)
{
    uint64_t v = atomic_load(&limit_bytes);
    if (!v) {
        v = default_limit();
        atomic_store(&limit_bytes, v);
    }
    return v;
}

pg_status pg_set_memory_limit(uint64_t bytes)
{
    atomic_store(&limit_bytes, bytes ? bytes : default_limit());
    return PG_OK;
}

int pg_shape_bytes(int rank, const int64_t *shape, size_t elem, uint64_t *bytes)
{
    uint64_t n = elem;
    for (int i = 0; i < rank; i++) {
        if (shape[i] < 0)
            return -1;
        if (__builtin_mul_overflow(n, (uint64_t)shape[i], &n))
            return -1;
    }
    *bytes = n;
    return 0;
}

uint64_t pg_get_memory_limit(void) { return pg_memory_limit(); }

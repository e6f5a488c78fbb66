/* test_alloc.c - the engine's allocator (core/alloc.h): 64-byte alignment,
 * the count a run's "allocates nothing" check reads, and buffers of a huge
 * page or more starting on a 2 MiB boundary with transparent huge pages
 * asked for (where the system leaves them to madvise). */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "../core/alloc.h"
#include "test_util.h"

#define MIB ((size_t)1 << 20)

/* The THPeligible flag /proc/self/smaps gives the mapping holding p: 1 or
 * 0, or -1 where it cannot be read (not Linux, an older kernel). */
static int thp_eligible(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    int inside = 0, flag = -1;
    uintptr_t a = (uintptr_t)p;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            inside = a >= lo && a < hi;
            continue;
        }
        if (inside && sscanf(line, "THPeligible: %d", &flag) == 1)
            break;
    }
    fclose(f);
    return flag;
}

/* Whether madvise(MADV_HUGEPAGE) shows here at all: a mapping of our own,
 * advised, is THPeligible (not where the system has huge pages off, nor
 * under qemu-user, which takes the advice and drops it). */
static int advice_shows(void)
{
    size_t n = 4 * MIB;
    void *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return 0;
    int shows = madvise(m, n, MADV_HUGEPAGE) == 0 && thp_eligible(m) == 1;
    munmap(m, n);
    return shows;
}

int main(void)
{
    uint64_t n0 = pg_alloc_count();
    unsigned char *small = pg_malloc(100);
    CHECK(small && (uintptr_t)small % PG_ALIGN == 0, "small block %p", (void *)small);
    CHECK(pg_alloc_count() == n0 + 1, "count %llu after one allocation from %llu",
          (unsigned long long)pg_alloc_count(), (unsigned long long)n0);
    memset(small, 7, 100);

    /* a block of a huge page or more: on a huge-page boundary, all of it writable */
    size_t big_n = 3 * MIB + 40;
    unsigned char *big = pg_realloc(small, 100, big_n);
    CHECK(big && (uintptr_t)big % (2 * MIB) == 0, "3 MiB block %p not on a 2 MiB boundary", (void *)big);
    CHECK(big && big[0] == 7 && big[99] == 7, "realloc lost the contents");
    if (big)
        memset(big, 1, big_n);
    float *z = pg_calloc(MIB / 2 + 1, sizeof(float));   /* 2 MiB + 4 bytes, zeroed */
    CHECK(z && (uintptr_t)z % (2 * MIB) == 0, "calloc'd 2 MiB block %p", (void *)z);
    int zero = 1;
    for (size_t i = 0; z && i < MIB / 2 + 1; i++)
        zero &= z[i] == 0.0f;
    CHECK(zero, "pg_calloc's block is not zeroed");

    /* the huge pages were asked for: the block's mapping is eligible for
     * them wherever the advice shows on a mapping of the test's own */
    if (advice_shows())
        CHECK(big && thp_eligible(big) == 1, "the 3 MiB block's mapping is not THPeligible");
    else
        printf("huge-page advice does not show here: not checked\n");

    pg_free(big);
    pg_free(z);
    printf("%s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}

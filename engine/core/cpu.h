/* cpu.h - run-time CPU detection, shared between the per-ISA detectors and
 * the dispatch code.  Detection runs once; the mask can change at any time,
 * and pg_cpu_generation() tells cached dispatch decisions when it did. */
#ifndef PG_CORE_CPU_H
#define PG_CORE_CPU_H

#include <stdint.h>

#include "peregrine.h"

typedef struct pg_cpu_caps {
    uint64_t flags;
    int sve_bits;
    char vendor[16];
    char brand[64];
    int l1d_bytes, l2_bytes, l3_bytes, line_bytes;
} pg_cpu_caps;

/* Filled by cpu_x86.c or cpu_aarch64.c (or left empty elsewhere).  Cache
 * sizes it leaves at 0 are read from sysfs afterwards. */
void pg_cpu_detect_arch(pg_cpu_caps *caps);

/* The detected capabilities (detects on first use; thread-safe). */
const pg_cpu_caps *pg_cpu_caps_get(void);
/* flags & mask: what dispatch may use now. */
uint64_t pg_cpu_active_flags(void);
/* Bumped whenever the mask changes. */
unsigned pg_cpu_generation(void);

#endif

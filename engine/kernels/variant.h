/* variant.h - one variant table per op.
 *
 * An op's table lists its implementations best first and its C reference
 * last (required flags 0, so something always runs).  The same table drives
 * dispatch (pg_kernel_select), checkasm (every runnable variant against the
 * reference), the Python kernel API and the benchmarks, so adding a variant
 * is one line in one place. */
#ifndef PG_KERNELS_VARIANT_H
#define PG_KERNELS_VARIANT_H

#include <stddef.h>
#include <stdint.h>

#include "peregrine.h"

typedef struct pg_variant {
    const char *name;     /* spells out the tile and the ISA: f32_gemm_6x16_avx2_fma3 */
    const char *isa;      /* "avx2", "neon", "c" */
    uint64_t    required; /* pg_cpu_flag bits */
    const void *fn;       /* the entry point, cast by the op's own header */
    const void *params;   /* op-specific data (tile sizes), may be NULL */
} pg_variant;

typedef struct pg_kernel_family {
    const char *name;
    const char *description;
    const pg_variant *variants; /* best first, C reference last */
    int count;
} pg_kernel_family;

/* The variant dispatch picks for op under the current mask. */
const pg_variant *pg_kernel_select(const pg_kernel_family *op);
/* The best variant under the mask that fits(v, ctx) accepts, NULL if none
 * does (a packed weight binds to a kernel of its panel width this way). */
const pg_variant *pg_kernel_select_fitting(const pg_kernel_family *op,
                                           int (*fits)(const pg_variant *v, const void *ctx),
                                           const void *ctx);
/* Index of v in its op's table, or -1. */
int pg_variant_index(const pg_kernel_family *op, const pg_variant *v);
/* Variant by index, checked against the CPU (not the mask: a caller naming
 * a variant explicitly may run any the hardware can).  NULL + error if the
 * index is bad or the CPU cannot run it. */
const pg_variant *pg_kernel_variant_checked(const pg_kernel_family *op, int index);
/* Every op, in a fixed order (kernels/registry.c). */
const pg_kernel_family *const *pg_kernel_families_all(int *count);
const pg_kernel_family *pg_kernel_family_by_name(const char *name);

#define PG_COUNTOF(a) ((int)(sizeof(a) / sizeof((a)[0])))

#endif

/* variant.h - one variant table per op.
 *
 * An op's table lists its implementations best first and its C reference
 * last (required flags 0, so something always runs).  The same table drives
 * dispatch (pg_kernel_select), checkasm (every runnable variant against the
 * reference), the Python kernel API and the benchmarks, so adding a variant
 * is one line in one place.
 *
 * The entry point is typed: pg_variant.fn is the union of the families'
 * function-pointer types (kernel_fn.h), and a table sets its family's member
 * by name, with no cast, so the compiler checks every row against the
 * family's prototype:
 *
 *     static const pg_variant variants[] = {
 *         { "f32_gemm_6x16_avx2_fma3", "avx2", PG_CPU_AVX2 | PG_CPU_FMA,
 *           .fn = { .sgemm = pg_f32_gemm_6x16_avx2_fma3 }, &p_6x16 },
 *         ...
 *     };
 *     const pg_kernel_family pg_kernels_sgemm = { "sgemm", "...", variants,
 *                                                 PG_COUNTOF(variants), PG_KERNEL_FN_sgemm };
 *
 * A caller reads the same member, again with no cast: v->fn.sgemm(mr, ...).
 * fn_member records which member the family's rows set, for code that only
 * knows the family at run time (checkasm checks that a check's declare_func
 * names it; its external mode stores a dlsym'd symbol into it). */
#ifndef PG_KERNELS_VARIANT_H
#define PG_KERNELS_VARIANT_H

#include <stddef.h>
#include <stdint.h>

#include "peregrine.h"
#include "kernel_fn.h"

typedef struct pg_variant {
    const char *name;     /* spells out the tile and the ISA: f32_gemm_6x16_avx2_fma3 */
    const char *isa;      /* "avx2", "neon", "c" */
    uint64_t    required; /* pg_cpu_flag bits */
    pg_kernel_fn fn;      /* the entry point: the family's member (kernel_fn.h) */
    const void *params;   /* op-specific data (tile sizes), may be NULL */
} pg_variant;

typedef struct pg_kernel_family {
    const char *name;
    const char *description;
    const pg_variant *variants; /* best first, C reference last */
    int count;
    pg_kernel_fn_member fn_member; /* the member of pg_kernel_fn its variants set */
} pg_kernel_family;

/* The variant dispatch picks for op under the current mask. */
const pg_variant *pg_kernel_select(const pg_kernel_family *op);
/* 1 when v agrees with its family's reference on a small fixed input (run
 * once per process, selfcheck.c); dispatch never selects a variant that
 * does not.  _state: 1 passed, -1 failed, 0 not run yet. */
int pg_variant_self_check(const pg_kernel_family *op, const pg_variant *v);
int pg_variant_self_check_state(const pg_kernel_family *op, const pg_variant *v);
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

/* test_cpu.c - CPU detection and the mask, from C.
 *
 * Under qemu the CPU model is known, so the run script says what to expect:
 * PEREGRINE_EXPECT_SVE_BITS=256 (-cpu max,sve256=on) or 0 (-cpu max,sve=off). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peregrine.h"
#include "test_util.h"

int main(void)
{
    pg_cpu_info ci;
    CHECK(pg_cpu_get_info(&ci) == PG_OK, "pg_cpu_get_info: %s", pg_last_error());
    printf("arch %s level %s flags %#llx sve %d\n", ci.arch, ci.level,
           (unsigned long long)ci.flags, ci.sve_bits);

#if defined(__aarch64__)
    CHECK(ci.flags & PG_CPU_NEON, "AArch64 always has ASIMD");
    const char *sve_env = getenv("PEREGRINE_EXPECT_SVE_BITS");
    if (sve_env) {
        int want = atoi(sve_env);
        CHECK(((ci.flags & PG_CPU_SVE) != 0) == (want > 0), "SVE flag vs expected %d bits", want);
        CHECK(ci.sve_bits == want, "SVE length %d, expected %d", ci.sve_bits, want);
    }
#elif defined(__x86_64__)
    CHECK(ci.flags & PG_CPU_SSE2, "x86-64 always has SSE2");
    CHECK(!(ci.flags & PG_CPU_AVX2) || (ci.flags & PG_CPU_AVX), "AVX2 implies AVX");
#endif

    /* Masking to "c" turns everything off; restoring brings it back. */
    uint64_t before = pg_cpu_get_mask();
    CHECK(pg_cpu_set_mask_name("c") == PG_OK, "set c: %s", pg_last_error());
    pg_cpu_get_info(&ci);
    CHECK(ci.active == 0 && !strcmp(ci.level, "c"), "level %s active %#llx", ci.level,
           (unsigned long long)ci.active);
    for (int op = 0; op < pg_kernel_family_count(); op++) {
        pg_variant_info vi;
        pg_variant_get_info(op, pg_variant_selected(op), &vi);
        CHECK(!strcmp(vi.isa, "c"), "op %s dispatches to %s under mask c", pg_kernel_family_name(op), vi.name);
    }
    CHECK(pg_cpu_set_mask(before) == PG_OK, "restore");

    /* A bad level is an error naming it. */
    CHECK(pg_cpu_set_mask_name("bogus") == PG_ERR_INVALID_ARG, "bogus level accepted");
    CHECK(strstr(pg_last_error(), "bogus") != NULL, "message: %s", pg_last_error());

    printf("test_cpu: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}

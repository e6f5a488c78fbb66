/* selftest.c - `checkasm --selftest`: the harness must catch a clobbered
 * callee-saved register and a missing vzeroupper, and must pass arguments
 * (stack and float) through its trampoline unchanged.  Exits 0 only if every
 * planted fault was reported. */
#include <stdio.h>

#include "checkasm.h"
#include "selftest.h"

void checkasm_selftest_clobber(void);
#if defined(__x86_64__)
void checkasm_selftest_no_vzeroupper(void);
float checkasm_selftest_args(size_t, size_t, size_t, size_t, size_t, size_t, size_t, float);
#else
float checkasm_selftest_args(size_t, size_t, size_t, size_t, size_t, size_t, size_t, size_t,
                             size_t, float);
#endif

int checkasm_selftest(void)
{
    int ok = 1;
    int before = checkasm_failures();
    ((void (*)(void *))checkasm_trampoline)((void *)checkasm_selftest_clobber);
    int caught = checkasm_failures() - before;
    printf("selftest: clobbered callee-saved register %s\n", caught ? "caught" : "MISSED");
    ok &= caught > 0;
#if defined(__x86_64__)
    if (checkasm_has_xinuse) {
        before = checkasm_failures();
        ((void (*)(void *))checkasm_trampoline)((void *)checkasm_selftest_no_vzeroupper);
        caught = checkasm_failures() - before;
        printf("selftest: missing vzeroupper %s\n", caught ? "caught" : "MISSED");
        ok &= caught > 0;
    }
    if (checkasm_has_avx) {
        declare_func_proto(float, size_t, size_t, size_t, size_t, size_t, size_t, size_t, float);
        func_new = checkasm_selftest_args;
        float r = call_new(1, 2, 3, 4, 5, 6, 40, 2.5f);
        printf("selftest: arguments through the trampoline %s (%g)\n", r == 42.5f ? "intact" : "WRONG", r);
        ok &= r == 42.5f;
    }
#else
    {
        declare_func_proto(float, size_t, size_t, size_t, size_t, size_t, size_t, size_t, size_t, size_t,
                           float);
        func_new = checkasm_selftest_args;
        float r = call_new(1, 2, 3, 4, 5, 6, 7, 8, 40, 2.5f);
        printf("selftest: arguments through the trampoline %s (%g)\n", r == 42.5f ? "intact" : "WRONG", r);
        ok &= r == 42.5f;
    }
#endif
    printf("selftest: %s\n", ok ? "ok" : "FAILED");
    return ok;
}

/* checkasm_selftest_x86_64.S - deliberately broken routines that
 * `checkasm --selftest` must catch, proving the trampoline's checks work. */
#include "pg_asm.h"

        .text
/* void f(void): clobbers rbx and r14 without restoring them */
PG_FUNC(checkasm_selftest_clobber)
        xor     ebx, ebx
        xor     r14d, r14d
        ret
PG_ENDFUNC(checkasm_selftest_clobber)

/* void f(void): dirties the upper YMM halves and returns without vzeroupper */
PG_FUNC(checkasm_selftest_no_vzeroupper)
        vpcmpeqd ymm1, ymm1, ymm1
        ret
PG_ENDFUNC(checkasm_selftest_no_vzeroupper)

/* float f(size_t, size_t, size_t, size_t, size_t, size_t, size_t, float):
 * returns the 7th integer argument (the first on the stack) plus the float,
 * to prove arguments arrive where the prototype says. */
PG_FUNC(checkasm_selftest_args)
        mov     rax, [rsp + 8]
        vcvtsi2ss xmm1, xmm1, rax
        vaddss  xmm0, xmm0, xmm1
        ret
PG_ENDFUNC(checkasm_selftest_args)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

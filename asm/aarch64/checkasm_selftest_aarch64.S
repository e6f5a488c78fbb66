/* checkasm_selftest_aarch64.S - deliberately broken routines that
 * `checkasm --selftest` must catch, proving the trampoline's checks work. */
#include "pg_asm.h"

        .text
/* void f(void): clobbers x19 and d9 without restoring them */
PG_FUNC(checkasm_selftest_clobber)
        mov     x19, #0
        fmov    d9, xzr
        ret
PG_ENDFUNC(checkasm_selftest_clobber)

/* float f(size_t x0..x7, size_t stack0, float s0): returns stack0 + s0 */
PG_FUNC(checkasm_selftest_args)
        ldr     x9, [sp]
        ucvtf   s1, x9
        fadd    s0, s0, s1
        ret
PG_ENDFUNC(checkasm_selftest_args)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

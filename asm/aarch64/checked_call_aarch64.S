/* checked_call_aarch64.S - the trampoline checkasm calls assembly through.
 *
 * Called as checkasm_checked_call(func, args...) through a cast to func's own
 * prototype with one leading pointer: x1-x7 move down to x0-x6, the first
 * stack argument into x7, and eight more stack slots are copied down; float
 * arguments stay in v0-v7.  Before the call every callee-saved register
 * (x19-x28, x29, d8-d15) holds a canary from checkasm_canary[]; afterwards
 * any that changed is reported through checkasm_call_failed(1, bits).
 * The return value (x0, x1, q0) is kept. */
#include "pg_asm.h"

/* Frame: [sp, #0..63] outgoing stack args; then at FR: x29,x30 | x19..x28 |
 * d8..d15 | func | saved x0,x1 | saved q0. */
#define FR 64

        .macro  check_x reg, off, bit
        ldr     x11, [x9, #\off]
        cmp     \reg, x11
        b.eq    1f
        orr     x10, x10, #(1 << \bit)
1:
        .endm
        .macro  check_d reg, off, bit
        ldr     x11, [x9, #\off]
        fmov    x12, \reg
        cmp     x12, x11
        b.eq    1f
        orr     x10, x10, #(1 << \bit)
1:
        .endm

        .text
PG_FUNC(checkasm_checked_call)
        sub     sp, sp, #(FR + 208)
        stp     x29, x30, [sp, #FR + 0]
        stp     x19, x20, [sp, #FR + 16]
        stp     x21, x22, [sp, #FR + 32]
        stp     x23, x24, [sp, #FR + 48]
        stp     x25, x26, [sp, #FR + 64]
        stp     x27, x28, [sp, #FR + 80]
        stp     d8, d9, [sp, #FR + 96]
        stp     d10, d11, [sp, #FR + 112]
        stp     d12, d13, [sp, #FR + 128]
        stp     d14, d15, [sp, #FR + 144]
        str     x0, [sp, #FR + 160]
        /* caller's stack arguments start at the entry sp = sp + FR + 208 */
        .irp    i, 0, 1, 2, 3, 4, 5, 6, 7
        ldr     x9, [sp, #(FR + 208 + 8 + 8 * \i)]
        str     x9, [sp, #(8 * \i)]
        .endr
        mov     x0, x1
        mov     x1, x2
        mov     x2, x3
        mov     x3, x4
        mov     x4, x5
        mov     x5, x6
        mov     x6, x7
        ldr     x7, [sp, #(FR + 208)]
        adrp    x9, PG_SYM(checkasm_canary)
        add     x9, x9, :lo12:PG_SYM(checkasm_canary)
        ldp     x19, x20, [x9, #0]
        ldp     x21, x22, [x9, #16]
        ldp     x23, x24, [x9, #32]
        ldp     x25, x26, [x9, #48]
        ldp     x27, x28, [x9, #64]
        ldr     x29, [x9, #72 + 8]
        ldp     d8, d9, [x9, #88]
        ldp     d10, d11, [x9, #104]
        ldp     d12, d13, [x9, #120]
        ldp     d14, d15, [x9, #136]
        ldr     x16, [sp, #FR + 160]
        blr     x16
        stp     x0, x1, [sp, #FR + 168]
        str     q0, [sp, #FR + 184 + 8]

        adrp    x9, PG_SYM(checkasm_canary)
        add     x9, x9, :lo12:PG_SYM(checkasm_canary)
        mov     x10, #0
        check_x x19, 0, 0
        check_x x20, 8, 1
        check_x x21, 16, 2
        check_x x22, 24, 3
        check_x x23, 32, 4
        check_x x24, 40, 5
        check_x x25, 48, 6
        check_x x26, 56, 7
        check_x x27, 64, 8
        check_x x28, 72, 9
        check_x x29, 80, 10
        check_d d8, 88, 11
        check_d d9, 96, 12
        check_d d10, 104, 13
        check_d d11, 112, 14
        check_d d12, 120, 15
        check_d d13, 128, 16
        check_d d14, 136, 17
        check_d d15, 144, 18
        cbz     x10, 2f
        mov     w0, #1
        mov     x1, x10
        bl      PG_SYM(checkasm_call_failed)
2:      ldp     x0, x1, [sp, #FR + 168]
        ldr     q0, [sp, #FR + 184 + 8]
        ldp     x29, x30, [sp, #FR + 0]
        ldp     x19, x20, [sp, #FR + 16]
        ldp     x21, x22, [sp, #FR + 32]
        ldp     x23, x24, [sp, #FR + 48]
        ldp     x25, x26, [sp, #FR + 64]
        ldp     x27, x28, [sp, #FR + 80]
        ldp     d8, d9, [sp, #FR + 96]
        ldp     d10, d11, [sp, #FR + 112]
        ldp     d12, d13, [sp, #FR + 128]
        ldp     d14, d15, [sp, #FR + 144]
        add     sp, sp, #(FR + 208)
        ret
PG_ENDFUNC(checkasm_checked_call)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

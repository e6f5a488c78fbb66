/* checked_call_x86_64.S - the trampoline checkasm calls assembly through.
 *
 * Called as checkasm_checked_call(func, args...) through a cast to func's own
 * prototype with one leading pointer: integer arguments arrive shifted by one
 * register and are shifted back (the first stack argument moves into r9, the
 * next ten stack slots are copied down), float arguments stay in xmm0-7.
 * Before the call every callee-saved register (rbx, rbp, r12-r15) holds a
 * canary from checkasm_canary[]; afterwards any that changed is reported, and
 * so is a dirty upper YMM state (a missing vzeroupper), read from XINUSE
 * with xgetbv(1).  The function's return value (rax, rdx, xmm0) is kept. */
#include "pg_asm.h"

        .text
PG_FUNC(checkasm_checked_call)
        push    rbp
        push    rbx
        push    r12
        push    r13
        push    r14
        push    r15
        sub     rsp, 136                 /* 16-byte aligned again */
        mov     [rsp + 80], rdi          /* the function */
        .irp    i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9
        mov     rax, [rsp + 200 + 8 * \i]
        mov     [rsp + 8 * \i], rax
        .endr
        mov     rdi, rsi
        mov     rsi, rdx
        mov     rdx, rcx
        mov     rcx, r8
        mov     r8, r9
        mov     r9, [rsp + 192]
        cmp     byte ptr [rip + PG_SYM(checkasm_has_avx)], 0
        je      1f
        vzeroupper                       /* start from a clean upper state */
1:      mov     rbx, [rip + PG_SYM(checkasm_canary) + 0]
        mov     rbp, [rip + PG_SYM(checkasm_canary) + 8]
        mov     r12, [rip + PG_SYM(checkasm_canary) + 16]
        mov     r13, [rip + PG_SYM(checkasm_canary) + 24]
        mov     r14, [rip + PG_SYM(checkasm_canary) + 32]
        mov     r15, [rip + PG_SYM(checkasm_canary) + 40]
        call    qword ptr [rsp + 80]
        mov     [rsp + 88], rax
        mov     [rsp + 96], rdx
        movups  [rsp + 104], xmm0

        xor     esi, esi                 /* bit i: callee-saved register i clobbered */
        cmp     rbx, [rip + PG_SYM(checkasm_canary) + 0]
        je      2f
        or      esi, 1
2:      cmp     rbp, [rip + PG_SYM(checkasm_canary) + 8]
        je      2f
        or      esi, 2
2:      cmp     r12, [rip + PG_SYM(checkasm_canary) + 16]
        je      2f
        or      esi, 4
2:      cmp     r13, [rip + PG_SYM(checkasm_canary) + 24]
        je      2f
        or      esi, 8
2:      cmp     r14, [rip + PG_SYM(checkasm_canary) + 32]
        je      2f
        or      esi, 16
2:      cmp     r15, [rip + PG_SYM(checkasm_canary) + 40]
        je      2f
        or      esi, 32
2:      test    esi, esi
        jz      3f
        mov     edi, 1
        call    PG_SYM(checkasm_call_failed)
3:      cmp     byte ptr [rip + PG_SYM(checkasm_has_xinuse)], 0
        je      4f
        mov     ecx, 1
        xgetbv
        test    eax, 4                   /* XINUSE bit 2: upper YMM halves in use */
        jz      4f
        vzeroupper
        mov     edi, 2
        xor     esi, esi
        call    PG_SYM(checkasm_call_failed)
4:      mov     rax, [rsp + 88]
        mov     rdx, [rsp + 96]
        movups  xmm0, [rsp + 104]
        add     rsp, 136
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbx
        pop     rbp
        ret
PG_ENDFUNC(checkasm_checked_call)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

/* f32_vmul_avx2.S - y[i] = a[i] * b[i], 32 floats per iteration, the last
 * 0..7 with a masked load and store so nothing past n is touched. */
#include "pg_asm.h"

        .text
/* void pg_f32_vmul_avx2(size_t n, const float *a, const float *b, float *y)
 *                        rdi       rsi             rdx             rcx */
PG_FUNC(pg_f32_vmul_avx2)
        cmp     rdi, 32
        jb      .Lvmul_by8
.Lvmul_by32:
        vmovups ymm0, [rsi]
        vmovups ymm1, [rsi + 32]
        vmovups ymm2, [rsi + 64]
        vmovups ymm3, [rsi + 96]
        vmulps  ymm0, ymm0, [rdx]
        vmulps  ymm1, ymm1, [rdx + 32]
        vmulps  ymm2, ymm2, [rdx + 64]
        vmulps  ymm3, ymm3, [rdx + 96]
        vmovups [rcx], ymm0
        vmovups [rcx + 32], ymm1
        vmovups [rcx + 64], ymm2
        vmovups [rcx + 96], ymm3
        add     rsi, 128
        add     rdx, 128
        add     rcx, 128
        sub     rdi, 32
        cmp     rdi, 32
        jae     .Lvmul_by32
.Lvmul_by8:
        cmp     rdi, 8
        jb      .Lvmul_tail
        vmovups ymm0, [rsi]
        vmulps  ymm0, ymm0, [rdx]
        vmovups [rcx], ymm0
        add     rsi, 32
        add     rdx, 32
        add     rcx, 32
        sub     rdi, 8
        jmp     .Lvmul_by8
.Lvmul_tail:
        test    rdi, rdi
        jz      .Lvmul_done
        lea     rax, [rip + PG_SYM(pg_avx2_tail_mask)]
        neg     rdi
        vmovdqu ymm3, [rax + 4 * rdi + 32]
        vmaskmovps ymm0, ymm3, [rsi]
        vmaskmovps ymm1, ymm3, [rdx]
        vmulps  ymm0, ymm0, ymm1
        vmaskmovps [rcx], ymm3, ymm0
.Lvmul_done:
        vzeroupper
        ret
PG_ENDFUNC(pg_f32_vmul_avx2)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

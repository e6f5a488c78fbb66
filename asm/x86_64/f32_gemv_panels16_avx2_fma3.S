/* f32_gemv_panels16_avx2_fma3.S - y = x . B (+ bias) for one row x (M = 1)
 * on a weight packed for the avx2 SGEMM kernel: 16-column panels, panel p
 * holding columns 16p .. 16p + 15 as K rows of 16 floats (sgemm.h), the
 * columns past N zero.
 *
 * A decoding step's product at batch 1 streams B once and is bound by
 * memory.  The SGEMM kernel reads one panel after another, one forward
 * stream; this reads four panels at once, four streams that the hardware
 * prefetchers run side by side (as gemv does on row-major B): 8
 * accumulators (two per panel), x[k] broadcast, 8 FMAs on 256 bytes a k.
 * The panels left (fewer than four, or the last one when N % 16 != 0) go
 * one at a time (two chains: still far above DRAM's pace), their bias
 * loads and y stores masked (pg_avx2_tail_mask) so nothing past N is
 * touched.  Each y[j] sums in k order, as the C
 * reference does (fused multiply-adds: the rounding differs slightly).
 *
 * void pg_f32_gemv_panels16_avx2_fma3(size_t N, size_t K, const float *x,
 *                                     rdi       rsi       rdx
 *         const float *b, const float *bias, float *y, size_t nr)
 *         rcx             r8                 r9        [rsp + 8] (16)
 *
 * Registers: rdi columns left, rsi K, rdx x, rcx this group's first panel,
 * r8 bias (0: none), r9 y, r10 bytes of a panel (64 K), rax 3 panels, r11
 * the k row of the first panel, rbx x[k] (pushed), ymm8 x[k] broadcast. */
#include "pg_asm.h"

/* acc += x[k] * B[k] of the panel at r11 + \off (its two halves) */
.macro PANEL a0, a1, off
        vfmadd231ps \a0, ymm8, [r11 + \off]
        vfmadd231ps \a1, ymm8, [r11 + \off + 32]
.endm

        .text
PG_FUNC(pg_f32_gemv_panels16_avx2_fma3)
        push    rbx
        mov     r10, rsi
        shl     r10, 6                          /* a panel: K rows of 64 bytes */
        lea     rax, [r10 + 2 * r10]

.Lgroup4:                                       /* four whole panels */
        cmp     rdi, 64
        jb      .Lone
        vxorps  ymm0, ymm0, ymm0
        vxorps  ymm1, ymm1, ymm1
        vxorps  ymm2, ymm2, ymm2
        vxorps  ymm3, ymm3, ymm3
        vxorps  ymm4, ymm4, ymm4
        vxorps  ymm5, ymm5, ymm5
        vxorps  ymm6, ymm6, ymm6
        vxorps  ymm7, ymm7, ymm7
        mov     r11, rcx
        mov     rbx, rdx
        test    rsi, rsi
        jz      2f
        push    rsi
        .p2align 4
1:      vbroadcastss ymm8, dword ptr [rbx]
        PANEL   ymm0, ymm1, 0
        PANEL   ymm2, ymm3, r10
        PANEL   ymm4, ymm5, r10*2
        PANEL   ymm6, ymm7, rax
        add     r11, 64
        add     rbx, 4
        dec     rsi
        jnz     1b
        pop     rsi
2:      test    r8, r8
        jz      3f
        vaddps  ymm0, ymm0, [r8]
        vaddps  ymm1, ymm1, [r8 + 32]
        vaddps  ymm2, ymm2, [r8 + 64]
        vaddps  ymm3, ymm3, [r8 + 96]
        vaddps  ymm4, ymm4, [r8 + 128]
        vaddps  ymm5, ymm5, [r8 + 160]
        vaddps  ymm6, ymm6, [r8 + 192]
        vaddps  ymm7, ymm7, [r8 + 224]
        add     r8, 256
3:      vmovups [r9], ymm0
        vmovups [r9 + 32], ymm1
        vmovups [r9 + 64], ymm2
        vmovups [r9 + 96], ymm3
        vmovups [r9 + 128], ymm4
        vmovups [r9 + 160], ymm5
        vmovups [r9 + 192], ymm6
        vmovups [r9 + 224], ymm7
        add     r9, 256
        lea     rcx, [rcx + 4 * r10]
        sub     rdi, 64
        jmp     .Lgroup4

.Lone:                                          /* one panel, maybe partial */
        test    rdi, rdi
        jz      .Ldone
        /* the masks of its two halves: min(n, 8) and n - 8 (clamped) lanes */
        mov     r11, 8
        cmp     rdi, 8
        cmovb   r11, rdi
        neg     r11
        lea     rbx, [rip + PG_SYM(pg_avx2_tail_mask)]
        vmovdqu ymm14, [rbx + 4 * r11 + 32]
        mov     r11, rdi
        sub     r11, 8
        mov     ebx, 0
        cmovb   r11, rbx
        cmp     r11, 8
        mov     ebx, 8
        cmova   r11, rbx
        neg     r11
        lea     rbx, [rip + PG_SYM(pg_avx2_tail_mask)]
        vmovdqu ymm15, [rbx + 4 * r11 + 32]
        vxorps  ymm0, ymm0, ymm0
        vxorps  ymm1, ymm1, ymm1
        mov     r11, rcx
        mov     rbx, rdx
        test    rsi, rsi
        jz      6f
        push    rsi
5:      vbroadcastss ymm8, dword ptr [rbx]
        PANEL   ymm0, ymm1, 0
        add     r11, 64
        add     rbx, 4
        dec     rsi
        jnz     5b
        pop     rsi
6:
        test    r8, r8
        jz      7f
        vmaskmovps ymm2, ymm14, [r8]
        vmaskmovps ymm3, ymm15, [r8 + 32]
        vaddps  ymm0, ymm0, ymm2
        vaddps  ymm1, ymm1, ymm3
        add     r8, 64
7:      vmaskmovps [r9], ymm14, ymm0
        vmaskmovps [r9 + 32], ymm15, ymm1
        add     r9, 64
        add     rcx, r10
        sub     rdi, 16
        ja      .Lone
.Ldone:
        vzeroupper
        pop     rbx
        ret
PG_ENDFUNC(pg_f32_gemv_panels16_avx2_fma3)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

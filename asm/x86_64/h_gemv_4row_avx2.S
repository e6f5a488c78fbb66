/* h_gemv_4row_avx2.S - GEMV y[n] = dot(W row n, x) with f16 or bf16
 * weights and fp32 x on AVX2 + FMA + F16C: the AVX2 form of
 * h_gemv_4row_avx512.S.  8 weights a step widen to fp32 in one
 * instruction (vcvtph2ps; bf16: vpmovzxwd then a 16-bit left shift), two
 * steps (16 weights) per row a loop, four rows sharing each x vector; K a
 * multiple of 32.  Only the summation order differs from the C reference.
 *
 * void pg_{f16,bf16}_f32_gemv_4row_avx2(size_t N, size_t K, const void *W,
 *                                        rdi       rsi       rdx
 *         size_t ldw, const void *x, float *y)
 *         rcx         r8             r9
 *
 * Registers: rdi rows left, rsi 16-weight steps per row, rdx row 0 of the
 * group, rcx ldw, r8 x, r9 y; rax/r10/r11/rbx the row walks, r12 the x
 * walk, r13 steps left, r14 the prefetch walk; ymm0-7 the row sums (two per
 * row), ymm8-9 x, ymm10-13 widened weights.
 */
#include "pg_asm.h"

#define T_F16 0
#define T_BF16 1
#define HGEMV_PF_DIST 8192

.macro WIDEN t, dst, mem
.if \t == T_F16
        vcvtph2ps \dst, \mem
.else
        vpmovzxwd \dst, \mem
        vpslld  \dst, \dst, 16
.endif
.endm

.macro HGEMV name, t
PG_FUNC(\name)
        push    rbx
        push    r12
        push    r13
        push    r14
        shr     rsi, 4
        lea     r13, [rdx + rcx*4 + HGEMV_PF_DIST]
        mov     r14, rdx
0:      prefetcht0 [r14]
        add     r14, 64
        cmp     r14, r13
        jb      0b

1:      test    rdi, rdi
        jz      9f
        mov     rax, rdx
        lea     r10, [rdx + rcx]
        lea     r11, [rdx + rcx*2]
        lea     rbx, [r10 + rcx*2]
        cmp     rdi, 4
        jae     2f
        mov     rbx, rdx
        cmp     rdi, 3
        cmovb   r11, rdx
        cmp     rdi, 2
        cmovb   r10, rdx
2:      lea     r14, [rdx + rcx*4 + HGEMV_PF_DIST]
        vxorps  xmm0, xmm0, xmm0
        vxorps  xmm1, xmm1, xmm1
        vxorps  xmm2, xmm2, xmm2
        vxorps  xmm3, xmm3, xmm3
        vxorps  xmm4, xmm4, xmm4
        vxorps  xmm5, xmm5, xmm5
        vxorps  xmm6, xmm6, xmm6
        vxorps  xmm7, xmm7, xmm7
        mov     r12, r8
        mov     r13, rsi
        test    r13, r13
        jz      4f
3:      vmovups ymm8, [r12]
        vmovups ymm9, [r12 + 32]
        prefetcht0 [r14]
        add     r14, 128
        WIDEN   \t, ymm10, [rax]
        WIDEN   \t, ymm11, [rax + 16]
        WIDEN   \t, ymm12, [r10]
        WIDEN   \t, ymm13, [r10 + 16]
        vfmadd231ps ymm0, ymm10, ymm8
        vfmadd231ps ymm1, ymm11, ymm9
        vfmadd231ps ymm2, ymm12, ymm8
        vfmadd231ps ymm3, ymm13, ymm9
        WIDEN   \t, ymm10, [r11]
        WIDEN   \t, ymm11, [r11 + 16]
        WIDEN   \t, ymm12, [rbx]
        WIDEN   \t, ymm13, [rbx + 16]
        vfmadd231ps ymm4, ymm10, ymm8
        vfmadd231ps ymm5, ymm11, ymm9
        vfmadd231ps ymm6, ymm12, ymm8
        vfmadd231ps ymm7, ymm13, ymm9
        prefetcht0 [r14 - 64]
        add     rax, 32
        add     r10, 32
        add     r11, 32
        add     rbx, 32
        add     r12, 64
        dec     r13
        jnz     3b

4:      vaddps  ymm0, ymm0, ymm1
        vaddps  ymm2, ymm2, ymm3
        vaddps  ymm4, ymm4, ymm5
        vaddps  ymm6, ymm6, ymm7
        vhaddps ymm0, ymm0, ymm2
        vhaddps ymm4, ymm4, ymm6
        vhaddps ymm0, ymm0, ymm4
        vextractf128 xmm1, ymm0, 1
        vaddps  xmm0, xmm0, xmm1
        cmp     rdi, 4
        jb      5f
        vmovups [r9], xmm0
        add     r9, 16
        lea     rdx, [rdx + rcx*4]
        sub     rdi, 4
        jmp     1b

5:      mov     rax, rdi
        neg     rax
        lea     r11, [rip + PG_SYM(pg_avx2_tail_mask)]
        vmovdqu xmm1, [r11 + 4*rax + 32]
        vmaskmovps [r9], xmm1, xmm0

9:      vzeroupper
        pop     r14
        pop     r13
        pop     r12
        pop     rbx
        ret
PG_ENDFUNC(\name)
.endm

        .text
HGEMV pg_f16_f32_gemv_4row_avx2, T_F16
HGEMV pg_bf16_f32_gemv_4row_avx2, T_BF16

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

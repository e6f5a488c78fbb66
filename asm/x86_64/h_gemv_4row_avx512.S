/* h_gemv_4row_avx512.S - GEMV y[n] = dot(W row n, x) with 16-bit float
 * weights (f16 or bf16, K per row) and fp32 activations x (kquant.h).
 * AVX-512F: 16 weights a step widen to fp32 in one instruction (f16:
 * vcvtph2ps; bf16: vpmovzxwd then a 16-bit left shift, bf16 being the top
 * half of an fp32) and go into one FMA with x.  Four rows at a time share
 * each x vector; K a multiple of 32 (the driver checks), the loop takes 32
 * weights (two zmm) per row a step.  The four 16-lane sums fold to
 * [y0, y1, y2, y3]; the last N % 4 rows run with the missing rows aimed at
 * row 0 and a masked store.  Each product is an fp32 FMA of the exact
 * widened weight: only the summation order differs from the C reference.
 *
 * void pg_{f16,bf16}_f32_gemv_4row_avx512vnni(size_t N, size_t K,
 *                                              rdi       rsi
 *         const void *W, size_t ldw, const void *x, float *y)
 *         rdx            rcx         r8             r9
 * (named avx512vnni to sit in the same table rows as the k-quants; they
 * need only AVX-512F.)
 *
 * Registers: rdi rows left, rsi steps of 32 per row, rdx row 0 of the
 * group, rcx ldw, r8 x, r9 y; rax/r10/r11/rbx the row walks, r12 the x
 * walk, r13 steps left, r14 the prefetch walk; zmm0-7 the row sums (two
 * per row), zmm16-17 x, zmm18-25 widened weights.
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
        shr     rsi, 5
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
        vpxord  zmm0, zmm0, zmm0
        vpxord  zmm1, zmm1, zmm1
        vpxord  zmm2, zmm2, zmm2
        vpxord  zmm3, zmm3, zmm3
        vpxord  zmm4, zmm4, zmm4
        vpxord  zmm5, zmm5, zmm5
        vpxord  zmm6, zmm6, zmm6
        vpxord  zmm7, zmm7, zmm7
        mov     r12, r8
        mov     r13, rsi
        test    r13, r13
        jz      4f
3:      vmovups zmm16, [r12]
        vmovups zmm17, [r12 + 64]
        prefetcht0 [r14]
        prefetcht0 [r14 + 64]
        add     r14, 256
        WIDEN   \t, zmm18, [rax]
        WIDEN   \t, zmm19, [rax + 32]
        WIDEN   \t, zmm20, [r10]
        WIDEN   \t, zmm21, [r10 + 32]
        WIDEN   \t, zmm22, [r11]
        WIDEN   \t, zmm23, [r11 + 32]
        WIDEN   \t, zmm24, [rbx]
        WIDEN   \t, zmm25, [rbx + 32]
        vfmadd231ps zmm0, zmm18, zmm16
        vfmadd231ps zmm1, zmm19, zmm17
        vfmadd231ps zmm2, zmm20, zmm16
        vfmadd231ps zmm3, zmm21, zmm17
        vfmadd231ps zmm4, zmm22, zmm16
        vfmadd231ps zmm5, zmm23, zmm17
        vfmadd231ps zmm6, zmm24, zmm16
        vfmadd231ps zmm7, zmm25, zmm17
        prefetcht0 [r14 - 128]
        prefetcht0 [r14 - 64]
        add     rax, 64
        add     r10, 64
        add     r11, 64
        add     rbx, 64
        add     r12, 128
        dec     r13
        jnz     3b

4:      vaddps  zmm0, zmm0, zmm1
        vaddps  zmm2, zmm2, zmm3
        vaddps  zmm4, zmm4, zmm5
        vaddps  zmm6, zmm6, zmm7
        vextractf64x4 ymm1, zmm0, 1
        vaddps  ymm0, ymm0, ymm1
        vextractf64x4 ymm3, zmm2, 1
        vaddps  ymm2, ymm2, ymm3
        vextractf64x4 ymm5, zmm4, 1
        vaddps  ymm4, ymm4, ymm5
        vextractf64x4 ymm7, zmm6, 1
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

5:      mov     eax, 1
        mov     ecx, edi
        shl     eax, cl
        dec     eax
        kmovw   k1, eax
        vmovups [r9]{k1}, xmm0

9:      vzeroupper
        pop     r14
        pop     r13
        pop     r12
        pop     rbx
        ret
PG_ENDFUNC(\name)
.endm

        .text
HGEMV pg_f16_f32_gemv_4row_avx512vnni, T_F16
HGEMV pg_bf16_f32_gemv_4row_avx512vnni, T_BF16

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

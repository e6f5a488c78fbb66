/* h_gemm_8x1_avx512.S - the f16 / bf16 prefill product for eight rows of
 * fp32 X at a time:
 *
 *     C[t * ldc + n] = dot(W row n, X row t)     0 <= t < 8, 0 <= n < N
 *
 * W rows of K 16-bit floats, X eight rows of K fp32 at stride ldx bytes.
 * AVX-512F: 16 weights widen once to fp32 (f16: vcvtph2ps; bf16:
 * vpmovzxwd and a 16-bit left shift) and go into one FMA per row of X
 * (x straight from memory), two such steps (32 weights) per loop.  After
 * the row of W the eight 16-lane sums fold to eight floats, stored down
 * C's column n.  K a multiple of 32 (the driver checks).
 *
 * void pg_{f16,bf16}_f32_gemm_ukr_8x1_avx512vnni(size_t N, size_t K,
 *                                                 rdi       rsi
 *         const void *W, size_t ldw, const void *X, size_t ldx, float *C, size_t ldc)
 *         rdx            rcx         r8             r9          [rsp+8]   [rsp+16]
 * (named with the k-quants' ISA tag to share their table rows; AVX-512F
 * is all it needs.)
 *
 * Registers: rdi rows left, rsi 32-weight steps per row, rdx the row of
 * W, rcx ldw, r8 X, r9 ldx, r10 3 ldx, r11 5 ldx, rbx 7 ldx, r12 C + n,
 * r13 ldc * 4, r14 the W walk, r15 the X walk, rbp steps left, rax
 * scratch; zmm0-7 the sums, zmm16-17 widened weights, zmm26 scratch.
 */
#include "pg_asm.h"

#define T_F16 0
#define T_BF16 1

#define XT0 r15
#define XT1 r15 + r9
#define XT2 r15 + r9*2
#define XT3 r15 + r10
#define XT4 r15 + r9*4
#define XT5 r15 + r11
#define XT6 r15 + r10*2
#define XT7 r15 + rbx

.macro WIDEN t, dst, mem
.if \t == T_F16
        vcvtph2ps \dst, \mem
.else
        vpmovzxwd \dst, \mem
        vpslld  \dst, \dst, 16
.endif
.endm

.macro HGEMM name, t
PG_FUNC(\name)
        push    rbx
        push    rbp
        push    r12
        push    r13
        push    r14
        push    r15
        mov     r12, [rsp + 56]
        mov     r13, [rsp + 64]
        shl     r13, 2
        shr     rsi, 5
        lea     r10, [r9 + r9*2]
        lea     r11, [r9 + r9*4]
        lea     rbx, [r10 + r9*4]

1:      test    rdi, rdi
        jz      9f
        vpxord  zmm0, zmm0, zmm0
        vpxord  zmm1, zmm1, zmm1
        vpxord  zmm2, zmm2, zmm2
        vpxord  zmm3, zmm3, zmm3
        vpxord  zmm4, zmm4, zmm4
        vpxord  zmm5, zmm5, zmm5
        vpxord  zmm6, zmm6, zmm6
        vpxord  zmm7, zmm7, zmm7
        mov     r14, rdx
        mov     r15, r8
        mov     rbp, rsi
        test    rbp, rbp
        jz      4f
3:      WIDEN   \t, zmm16, [r14]
        WIDEN   \t, zmm17, [r14 + 32]
        vfmadd231ps zmm0, zmm16, [XT0]
        vfmadd231ps zmm1, zmm16, [XT1]
        vfmadd231ps zmm2, zmm16, [XT2]
        vfmadd231ps zmm3, zmm16, [XT3]
        vfmadd231ps zmm4, zmm16, [XT4]
        vfmadd231ps zmm5, zmm16, [XT5]
        vfmadd231ps zmm6, zmm16, [XT6]
        vfmadd231ps zmm7, zmm16, [XT7]
        vfmadd231ps zmm0, zmm17, [XT0 + 64]
        vfmadd231ps zmm1, zmm17, [XT1 + 64]
        vfmadd231ps zmm2, zmm17, [XT2 + 64]
        vfmadd231ps zmm3, zmm17, [XT3 + 64]
        vfmadd231ps zmm4, zmm17, [XT4 + 64]
        vfmadd231ps zmm5, zmm17, [XT5 + 64]
        vfmadd231ps zmm6, zmm17, [XT6 + 64]
        vfmadd231ps zmm7, zmm17, [XT7 + 64]
        add     r14, 64
        add     r15, 128
        dec     rbp
        jnz     3b

4:      .irp r, 0, 1, 2, 3, 4, 5, 6, 7
        vextractf64x4 ymm26, zmm\r, 1
        vaddps  ymm\r, ymm\r, ymm26
        .endr
        vhaddps ymm0, ymm0, ymm1
        vhaddps ymm2, ymm2, ymm3
        vhaddps ymm4, ymm4, ymm5
        vhaddps ymm6, ymm6, ymm7
        vhaddps ymm0, ymm0, ymm2
        vhaddps ymm4, ymm4, ymm6
        vextractf128 xmm1, ymm0, 1
        vaddps  xmm0, xmm0, xmm1
        vextractf128 xmm5, ymm4, 1
        vaddps  xmm4, xmm4, xmm5
        mov     rax, r12
        vmovss  [rax], xmm0
        add     rax, r13
        vextractps [rax], xmm0, 1
        add     rax, r13
        vextractps [rax], xmm0, 2
        add     rax, r13
        vextractps [rax], xmm0, 3
        add     rax, r13
        vmovss  [rax], xmm4
        add     rax, r13
        vextractps [rax], xmm4, 1
        add     rax, r13
        vextractps [rax], xmm4, 2
        add     rax, r13
        vextractps [rax], xmm4, 3
        add     r12, 4
        add     rdx, rcx
        dec     rdi
        jmp     1b

9:      vzeroupper
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbp
        pop     rbx
        ret
PG_ENDFUNC(\name)
.endm

        .text
HGEMM pg_f16_f32_gemm_ukr_8x1_avx512vnni, T_F16
HGEMM pg_bf16_f32_gemm_ukr_8x1_avx512vnni, T_BF16

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

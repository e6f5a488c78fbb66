/* q_gemm_4x1_avx2.S - quantised GEMM C[m, n] = dot(W row n, X row m), W
 * rows of q4_0 / q4_1 / q8_0 blocks, X rows of q8_0 / q8_1 blocks
 * (qgemm.h).  One macro body makes the six routines: three weight types,
 * AVX2 (vpmaddubsw + vpmaddwd) and AVX-VNNI (vpdpbusd).
 *
 * The tile is four rows of X against one row of W: each weight block is
 * loaded and widened once (in registers) and used by the four X rows.  The
 * outer loop walks W's rows, so a row of W is read from memory once and
 * stays in L1 while every group of four X rows passes over it; X (M rows)
 * stays in L1/L2.  Per weight block:
 *   q4_1: nibbles -> 32 unsigned bytes in element order (vbroadcasti128,
 *         vpsrlvq by [0, 0 | 4, 4], and 0x0f), u8 x s8 directly
 *         against each X row (the X block a memory operand);
 *   q4_0: nibbles - 8 -> signed; q8_0: the bytes as they are; both through
 *         the sign trick, |w| once per block and x with w's sign per row
 *         (needs x != -128, which the activation quantisers never give: |q|
 *         <= 127; w may be any byte).
 * Then as in q_gemv_4row_avx2.S: exact int32 sums, one fp32 scale product
 * d_w * d_x per block and row, an 8-lane fp32 sum per X row, the q4_1
 * offset m_w * s_x collected in lane 1 of a 4-lane sum.  The last M % 4
 * rows of X run the same code with the missing rows aimed at the group's
 * first row and their outputs not stored.
 *
 * void pg_q<w>_q8_<a>_gemm_4x1_{avx2,avxvnni}(size_t M, size_t N, size_t K,
 *                                              rdi       rsi       rdx
 *         const void *W, size_t ldw, const void *X, size_t ldx, float *C, size_t ldc)
 *         rcx            r8          r9             [rsp+8]     [rsp+16]  [rsp+24]
 *
 * Registers: rdi M, rsi W rows left, rdx blocks per row, rcx W row n,
 * r8 ldw, r9 X; r15 the X group, r13 X rows left, r14 C at (group, n);
 * r10/r11/rbx/rbp the four X row walks, rax the W walk, r12 blocks left.
 * Locals: [rsp] ldx, [rsp+8] ldc bytes, [rsp+16] C at (0, n).
 * ymm0-3 the sums, xmm4-7 q4_1 offset sums, ymm8 W (unsigned nibbles, or
 * signed), ymm12 |W|, ymm9 W's scale, ymm10-11 scratch, ymm13 0x0f bytes,
 * ymm14 int16 ones, ymm15 8s (q4_0), the nibble shift counts in ymm12
 * (q4_1, which needs no |W|) or ymm6 (q4_0).
 */
#include "pg_asm.h"

#define T_Q4_0 0
#define T_Q4_1 1
#define T_Q8_0 8

/* dst = 8 int32 sums of u8 (u) x s8 (s); dst must differ from u and s. */
.macro IDOT vnni, dst, u, s
.if \vnni
        vpxor   \dst, \dst, \dst
        {vex} vpdpbusd \dst, \u, \s
.else
        vpmaddubsw \dst, \u, \s
        vpmaddwd \dst, \dst, ymm14
.endif
.endm

/* One X row's block at [xp] against the W block in registers. */
.macro XROW vnni, t, xp, acc, accm
.if \t == T_Q4_1
        IDOT    \vnni, ymm10, ymm8, [\xp + 4]
        vcvtdq2ps ymm10, ymm10
        vmovd   xmm11, dword ptr [\xp]
        vcvtph2ps xmm11, xmm11
        vmulps  xmm11, xmm11, xmm9
        vaddps  \accm, \accm, xmm11
        vbroadcastss ymm11, xmm11
.else
        vmovdqu ymm10, [\xp + 2]
        vpsignb ymm10, ymm10, ymm8
        IDOT    \vnni, ymm11, ymm12, ymm10
        vcvtdq2ps ymm10, ymm11
        vpbroadcastw xmm11, word ptr [\xp]
        vcvtph2ps ymm11, xmm11
        vmulps  ymm11, ymm11, ymm9
.endif
        vfmadd231ps \acc, ymm10, ymm11
.endm

.macro QGEMM name, vnni, t
PG_FUNC(\name)
/* bytes per W block, offset of its quants, bytes per X block */
.if \t == T_Q4_0
  .set WB, 18
  .set WOFF, 2
  .set XB, 34
.elseif \t == T_Q4_1
  .set WB, 20
  .set WOFF, 4
  .set XB, 36
.else
  .set WB, 34
  .set WOFF, 2
  .set XB, 34
.endif
        push    rbx
        push    rbp
        push    r12
        push    r13
        push    r14
        push    r15
        sub     rsp, 24
        mov     rax, [rsp + 80]
        mov     [rsp], rax
        mov     rax, [rsp + 96]
        shl     rax, 2
        mov     [rsp + 8], rax
        mov     rax, [rsp + 88]
        mov     [rsp + 16], rax
        shr     rdx, 5
        mov     eax, 0x0f0f0f0f
        vmovd   xmm13, eax
        vpbroadcastd ymm13, xmm13
        mov     eax, 0x00010001
        vmovd   xmm14, eax
        vpbroadcastd ymm14, xmm14
        mov     eax, 0x08080808
        vmovd   xmm15, eax
        vpbroadcastd ymm15, xmm15
.if \t != T_Q8_0
        /* shift counts [0, 0 | 4, 4]: the nibbles, loaded into both
         * lanes, shift by 0 (low) and 4 (high) */
        mov     eax, 4
        vmovq   xmm10, rax
        vpbroadcastq xmm10, xmm10
  .if \t == T_Q4_1
        vperm2i128 ymm12, ymm10, ymm10, 0x08
  .else
        vperm2i128 ymm6, ymm10, ymm10, 0x08
  .endif
.endif
        test    rdi, rdi
        jz      9f

1:      /* W row n */
        test    rsi, rsi
        jz      9f
        mov     r15, r9
        mov     r13, rdi
        mov     r14, [rsp + 16]

2:      /* a group of four X rows against W row n */
        mov     r10, r15
        mov     rax, [rsp]
        lea     r11, [r15 + rax]
        lea     rbx, [r15 + rax*2]
        lea     rbp, [r11 + rax*2]
        cmp     r13, 4
        jae     3f
        /* fewer than 4 rows left: the missing ones read the first again */
        mov     rbp, r15
        cmp     r13, 3
        cmovb   rbx, r15
        cmp     r13, 2
        cmovb   r11, r15
3:      vxorps  xmm0, xmm0, xmm0
        vxorps  xmm1, xmm1, xmm1
        vxorps  xmm2, xmm2, xmm2
        vxorps  xmm3, xmm3, xmm3
.if \t == T_Q4_1
        vxorps  xmm4, xmm4, xmm4
        vxorps  xmm5, xmm5, xmm5
        vxorps  xmm6, xmm6, xmm6
        vxorps  xmm7, xmm7, xmm7
.endif
        mov     rax, rcx
        mov     r12, rdx
        test    r12, r12
        jz      5f
4:      /* one W block, widened once, against the four X rows */
.if \t == T_Q8_0
        vmovdqu ymm8, [rax + 2]
.else
        vbroadcasti128 ymm8, [rax + WOFF]
  .if \t == T_Q4_1
        vpsrlvq ymm8, ymm8, ymm12
  .else
        vpsrlvq ymm8, ymm8, ymm6
  .endif
        vpand   ymm8, ymm8, ymm13
.endif
.if \t == T_Q4_1
        vmovd   xmm9, dword ptr [rax]
        vcvtph2ps xmm9, xmm9
.else
  .if \t == T_Q4_0
        vpsubb  ymm8, ymm8, ymm15
  .endif
        vpabsb  ymm12, ymm8
        vpbroadcastw xmm9, word ptr [rax]
        vcvtph2ps ymm9, xmm9
.endif
        XROW    \vnni, \t, r10, ymm0, xmm4
        XROW    \vnni, \t, r11, ymm1, xmm5
        XROW    \vnni, \t, rbx, ymm2, xmm6
        XROW    \vnni, \t, rbp, ymm3, xmm7
        add     rax, WB
        add     r10, XB
        add     r11, XB
        add     rbx, XB
        add     rbp, XB
        dec     r12
        jnz     4b

5:      /* [row0, row1, row2, row3] of column n */
        vhaddps ymm0, ymm0, ymm1
        vhaddps ymm2, ymm2, ymm3
        vhaddps ymm0, ymm0, ymm2
        vextractf128 xmm1, ymm0, 1
        vaddps  xmm0, xmm0, xmm1
.if \t == T_Q4_1
        vunpcklps xmm4, xmm4, xmm5
        vunpcklps xmm6, xmm6, xmm7
        vunpckhpd xmm4, xmm4, xmm6
        vaddps  xmm0, xmm0, xmm4
.endif
        mov     r12, [rsp + 8]
        vmovss  [r14], xmm0
        cmp     r13, 2
        jb      6f
        vextractps [r14 + r12], xmm0, 1
        cmp     r13, 3
        jb      6f
        vextractps [r14 + r12*2], xmm0, 2
        cmp     r13, 4
        jb      6f
        lea     rax, [r12 + r12*2]
        vextractps [r14 + rax], xmm0, 3
        cmp     r13, 4
        je      6f
        /* next group of X rows */
        sub     r13, 4
        mov     rax, [rsp]
        lea     r15, [r15 + rax*4]
        lea     r14, [r14 + r12*4]
        jmp     2b

6:      /* next W row */
        add     rcx, r8
        add     qword ptr [rsp + 16], 4
        dec     rsi
        jmp     1b

9:      vzeroupper
        add     rsp, 24
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
QGEMM pg_q4_0_q8_0_gemm_4x1_avx2, 0, T_Q4_0
QGEMM pg_q4_1_q8_1_gemm_4x1_avx2, 0, T_Q4_1
QGEMM pg_q8_0_q8_0_gemm_4x1_avx2, 0, T_Q8_0
QGEMM pg_q4_0_q8_0_gemm_4x1_avxvnni, 1, T_Q4_0
QGEMM pg_q4_1_q8_1_gemm_4x1_avxvnni, 1, T_Q4_1
QGEMM pg_q8_0_q8_0_gemm_4x1_avxvnni, 1, T_Q8_0

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

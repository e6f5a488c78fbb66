/* q_gemv_4row_avx512vnni.S - quantised GEMV y[n] = dot(W row n, x) for
 * q4_0 / q4_1 / q8_0 weights, x one row of q8_0 / q8_1 blocks (qgemv.h):
 * the AVX-512 VNNI form of q_gemv_4row_avx2.S, one macro body making three
 * routines.
 *
 * Four rows go together as two pairs; a zmm holds one block of each row of
 * a pair (row a in the low 256 bits, row b in the high), against x's block
 * broadcast to both halves, so one vpdpbusd does 64 products:
 *   q4_*: each row's 16 nibble bytes broadcast to two 128-bit lanes, the
 *         second shifted right by 4 (vpsrlvq), & 0x0f: 32 unsigned bytes
 *         in element order;
 *   q8_0: w xor 0x80 = w + 128 unsigned, and (w + 128) . x - 128 sum x =
 *         w . x: x's 128 sum (per 4-byte lane, one vpdpbusd of 0x80 bytes
 *         per x block) starts each pair's sum negated; q4_0 does the same
 *         with 8 sum x for its -8;
 *   the int32 lanes (exact) to fp32 times [d_a d_x x 8 | d_b d_x x 8]
 *   (the two f16 scales converted together, spread by vpermps) into the
 *   pair's 16-lane sum; q4_1 converts [d_a, m_a, d_b, m_b] times
 *   [d_x, s_x, d_x, s_x] and keeps lanes 1 and 3 (m s) in a side sum.
 * The pair sums fold to [y0, y1, y2, y3]; the last N % 4 rows run with
 * the missing rows aimed at row 0 and a masked store.  One software
 * prefetch walk (r14) streams the next group, as in the AVX2 kernels.
 *
 * void pg_q<w>_q8_<a>_gemv_4row_avx512vnni(size_t N, size_t K, const void *W,
 *                                           rdi       rsi       rdx
 *         size_t ldw, const void *x, float *y)
 *         rcx         r8             r9
 *
 * Registers: rdi rows left, rsi blocks per row, rdx row 0 of the group,
 * rcx ldw, r8 x, r9 y; rax/r10 and r11/rbx the two pairs' row walks, r12
 * the x walk, r13 blocks left, r14 the prefetch walk.  zmm0-1 the pair
 * sums, xmm2-3 q4_1's side sums, zmm4 x, zmm5 the negated x correction,
 * xmm6 x's scale(s), zmm7 0x0f bytes, zmm8 the nibble shifts, zmm9 0x80 /
 * 0x08 bytes, zmm10 the vpermps index, zmm11-15 scratch.
 */
#include "pg_asm.h"

#define T_Q4_0 0
#define T_Q4_1 1
#define T_Q8_0 8

#define QGEMV_PF_DIST 6144

/* one block of the pair (ra, rb): acc += ...; q4_1: side += [., m_a s, ., m_b s] */
.macro PAIR t, ra, rb, acc, side
.if \t == T_Q8_0
        vmovdqu8 ymm11, [\ra + 2]
        vinserti64x4 zmm11, zmm11, [\rb + 2], 1
        vpxord  zmm11, zmm11, zmm9
.else
        vbroadcasti32x4 ymm11, [\ra + WOFF]
        vbroadcasti32x4 ymm12, [\rb + WOFF]
        vinserti64x4 zmm11, zmm11, ymm12, 1
        vpsrlvq zmm11, zmm11, zmm8
        vpandd  zmm11, zmm11, zmm7
.endif
.if \t == T_Q4_1
        vpxord  zmm12, zmm12, zmm12
.else
        vmovdqa64 zmm12, zmm5
.endif
        vpdpbusd zmm12, zmm11, zmm4
.if \t == T_Q4_1
        vmovd   xmm13, dword ptr [\ra]
        vpinsrd xmm13, xmm13, dword ptr [\rb], 1
        vcvtph2ps xmm13, xmm13
        vmulps  xmm13, xmm13, xmm6
        vaddps  \side, \side, xmm13
.else
        vpbroadcastw xmm13, word ptr [\ra]
        vpinsrw xmm13, xmm13, word ptr [\rb], 1
        vcvtph2ps xmm13, xmm13
        vmulps  xmm13, xmm13, xmm6
.endif
        vpermps zmm13, zmm10, zmm13
        vcvtdq2ps zmm12, zmm12
        vfmadd231ps \acc, zmm12, zmm13
.endm

.macro QGEMV name, t
PG_FUNC(\name)
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
        push    r12
        push    r13
        push    r14
        shr     rsi, 5
        lea     r13, [rdx + rcx*4 + QGEMV_PF_DIST]
        mov     r14, rdx
0:      prefetcht0 [r14]
        add     r14, 64
        cmp     r14, r13
        jb      0b
        mov     eax, 0x0f0f0f0f
        vpbroadcastd zmm7, eax
        vmovdqu64 zmm8, [rip + qv_nibshift]
.if \t == T_Q8_0
        mov     eax, 0x80808080
.else
        mov     eax, 0x08080808
.endif
        vpbroadcastd zmm9, eax
.if \t == T_Q4_1
        vmovdqu64 zmm10, [rip + qv_idx02]
.else
        vmovdqu64 zmm10, [rip + qv_idx01]
.endif

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
2:      lea     r14, [rdx + rcx*4 + QGEMV_PF_DIST]
        vpxord  zmm0, zmm0, zmm0
        vpxord  zmm1, zmm1, zmm1
        vpxord  xmm2, xmm2, xmm2
        vpxord  xmm3, xmm3, xmm3
        mov     r12, r8
        mov     r13, rsi
        test    r13, r13
        jz      4f
3:      vbroadcasti64x4 zmm4, [r12 + XB - 32]
.if \t == T_Q4_1
        vmovd   xmm6, dword ptr [r12]
        vcvtph2ps xmm6, xmm6
        vmovddup xmm6, xmm6
.else
        vpbroadcastw xmm6, word ptr [r12]
        vcvtph2ps xmm6, xmm6
        /* minus 128 sum x (q8_0) or 8 sum x (q4_0) per 4-byte lane */
        vpxord  zmm5, zmm5, zmm5
        vpdpbusd zmm5, zmm9, zmm4
        vpxord  zmm11, zmm11, zmm11
        vpsubd  zmm5, zmm11, zmm5
.endif
        prefetcht0 [r14]
        prefetcht0 [r14 + 64]
.if \t == T_Q8_0
        prefetcht0 [r14 + 128]
.endif
        add     r14, 4*WB
        PAIR    \t, rax, r10, zmm0, xmm2
        PAIR    \t, r11, rbx, zmm1, xmm3
        add     rax, WB
        add     r10, WB
        add     r11, WB
        add     rbx, WB
        add     r12, XB
        dec     r13
        jnz     3b

4:      /* [row a | row b] per pair -> [y0, y1, y2, y3] */
        vextractf64x4 ymm12, zmm0, 1
        vextractf64x4 ymm13, zmm1, 1
        vhaddps ymm0, ymm0, ymm12
        vhaddps ymm1, ymm1, ymm13
        vhaddps ymm0, ymm0, ymm1
        vextractf128 xmm1, ymm0, 1
        vaddps  xmm0, xmm0, xmm1
.if \t == T_Q4_1
        vshufps xmm2, xmm2, xmm3, 0xdd
        vaddps  xmm0, xmm0, xmm2
.endif
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
QGEMV pg_q4_0_q8_0_gemv_4row_avx512vnni, T_Q4_0
QGEMV pg_q4_1_q8_1_gemv_4row_avx512vnni, T_Q4_1
QGEMV pg_q8_0_q8_0_gemv_4row_avx512vnni, T_Q8_0

        PG_RODATA
        .p2align 6
qv_nibshift:
        .quad 0, 0, 4, 4, 0, 0, 4, 4
qv_idx01:
        .rept 8
        .long 0
        .endr
        .rept 8
        .long 1
        .endr
qv_idx02:
        .rept 8
        .long 0
        .endr
        .rept 8
        .long 2
        .endr

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

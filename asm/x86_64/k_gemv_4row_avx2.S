/* k_gemv_4row_avx2.S - quantised GEMV y[n] = dot(W row n, x) for the
 * k-quants on AVX2 (+ FMA, F16C): W rows of q4_K / q5_K / q6_K super-blocks
 * of 256, x one row of q8_K blocks (kquant.h has the layouts).  The
 * AVX2 form of k_gemv_4row_avx512vnni.S, without vpermw, vpdpwssd or
 * masks: one macro body, three routines.
 *
 * Four rows of W go together; x's super-block is read by memory operands
 * (L1 hits after the first row), its d broadcast and its bsums (pairs
 * summed, as int16, for q4_K / q5_K) kept in registers.  Per row and
 * super-block, in registers only:
 *   q4_K / q5_K: the scales unpacked in four dword lanes (sc0-3, sc4-7,
 *     m0-3, m4-7), widened to int16; [sc0..7 | sc0..7] spread per
 *     sub-block by vpshufb (word j to every lane); chunk c's 32 bytes give
 *     elements 64c .. 64c + 31 (low nibbles) and 64c + 32 .. 63 (high), in
 *     x's order; q5_K's fifth bit: qh shifted so that bit 2c (2c + 1) lands
 *     on bit 4, & 0x10, or'ed in;
 *   q6_K: ql nibbles | qh's two bits moved to bits 4-5 (word shifts, each
 *     byte's bits stay in the byte), in x's order; its int8 scales widened
 *     and spread per 16 elements ([sc_2k x 8 | sc_2k+1 x 8] per 128-bit
 *     lane); the -32 as 32 sc . bsums subtracted from the int32 sum;
 *   vpmaddubsw (u8 x s8 -> int16 pairs, no saturation) then vpmaddwd with
 *     the scales: exact int32 (kquant.h), added up over the super-block,
 *     to fp32 times d_w d_x into the row's 8-lane sum; q4_K / q5_K's
 *     minima: m . bsum pairs by vpmaddwd, times dmin d_x, subtracted.
 * The four sums fold to [y0, y1, y2, y3]; the last N % 4 rows run with the
 * missing rows aimed at row 0 and a masked store.  One software prefetch
 * walk (r14) streams the next group of rows, as q_gemv_4row_avx2.S.
 *
 * void pg_q<4|5|6>_K_q8_K_gemv_4row_avx2(size_t N, size_t K,
 *                                          rdi       rsi
 *         const void *W, size_t ldw, const void *x, float *y)
 *         rdx            rcx         r8             r9
 *
 * Registers: rdi rows left, rsi super-blocks per row, rdx row 0 of the
 * group, rcx ldw, r8 x, r9 y; rax/r10/r11/rbx the row walks, r12 the x
 * walk, r13 super-blocks left, r14 the prefetch walk, [rsp] the group's
 * scale factors (SCALES).  ymm0-3 the row sums, ymm4 0x0f bytes, ymm5 the
 * int32 sum, ymm6-9 and ymm13-15 scratch, ymm10 x's d, ymm11 x's bsums,
 * ymm12 the scales as int16.
 */
#include "pg_asm.h"

#define T_Q4_K 4
#define T_Q5_K 5
#define T_Q6_K 6

#define KGEMV_PF_DIST 6144

/* ymm13 |= the fifth bits of chunk c's low (hi = 0) or high (hi = 1) half */
.macro FIFTH c, hi, dst
  .set SH, 4 - (2*\c + \hi)
  .if SH > 0
        vpsllw  ymm15, ymm9, SH
  .elseif SH < 0
        vpsrlw  ymm15, ymm9, -SH
  .else
        vmovdqa ymm15, ymm9
  .endif
        vpand   ymm15, ymm15, [rip + k2_sixteen]
        vpor    \dst, \dst, ymm15
.endm

/* q6_K element group k (0..3) of half h at [wp]: ymm13 = the unsigned quants */
.macro Q6 wp, h, k
        vmovdqu ymm13, [\wp + 64*\h + 32*(\k & 1)]
  .if \k >= 2
        vpsrlw  ymm13, ymm13, 4
  .endif
        vpand   ymm13, ymm13, ymm4
        vmovdqu ymm14, [\wp + 128 + 32*\h]
  .set SH, 4 - 2*\k
  .if SH > 0
        vpsllw  ymm14, ymm14, SH
  .elseif SH < 0
        vpsrlw  ymm14, ymm14, -SH
  .endif
        vpand   ymm14, ymm14, [rip + k2_thirty]
        vpor    ymm13, ymm13, ymm14
.endm

/* The four rows' super-block scales times x's d, to [rsp] (as the AVX-512
 * VNNI kernel's SCALES): q4_K / q5_K [d_0 d_x, dmin_0 d_x, .., d_3 d_x,
 * dmin_3 d_x], q6_K [d_0 d_x, .., d_3 d_x]; each row then broadcasts its
 * factors from memory (a load port, no vector ALU). */
.macro SCALES t
.if \t == T_Q6_K
        vpxor   xmm6, xmm6, xmm6
        vpinsrw xmm6, xmm6, word ptr [rax + 208], 0
        vpinsrw xmm6, xmm6, word ptr [r10 + 208], 1
        vpinsrw xmm6, xmm6, word ptr [r11 + 208], 2
        vpinsrw xmm6, xmm6, word ptr [rbx + 208], 3
        vcvtph2ps xmm6, xmm6
        vmulps  xmm6, xmm6, xmm10
        vmovups [rsp], xmm6
.else
        vmovd   xmm6, dword ptr [rax]
        vpinsrd xmm6, xmm6, dword ptr [r10], 1
        vpinsrd xmm6, xmm6, dword ptr [r11], 2
        vpinsrd xmm6, xmm6, dword ptr [rbx], 3
        vcvtph2ps ymm6, xmm6
        vmulps  ymm6, ymm6, ymm10
        vmovups [rsp], ymm6
.endif
.endm

/* One row's super-block at [wp]: acc += its part of the dot; its scale
 * factors at [rsp + slot] (SCALES). */
.macro ROW t, wp, acc, slot
.if \t == T_Q6_K
        vpmovsxbw ymm7, xmmword ptr [\wp + 192]
        vpmaddwd ymm8, ymm7, ymm11
        vpslld  ymm8, ymm8, 5
  .irp h, 0, 1
    .if \h == 0
        vpermq  ymm12, ymm7, 0x44
    .else
        vpermq  ymm12, ymm7, 0xee
    .endif
    .irp k, 0, 1, 2, 3
        Q6      \wp, \h, \k
        vpmaddubsw ymm13, ymm13, [r12 + 4 + 128*\h + 32*\k]
        vpshufb ymm15, ymm12, [rip + k2_q6ctl + 32*\k]
        vpmaddwd ymm13, ymm13, ymm15
      .if \h == 0 && \k == 0
        vmovdqa ymm5, ymm13
      .else
        vpaddd  ymm5, ymm5, ymm13
      .endif
    .endr
  .endr
        vpsubd  ymm5, ymm5, ymm8
        vbroadcastss ymm6, dword ptr [rsp + \slot]
        vcvtdq2ps ymm5, ymm5
        vfmadd231ps \acc, ymm5, ymm6
.else
        vmovdqu xmm6, [\wp + 4]
        vpshufd xmm7, xmm6, 0x98
        vpshufd xmm8, xmm6, 0x50
        vpsrlvd xmm7, xmm7, [rip + k2_shv]
        vpand   xmm7, xmm7, [rip + k2_mask1]
        vpsrld  xmm8, xmm8, 2
        vpand   xmm8, xmm8, [rip + k2_mask2]
        vpor    xmm7, xmm7, xmm8
        vpmovzxbw ymm7, xmm7
        vpermq  ymm12, ymm7, 0x44
        vextracti128 xmm8, ymm7, 1
        vpmaddwd xmm8, xmm8, xmm11
  .if \t == T_Q5_K
        vmovdqu ymm9, [\wp + 16]
    .set QS, 48
  .else
    .set QS, 16
  .endif
  .irp c, 0, 1, 2, 3
        vmovdqu ymm13, [\wp + QS + 32*\c]
        vpsrlw  ymm14, ymm13, 4
        vpand   ymm13, ymm13, ymm4
        vpand   ymm14, ymm14, ymm4
    .if \t == T_Q5_K
        FIFTH   \c, 0, ymm13
        FIFTH   \c, 1, ymm14
    .endif
        vpmaddubsw ymm13, ymm13, [r12 + 4 + 64*\c]
        vpmaddubsw ymm14, ymm14, [r12 + 36 + 64*\c]
        vpshufb ymm15, ymm12, [rip + k2_ctl + 64*\c]
        vpmaddwd ymm13, ymm13, ymm15
        vpshufb ymm15, ymm12, [rip + k2_ctl + 64*\c + 32]
        vpmaddwd ymm14, ymm14, ymm15
    .if \c == 0
        vpaddd  ymm5, ymm13, ymm14
    .else
        vpaddd  ymm5, ymm5, ymm13
        vpaddd  ymm5, ymm5, ymm14
    .endif
  .endr
        /* acc += d d_x * sums, lanes 0-3 -= dmin d_x * mins (lanes 4-7 of
         * ymm8 are 0) */
        vbroadcastss ymm7, dword ptr [rsp + \slot]
        vcvtdq2ps ymm5, ymm5
        vfmadd231ps \acc, ymm5, ymm7
        vbroadcastss ymm6, dword ptr [rsp + \slot + 4]
        vcvtdq2ps xmm8, xmm8
        vfnmadd231ps \acc, ymm8, ymm6
.endif
.endm

.macro KGEMV name, t
PG_FUNC(\name)
.if \t == T_Q4_K
  .set WB, 144
  .set SSTEP, 8
.elseif \t == T_Q5_K
  .set WB, 176
  .set SSTEP, 8
.else
  .set WB, 210
  .set SSTEP, 4
.endif
.set PF_LINES, (4*WB + 63) / 64
        push    rbx
        push    r12
        push    r13
        push    r14
        sub     rsp, 40                 /* the group's scale factors */
        shr     rsi, 8
        lea     r13, [rdx + rcx*4 + KGEMV_PF_DIST]
        mov     r14, rdx
0:      prefetcht0 [r14]
        add     r14, 64
        cmp     r14, r13
        jb      0b
        mov     eax, 0x0f0f0f0f
        vmovd   xmm4, eax
        vpbroadcastd ymm4, xmm4

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
2:      lea     r14, [rdx + rcx*4 + KGEMV_PF_DIST]
        vxorps  xmm0, xmm0, xmm0
        vxorps  xmm1, xmm1, xmm1
        vxorps  xmm2, xmm2, xmm2
        vxorps  xmm3, xmm3, xmm3
        mov     r12, r8
        mov     r13, rsi
        test    r13, r13
        jz      4f
3:      vbroadcastss ymm10, dword ptr [r12]
.if \t == T_Q6_K
        vmovdqu ymm11, [r12 + 260]
.else
        vmovdqu ymm11, [r12 + 260]
        vpmaddwd ymm11, ymm11, [rip + k2_ones16]
        vextracti128 xmm9, ymm11, 1
        vpackssdw xmm11, xmm11, xmm9
.endif
.rept PF_LINES
        prefetcht0 [r14]
        add     r14, 64
.endr
        sub     r14, PF_LINES*64 - 4*WB
        SCALES  \t
        ROW     \t, rax, ymm0, 0
        ROW     \t, r10, ymm1, SSTEP
        ROW     \t, r11, ymm2, 2*SSTEP
        ROW     \t, rbx, ymm3, 3*SSTEP
        add     rax, WB
        add     r10, WB
        add     r11, WB
        add     rbx, WB
        add     r12, 292
        dec     r13
        jnz     3b

4:      vhaddps ymm0, ymm0, ymm1
        vhaddps ymm2, ymm2, ymm3
        vhaddps ymm0, ymm0, ymm2
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
        add     rsp, 40
        pop     r14
        pop     r13
        pop     r12
        pop     rbx
        ret
PG_ENDFUNC(\name)
.endm

        .text
KGEMV pg_q4_K_q8_K_gemv_4row_avx2, T_Q4_K
KGEMV pg_q5_K_q8_K_gemv_4row_avx2, T_Q5_K
KGEMV pg_q6_K_q8_K_gemv_4row_avx2, T_Q6_K

        PG_RODATA
        .p2align 5
/* q4_K / q5_K: vpshufb controls spreading int16 word j (j = 0..7) */
k2_ctl:
        .irp j, 0, 1, 2, 3, 4, 5, 6, 7
        .rept 16
        .byte 2*\j, 2*\j + 1
        .endr
        .endr
/* q6_K: group k -> word 2k in the low lane, 2k + 1 in the high lane */
k2_q6ctl:
        .irp k, 0, 1, 2, 3
        .rept 8
        .byte 4*\k, 4*\k + 1
        .endr
        .rept 8
        .byte 4*\k + 2, 4*\k + 3
        .endr
        .endr
k2_sixteen:
        .rept 32
        .byte 0x10
        .endr
k2_thirty:
        .rept 32
        .byte 0x30
        .endr
k2_ones16:
        .rept 16
        .short 1
        .endr
k2_shv:
        .long 0, 0, 0, 4
k2_mask1:
        .long 0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f
k2_mask2:
        .long 0, 0x30303030, 0, 0x30303030

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

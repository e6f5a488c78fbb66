/* q_gemv_4row_avx2.S - quantised GEMV y[n] = dot(W row n, x), W rows of
 * q4_0 / q4_1 / q8_0 blocks, x one row of q8_0 / q8_1 blocks (qgemv.h).
 * One macro body makes all six routines: three weight types, each as AVX2
 * (vpmaddubsw + vpmaddwd) and AVX-VNNI (one vpdpbusd).
 *
 * Four rows of W go together; each x block (32 int8 + its f16 scale) is
 * loaded once for the four.  Per row and block, in registers only:
 *   q4_*: 16 bytes of nibbles loaded into both lanes (vbroadcasti128),
 *         the high lane shifted right by 4 (vpsrlvq by [0, 0 | 4, 4]), and
 *         0x0f: 32 unsigned bytes in element order, straight into u8 x s8;
 *   q8_0: signed x signed through the sign trick: |w| (vpabsb) times x
 *         with w's sign (vpsignb).  Needs x != -128, which the activation
 *         quantisers never give (round(x * 127 / max|x|)); w may be any
 *         byte.  vpmaddubsw's int16 pairs stay below 2 * 128 * 127 = 32512:
 *         no saturation;
 *   then 8 int32 partial sums (exact: |sum| <= 4 * 128 * 127 per lane,
 *   far below 2^24, so vcvtdq2ps is exact too), times d_w * d_x (f16 by
 *   F16C, multiplied in fp32, for the four rows at once: SCALES) into an
 *   8-lane fp32 sum per row.
 *   q4_0 subtracts 8 * sum(x) (computed once per x block) from the int32
 *   sums: (q - 8) . x = q . x - 8 sum x.
 *   q4_1 adds m_w * s_x per block: the scales are converted as pairs
 *   [d_w, m_w] x [d_x, s_x], so lane 2r + 1 of one 8-lane sum collects
 *   row r's.
 * The four rows' 8 lanes fold with vhaddps into [y0, y1, y2, y3].  The last
 * N % 4 rows run the same code with the missing rows aimed at row 0 and a
 * masked store.
 *
 * Weights come from DRAM in decode (each is read once per token), and the
 * four row walks are short streams (a row is 360-1600 bytes) that the
 * hardware prefetchers pick up late: alone the kernel streams at a quarter
 * of the memory's rate.  So one software prefetch walk (r14) runs over the
 * rows as one linear stream, QGEMV_PF_DIST bytes past the next group: it
 * moves 4 blocks' bytes per x block, two or three cache lines, so it
 * covers the next group exactly while this one runs.  A lead-in first
 * prefetches the first group and the distance.  Prefetches past the end of
 * W never fault (they are dropped).  Only the fp32 summation order differs from the C
 * reference (which adds block by block).
 *
 * void pg_q<w>_q8_<a>_gemv_4row_{avx2,avxvnni}(size_t N, size_t K,
 *                                              rdi       rsi
 *         const void *W, size_t ldw, const void *x, float *y)
 *         rdx            rcx         r8             r9
 *
 * Registers: rdi rows left, rsi blocks per row, rdx row 0 of the group,
 * rcx ldw, r8 x, r9 y; rax/r10/r11/rbx the four row walks, r12 the x walk,
 * r13 blocks left, r14 the prefetch walk, [rsp] the group's scale factors.
 * ymm0-3 the row sums, ymm4 the q4_1 offset sums, ymm8 x, ymm9 x's scale
 * (q4_1: [d_x, s_x] x 4), ymm10-12 scratch, ymm13 0x0f bytes, ymm14 ones
 * (int16, for vpmaddwd) or 8s (bytes, q4_0 VNNI), ymm15 8 * sum x (q4_0;
 * negated for VNNI, where it starts each row's sum), ymm7 8s (q4_0 AVX2),
 * the nibble shift counts in ymm15 (q4_1) or ymm6 (q4_0).
 */
#include "pg_asm.h"

#define T_Q4_0 0
#define T_Q4_1 1
#define T_Q8_0 8

/* Software prefetch distance, in bytes past the start of the next group
 * of four rows.  Measured on Zen 5, 1 thread, weights from DRAM: 512 B
 * gains little, 4-12 KiB stream at 21-25 GB/s (q4_1) and 27-35 GB/s
 * (q8_0); SmolLM2 decode is best near 6-8 KiB. */
#define QGEMV_PF_DIST 6144
#define QGEMV_PF prefetcht0

/* dst = the 8 int32 sums of u8 (u) times s8 (s), four products a lane;
 * q4_0 also subtracts 8 * sum x (ymm15). */
.macro DOT_U8S8 vnni, t, dst, u, s
.if \vnni
  .if \t == T_Q4_0
        vmovdqa \dst, ymm15
  .else
        vpxor   \dst, \dst, \dst
  .endif
        {vex} vpdpbusd \dst, \u, \s
.else
        vpmaddubsw \dst, \u, \s
        vpmaddwd \dst, \dst, ymm14
  .if \t == T_Q4_0
        vpsubd  \dst, \dst, ymm15
  .endif
.endif
.endm

/* One row's block at [wp]: acc += d_w d_x * (int32 sums), d_w d_x the
 * float at [rsp + slot] (the group's scales, converted four rows at once). */
.macro ROW vnni, t, wp, acc, slot
.if \t == T_Q8_0
        vmovdqu ymm10, [\wp + 2]
        vpabsb  ymm11, ymm10
        vpsignb ymm10, ymm8, ymm10
        DOT_U8S8 \vnni, \t, ymm12, ymm11, ymm10
.else
        vbroadcasti128 ymm10, [\wp + WOFF]
  .if \t == T_Q4_1
        vpsrlvq ymm10, ymm10, ymm15
  .else
        vpsrlvq ymm10, ymm10, ymm6
  .endif
        vpand   ymm10, ymm10, ymm13
        DOT_U8S8 \vnni, \t, ymm12, ymm10, ymm8
.endif
        vcvtdq2ps ymm12, ymm12
        vbroadcastss ymm11, dword ptr [rsp + \slot]
        vfmadd231ps \acc, ymm12, ymm11
.endm

/* The four rows' scales of this block times x's, to [rsp]: q4_0 / q8_0
 * [d_0 d_x, .., d_3 d_x]; q4_1 [d_0 d_x, m_0 s_x, .., d_3 d_x, m_3 s_x],
 * whose m s lanes also go into the offset sum ymm4.  One conversion and
 * one product for four rows; each row then takes its factor with a
 * broadcast load (a load port, no vector ALU): the ALU ports are what
 * bounds these kernels (~9 of their uops per row and block before). */
.macro SCALES t
.if \t == T_Q4_1
        vmovd   xmm10, dword ptr [rax]
        vpinsrd xmm10, xmm10, dword ptr [r10], 1
        vpinsrd xmm10, xmm10, dword ptr [r11], 2
        vpinsrd xmm10, xmm10, dword ptr [rbx], 3
        vcvtph2ps ymm10, xmm10
        vmulps  ymm10, ymm10, ymm9
        vaddps  ymm4, ymm4, ymm10
        vmovups [rsp], ymm10
.else
        vmovd   xmm10, dword ptr [rax]
        vpinsrw xmm10, xmm10, word ptr [r10], 1
        vpinsrw xmm10, xmm10, word ptr [r11], 2
        vpinsrw xmm10, xmm10, word ptr [rbx], 3
        vcvtph2ps xmm10, xmm10
        vmulps  xmm10, xmm10, xmm9
        vmovups [rsp], xmm10
.endif
.endm

.macro QGEMV name, vnni, t
PG_FUNC(\name)
/* bytes per weight block, offset of its quants, bytes per x block */
.if \t == T_Q4_0
  .set WB, 18
  .set WOFF, 2
  .set XB, 34
  .set SSTEP, 4
.elseif \t == T_Q4_1
  .set WB, 20
  .set WOFF, 4
  .set XB, 36
  .set SSTEP, 8
.else
  .set WB, 34
  .set WOFF, 2
  .set XB, 34
  .set SSTEP, 4
.endif
        push    rbx
        push    r12
        push    r13
        push    r14
        sub     rsp, 40                 /* the group's 4 or 8 scale factors */
        shr     rsi, 5
        /* lead-in: the first group of rows and the prefetch distance */
        lea     r13, [rdx + rcx*4 + QGEMV_PF_DIST]
        mov     r14, rdx
0:      QGEMV_PF [r14]
        add     r14, 64
        cmp     r14, r13
        jb      0b
        mov     eax, 0x0f0f0f0f
        vmovd   xmm13, eax
        vpbroadcastd ymm13, xmm13
.if \vnni && \t == T_Q4_0
        mov     eax, 0x08080808
.else
        mov     eax, 0x00010001
.endif
        vmovd   xmm14, eax
        vpbroadcastd ymm14, xmm14
.if \t != T_Q8_0
        /* shift counts [0, 0 | 4, 4]: the nibbles, loaded into both
         * lanes, shift by 0 (low) and 4 (high) */
        mov     eax, 4
        vmovq   xmm12, rax
        vpbroadcastq xmm12, xmm12
  .if \t == T_Q4_1
        vperm2i128 ymm15, ymm12, ymm12, 0x08
  .else
        vperm2i128 ymm6, ymm12, ymm12, 0x08
  .endif
.endif
.if !\vnni && \t == T_Q4_0
        mov     eax, 0x08080808
        vmovd   xmm7, eax
        vpbroadcastd ymm7, xmm7
.endif

1:      /* a group of four rows */
        test    rdi, rdi
        jz      9f
        mov     rax, rdx
        lea     r10, [rdx + rcx]
        lea     r11, [rdx + rcx*2]
        lea     rbx, [r10 + rcx*2]
        cmp     rdi, 4
        jae     2f
        /* fewer than 4 rows left: the missing ones read row 0 again */
        mov     rbx, rdx
        cmp     rdi, 3
        cmovb   r11, rdx
        cmp     rdi, 2
        cmovb   r10, rdx
2:      lea     r14, [rdx + rcx*4 + QGEMV_PF_DIST]
        vxorps  xmm0, xmm0, xmm0
        vxorps  xmm1, xmm1, xmm1
        vxorps  xmm2, xmm2, xmm2
        vxorps  xmm3, xmm3, xmm3
.if \t == T_Q4_1
        vxorps  xmm4, xmm4, xmm4
.endif
        mov     r12, r8
        mov     r13, rsi
        test    r13, r13
        jz      4f
3:      /* one block of x against the four rows */
        vmovdqu ymm8, [r12 + XB - 32]
.if \t == T_Q4_1
        vmovd   xmm9, dword ptr [r12]
        vcvtph2ps xmm9, xmm9
        vbroadcastsd ymm9, xmm9         /* [d_x, s_x] x 4 */
.else
        vpbroadcastw xmm9, word ptr [r12]
        vcvtph2ps ymm9, xmm9
.endif
.if \t == T_Q4_0
  .if \vnni
        /* -8 sum x: the start value of every row's vpdpbusd */
        vpxor   ymm15, ymm15, ymm15
        {vex} vpdpbusd ymm15, ymm14, ymm8
        vpxor   ymm12, ymm12, ymm12
        vpsubd  ymm15, ymm12, ymm15
  .else
        vpmaddubsw ymm15, ymm7, ymm8
        vpmaddwd ymm15, ymm15, ymm14
  .endif
.endif
        QGEMV_PF [r14]
        QGEMV_PF [r14 + 64]
.if \t == T_Q8_0
        QGEMV_PF [r14 + 128]
.endif
        add     r14, 4*WB
        SCALES  \t
        ROW     \vnni, \t, rax, ymm0, 0
        ROW     \vnni, \t, r10, ymm1, SSTEP
        ROW     \vnni, \t, r11, ymm2, 2*SSTEP
        ROW     \vnni, \t, rbx, ymm3, 3*SSTEP
        add     rax, WB
        add     r10, WB
        add     r11, WB
        add     rbx, WB
        add     r12, XB
        dec     r13
        jnz     3b

4:      /* per 128-bit half: [row0, row1, row2, row3], then the halves */
        vhaddps ymm0, ymm0, ymm1
        vhaddps ymm2, ymm2, ymm3
        vhaddps ymm0, ymm0, ymm2
        vextractf128 xmm1, ymm0, 1
        vaddps  xmm0, xmm0, xmm1
.if \t == T_Q4_1
        /* the odd lanes of the offset sum: [m0, m1, m2, m3] */
        vextractf128 xmm5, ymm4, 1
        vshufps xmm4, xmm4, xmm5, 0xdd
        vaddps  xmm0, xmm0, xmm4
.endif
        cmp     rdi, 4
        jb      5f
        vmovups [r9], xmm0
        add     r9, 16
        lea     rdx, [rdx + rcx*4]
        sub     rdi, 4
        jmp     1b

5:      /* the last 1..3 outputs, under the mask of their lanes */
        mov     rax, rdi
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
QGEMV pg_q4_0_q8_0_gemv_4row_avx2, 0, T_Q4_0
QGEMV pg_q4_1_q8_1_gemv_4row_avx2, 0, T_Q4_1
QGEMV pg_q8_0_q8_0_gemv_4row_avx2, 0, T_Q8_0
QGEMV pg_q4_0_q8_0_gemv_4row_avxvnni, 1, T_Q4_0
QGEMV pg_q4_1_q8_1_gemv_4row_avxvnni, 1, T_Q4_1
QGEMV pg_q8_0_q8_0_gemv_4row_avxvnni, 1, T_Q8_0

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

/* k_gemv_4row_avx512vnni.S - quantised GEMV y[n] = dot(W row n, x) for the
 * k-quants: W rows of q4_K / q5_K / q6_K super-blocks of 256, x one row of
 * q8_K blocks (kquant.h has the layouts).  AVX-512 BW + VNNI: one macro
 * body, three routines.
 *
 * Four rows of W go together; each x super-block is loaded once for the
 * four, as four zmm of 64 int8 in the order the weights' nibbles come in:
 *   q4_K / q5_K: a 64-byte load of qs holds chunks c and c + 1, its low
 *     nibbles sub-blocks 2c and 2c + 2, its high ones 2c + 1 and 2c + 3:
 *     x is [x0..31 | x64..95], [x32..63 | x96..127], then the same + 128;
 *   q6_K: a 64-byte load of ql gives elements 0..63 (low nibbles) and
 *     64..127 (high) of its half: x is four straight 64-byte loads.
 * Per row and super-block, in registers only:
 *   the scales: q4_K / q5_K unpack the twelve bytes in four dword lanes
 *     (sc0-3, sc4-7, m0-3, m4-7: the low 6 bits, or a nibble with the top
 *     2 bits of another byte), widen to int16 and spread each sub-block's
 *     scale over its int16 lanes with vpermw; q6_K widens its 16 int8
 *     scales the same way;
 *   the quants: nibbles by vpand / vpsrlw; q5_K's fifth bit by vptestmb
 *     on qh (broadcast to both halves) and a byte-masked add of 16; q6_K's two
 *     top bits from qh shifted per half (vpsllvq / vpsrlvq by qword) into
 *     bits 4-5 and merged with vpternlogd: unsigned 0..15 / 31 / 63;
 *   vpmaddubsw (u8 x s8 -> int16 pairs, at most 2 * 63 * 127: no
 *     saturation) then vpdpwssd with the scales: int32 lanes of sc_j * the
 *     sub-block's products, exact (below 2^31, kquant.h);
 *   the offsets: q4_K / q5_K m_j . (x's bsum pairs) by vpmaddwd, scaled by
 *     dmin d_x and subtracted from the row's fp32 lanes 0-3; q6_K's -32 as
 *     32 * sc . bsums subtracted from the int32 lanes (same scale d d_x);
 *   the int32 lanes to fp32 times d_w d_x (converted and multiplied for
 *   the four rows at once: SCALES) into the row's 16-lane sum.
 * The four sums fold to [y0, y1, y2, y3]; the last N % 4 rows run the
 * same code with the missing rows aimed at row 0 and a masked store.  A
 * software prefetch walk (r14) streams the next group of rows, as in
 * q_gemv_4row_avx2.S.
 *
 * void pg_q<4|5|6>_K_q8_K_gemv_4row_avx512vnni(size_t N, size_t K,
 *                                                rdi       rsi
 *         const void *W, size_t ldw, const void *x, float *y)
 *         rdx            rcx         r8             r9
 *
 * Registers: rdi rows left, rsi super-blocks per row, rdx row 0 of the
 * group, rcx ldw, r8 x, r9 y; rax/r10/r11/rbx the four row walks, r12 the
 * x walk, r13 super-blocks left, r14 the prefetch walk, [rsp] the
 * group's scale factors.  zmm0-3 the row sums, zmm4 0x0f bytes, zmm5-8
 * the vpermw indices, zmm9 int16 ones, zmm10 0x10 bytes (q5_K) / 0x30
 * bytes (q6_K), xmm11 scratch, zmm16-19 x, zmm20 x's d,
 * zmm21 x's bsums (pairs as int16 for q4_K / q5_K), zmm22-31 scratch.
 */
#include "pg_asm.h"

#define T_Q4_K 4
#define T_Q5_K 5
#define T_Q6_K 6

#define KGEMV_PF_DIST 6144

/* The four rows' super-block scales times x's d, to [rsp]: q4_K / q5_K
 * [d_0 d_x, dmin_0 d_x, .., d_3 d_x, dmin_3 d_x], q6_K [d_0 d_x, ..,
 * d_3 d_x]: one conversion and one product for the four rows, each row
 * then taking its factors as embedded broadcasts (load ports, no vector
 * ALU - the zmm ALU ports are what bounds this kernel). */
.macro SCALES t
.if \t == T_Q6_K
        vpxor   xmm11, xmm11, xmm11
        vpinsrw xmm11, xmm11, word ptr [rax + 208], 0
        vpinsrw xmm11, xmm11, word ptr [r10 + 208], 1
        vpinsrw xmm11, xmm11, word ptr [r11 + 208], 2
        vpinsrw xmm11, xmm11, word ptr [rbx + 208], 3
        vcvtph2ps xmm11, xmm11
        vmulps  xmm11, xmm11, xmm20
        vmovups [rsp], xmm11
.else
        vmovd   xmm11, dword ptr [rax]
        vpinsrd xmm11, xmm11, dword ptr [r10], 1
        vpinsrd xmm11, xmm11, dword ptr [r11], 2
        vpinsrd xmm11, xmm11, dword ptr [rbx], 3
        vcvtph2ps ymm11, xmm11
        vmulps  ymm11, ymm11, ymm20
        vmovups [rsp], ymm11
.endif
.endm

/* One row's super-block at [wp]: acc += its part of the dot; its scale
 * factors at [rsp + slot] (SCALES). */
.macro ROW t, wp, acc, slot
.if \t == T_Q6_K
        vpmovsxbw ymm23, xmmword ptr [\wp + 192]
        vpermw  zmm24, zmm5, zmm23
        vpermw  zmm25, zmm6, zmm23
        vpermw  zmm26, zmm7, zmm23
        vpermw  zmm27, zmm8, zmm23
        vpmaddwd ymm28, ymm23, ymm21
        vpslld  ymm28, ymm28, 5
  .irp half, 0, 1
        vmovdqu8 zmm29, [\wp + 64*\half]
        vbroadcasti64x4 zmm30, [\wp + 128 + 32*\half]
        vpsllvq zmm31, zmm30, [rip + q6_shl_lo]
        vpsrlvq zmm30, zmm30, [rip + q6_shr_hi]
        vpandd  zmm31, zmm31, zmm10
        vpandd  zmm30, zmm30, zmm10
        vpternlogd zmm31, zmm29, zmm4, 0xF8
        vpsrlw  zmm29, zmm29, 4
        vpternlogd zmm30, zmm29, zmm4, 0xF8
    .if \half == 0
        vpmaddubsw zmm31, zmm31, zmm16
        vpmaddubsw zmm30, zmm30, zmm17
        vpmaddwd zmm22, zmm31, zmm24
        vpdpwssd zmm22, zmm30, zmm25
    .else
        vpmaddubsw zmm31, zmm31, zmm18
        vpmaddubsw zmm30, zmm30, zmm19
        vpdpwssd zmm22, zmm31, zmm26
        vpdpwssd zmm22, zmm30, zmm27
    .endif
  .endr
        vpsubd  zmm22, zmm22, zmm28
        vcvtdq2ps zmm22, zmm22
        vfmadd231ps \acc, zmm22, dword ptr [rsp + \slot]{1to16}
.else
        /* the scales: [u0, u2, u1, u2] >> [0, 0, 0, 4] & [3f, 0f, 3f, 0f]
         * | ([u0, u0, u1, u1] >> 2) & [0, 30, 0, 30] = sc0..7, m0..7 */
        vmovdqu32 xmm22, [\wp + 4]
        vpshufd xmm23, xmm22, 0x98
        vpshufd xmm24, xmm22, 0x50
        vpsrlvd xmm23, xmm23, [rip + k4_shv]
        vpandd  xmm23, xmm23, [rip + k4_mask1]
        vpsrld  xmm24, xmm24, 2
        vpandd  xmm24, xmm24, [rip + k4_mask2]
        vpord   xmm23, xmm23, xmm24
        vpmovzxbw ymm23, xmm23
        vpermw  zmm24, zmm5, zmm23
        vpermw  zmm25, zmm6, zmm23
        vpermw  zmm26, zmm7, zmm23
        vpermw  zmm27, zmm8, zmm23
        vextracti32x4 xmm28, ymm23, 1
        vpmaddwd xmm28, xmm28, xmm21
  .if \t == T_Q5_K
        vbroadcasti64x4 zmm22, [\wp + 16]
    .set QS, 48
  .else
    .set QS, 16
  .endif
  .irp pair, 0, 1
        vmovdqu8 zmm29, [\wp + QS + 64*\pair]
        vpandd  zmm30, zmm29, zmm4
        vpsrlw  zmm29, zmm29, 4
        vpandd  zmm29, zmm29, zmm4
    .if \t == T_Q5_K
        vptestmb k1, zmm22, [rip + q5_bit_lo + 128*\pair]
        vptestmb k2, zmm22, [rip + q5_bit_lo + 128*\pair + 64]
        vpaddb  zmm30{k1}, zmm30, zmm10
        vpaddb  zmm29{k2}, zmm29, zmm10
    .endif
    .if \pair == 0
        vpmaddubsw zmm30, zmm30, zmm16
        vpmaddubsw zmm29, zmm29, zmm17
        vpmaddwd zmm31, zmm30, zmm24
        vpdpwssd zmm31, zmm29, zmm25
    .else
        vpmaddubsw zmm30, zmm30, zmm18
        vpmaddubsw zmm29, zmm29, zmm19
        vpdpwssd zmm31, zmm30, zmm26
        vpdpwssd zmm31, zmm29, zmm27
    .endif
  .endr
        /* acc += d d_x * sums, lanes 0-3 -= dmin d_x * mins (the other
         * lanes of zmm28 are 0) */
        vcvtdq2ps zmm31, zmm31
        vfmadd231ps \acc, zmm31, dword ptr [rsp + \slot]{1to16}
        vcvtdq2ps xmm28, xmm28
        vfnmadd231ps \acc, zmm28, dword ptr [rsp + \slot + 4]{1to16}
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
        vpbroadcastd zmm4, eax
        mov     eax, 0x00010001
        vpbroadcastd zmm9, eax
.if \t == T_Q6_K
        mov     eax, 0x30303030
        vpbroadcastd zmm10, eax
        vmovdqu64 zmm5, [rip + q6_idx]
        vmovdqu64 zmm6, [rip + q6_idx + 64]
        vmovdqu64 zmm7, [rip + q6_idx + 128]
        vmovdqu64 zmm8, [rip + q6_idx + 192]
.else
        mov     eax, 0x10101010
        vpbroadcastd zmm10, eax
        vmovdqu64 zmm5, [rip + k4_idx]
        vmovdqu64 zmm6, [rip + k4_idx + 64]
        vmovdqu64 zmm7, [rip + k4_idx + 128]
        vmovdqu64 zmm8, [rip + k4_idx + 192]
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
        mov     rbx, rdx
        cmp     rdi, 3
        cmovb   r11, rdx
        cmp     rdi, 2
        cmovb   r10, rdx
2:      lea     r14, [rdx + rcx*4 + KGEMV_PF_DIST]
        vpxord  zmm0, zmm0, zmm0
        vpxord  zmm1, zmm1, zmm1
        vpxord  zmm2, zmm2, zmm2
        vpxord  zmm3, zmm3, zmm3
        mov     r12, r8
        mov     r13, rsi
        test    r13, r13
        jz      4f
3:      /* one super-block of x against the four rows */
.if \t == T_Q6_K
        vmovdqu8 zmm16, [r12 + 4]
        vmovdqu8 zmm17, [r12 + 68]
        vmovdqu8 zmm18, [r12 + 132]
        vmovdqu8 zmm19, [r12 + 196]
        vmovdqu16 ymm21, [r12 + 260]
.else
        vmovdqu8 ymm16, [r12 + 4]
        vinserti64x4 zmm16, zmm16, [r12 + 4 + 64], 1
        vmovdqu8 ymm17, [r12 + 4 + 32]
        vinserti64x4 zmm17, zmm17, [r12 + 4 + 96], 1
        vmovdqu8 ymm18, [r12 + 4 + 128]
        vinserti64x4 zmm18, zmm18, [r12 + 4 + 192], 1
        vmovdqu8 ymm19, [r12 + 4 + 160]
        vinserti64x4 zmm19, zmm19, [r12 + 4 + 224], 1
        vpmaddwd ymm21, ymm9, [r12 + 260]
        vpmovdw xmm21, ymm21
.endif
        vbroadcastss zmm20, dword ptr [r12]
.rept PF_LINES
        prefetcht0 [r14]
        add     r14, 64
.endr
        sub     r14, PF_LINES*64 - 4*WB
        SCALES  \t
        ROW     \t, rax, zmm0, 0
        ROW     \t, r10, zmm1, SSTEP
        ROW     \t, r11, zmm2, 2*SSTEP
        ROW     \t, rbx, zmm3, 3*SSTEP
        add     rax, WB
        add     r10, WB
        add     r11, WB
        add     rbx, WB
        add     r12, 292
        dec     r13
        jnz     3b

4:      /* each sum to 8 lanes, then [y0, y1, y2, y3] */
        vextractf64x4 ymm22, zmm0, 1
        vaddps  ymm0, ymm0, ymm22
        vextractf64x4 ymm22, zmm1, 1
        vaddps  ymm1, ymm1, ymm22
        vextractf64x4 ymm22, zmm2, 1
        vaddps  ymm2, ymm2, ymm22
        vextractf64x4 ymm22, zmm3, 1
        vaddps  ymm3, ymm3, ymm22
        vhaddps ymm0, ymm0, ymm1
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

5:      /* the last 1..3 outputs */
        mov     eax, 1
        mov     ecx, edi
        shl     eax, cl
        dec     eax
        kmovw   k1, eax
        vmovups [r9]{k1}, xmm0

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
KGEMV pg_q4_K_q8_K_gemv_4row_avx512vnni, T_Q4_K
KGEMV pg_q5_K_q8_K_gemv_4row_avx512vnni, T_Q5_K
KGEMV pg_q6_K_q8_K_gemv_4row_avx512vnni, T_Q6_K

        PG_RODATA
        .p2align 6
/* q4_K / q5_K: int16 lane -> scale index, for the four (pair, nibble) cases */
k4_idx:
        .rept 16
        .short 0
        .endr
        .rept 16
        .short 2
        .endr
        .rept 16
        .short 1
        .endr
        .rept 16
        .short 3
        .endr
        .rept 16
        .short 4
        .endr
        .rept 16
        .short 6
        .endr
        .rept 16
        .short 5
        .endr
        .rept 16
        .short 7
        .endr
/* q6_K: int16 lane i of part t -> scale 4t + i / 8 */
q6_idx:
        .irp s, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
        .rept 8
        .short \s
        .endr
        .endr
/* q5_K: the qh bit of each (pair, nibble) case, per 32-byte half */
q5_bit_lo:
        .irp b0, 0, 1, 4, 5
        .rept 32
        .byte 1 << \b0
        .endr
        .rept 32
        .byte 1 << (\b0 + 2)
        .endr
        .endr
q6_shl_lo:
        .quad 4, 4, 4, 4, 2, 2, 2, 2
q6_shr_hi:
        .quad 0, 0, 0, 0, 2, 2, 2, 2
k4_shv:
        .long 0, 0, 0, 4
k4_mask1:
        .long 0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f
k4_mask2:
        .long 0, 0x30303030, 0, 0x30303030

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

/* k_gemm_16x8_avx512vnni.S - the prefill microkernel of the quantised
 * weight types over a packed weight panel (kquant_panel.c): sixteen rows of
 * W (lanes) by eight rows of X (registers),
 *
 *     C[t * ldc + n] (+)= sum_b dx[t][b] (scf[b][n] idot_b(n, t) - off[b][n] bs[t][b])
 *
 * for blocks b of S elements (S = 32: q4_K, q5_K, q4_0, q8_0; S = 16:
 * q6_K).  idot_b is the exact int32 dot of the panel's unsigned quants
 * with X's signed q8 quants over the block: one vpdpbusd per four
 * elements and sixteen rows, the four bytes of X broadcast from memory
 * (X is read in place, q8_K or q8_0 rows at stride ldx; xoff[b] is the
 * byte offset of block b's quants in a row).  Each weight load serves the
 * eight rows of X.  The per-block scales are applied in fp32 after the
 * block: "f" (q4_K / q5_K minima): (float)idot * scf - off * bs into a
 * super-block sum (bs the block's sum of X's quants), times X's dx once
 * per super-block of 256; "i" (q6_K's -32, q4_0's -8, q8_0's +128 bias):
 * the offset times the block's sum of X (from the table) subtracted from
 * idot in int32 first, then * scf into the super-block sum (q6_K, q8_K
 * activations), or * (scf * dx) with X's per-block dx (q8_0
 * activations).
 *
 * Panel block b: S / 4 zmm of quants (zmm k = elements 4k .. 4k + 3 of the
 * sixteen rows, row r at bytes 4r), then scf[16] f32, then off[16] f32
 * ("f" only).  Table block b (tab, 64 bytes): dx[8] f32 (q8_K: the same
 * in every block of a super-block), then bs[8] f32 ("f") or the offsets
 * times the block's sums, int32 ("i").
 *
 * void pg_kq_ukr_16x8_<s32f|s16i|s32i>_avx512vnni(size_t nb,
 *         rdi
 *         const uint8_t *panel, const uint8_t *X, size_t ldx, const uint32_t *xoff,
 *         rsi                   rdx               rcx          r8
 *         const void *tab, float *C, size_t ldc, uint64_t ctl)
 *         r9               [rsp+8]   [rsp+16]    [rsp+24]
 *
 * ctl: bits 0-15 the rows of the panel to store (a k-mask), bits 16-19
 * t0: rows t < t0 of X are computed but not stored, bit 20: add to C
 * instead of storing.  nb >= 1, with q8_K activations a multiple of the
 * blocks of a super-block (256 / S).
 *
 * Registers: zmm0-7 the eight fp32 sums, zmm8-15 the block's int32 dots,
 * zmm16 the panel's quants, zmm17 scf, zmm18 off, zmm19 scratch, zmm20-27
 * the super-block sums (q8_K); r12 blocks left in the super-block, rbx
 * 7 ldx, r10 3 ldx, r11 5 ldx, r15 X + xoff[b], rax scratch.
 */
#include "pg_asm.h"

#define XT0 r15
#define XT1 r15 + rcx
#define XT2 r15 + rcx*2
#define XT3 r15 + r10
#define XT4 r15 + rcx*4
#define XT5 r15 + r11
#define XT6 r15 + r10*2
#define XT7 r15 + rbx

.macro DOT4 k
        vmovdqa64 zmm16, [rsi + 64*\k]
        vpdpbusd zmm8, zmm16, dword ptr [XT0 + 4*\k]{1to16}
        vpdpbusd zmm9, zmm16, dword ptr [XT1 + 4*\k]{1to16}
        vpdpbusd zmm10, zmm16, dword ptr [XT2 + 4*\k]{1to16}
        vpdpbusd zmm11, zmm16, dword ptr [XT3 + 4*\k]{1to16}
        vpdpbusd zmm12, zmm16, dword ptr [XT4 + 4*\k]{1to16}
        vpdpbusd zmm13, zmm16, dword ptr [XT5 + 4*\k]{1to16}
        vpdpbusd zmm14, zmm16, dword ptr [XT6 + 4*\k]{1to16}
        vpdpbusd zmm15, zmm16, dword ptr [XT7 + 4*\k]{1to16}
.endm

/* fold block dots zmm i (of row t of X) into the sums: mode 1 straight
 * into zmm t with the block's dx; modes 0 / 2 into the super-block sum
 * zmm s, which FOLDSB scales by dx once per super-block */
.macro FOLD t, i, s, mode
.if \mode == 1
        vpsubd  zmm\i, zmm\i, dword ptr [r9 + 32 + 4*\t]{1to16}
        vcvtdq2ps zmm\i, zmm\i
        vmulps  zmm19, zmm17, dword ptr [r9 + 4*\t]{1to16}
        vfmadd231ps zmm\t, zmm\i, zmm19
.elseif \mode == 2
        vpsubd  zmm\i, zmm\i, dword ptr [r9 + 32 + 4*\t]{1to16}
        vcvtdq2ps zmm\i, zmm\i
        vfmadd231ps zmm\s, zmm\i, zmm17
.else
        vcvtdq2ps zmm\i, zmm\i
        vfmadd231ps zmm\s, zmm\i, zmm17
        vfnmadd231ps zmm\s, zmm18, dword ptr [r9 + 32 + 4*\t]{1to16}
.endif
.endm

.macro STORE t
        cmp     r14, \t
        ja      7f
        test    r13d, 0x100000
        jz      6f
        vaddps  zmm\t {k1}{z}, zmm\t, [rax]
6:      vmovups [rax] {k1}, zmm\t
7:      add     rax, r12
.endm

/* mode 0: q8_K, float offsets; 1: q8_0, int32 offsets; 2: q8_K, int32 offsets */
.macro KUKR name, S, mode
PG_FUNC(\name)
        push    rbx
        push    r12
        push    r13
        push    r14
        push    r15
        lea     r10, [rcx + rcx*2]
        lea     r11, [rcx + rcx*4]
        lea     rbx, [r10 + rcx*4]
        .irp r, 0, 1, 2, 3, 4, 5, 6, 7
        vpxord  zmm\r, zmm\r, zmm\r
        .endr
.if \mode != 1
1:      .irp r, 20, 21, 22, 23, 24, 25, 26, 27
        vpxord  zmm\r, zmm\r, zmm\r
        .endr
        mov     r12d, 256 / \S
.endif
2:      mov     eax, [r8]
        lea     r15, [rdx + rax]
        add     r8, 4
        .irp r, 8, 9, 10, 11, 12, 13, 14, 15
        vpxord  zmm\r, zmm\r, zmm\r
        .endr
.if \S == 32
        .irp k, 0, 1, 2, 3, 4, 5, 6, 7
        DOT4    \k
        .endr
.else
        .irp k, 0, 1, 2, 3
        DOT4    \k
        .endr
.endif
        vmovaps zmm17, [rsi + 16*\S]
.if \mode == 0
        vmovaps zmm18, [rsi + 16*\S + 64]
.endif
        FOLD    0, 8, 20, \mode
        FOLD    1, 9, 21, \mode
        FOLD    2, 10, 22, \mode
        FOLD    3, 11, 23, \mode
        FOLD    4, 12, 24, \mode
        FOLD    5, 13, 25, \mode
        FOLD    6, 14, 26, \mode
        FOLD    7, 15, 27, \mode
.if \mode == 0
        add     rsi, 16*\S + 128
.else
        add     rsi, 16*\S + 64
.endif
        add     r9, 64
.if \mode == 1
        dec     rdi
        jnz     2b
.else
        dec     r12d
        jnz     2b
        /* the super-block's sums times its dx (the same in each of its blocks) */
        vfmadd231ps zmm0, zmm20, dword ptr [r9 - 64]{1to16}
        vfmadd231ps zmm1, zmm21, dword ptr [r9 - 60]{1to16}
        vfmadd231ps zmm2, zmm22, dword ptr [r9 - 56]{1to16}
        vfmadd231ps zmm3, zmm23, dword ptr [r9 - 52]{1to16}
        vfmadd231ps zmm4, zmm24, dword ptr [r9 - 48]{1to16}
        vfmadd231ps zmm5, zmm25, dword ptr [r9 - 44]{1to16}
        vfmadd231ps zmm6, zmm26, dword ptr [r9 - 40]{1to16}
        vfmadd231ps zmm7, zmm27, dword ptr [r9 - 36]{1to16}
        sub     rdi, 256 / \S
        jnz     1b
.endif

        mov     rax, [rsp + 48]
        mov     r12, [rsp + 56]
        shl     r12, 2
        mov     r13, [rsp + 64]
        kmovw   k1, r13d
        mov     r14, r13
        shr     r14, 16
        and     r14, 15
        STORE   0
        STORE   1
        STORE   2
        STORE   3
        STORE   4
        STORE   5
        STORE   6
        STORE   7
        vzeroupper
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbx
        ret
PG_ENDFUNC(\name)
.endm

        .text
KUKR pg_kq_ukr_16x8_s32f_avx512vnni, 32, 0
KUKR pg_kq_ukr_16x8_s16i_avx512vnni, 16, 2
KUKR pg_kq_ukr_16x8_s32i_avx512vnni, 32, 1

/* pg_kq_trans16x4_avx512: the transposition under the panel packing of the
 * quantised prefill GEMM (kquant_panel.c): sixteen bytes of each of
 * sixteen rows of W into four zmm of the panel's order,
 *
 *     out[64 k + 4 r + i] = w[r * ldw + 4 k + i]    k < 4, r < 16, i < 4
 *
 * Row r goes to 128-bit lane r / 4 of a zmm (rows r, r + 4, r + 8, r + 12
 * of one register: one load and three vinserti32x4), then a 4 x 4 dword
 * transpose within the lanes (vpunpck*dq, vpunpck*qdq) leaves dword k of
 * rows 4L .. 4L + 3 in lane L of zmm k.  AVX-512 F.
 *
 * void pg_kq_trans16x4_avx512(const uint8_t *w, size_t ldw, void *out)
 *                             rdi               rsi         rdx (64-byte aligned)
 */
        .text
PG_FUNC(pg_kq_trans16x4_avx512)
        lea     rax, [rsi*4]
        lea     rcx, [rax + rax*2]
        lea     r8, [rdi + rsi]
        lea     r9, [rdi + rsi*2]
        lea     r10, [r8 + rsi*2]
        vmovdqu xmm0, [rdi]
        vinserti32x4 zmm0, zmm0, [rdi + rax], 1
        vinserti32x4 zmm0, zmm0, [rdi + rax*2], 2
        vinserti32x4 zmm0, zmm0, [rdi + rcx], 3
        vmovdqu xmm1, [r8]
        vinserti32x4 zmm1, zmm1, [r8 + rax], 1
        vinserti32x4 zmm1, zmm1, [r8 + rax*2], 2
        vinserti32x4 zmm1, zmm1, [r8 + rcx], 3
        vmovdqu xmm2, [r9]
        vinserti32x4 zmm2, zmm2, [r9 + rax], 1
        vinserti32x4 zmm2, zmm2, [r9 + rax*2], 2
        vinserti32x4 zmm2, zmm2, [r9 + rcx], 3
        vmovdqu xmm3, [r10]
        vinserti32x4 zmm3, zmm3, [r10 + rax], 1
        vinserti32x4 zmm3, zmm3, [r10 + rax*2], 2
        vinserti32x4 zmm3, zmm3, [r10 + rcx], 3
        vpunpckldq zmm4, zmm0, zmm1
        vpunpckhdq zmm5, zmm0, zmm1
        vpunpckldq zmm16, zmm2, zmm3
        vpunpckhdq zmm17, zmm2, zmm3
        vpunpcklqdq zmm0, zmm4, zmm16
        vpunpckhqdq zmm1, zmm4, zmm16
        vpunpcklqdq zmm2, zmm5, zmm17
        vpunpckhqdq zmm3, zmm5, zmm17
        vmovdqa64 [rdx], zmm0
        vmovdqa64 [rdx + 64], zmm1
        vmovdqa64 [rdx + 128], zmm2
        vmovdqa64 [rdx + 192], zmm3
        vzeroupper
        ret
PG_ENDFUNC(pg_kq_trans16x4_avx512)


/* pg_kq_h2f_16x16_avx512 / pg_kq_b2f_16x16_avx512: sixteen f16 (bf16)
 * elements of each of sixteen rows of W, widened to fp32 and transposed
 * for the f16 / bf16 prefill (kquant_panel.c), which runs the fp32 SGEMM
 * microkernel over such panels:
 *
 *     out[e * ldo + r] = (float)w[r * ldw + 2 e]    e < 16, r < 16 (ldo in bytes)
 *
 * The 32 bytes of each row go through the dword transposition above (two
 * halves: zmm k, lane r = elements 2k and 2k + 1 of row r), then the even
 * and odd elements apart: vpmovdw + vcvtph2ps (f16), a shift or a mask of
 * the high half (bf16).  AVX-512 F (+ F16C's vcvtph2ps zmm).
 *
 * void pg_kq_<h|b>2f_16x16_avx512(const uint8_t *w, size_t ldw, float *out, size_t ldo)
 *                                 rdi               rsi         rdx         rcx
 */
.macro T4 off, d0, d1, d2, d3
        vmovdqu xmm\d0, [rdi + \off]
        vinserti32x4 zmm\d0, zmm\d0, [rdi + rax + \off], 1
        vinserti32x4 zmm\d0, zmm\d0, [rdi + rax*2 + \off], 2
        vinserti32x4 zmm\d0, zmm\d0, [rdi + r11 + \off], 3
        vmovdqu xmm\d1, [r8 + \off]
        vinserti32x4 zmm\d1, zmm\d1, [r8 + rax + \off], 1
        vinserti32x4 zmm\d1, zmm\d1, [r8 + rax*2 + \off], 2
        vinserti32x4 zmm\d1, zmm\d1, [r8 + r11 + \off], 3
        vmovdqu xmm\d2, [r9 + \off]
        vinserti32x4 zmm\d2, zmm\d2, [r9 + rax + \off], 1
        vinserti32x4 zmm\d2, zmm\d2, [r9 + rax*2 + \off], 2
        vinserti32x4 zmm\d2, zmm\d2, [r9 + r11 + \off], 3
        vmovdqu xmm\d3, [r10 + \off]
        vinserti32x4 zmm\d3, zmm\d3, [r10 + rax + \off], 1
        vinserti32x4 zmm\d3, zmm\d3, [r10 + rax*2 + \off], 2
        vinserti32x4 zmm\d3, zmm\d3, [r10 + r11 + \off], 3
        vpunpckldq zmm16, zmm\d0, zmm\d1
        vpunpckhdq zmm17, zmm\d0, zmm\d1
        vpunpckldq zmm18, zmm\d2, zmm\d3
        vpunpckhdq zmm19, zmm\d2, zmm\d3
        vpunpcklqdq zmm\d0, zmm16, zmm18
        vpunpckhqdq zmm\d1, zmm16, zmm18
        vpunpcklqdq zmm\d2, zmm17, zmm19
        vpunpckhqdq zmm\d3, zmm17, zmm19
.endm

.macro WIDEN2 bf, z
.if \bf
        vpslld  zmm16, zmm\z, 16
        vpandd  zmm17, zmm\z, zmm20
.else
        vpmovdw ymm16, zmm\z
        vpsrld  zmm17, zmm\z, 16
        vpmovdw ymm17, zmm17
        vcvtph2ps zmm16, ymm16
        vcvtph2ps zmm17, ymm17
.endif
        vmovups [rdx], zmm16
        vmovups [rdx + rcx], zmm17
        lea     rdx, [rdx + rcx*2]
.endm

.macro H2F name, bf
PG_FUNC(\name)
        lea     rax, [rsi*4]
        lea     r11, [rax + rax*2]
        lea     r8, [rdi + rsi]
        lea     r9, [rdi + rsi*2]
        lea     r10, [r8 + rsi*2]
.if \bf
        mov     r8d, 0xffff0000
        vpbroadcastd zmm20, r8d
        lea     r8, [rdi + rsi]
.endif
        T4      0, 0, 1, 2, 3
        T4      16, 4, 5, 6, 7
        .irp z, 0, 1, 2, 3, 4, 5, 6, 7
        WIDEN2  \bf, \z
        .endr
        vzeroupper
        ret
PG_ENDFUNC(\name)
.endm

H2F pg_kq_h2f_16x16_avx512, 0
H2F pg_kq_b2f_16x16_avx512, 1

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

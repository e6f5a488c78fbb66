/* f32_winograd_f23_avx512f.S - Winograd F(2x2, 3x3) transforms of one
 * NCHW16c tile row, zmm (one vector = the block's 16 channels).
 *
 * void pg_f32_wino_in_f23_avx512f(const pg_wino_in_args *a);    rdi = a
 * void pg_f32_wino_out_f23_avx512f(const pg_wino_out_args *a);
 * (winograd.h: the formulas, the order of the operations, the offsets.)
 *
 * Input: neighbouring tiles share two columns (tile t reads pixels 2t ..
 * 2t+3), so the column pass e = B^T d runs once per input column: two
 * columns' e are carried into the next tile (zmm0..zmm7) and two new ones
 * made (zmm8..zmm15) from 8 loads; the row pass makes the tile's 16 U
 * vectors from them and stores each.  Two tiles per loop trip with the
 * roles of the two register sets swapped, so nothing is moved.
 *
 * The 16 planes of U (or M) are addressed from four base pointers, one per
 * row i of the 4 x 4 tile (xi = 4 i + j): [p_i + j * stride] for j = 0, 1,
 * 2 by scaled index and j = 3 through rax = 3 * stride.
 *
 * Output: the 16 M vectors of a tile (zmm0..zmm15), the column pass f =
 * A^T M into 8 (zmm16..zmm23), the row pass into the 4 output pixels, bias
 * (zmm31), the skip rows when flagged, the clamp (zmm29 lo, zmm30 hi) and
 * the stores.  Every operation is one add or subtract in the reference's
 * order, so the results are the reference's bit for bit.
 */
#include "pg_asm.h"

        .text

/* e = B^T d of one input column at byte offset \off from the row cursors
 * r8..r11, into \e0..\e3 (zmm20..zmm23 are the loads) */
.macro WI_COL off, e0, e1, e2, e3
        vmovups zmm20, [r8 + \off]
        vmovups zmm21, [r9 + \off]
        vmovups zmm22, [r10 + \off]
        vmovups zmm23, [r11 + \off]
        vsubps  \e0, zmm20, zmm22
        vaddps  \e1, zmm21, zmm22
        vsubps  \e2, zmm22, zmm21
        vsubps  \e3, zmm21, zmm23
.endm

/* U row i = e_i B over columns a, b, c, d (e_i of each), stored to the
 * planes from base pointer \p */
.macro WI_ROW p, a, b, c, d
        vsubps  zmm24, \a, \c
        vaddps  zmm25, \b, \c
        vsubps  zmm26, \c, \b
        vsubps  zmm27, \b, \d
        vmovups [\p], zmm24
        vmovups [\p + rdx], zmm25
        vmovups [\p + rdx*2], zmm26
        vmovups [\p + rax], zmm27
.endm

/* one tile: columns 0, 1 in set A (\a0..\a3, \b0..\b3), columns 2, 3 made
 * into set C (\c0.., \d0..), then the 4 rows of U; cursors advance */
.macro WI_TILE a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3
        WI_COL  128, \c0, \c1, \c2, \c3
        WI_COL  192, \d0, \d1, \d2, \d3
        WI_ROW  rsi, \a0, \b0, \c0, \d0
        WI_ROW  r12, \a1, \b1, \c1, \d1
        WI_ROW  r13, \a2, \b2, \c2, \d2
        WI_ROW  r14, \a3, \b3, \c3, \d3
        add     r8, 128
        add     r9, 128
        add     r10, 128
        add     r11, 128
        add     rsi, 64
        add     r12, 64
        add     r13, 64
        add     r14, 64
.endm

PG_FUNC(pg_f32_wino_in_f23_avx512f)
        push    r12
        push    r13
        push    r14
        mov     rcx, [rdi + 16]
        test    rcx, rcx
        jz      .Lwi_done
        mov     rax, [rdi]
        mov     r8, [rax]
        mov     r9, [rax + 8]
        mov     r10, [rax + 16]
        mov     r11, [rax + 24]
        mov     rsi, [rdi + 8]
        mov     rdx, [rdi + 24]
        lea     rax, [rdx + rdx*2]
        lea     r12, [rsi + rdx*4]
        lea     r13, [r12 + rdx*4]
        lea     r14, [r13 + rdx*4]
        /* columns 0 and 1 of the first tile */
        WI_COL  0, zmm0, zmm1, zmm2, zmm3
        WI_COL  64, zmm4, zmm5, zmm6, zmm7
.Lwi_pair:
        cmp     rcx, 2
        jb      .Lwi_last
        WI_TILE zmm0, zmm1, zmm2, zmm3, zmm4, zmm5, zmm6, zmm7, zmm8, zmm9, zmm10, zmm11, zmm12, zmm13, zmm14, zmm15
        WI_TILE zmm8, zmm9, zmm10, zmm11, zmm12, zmm13, zmm14, zmm15, zmm0, zmm1, zmm2, zmm3, zmm4, zmm5, zmm6, zmm7
        sub     rcx, 2
        jmp     .Lwi_pair
.Lwi_last:
        test    rcx, rcx
        jz      .Lwi_done
        WI_TILE zmm0, zmm1, zmm2, zmm3, zmm4, zmm5, zmm6, zmm7, zmm8, zmm9, zmm10, zmm11, zmm12, zmm13, zmm14, zmm15
.Lwi_done:
        vzeroupper
        pop     r14
        pop     r13
        pop     r12
        ret
PG_ENDFUNC(pg_f32_wino_in_f23_avx512f)

/* f = A^T M for column j (M row i of column j in \m0..\m3) into \f0, \f1 */
.macro WO_COL m0, m1, m2, m3, f0, f1
        vaddps  \f0, \m0, \m1
        vaddps  \f0, \f0, \m2
        vsubps  \f1, \m1, \m2
        vsubps  \f1, \f1, \m3
.endm

/* output pixels of row i from f_i over the 4 columns; \res: add the skip
 * row at \rp; stored at \yp */
.macro WO_ROW a, b, c, d, yp, rp, res
        vaddps  zmm24, \a, \b
        vaddps  zmm24, zmm24, \c
        vsubps  zmm25, \b, \c
        vsubps  zmm25, zmm25, \d
        vaddps  zmm24, zmm24, zmm31
        vaddps  zmm25, zmm25, zmm31
.if \res
        vaddps  zmm24, zmm24, [\rp]
        vaddps  zmm25, zmm25, [\rp + 64]
.endif
        vmaxps  zmm24, zmm29, zmm24
        vmaxps  zmm25, zmm29, zmm25
        vminps  zmm24, zmm30, zmm24
        vminps  zmm25, zmm30, zmm25
        vmovups [\yp], zmm24
        vmovups [\yp + 64], zmm25
.endm

/* the tiles of the row; \res: with the skip rows */
.macro WO_LOOP res, lbl
\lbl:
        vmovups zmm0, [rsi]
        vmovups zmm1, [rsi + rdx]
        vmovups zmm2, [rsi + rdx*2]
        vmovups zmm3, [rsi + rax]
        vmovups zmm4, [r12]
        vmovups zmm5, [r12 + rdx]
        vmovups zmm6, [r12 + rdx*2]
        vmovups zmm7, [r12 + rax]
        vmovups zmm8, [r13]
        vmovups zmm9, [r13 + rdx]
        vmovups zmm10, [r13 + rdx*2]
        vmovups zmm11, [r13 + rax]
        vmovups zmm12, [r14]
        vmovups zmm13, [r14 + rdx]
        vmovups zmm14, [r14 + rdx*2]
        vmovups zmm15, [r14 + rax]
        WO_COL  zmm0, zmm4, zmm8, zmm12, zmm16, zmm20
        WO_COL  zmm1, zmm5, zmm9, zmm13, zmm17, zmm21
        WO_COL  zmm2, zmm6, zmm10, zmm14, zmm18, zmm22
        WO_COL  zmm3, zmm7, zmm11, zmm15, zmm19, zmm23
        WO_ROW  zmm16, zmm17, zmm18, zmm19, r8, r10, \res
        WO_ROW  zmm20, zmm21, zmm22, zmm23, r9, r11, \res
        add     rsi, 64
        add     r12, 64
        add     r13, 64
        add     r14, 64
        add     r8, 128
        add     r9, 128
.if \res
        add     r10, 128
        add     r11, 128
.endif
        dec     rcx
        jnz     \lbl
.endm

PG_FUNC(pg_f32_wino_out_f23_avx512f)
        push    r12
        push    r13
        push    r14
        mov     rcx, [rdi + 56]
        test    rcx, rcx
        jz      .Lwo_done
        mov     rsi, [rdi]
        mov     rdx, [rdi + 8]
        lea     rax, [rdx + rdx*2]
        lea     r12, [rsi + rdx*4]
        lea     r13, [r12 + rdx*4]
        lea     r14, [r13 + rdx*4]
        mov     r8, [rdi + 16]
        mov     r9, [rdi + 24]
        mov     r10, [rdi + 48]
        vmovups zmm31, [r10]
        mov     r10, [rdi + 32]
        mov     r11, [rdi + 40]
        vbroadcastss zmm29, [rdi + 64]
        vbroadcastss zmm30, [rdi + 68]
        test    dword ptr [rdi + 72], 2
        jnz     .Lwo_res
        WO_LOOP 0, .Lwo_plain
        jmp     .Lwo_done
.Lwo_res:
        WO_LOOP 1, .Lwo_skip
.Lwo_done:
        vzeroupper
        pop     r14
        pop     r13
        pop     r12
        ret
PG_ENDFUNC(pg_f32_wino_out_f23_avx512f)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

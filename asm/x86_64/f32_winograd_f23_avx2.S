/* f32_winograd_f23_avx2.S - Winograd F(2x2, 3x3) transforms of one
 * NCHW16c tile row, ymm: each 16-channel vector as two halves of 8, the
 * whole row done once per half.
 *
 * void pg_f32_wino_in_f23_avx2(const pg_wino_in_args *a);    rdi = a
 * void pg_f32_wino_out_f23_avx2(const pg_wino_out_args *a);
 * (winograd.h: the formulas, the order of the operations, the offsets.)
 *
 * As the AVX-512 file, with 16 registers: the input's column pass e =
 * B^T d takes its second operands from memory (4 registers per column),
 * and three column sets rotate - a tile's columns 0 and 1 are the last
 * tile's 2 and 3, its column 3 is made in the registers its column 0
 * frees - so the loop goes three tiles a trip.  The output's column pass
 * f = A^T M also reads M from memory (8 registers for the tile's f),
 * bias, lo, hi in ymm13..ymm15.  Each output is the reference's sequence
 * of adds and subtracts, so both transforms are exact.
 *
 * Registers (both): r15 the half's byte offset (0, 32); rsi, r12, r13,
 * r14 the planes of tile row i (xi = 4 i + j at [p_i + j * stride], j = 3
 * through rax = 3 * stride); rdx the plane stride; rcx tiles left.
 * Input: r8..r11 the 4 input rows.  Output: r8, r9 the output rows, r10,
 * r11 the skip rows.
 */
#include "pg_asm.h"

        .text

/* e = B^T d of the input column at \off into \e0..\e3 */
.macro WI_COL off, e0, e1, e2, e3
        vmovups \e0, [r8 + \off]
        vsubps  \e0, \e0, [r10 + \off]
        vmovups \e1, [r9 + \off]
        vaddps  \e1, \e1, [r10 + \off]
        vmovups \e2, [r10 + \off]
        vsubps  \e2, \e2, [r9 + \off]
        vmovups \e3, [r9 + \off]
        vsubps  \e3, \e3, [r11 + \off]
.endm

/* U[i][j] = \x op \y into plane j of row \p */
.macro WI_OUT op, x, y, p, j
        \op     ymm12, \x, \y
.if \j == 0
        vmovups [\p], ymm12
.elseif \j == 1
        vmovups [\p + rdx], ymm12
.elseif \j == 2
        vmovups [\p + rdx*2], ymm12
.else
        vmovups [\p + rax], ymm12
.endif
.endm

.macro WI_ROW3 p, a, b, c
        WI_OUT  vsubps, \a, \c, \p, 0
        WI_OUT  vaddps, \b, \c, \p, 1
        WI_OUT  vsubps, \c, \b, \p, 2
.endm

/* one tile: columns 0, 1 in sets a, b; column 2 made into set c, then
 * column 3 into set a (free once U's columns 0..2 are out) */
.macro WI_TILE a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3
        WI_COL  128, \c0, \c1, \c2, \c3
        WI_ROW3 rsi, \a0, \b0, \c0
        WI_ROW3 r12, \a1, \b1, \c1
        WI_ROW3 r13, \a2, \b2, \c2
        WI_ROW3 r14, \a3, \b3, \c3
        WI_COL  192, \a0, \a1, \a2, \a3
        WI_OUT  vsubps, \b0, \a0, rsi, 3
        WI_OUT  vsubps, \b1, \a1, r12, 3
        WI_OUT  vsubps, \b2, \a2, r13, 3
        WI_OUT  vsubps, \b3, \a3, r14, 3
        add     r8, 128
        add     r9, 128
        add     r10, 128
        add     r11, 128
        add     rsi, 64
        add     r12, 64
        add     r13, 64
        add     r14, 64
.endm

#define SET_A ymm0, ymm1, ymm2, ymm3
#define SET_B ymm4, ymm5, ymm6, ymm7
#define SET_C ymm8, ymm9, ymm10, ymm11

PG_FUNC(pg_f32_wino_in_f23_avx2)
        push    r12
        push    r13
        push    r14
        push    r15
        xor     r15d, r15d
.Lwi2_half:
        mov     rcx, [rdi + 16]
        test    rcx, rcx
        jz      .Lwi2_done
        mov     rax, [rdi]
        mov     r8, [rax]
        mov     r9, [rax + 8]
        mov     r10, [rax + 16]
        mov     r11, [rax + 24]
        add     r8, r15
        add     r9, r15
        add     r10, r15
        add     r11, r15
        mov     rsi, [rdi + 8]
        add     rsi, r15
        mov     rdx, [rdi + 24]
        lea     rax, [rdx + rdx*2]
        lea     r12, [rsi + rdx*4]
        lea     r13, [r12 + rdx*4]
        lea     r14, [r13 + rdx*4]
        WI_COL  0, SET_A
        WI_COL  64, SET_B
.Lwi2_loop:
        WI_TILE SET_A, SET_B, SET_C
        dec     rcx
        jz      .Lwi2_next
        WI_TILE SET_C, SET_A, SET_B
        dec     rcx
        jz      .Lwi2_next
        WI_TILE SET_B, SET_C, SET_A
        dec     rcx
        jnz     .Lwi2_loop
.Lwi2_next:
        add     r15, 32
        cmp     r15, 64
        jb      .Lwi2_half
.Lwi2_done:
        vzeroupper
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        ret
PG_ENDFUNC(pg_f32_wino_in_f23_avx2)

/* f = A^T M of column \j (M of row i at [p_i + j-th plane]) */
.macro WO_M op, r, p, j
.if \j == 0
        \op     \r, \r, [\p]
.elseif \j == 1
        \op     \r, \r, [\p + rdx]
.elseif \j == 2
        \op     \r, \r, [\p + rdx*2]
.else
        \op     \r, \r, [\p + rax]
.endif
.endm
.macro WO_LD r, p, j
.if \j == 0
        vmovups \r, [\p]
.elseif \j == 1
        vmovups \r, [\p + rdx]
.elseif \j == 2
        vmovups \r, [\p + rdx*2]
.else
        vmovups \r, [\p + rax]
.endif
.endm
.macro WO_COL j, f0, f1
        WO_LD   \f0, rsi, \j
        WO_M    vaddps, \f0, r12, \j
        WO_M    vaddps, \f0, r13, \j
        WO_LD   \f1, r12, \j
        WO_M    vsubps, \f1, r13, \j
        WO_M    vsubps, \f1, r14, \j
.endm

/* the two output pixels of a row from its f over the 4 columns */
.macro WO_ROW a, b, c, d, yp, rp, res
        vaddps  ymm8, \a, \b
        vaddps  ymm8, ymm8, \c
        vsubps  ymm9, \b, \c
        vsubps  ymm9, ymm9, \d
        vaddps  ymm8, ymm8, ymm13
        vaddps  ymm9, ymm9, ymm13
.if \res
        vaddps  ymm8, ymm8, [\rp]
        vaddps  ymm9, ymm9, [\rp + 64]
.endif
        vmaxps  ymm8, ymm14, ymm8
        vmaxps  ymm9, ymm14, ymm9
        vminps  ymm8, ymm15, ymm8
        vminps  ymm9, ymm15, ymm9
        vmovups [\yp], ymm8
        vmovups [\yp + 64], ymm9
.endm

.macro WO_LOOP res, lbl
\lbl:
        WO_COL  0, ymm0, ymm4
        WO_COL  1, ymm1, ymm5
        WO_COL  2, ymm2, ymm6
        WO_COL  3, ymm3, ymm7
        WO_ROW  ymm0, ymm1, ymm2, ymm3, r8, r10, \res
        WO_ROW  ymm4, ymm5, ymm6, ymm7, r9, r11, \res
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

PG_FUNC(pg_f32_wino_out_f23_avx2)
        push    r12
        push    r13
        push    r14
        push    r15
        xor     r15d, r15d
        vbroadcastss ymm14, [rdi + 64]
        vbroadcastss ymm15, [rdi + 68]
.Lwo2_half:
        mov     rcx, [rdi + 56]
        test    rcx, rcx
        jz      .Lwo2_done
        mov     rsi, [rdi]
        add     rsi, r15
        mov     rdx, [rdi + 8]
        lea     rax, [rdx + rdx*2]
        lea     r12, [rsi + rdx*4]
        lea     r13, [r12 + rdx*4]
        lea     r14, [r13 + rdx*4]
        mov     r8, [rdi + 16]
        mov     r9, [rdi + 24]
        add     r8, r15
        add     r9, r15
        mov     r10, [rdi + 48]
        vmovups ymm13, [r10 + r15]
        test    dword ptr [rdi + 72], 2
        jnz     .Lwo2_res
        WO_LOOP 0, .Lwo2_plain
        jmp     .Lwo2_next
.Lwo2_res:
        mov     r10, [rdi + 32]
        mov     r11, [rdi + 40]
        add     r10, r15
        add     r11, r15
        WO_LOOP 1, .Lwo2_skip
.Lwo2_next:
        add     r15, 32
        cmp     r15, 64
        jb      .Lwo2_half
.Lwo2_done:
        vzeroupper
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        ret
PG_ENDFUNC(pg_f32_wino_out_f23_avx2)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

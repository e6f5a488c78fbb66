/* f32_transpose_avx512f.S - block transpose of 4-byte elements, 16 x 16
 * tiles in zmm registers (transpose.h).
 *
 * void pg_f32_transpose_avx512f(size_t rows, size_t cols, const float *src,
 *                               size_t lds, float *dst, size_t ldd);
 *   rdi rows, rsi cols (multiples of 16), rdx src, rcx lds, r8 dst, r9 ldd
 *   (strides in elements)
 *
 * A tile: its 16 rows into zmm0..zmm15, then the classic network in four
 * stages, each 16 instructions:
 *   1. vunpck{l,h}ps of row pairs (2p, 2p + 1)        -> zmm16..zmm31
 *   2. vunpck{l,h}pd of those pairs, in fours         -> zmm0..zmm15: in
 *      128-bit lane L, register 4q + j holds column 4L + j of rows 4q..4q+3
 *   3. vshuff32x4 0x88 / 0xdd of rows 0-7 and 8-15    -> zmm16..zmm31
 *   4. vshuff32x4 0x88 / 0xdd again                   -> zmm0..zmm15 = the
 *      tile's columns 0..15, each stored as a row of dst.
 * Tiles go along a block of 16 rows (src read row by row, dst written a
 * column of tiles at a time).
 *
 * Registers: rbx cols left, r10 row blocks left, rax src row block,
 * r11 dst column, r12 / r13 the tile in src / dst, r14 3 lds bytes,
 * rbp 3 ldd bytes, r15 walking row pointer. */
#include "pg_asm.h"

        .text

PG_FUNC(pg_f32_transpose_avx512f)
        test    rdi, rdi
        jz      .Ltr16_ret
        test    rsi, rsi
        jz      .Ltr16_ret
        push    rbx
        push    rbp
        push    r12
        push    r13
        push    r14
        push    r15
        shl     rcx, 2
        shl     r9, 2
        lea     r14, [rcx + rcx*2]
        lea     rbp, [r9 + r9*2]
        mov     r10, rdi
        mov     rax, rdx
        mov     r11, r8
.Ltr16_rows:
        mov     rbx, rsi
        mov     r12, rax
        mov     r13, r11
.Ltr16_tile:
        mov     r15, r12
        vmovups zmm0, [r15]
        vmovups zmm1, [r15 + rcx]
        vmovups zmm2, [r15 + rcx*2]
        vmovups zmm3, [r15 + r14]
        lea     r15, [r15 + rcx*4]
        vmovups zmm4, [r15]
        vmovups zmm5, [r15 + rcx]
        vmovups zmm6, [r15 + rcx*2]
        vmovups zmm7, [r15 + r14]
        lea     r15, [r15 + rcx*4]
        vmovups zmm8, [r15]
        vmovups zmm9, [r15 + rcx]
        vmovups zmm10, [r15 + rcx*2]
        vmovups zmm11, [r15 + r14]
        lea     r15, [r15 + rcx*4]
        vmovups zmm12, [r15]
        vmovups zmm13, [r15 + rcx]
        vmovups zmm14, [r15 + rcx*2]
        vmovups zmm15, [r15 + r14]
        /* 1: row pairs */
        vunpcklps zmm16, zmm0, zmm1
        vunpckhps zmm17, zmm0, zmm1
        vunpcklps zmm18, zmm2, zmm3
        vunpckhps zmm19, zmm2, zmm3
        vunpcklps zmm20, zmm4, zmm5
        vunpckhps zmm21, zmm4, zmm5
        vunpcklps zmm22, zmm6, zmm7
        vunpckhps zmm23, zmm6, zmm7
        vunpcklps zmm24, zmm8, zmm9
        vunpckhps zmm25, zmm8, zmm9
        vunpcklps zmm26, zmm10, zmm11
        vunpckhps zmm27, zmm10, zmm11
        vunpcklps zmm28, zmm12, zmm13
        vunpckhps zmm29, zmm12, zmm13
        vunpcklps zmm30, zmm14, zmm15
        vunpckhps zmm31, zmm14, zmm15
        /* 2: in fours (t 4q..4q+3 -> u 4q..4q+3) */
        vunpcklpd zmm0, zmm16, zmm18
        vunpckhpd zmm1, zmm16, zmm18
        vunpcklpd zmm2, zmm17, zmm19
        vunpckhpd zmm3, zmm17, zmm19
        vunpcklpd zmm4, zmm20, zmm22
        vunpckhpd zmm5, zmm20, zmm22
        vunpcklpd zmm6, zmm21, zmm23
        vunpckhpd zmm7, zmm21, zmm23
        vunpcklpd zmm8, zmm24, zmm26
        vunpckhpd zmm9, zmm24, zmm26
        vunpcklpd zmm10, zmm25, zmm27
        vunpckhpd zmm11, zmm25, zmm27
        vunpcklpd zmm12, zmm28, zmm30
        vunpckhpd zmm13, zmm28, zmm30
        vunpcklpd zmm14, zmm29, zmm31
        vunpckhpd zmm15, zmm29, zmm31
        /* 3: lanes of rows 0-7 and of rows 8-15 (w j,k -> zmm 16 + 4j + k) */
        vshuff32x4 zmm16, zmm0, zmm4, 0x88
        vshuff32x4 zmm17, zmm0, zmm4, 0xdd
        vshuff32x4 zmm18, zmm8, zmm12, 0x88
        vshuff32x4 zmm19, zmm8, zmm12, 0xdd
        vshuff32x4 zmm20, zmm1, zmm5, 0x88
        vshuff32x4 zmm21, zmm1, zmm5, 0xdd
        vshuff32x4 zmm22, zmm9, zmm13, 0x88
        vshuff32x4 zmm23, zmm9, zmm13, 0xdd
        vshuff32x4 zmm24, zmm2, zmm6, 0x88
        vshuff32x4 zmm25, zmm2, zmm6, 0xdd
        vshuff32x4 zmm26, zmm10, zmm14, 0x88
        vshuff32x4 zmm27, zmm10, zmm14, 0xdd
        vshuff32x4 zmm28, zmm3, zmm7, 0x88
        vshuff32x4 zmm29, zmm3, zmm7, 0xdd
        vshuff32x4 zmm30, zmm11, zmm15, 0x88
        vshuff32x4 zmm31, zmm11, zmm15, 0xdd
        /* 4: columns j, j + 4, j + 8, j + 12 */
        vshuff32x4 zmm0, zmm16, zmm18, 0x88
        vshuff32x4 zmm8, zmm16, zmm18, 0xdd
        vshuff32x4 zmm4, zmm17, zmm19, 0x88
        vshuff32x4 zmm12, zmm17, zmm19, 0xdd
        vshuff32x4 zmm1, zmm20, zmm22, 0x88
        vshuff32x4 zmm9, zmm20, zmm22, 0xdd
        vshuff32x4 zmm5, zmm21, zmm23, 0x88
        vshuff32x4 zmm13, zmm21, zmm23, 0xdd
        vshuff32x4 zmm2, zmm24, zmm26, 0x88
        vshuff32x4 zmm10, zmm24, zmm26, 0xdd
        vshuff32x4 zmm6, zmm25, zmm27, 0x88
        vshuff32x4 zmm14, zmm25, zmm27, 0xdd
        vshuff32x4 zmm3, zmm28, zmm30, 0x88
        vshuff32x4 zmm11, zmm28, zmm30, 0xdd
        vshuff32x4 zmm7, zmm29, zmm31, 0x88
        vshuff32x4 zmm15, zmm29, zmm31, 0xdd
        mov     r15, r13
        vmovups [r15], zmm0
        vmovups [r15 + r9], zmm1
        vmovups [r15 + r9*2], zmm2
        vmovups [r15 + rbp], zmm3
        lea     r15, [r15 + r9*4]
        vmovups [r15], zmm4
        vmovups [r15 + r9], zmm5
        vmovups [r15 + r9*2], zmm6
        vmovups [r15 + rbp], zmm7
        lea     r15, [r15 + r9*4]
        vmovups [r15], zmm8
        vmovups [r15 + r9], zmm9
        vmovups [r15 + r9*2], zmm10
        vmovups [r15 + rbp], zmm11
        lea     r15, [r15 + r9*4]
        vmovups [r15], zmm12
        vmovups [r15 + r9], zmm13
        vmovups [r15 + r9*2], zmm14
        vmovups [r15 + rbp], zmm15
        add     r12, 64
        mov     r15, r9
        shl     r15, 4
        add     r13, r15
        sub     rbx, 16
        jnz     .Ltr16_tile
        /* the next 16 rows of src: the next 16 columns of dst */
        mov     r15, rcx
        shl     r15, 4
        add     rax, r15
        add     r11, 64
        sub     r10, 16
        jnz     .Ltr16_rows
        vzeroupper
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbp
        pop     rbx
.Ltr16_ret:
        ret
PG_ENDFUNC(pg_f32_transpose_avx512f)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

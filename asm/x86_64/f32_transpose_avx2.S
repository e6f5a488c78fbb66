/* f32_transpose_avx2.S - block transpose of 4-byte elements, 8 x 8 tiles
 * in ymm registers (transpose.h).
 *
 * void pg_f32_transpose_avx2(size_t rows, size_t cols, const float *src,
 *                            size_t lds, float *dst, size_t ldd);
 *   rdi rows, rsi cols (multiples of 8), rdx src, rcx lds, r8 dst, r9 ldd
 *
 * A tile: its 8 rows into ymm0..ymm7, then
 *   1. vunpck{l,h}ps of row pairs                      -> ymm8..ymm15
 *   2. vshufps 0x44 / 0xee of those, in fours          -> ymm0..ymm7: in
 *      128-bit lane L, register 4q + j holds column 4L + j of rows 4q..4q+3
 *   3. vperm2f128 0x20 / 0x31 of rows 0-3 with 4-7     -> the columns,
 *      each stored as a row of dst.
 *
 * Registers as f32_transpose_avx512f.S. */
#include "pg_asm.h"

        .text

PG_FUNC(pg_f32_transpose_avx2)
        test    rdi, rdi
        jz      .Ltr8_ret
        test    rsi, rsi
        jz      .Ltr8_ret
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
.Ltr8_rows:
        mov     rbx, rsi
        mov     r12, rax
        mov     r13, r11
.Ltr8_tile:
        mov     r15, r12
        vmovups ymm0, [r15]
        vmovups ymm1, [r15 + rcx]
        vmovups ymm2, [r15 + rcx*2]
        vmovups ymm3, [r15 + r14]
        lea     r15, [r15 + rcx*4]
        vmovups ymm4, [r15]
        vmovups ymm5, [r15 + rcx]
        vmovups ymm6, [r15 + rcx*2]
        vmovups ymm7, [r15 + r14]
        /* 1: row pairs */
        vunpcklps ymm8, ymm0, ymm1
        vunpckhps ymm9, ymm0, ymm1
        vunpcklps ymm10, ymm2, ymm3
        vunpckhps ymm11, ymm2, ymm3
        vunpcklps ymm12, ymm4, ymm5
        vunpckhps ymm13, ymm4, ymm5
        vunpcklps ymm14, ymm6, ymm7
        vunpckhps ymm15, ymm6, ymm7
        /* 2: in fours */
        vshufps ymm0, ymm8, ymm10, 0x44
        vshufps ymm1, ymm8, ymm10, 0xee
        vshufps ymm2, ymm9, ymm11, 0x44
        vshufps ymm3, ymm9, ymm11, 0xee
        vshufps ymm4, ymm12, ymm14, 0x44
        vshufps ymm5, ymm12, ymm14, 0xee
        vshufps ymm6, ymm13, ymm15, 0x44
        vshufps ymm7, ymm13, ymm15, 0xee
        /* 3: column j from lane 0, column j + 4 from lane 1 */
        vperm2f128 ymm8, ymm0, ymm4, 0x20
        vperm2f128 ymm12, ymm0, ymm4, 0x31
        vperm2f128 ymm9, ymm1, ymm5, 0x20
        vperm2f128 ymm13, ymm1, ymm5, 0x31
        vperm2f128 ymm10, ymm2, ymm6, 0x20
        vperm2f128 ymm14, ymm2, ymm6, 0x31
        vperm2f128 ymm11, ymm3, ymm7, 0x20
        vperm2f128 ymm15, ymm3, ymm7, 0x31
        mov     r15, r13
        vmovups [r15], ymm8
        vmovups [r15 + r9], ymm9
        vmovups [r15 + r9*2], ymm10
        vmovups [r15 + rbp], ymm11
        lea     r15, [r15 + r9*4]
        vmovups [r15], ymm12
        vmovups [r15 + r9], ymm13
        vmovups [r15 + r9*2], ymm14
        vmovups [r15 + rbp], ymm15
        add     r12, 32
        lea     r13, [r13 + r9*8]
        sub     rbx, 8
        jnz     .Ltr8_tile
        /* the next 8 rows of src: the next 8 columns of dst */
        lea     rax, [rax + rcx*8]
        add     r11, 32
        sub     r10, 8
        jnz     .Ltr8_rows
        vzeroupper
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbp
        pop     rbx
.Ltr8_ret:
        ret
PG_ENDFUNC(pg_f32_transpose_avx2)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

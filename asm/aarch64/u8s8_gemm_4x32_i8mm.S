/* u8s8_gemm_4x32_i8mm.S - one 4x32 tile of C = epilogue(A_u8 . B_s8):
 * AArch64 USMMLA (FEAT_I8MM).
 *
 * USMMLA Vd.4s += Vn (2 x 8 unsigned bytes) . Vm (2 x 8 signed bytes)^T:
 * a 2x2 block of int32, 32 products, twice SDOT's.  Vn holds 8 k of two A
 * rows (row 2p in the low, row 2p+1 in the high doubleword), Vm 8 k of two
 * B columns; the block's lanes are (r0 c0, r0 c1, r1 c0, r1 c1).  The u8
 * activations go in unsigned as they are (no a - 128 shift as in the SDOT
 * kernel).
 *
 * gemm_u8s8's packed layout as it is (groups of 4 k x 32 columns, column j
 * at 4 j): the 16-byte loads of groups g and g + 1 at the same columns
 * (j .. j+3, 4 k each) zipped by 32-bit lanes (zip1 / zip2 .4s) are the
 * Vm of columns (j, j+1) and (j+2, j+3) over 8 k.  The tile runs as two
 * halves of 16 columns (the second only when nr > 16), each over the
 * whole k: 16 accumulators v0-v15 (row pair 0: v0-v7, row pair 1:
 * v8-v15, column pair c in v[c] / v[8 + c]), A in v24 / v25, B in v16-v23
 * and its zipped pairs in v26 / v27.  k % 8 = 4 (k is a multiple of 4)
 * ends with one group against zeros.  A row past mr aliases row 0.
 *
 * The blocks are unzipped (zip1 / zip2 .2d of two column pairs: one row's
 * 4 columns each) into a 4 x 32 int32 buffer on the stack, and the
 * epilogue (gemm_u8s8.h) runs from there one element at a time in scalar
 * code, the C reference's operations in its order (bit exact): zero
 * points, then I32, or F32 (+ bias), or rounded to nearest even, clamped
 * and stored as U8 / S8 (the SDOT kernel's epilogue without its + 128
 * col_sum).
 *
 * void pg_u8s8_gemm_4x32_i8mm(size_t mr, size_t nr, size_t k, const uint8_t *a,
 *          x0        x1        x2        x3
 *          size_t lda, const int8_t *b, void *c, size_t ldc, const pg_u8s8_epilogue *ep)
 *          x4          x5               x6       x7          [sp]                      */
#include "pg_asm.h"

#define BUF 512

.macro ZERO16
        movi    v0.4s, #0
        movi    v1.4s, #0
        movi    v2.4s, #0
        movi    v3.4s, #0
        movi    v4.4s, #0
        movi    v5.4s, #0
        movi    v6.4s, #0
        movi    v7.4s, #0
        movi    v8.4s, #0
        movi    v9.4s, #0
        movi    v10.4s, #0
        movi    v11.4s, #0
        movi    v12.4s, #0
        movi    v13.4s, #0
        movi    v14.4s, #0
        movi    v15.4s, #0
.endm

/* columns 4q .. 4q+3 of the half: g in \lo, g + 1 in \hi */
.macro QUAD lo, hi, c0, c1, d0, d1
        zip1    v26.4s, \lo\().4s, \hi\().4s
        zip2    v27.4s, \lo\().4s, \hi\().4s
        usmmla  \c0\().4s, v24.16b, v26.16b
        usmmla  \d0\().4s, v25.16b, v26.16b
        usmmla  \c1\().4s, v24.16b, v27.16b
        usmmla  \d1\().4s, v25.16b, v27.16b
.endm

.macro MMLA16
        QUAD    v16, v20, v0, v1, v8, v9
        QUAD    v17, v21, v2, v3, v10, v11
        QUAD    v18, v22, v4, v5, v12, v13
        QUAD    v19, v23, v6, v7, v14, v15
.endm

/* the blocks of column pairs \a, \b (rows 2p, 2p+1) to the buffer rows at
 * x19 (row 2p) and x19 + 128, byte offset \off in the row */
.macro UNZIP a, b, off
        zip1    v26.2d, \a\().2d, \b\().2d
        zip2    v27.2d, \a\().2d, \b\().2d
        str     q26, [x19, #\off]
        str     q27, [x19, #(\off + 128)]
.endm

/* one half: x17 the B start of the half, x19 the buffer at its columns */
.macro HALF
        mov     x13, x9
        mov     x14, x10
        mov     x15, x11
        mov     x16, x12
        ZERO16
        lsr     x20, x2, #3
        cbz     x20, 2f
1:      ldr     d24, [x13], #8
        ld1     {v24.d}[1], [x14], #8
        ldr     d25, [x15], #8
        ld1     {v25.d}[1], [x16], #8
        ldp     q16, q17, [x17]
        ldp     q18, q19, [x17, #32]
        ldp     q20, q21, [x17, #128]
        ldp     q22, q23, [x17, #160]
        add     x17, x17, #256
        MMLA16
        subs    x20, x20, #1
        b.ne    1b
2:      tbz     x2, #2, 3f
        movi    v24.4s, #0
        movi    v25.4s, #0
        ld1     {v24.s}[0], [x13]
        ld1     {v24.s}[2], [x14]
        ld1     {v25.s}[0], [x15]
        ld1     {v25.s}[2], [x16]
        ldp     q16, q17, [x17]
        ldp     q18, q19, [x17, #32]
        movi    v20.4s, #0
        movi    v21.4s, #0
        movi    v22.4s, #0
        movi    v23.4s, #0
        MMLA16
3:      UNZIP   v0, v1, 0
        UNZIP   v2, v3, 16
        UNZIP   v4, v5, 32
        UNZIP   v6, v7, 48
        add     x19, x19, #256
        UNZIP   v8, v9, 0
        UNZIP   v10, v11, 16
        UNZIP   v12, v13, 32
        UNZIP   v14, v15, 48
.endm

        .arch   armv8.2-a+i8mm

        .text
PG_FUNC(pg_u8s8_gemm_4x32_i8mm)
        ldr     x8, [sp]
        stp     x19, x20, [sp, #-16]!
        stp     d8, d9, [sp, #-64]!
        stp     d10, d11, [sp, #16]
        stp     d12, d13, [sp, #32]
        stp     d14, d15, [sp, #48]
        sub     sp, sp, #BUF
        /* row pointers x9-x12; a row past mr is row 0 */
        mov     x9, x3
        add     x10, x3, x4
        cmp     x0, #2
        csel    x10, x10, x9, hs
        add     x11, x10, x4
        cmp     x0, #3
        csel    x11, x11, x9, hs
        add     x12, x11, x4
        cmp     x0, #4
        csel    x12, x12, x9, hs
        mov     x17, x5
        mov     x19, sp
        HALF
        cmp     x1, #16
        b.ls    4f
        add     x17, x5, #64
        add     x19, sp, #64
        HALF
4:
        /* the epilogue: x9 a_zero, x10 a_scale, x2 row_corr (each walks a
         * row at a time), x11 col_sum, x13 b_scale, x14 bias, x15 b_zero,
         * s20 out_inv_scale, s21 / s22 +-1e9, w3 out_zero, w4 mode, w5 / w16
         * the clamp bounds; x12 the buffer row, x8 the column, x0 rows left,
         * w17 w19 w20 temporaries */
        ldp     x9, x10, [x8]
        ldp     x11, x13, [x8, #16]
        ldp     x14, x15, [x8, #32]
        ldr     x2, [x8, #48]
        ldr     s20, [x8, #56]
        ldr     w3, [x8, #60]
        ldr     w4, [x8, #64]
        movz    w5, #0x4e6e, lsl #16
        movk    w5, #0x6b28             /* 1e9f */
        fmov    s21, w5
        fneg    s22, s21
        mov     w5, #0                  /* U8 bounds */
        mov     w16, #255
        cmp     w4, #3
        b.ne    5f
        mov     w5, #-128               /* S8 bounds */
        mov     w16, #127
5:      mov     x12, sp
        cmp     w4, #2                  /* ldc in bytes: 1 for U8 / S8, else 4 */
        b.hs    .Lrow
        lsl     x7, x7, #2
.Lrow:  mov     x8, #0
.Lcol:  ldr     w17, [x12, x8, lsl #2]
        ldr     w19, [x11, x8, lsl #2]
        ldr     w20, [x9]
        msub    w17, w20, w19, w17      /* - a_zero col_sum */
        cbz     x15, 7f
        ldr     w20, [x15, x8, lsl #2]
        ldr     w19, [x2]
        msub    w17, w20, w19, w17      /* - b_zero row_corr */
7:      cmp     w4, #1
        b.ne    8f
        str     w17, [x6, x8, lsl #2]
        b       .Lnext
8:      ldr     s1, [x10]
        ldr     s2, [x13, x8, lsl #2]
        fmul    s1, s1, s2
        scvtf   s0, w17
        fmul    s0, s0, s1
        cbz     x14, 9f
        ldr     s2, [x14, x8, lsl #2]
        fadd    s0, s0, s2
9:      cbnz    w4, 10f
        str     s0, [x6, x8, lsl #2]
        b       .Lnext
10:     fmul    s0, s0, s20
        frintn  s0, s0
        fcmp    s0, s21
        fcsel   s0, s0, s21, ls
        fcmp    s0, s22
        fcsel   s0, s22, s0, lt
        fcvtzs  w17, s0
        add     w17, w17, w3
        cmp     w17, w5
        csel    w17, w17, w5, gt
        cmp     w17, w16
        csel    w17, w17, w16, lt
        strb    w17, [x6, x8]
.Lnext: add     x8, x8, #1
        cmp     x8, x1
        b.lo    .Lcol
        add     x12, x12, #128
        add     x6, x6, x7
        add     x9, x9, #4
        add     x10, x10, #4
        add     x2, x2, #4
        subs    x0, x0, #1
        b.ne    .Lrow
        add     sp, sp, #BUF
        ldp     d10, d11, [sp, #16]
        ldp     d12, d13, [sp, #32]
        ldp     d14, d15, [sp, #48]
        ldp     d8, d9, [sp], #64
        ldp     x19, x20, [sp], #16
        ret
PG_ENDFUNC(pg_u8s8_gemm_4x32_i8mm)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

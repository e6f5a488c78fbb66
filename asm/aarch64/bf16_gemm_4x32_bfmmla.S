/* bf16_gemm_4x32_bfmmla.S - one 4x32 tile of C = A * B (+C) (+bias) (act),
 * A and B in bf16, fp32 accumulation: AArch64 BFMMLA (FEAT_BF16).
 *
 * BFMMLA Vd.4s += Vn (2 x 4 bf16) . Vm (2 x 4 bf16)^T: a 2x2 block of
 * fp32, 16 products, twice BFDOT's.  Vn holds 4 k of two A rows (row 2p
 * in the low, row 2p+1 in the high doubleword), Vm 4 k of two B columns;
 * the block's lanes are (r0 c0, r0 c1, r1 c0, r1 c1).
 *
 * gemm_bf16's packed layout as it is (pair rows of 32 columns x 2 bf16,
 * column j at element 2 j): the 16-byte loads of pair rows g and g + 1
 * at the same columns (j .. j+3, 2 k each) zipped by 32-bit lanes (zip1 /
 * zip2 .4s) are the Vm of columns (j, j+1) and (j+2, j+3) over 4 k.  The
 * tile runs as two halves of 16 columns (the second only when nr > 16),
 * each over the whole k: 16 accumulators v0-v15 (row pair 0: v0-v7, row
 * pair 1: v8-v15, column pair c in v[c] / v[8 + c]), A in v24 / v25, B in
 * v16-v23 and its zipped pairs in v26 / v27.  k is a multiple of 4 (the
 * driver passes the padded kp, a multiple of 32).  A row past mr aliases
 * row 0.
 *
 * The blocks are unzipped (zip1 / zip2 .2d of two column pairs: one row's
 * 4 columns each) into a 4 x 32 fp32 buffer on the stack, and the
 * epilogue runs from there one element at a time in scalar code, the BFDOT
 * kernel's (bf16_gemm_2x32_neon.S): + C (accumulate flag), + bias, ReLU or
 * GELU, then a store of the nr columns.
 *
 * void pg_bf16_gemm_4x32_bfmmla(size_t mr, size_t nr, size_t k, const uint16_t *a,
 *          x0        x1        x2        x3
 *          size_t lda, const uint16_t *b, float *c, size_t ldc, const pg_sgemm_epilogue *ep)
 *          x4          x5                 x6        x7          [sp]                      */
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

/* columns 4q .. 4q+3 of the half: pair row g in \lo, g + 1 in \hi */
.macro QUAD lo, hi, c0, c1, d0, d1
        zip1    v26.4s, \lo\().4s, \hi\().4s
        zip2    v27.4s, \lo\().4s, \hi\().4s
        bfmmla  \c0\().4s, v24.8h, v26.8h
        bfmmla  \d0\().4s, v25.8h, v26.8h
        bfmmla  \c1\().4s, v24.8h, v27.8h
        bfmmla  \d1\().4s, v25.8h, v27.8h
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
        lsr     x20, x2, #2
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
        QUAD    v16, v20, v0, v1, v8, v9
        QUAD    v17, v21, v2, v3, v10, v11
        QUAD    v18, v22, v4, v5, v12, v13
        QUAD    v19, v23, v6, v7, v14, v15
        subs    x20, x20, #1
        b.ne    1b
2:      UNZIP   v0, v1, 0
        UNZIP   v2, v3, 16
        UNZIP   v4, v5, 32
        UNZIP   v6, v7, 48
        add     x19, x19, #256
        UNZIP   v8, v9, 0
        UNZIP   v10, v11, 16
        UNZIP   v12, v13, 32
        UNZIP   v14, v15, 48
.endm

        .arch   armv8.2-a+bf16

/* s0 = gelu(s0); constants in s16-s31 (see below), temporaries s2-s4 */
.macro GELU
        fmul    s2, s0, s16
        fminnm  s2, s2, s17
        fmaxnm  s2, s2, s18
        fmul    s3, s2, s2
        fmov    s4, s27
        fmadd   s4, s4, s3, s26
        fmadd   s4, s4, s3, s25
        fmadd   s4, s4, s3, s24
        fmadd   s4, s4, s3, s23
        fmadd   s4, s4, s3, s22
        fmadd   s4, s4, s3, s21
        fmov    s5, s31
        fmadd   s5, s5, s3, s30
        fmadd   s5, s5, s3, s29
        fmadd   s5, s5, s3, s28
        fmadd   s5, s5, s3, s20
        fmul    s4, s4, s2
        fdiv    s4, s4, s5
        fmul    s0, s0, s19
        fmadd   s0, s0, s4, s0
.endm

        .text
PG_FUNC(pg_bf16_gemm_4x32_bfmmla)
        ldr     x8, [sp]
        stp     x19, x20, [sp, #-16]!
        stp     d8, d9, [sp, #-64]!
        stp     d10, d11, [sp, #16]
        stp     d12, d13, [sp, #32]
        stp     d14, d15, [sp, #48]
        sub     sp, sp, #BUF
        /* row pointers x9-x12 (lda in bytes); a row past mr is row 0 */
        lsl     x4, x4, #1
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
        adrp    x9, gelu_rsqrt2
        add     x9, x9, :lo12:gelu_rsqrt2
        ldp     s16, s17, [x9]
        ldp     s18, s19, [x9, #8]
        ldp     s20, s21, [x9, #16]
        ldp     s22, s23, [x9, #24]
        ldp     s24, s25, [x9, #32]
        ldp     s26, s27, [x9, #40]
        ldp     s28, s29, [x9, #48]
        ldp     s30, s31, [x9, #56]
        movi    d7, #0
        ldr     x13, [x8]               /* bias */
        ldr     w14, [x8, #8]           /* act */
        ldr     w15, [x8, #12]          /* flags */
        lsl     x7, x7, #2
        mov     x12, sp
        mov     x16, #0
.Lrow:  mov     x17, #0
.Lcol:  ldr     s0, [x12, x17, lsl #2]
        tbz     w15, #0, 3f
        ldr     s1, [x6, x17, lsl #2]
        fadd    s0, s0, s1
3:      cbz     x13, 4f
        ldr     s1, [x13, x17, lsl #2]
        fadd    s0, s0, s1
4:      cmp     w14, #1
        b.ne    5f
        fcmp    s0, #0.0
        fcsel   s0, s0, s7, gt
        b       6f
5:      cmp     w14, #2
        b.ne    6f
        GELU
6:      str     s0, [x6, x17, lsl #2]
        add     x17, x17, #1
        cmp     x17, x1
        b.lo    .Lcol
        add     x12, x12, #128
        add     x6, x6, x7
        add     x16, x16, #1
        cmp     x16, x0
        b.lo    .Lrow
        add     sp, sp, #BUF
        ldp     d10, d11, [sp, #16]
        ldp     d12, d13, [sp, #32]
        ldp     d14, d15, [sp, #48]
        ldp     d8, d9, [sp], #64
        ldp     x19, x20, [sp], #16
        ret
PG_ENDFUNC(pg_bf16_gemm_4x32_bfmmla)

/* the GELU constants, in the order loaded into s16-s31 */
        .section .rodata
        .p2align 2
gelu_rsqrt2:    .float 0.70710678118654752
gelu_clamp:     .float 3.925
gelu_nclamp:    .float -3.925
gelu_half:      .float 0.5
gelu_one:       .float 1.0
gelu_p0:        .float 1.128379107e+00
gelu_p1:        .float 2.003775686e-01
gelu_p2:        .float 5.063291639e-02
gelu_p3:        .float 3.719719360e-03
gelu_p4:        .float 1.421845227e-04
gelu_p5:        .float -1.956643018e-06
gelu_p6:        .float 1.986926357e-08
gelu_q1:        .float 5.109116435e-01
gelu_q2:        .float 1.151851714e-01
gelu_q3:        .float 1.439111866e-02
gelu_q4:        .float 9.600991616e-04

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

/* u8s8_gemm_2x32_dotprod.S - one 2x32 tile of C = epilogue(A_u8 . B_s8):
 * AArch64 SDOT (FEAT_DotProd).
 *
 * SDOT multiplies signed bytes only, so the u8 activations are shifted to
 * s8 (a ^ 0x80 = a - 128) and the epilogue adds 128 col_sum back:
 * sum a b = sum (a - 128) b + 128 sum b, exact in int32.  The 16
 * accumulators v0-v7 / v8-v15 hold rows 0 / 1 (32 int32 lanes each); a
 * group of 16 k loads 16 bytes of each A row (v24, v25) and, per 4 k, one
 * 128-byte group of the packed panel (v16-v23: 32 columns x 4 bytes): 16
 * SDOT by element.  The k % 16 left (k is a multiple of 4) go 4 at a time.
 * gemm_u8s8's packed layout as it is; a row past mr aliases row 0.  The
 * epilogue (gemm_u8s8.h) runs from a buffer on the stack, one element at a
 * time in scalar code, the C reference's operations in its order (bit
 * exact): zero points, then I32, or F32 (+ bias), or rounded to nearest
 * even, clamped and stored as U8 / S8.
 *
 * void pg_u8s8_gemm_2x32_dotprod(size_t mr, size_t nr, size_t k, const uint8_t *a,
 *          x0        x1        x2        x3
 *          size_t lda, const int8_t *b, void *c, size_t ldc, const pg_u8s8_epilogue *ep)
 *          x4          x5               x6       x7          [sp]                      */
#include "pg_asm.h"

/* callee-saved d8-d15 (the accumulators v8-v15) and a 256-byte tile buffer */
.macro PROLOGUE
        stp     d8, d9, [sp, #-64]!
        stp     d10, d11, [sp, #16]
        stp     d12, d13, [sp, #32]
        stp     d14, d15, [sp, #48]
        sub     sp, sp, #256
.endm
.macro EPILOGUE_RET
        add     sp, sp, #256
        ldp     d10, d11, [sp, #16]
        ldp     d12, d13, [sp, #32]
        ldp     d14, d15, [sp, #48]
        ldp     d8, d9, [sp], #64
        ret
.endm
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
/* the two rows' 32 lanes to the buffer at sp (row r at sp + 128 r) */
.macro STORE16
        mov     x12, sp
        st1     {v0.4s-v3.4s}, [x12], #64
        st1     {v4.4s-v7.4s}, [x12], #64
        st1     {v8.4s-v11.4s}, [x12], #64
        st1     {v12.4s-v15.4s}, [x12], #64
.endm
/* one group (k pair / k quad) u of A lanes a0 (v24), a1 (v25) against the
 * 128-byte panel row at x5 (post-incremented) */
.macro GROUP op, u
        ld1     {v16.4s-v19.4s}, [x5], #64
        ld1     {v20.4s-v23.4s}, [x5], #64
        \op     v0.4s, v16.16b, v24.4b[\u]
        \op     v1.4s, v17.16b, v24.4b[\u]
        \op     v2.4s, v18.16b, v24.4b[\u]
        \op     v3.4s, v19.16b, v24.4b[\u]
        \op     v4.4s, v20.16b, v24.4b[\u]
        \op     v5.4s, v21.16b, v24.4b[\u]
        \op     v6.4s, v22.16b, v24.4b[\u]
        \op     v7.4s, v23.16b, v24.4b[\u]
        \op     v8.4s, v16.16b, v25.4b[\u]
        \op     v9.4s, v17.16b, v25.4b[\u]
        \op     v10.4s, v18.16b, v25.4b[\u]
        \op     v11.4s, v19.16b, v25.4b[\u]
        \op     v12.4s, v20.16b, v25.4b[\u]
        \op     v13.4s, v21.16b, v25.4b[\u]
        \op     v14.4s, v22.16b, v25.4b[\u]
        \op     v15.4s, v23.16b, v25.4b[\u]
.endm

        .arch   armv8.2-a+dotprod

        .text
PG_FUNC(pg_u8s8_gemm_2x32_dotprod)
        ldr     x8, [sp]
        stp     x19, x20, [sp, #-16]!
        PROLOGUE
        mov     x9, x3
        add     x10, x3, x4
        cmp     x0, #2
        csel    x10, x10, x9, hs
        ZERO16
        movi    v26.16b, #0x80
        lsr     x11, x2, #4
        cbz     x11, 2f
1:      ldr     q24, [x9], #16
        ldr     q25, [x10], #16
        eor     v24.16b, v24.16b, v26.16b
        eor     v25.16b, v25.16b, v26.16b
        GROUP   sdot, 0
        GROUP   sdot, 1
        GROUP   sdot, 2
        GROUP   sdot, 3
        subs    x11, x11, #1
        b.ne    1b
2:      and     x11, x2, #15
        lsr     x11, x11, #2
        cbz     x11, 4f
3:      ld1     {v24.s}[0], [x9], #4
        ld1     {v25.s}[0], [x10], #4
        eor     v24.16b, v24.16b, v26.16b
        eor     v25.16b, v25.16b, v26.16b
        GROUP   sdot, 0
        subs    x11, x11, #1
        b.ne    3b
4:      STORE16
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
        add     w17, w17, w19, lsl #7   /* + 128 col_sum: the u8 product */
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
        add     sp, sp, #256
        ldp     d10, d11, [sp, #16]
        ldp     d12, d13, [sp, #32]
        ldp     d14, d15, [sp, #48]
        ldp     d8, d9, [sp], #64
        ldp     x19, x20, [sp], #16
        ret
PG_ENDFUNC(pg_u8s8_gemm_2x32_dotprod)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

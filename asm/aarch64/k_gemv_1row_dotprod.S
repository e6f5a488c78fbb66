/* k_gemv_1row_dotprod.S - quantised GEMV y[n] = dot(W row n, x) for q4_K,
 * q5_K and q6_K weights with q8_K activations (kquant.h has the layouts), NEON
 * with the dotprod extension (sdot).
 *
 * One row at a time, its super-blocks in order; each x super-block's 256
 * int8 sit in v16-v31 (four ld1 of 64 bytes, L1 hits after the first
 * row).  Per super-block, in registers only:
 *   q4_K: the twelve scale bytes unpacked in three GPR words (the low 6
 *     bits, or a nibble with the top 2 bits of another byte: sc0-3,
 *     sc4-7, m0-3, m4-7), widened to int32 lanes; chunk c's 32 bytes give
 *     sub-block 2c (low nibbles) and 2c + 1 (high): two sdot each against
 *     x in order, then mla by the sub-block's scale (by element) into the
 *     int32 sum; the minima m . (x's bsum pairs) by smull / smlal2;
 *   q6_K: ql nibbles with qh's two bits inserted above them (sli), minus
 *     32: signed -32..31, one sdot per 16 elements and mla by its int8
 *     scale;
 *   the int32 sums (exact: kquant.h) to fp32, times d_w d_x (and dmin d_x
 *   for the minima) into the row's sum.
 * Only the fp32 summation order differs from the C reference.
 *
 * void pg_q<4|5|6>_K_q8_K_gemv_1row_dotprod(size_t N, size_t K, const void *W,
 *                                           x0        x1        x2
 *         size_t ldw, const void *x, float *y)
 *         x3          x4             x5
 *
 * Registers: x0 rows left, x1 super-blocks per row, x2 the row, x3 ldw,
 * x4 x, x5 y, x6 the row walk, x7 the x walk, x8 super-blocks left,
 * x9-x15 scratch; v0 the row's sum (lane 0), v1 d_x (q4_K; q6_K reloads
 * it), v2 x's bsum pairs (q4_K), v5 the int32 sum, v6-v9 the scales as
 * int32, v15 0x0f bytes, v12 / v13 3s and 32s (q6_K), the rest scratch
 * (d8-d15 saved); v16-v31 x's quants.
 */
#include "pg_asm.h"

        .arch   armv8.2-a+dotprod

.macro LOADX
        ldr     s1, [x7]
        add     x9, x7, #4
        ld1     {v16.16b, v17.16b, v18.16b, v19.16b}, [x9], #64
        ld1     {v20.16b, v21.16b, v22.16b, v23.16b}, [x9], #64
        ld1     {v24.16b, v25.16b, v26.16b, v27.16b}, [x9], #64
        ld1     {v28.16b, v29.16b, v30.16b, v31.16b}, [x9], #64
        ldp     q2, q3, [x9]
.endm

/* dst = bit b of each byte of src, at bit 4 (the rest 0) */
.macro FIFTH dst, src, b
  .if \b == 0
        shl     \dst\().16b, \src\().16b, #7
  .else
        ushr    \dst\().16b, \src\().16b, #\b
        shl     \dst\().16b, \dst\().16b, #7
  .endif
        ushr    \dst\().16b, \dst\().16b, #3
.endm

/* q4_K / q5_K (five = 1) chunk c: sub-blocks 2c, 2c + 1 against x
 * v(16+4c) .. v(19+4c); q5_K's qh in v3 (bytes 0-15) and v2 (16-31) */
.macro K4CHUNK c, x0, x1, x2, x3, sclo, schi, five=0
  .if \five
        ldp     q8, q9, [x6, #48 + 32*\c]
  .else
        ldp     q8, q9, [x6, #16 + 32*\c]
  .endif
        and     v10.16b, v8.16b, v15.16b
        and     v11.16b, v9.16b, v15.16b
        ushr    v12.16b, v8.16b, #4
        ushr    v13.16b, v9.16b, #4
  .if \five
        /* bit 2c (low nibbles) / 2c + 1 (high) of qh to bit 4, alone */
        FIFTH   v8, v3, 2*\c
        FIFTH   v9, v2, 2*\c
        orr     v10.16b, v10.16b, v8.16b
        orr     v11.16b, v11.16b, v9.16b
        FIFTH   v8, v3, 2*\c + 1
        FIFTH   v9, v2, 2*\c + 1
        orr     v12.16b, v12.16b, v8.16b
        orr     v13.16b, v13.16b, v9.16b
  .endif
        movi    v14.4s, #0
        movi    v8.4s, #0
        sdot    v14.4s, v10.16b, \x0\().16b
        sdot    v14.4s, v11.16b, \x1\().16b
        sdot    v8.4s, v12.16b, \x2\().16b
        sdot    v8.4s, v13.16b, \x3\().16b
        mla     v5.4s, v14.4s, \sclo
        mla     v5.4s, v8.4s, \schi
.endm

/* q6_K: 16 elements (ql bytes at lq, low or high nibble; qh bits at shift
 * sh of vh) against x, scale sc: v5 += sc * sdot */
.macro K6PART lq, high, vh, sh, xr, sc
  .if \high
        ushr    v10.16b, \lq\().16b, #4
  .else
        and     v10.16b, \lq\().16b, v15.16b
  .endif
  .if \sh == 6
        ushr    v11.16b, \vh\().16b, #6
  .elseif \sh == 0
        and     v11.16b, \vh\().16b, v12.16b
  .else
        ushr    v11.16b, \vh\().16b, #\sh
        and     v11.16b, v11.16b, v12.16b
  .endif
        sli     v10.16b, v11.16b, #4
        sub     v10.16b, v10.16b, v13.16b
        movi    v14.4s, #0
        sdot    v14.4s, v10.16b, \xr\().16b
        mla     v5.4s, v14.4s, \sc
.endm

.macro PROLOGUE
        stp     d8, d9, [sp, #-64]!
        stp     d10, d11, [sp, #16]
        stp     d12, d13, [sp, #32]
        stp     d14, d15, [sp, #48]
        lsr     x1, x1, #8
        movi    v15.16b, #0x0f
.endm

.macro EPILOGUE
        ldp     d10, d11, [sp, #16]
        ldp     d12, d13, [sp, #32]
        ldp     d14, d15, [sp, #48]
        ldp     d8, d9, [sp], #64
        ret
.endm

        .text
.macro K45 name, five
PG_FUNC(\name)
        PROLOGUE
1:      cbz     x0, 9f
        movi    v0.4s, #0
        mov     x6, x2
        mov     x7, x4
        mov     x8, x1
        cbz     x8, 4f
3:      LOADX
        addp    v2.8h, v2.8h, v3.8h            /* bsum pairs: one per sub-block */
        ldp     w9, w10, [x6, #4]
        ldr     w11, [x6, #12]
        and     w12, w9, #0x3f3f3f3f           /* sc0-3 */
        and     w13, w10, #0x3f3f3f3f          /* m0-3 */
        and     w14, w11, #0x0f0f0f0f
        lsr     w15, w9, #6
        and     w15, w15, #0x03030303
        orr     w14, w14, w15, lsl #4          /* sc4-7 */
        lsr     w15, w11, #4
        and     w15, w15, #0x0f0f0f0f
        lsr     w9, w10, #6
        and     w9, w9, #0x03030303
        orr     w15, w15, w9, lsl #4           /* m4-7 */
        fmov    s6, w12
        mov     v6.s[1], w14
        uxtl    v6.8h, v6.8b
        uxtl2   v7.4s, v6.8h                   /* sc4-7 */
        uxtl    v6.4s, v6.4h                   /* sc0-3 */
        fmov    s3, w13
        mov     v3.s[1], w15
        uxtl    v3.8h, v3.8b                   /* m0-7 as int16 */
        smull   v4.4s, v3.4h, v2.4h
        smlal2  v4.4s, v3.8h, v2.8h            /* m . bsum pairs, 4 lanes */
        movi    v5.4s, #0
  .if \five
        ldp     q3, q2, [x6, #16]              /* qh */
  .endif
        K4CHUNK 0, v16, v17, v18, v19, v6.s[0], v6.s[1], \five
        K4CHUNK 1, v20, v21, v22, v23, v6.s[2], v6.s[3], \five
        K4CHUNK 2, v24, v25, v26, v27, v7.s[0], v7.s[1], \five
        K4CHUNK 3, v28, v29, v30, v31, v7.s[2], v7.s[3], \five
        addv    s5, v5.4s
        addv    s4, v4.4s
        scvtf   s5, s5
        scvtf   s4, s4
        ldr     s3, [x6]
        fcvtl   v3.4s, v3.4h                   /* [d, dmin] */
        fmul    v3.4s, v3.4s, v1.s[0]
        fmla    s0, s5, v3.s[0]
        fmls    s0, s4, v3.s[1]
  .if \five
        add     x6, x6, #176
  .else
        add     x6, x6, #144
  .endif
        add     x7, x7, #292
        subs    x8, x8, #1
        b.ne    3b
4:      str     s0, [x5], #4
        add     x2, x2, x3
        sub     x0, x0, #1
        b       1b
9:      EPILOGUE
PG_ENDFUNC(\name)
.endm

        .text
K45 pg_q4_K_q8_K_gemv_1row_dotprod, 0
K45 pg_q5_K_q8_K_gemv_1row_dotprod, 1


PG_FUNC(pg_q6_K_q8_K_gemv_1row_dotprod)
        PROLOGUE
        movi    v12.16b, #3
        movi    v13.16b, #32
1:      cbz     x0, 9f
        movi    v0.4s, #0
        mov     x6, x2
        mov     x7, x4
        mov     x8, x1
        cbz     x8, 4f
3:      LOADX
        ldr     q3, [x6, #192]                 /* 16 int8 scales */
        sxtl    v4.8h, v3.8b
        sxtl2   v3.8h, v3.16b
        sxtl2   v7.4s, v4.8h                   /* sc4-7 */
        sxtl    v6.4s, v4.4h                   /* sc0-3 */
        sxtl2   v9.4s, v3.8h                   /* sc12-15 */
        sxtl    v8.4s, v3.4h                   /* sc8-11 */
        movi    v5.4s, #0
        ldp     q3, q4, [x6, #128]             /* qh of half 0 */
        ldp     q1, q2, [x6, #0]              /* ql of groups 0, 2 */
        K6PART  v1, 0, v3, 0, v16, v6.s[0]
        K6PART  v2, 0, v4, 0, v17, v6.s[1]
        K6PART  v1, 1, v3, 4, v20, v7.s[0]
        K6PART  v2, 1, v4, 4, v21, v7.s[1]
        ldp     q1, q2, [x6, #32]              /* ql of groups 1, 3 */
        K6PART  v1, 0, v3, 2, v18, v6.s[2]
        K6PART  v2, 0, v4, 2, v19, v6.s[3]
        K6PART  v1, 1, v3, 6, v22, v7.s[2]
        K6PART  v2, 1, v4, 6, v23, v7.s[3]
        ldp     q3, q4, [x6, #160]             /* qh of half 1 */
        ldp     q1, q2, [x6, #64]              /* ql of groups 0, 2 */
        K6PART  v1, 0, v3, 0, v24, v8.s[0]
        K6PART  v2, 0, v4, 0, v25, v8.s[1]
        K6PART  v1, 1, v3, 4, v28, v9.s[0]
        K6PART  v2, 1, v4, 4, v29, v9.s[1]
        ldp     q1, q2, [x6, #96]              /* ql of groups 1, 3 */
        K6PART  v1, 0, v3, 2, v26, v8.s[2]
        K6PART  v2, 0, v4, 2, v27, v8.s[3]
        K6PART  v1, 1, v3, 6, v30, v9.s[2]
        K6PART  v2, 1, v4, 6, v31, v9.s[3]
        addv    s5, v5.4s
        scvtf   s5, s5
        ldr     h3, [x6, #208]
        fcvt    s3, h3
        ldr     s1, [x7]
        fmul    s3, s3, s1
        fmla    s0, s5, v3.s[0]
        add     x6, x6, #210
        add     x7, x7, #292
        subs    x8, x8, #1
        b.ne    3b
4:      str     s0, [x5], #4
        add     x2, x2, x3
        sub     x0, x0, #1
        b       1b
9:      EPILOGUE
PG_ENDFUNC(pg_q6_K_q8_K_gemv_1row_dotprod)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

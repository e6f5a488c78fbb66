/* q_gemv_4row_neon.S - quantised GEMV y[n] = dot(W row n, x), W rows of
 * q4_0 / q4_1 / q8_0 blocks, x one row of q8_0 / q8_1 blocks (qgemv.h).
 * One macro body makes six routines: three weight types, each as plain
 * NEON (smull / smlal2 / sadalp) and as dotprod (sdot).
 *
 * Four rows of W go together; each x block (its scale and 32 int8) is
 * loaded once for the four.  Per row and block, in registers only:
 *   q4_*: 16 bytes of nibbles -> low nibbles (elements 0-15, and) and high
 *         nibbles (16-31, ushr 4); q4_0 subtracts 8, so every weight is a
 *         signed byte (q4_1's 0..15 already are);
 *   q8_0: the 32 bytes as they are;
 *   NEON: int16 products of byte pairs (smull + smlal2: two products of at
 *         most 128 * 127 each, below 2^15 since x is never -128: the
 *         activation quantisers give |q| <= 127; w may be any byte), widened and summed into 4
 *         int32 by saddlp / sadalp;
 *   dotprod: two sdot into 4 int32;
 *   the int32 sums are exact (far below 2^24, so scvtf is exact too), and
 *   are scaled by d_w * d_x (f16 widened by fcvt / fcvtl, one fp32
 *   product) into a 4-lane fp32 sum per row;
 *   q4_1 adds m_w * s_x: the scales convert as pairs [d_w, m_w] x
 *   [d_x, s_x], and lane 1 of a 2-lane sum per row collects it.
 * Three faddp fold the four rows into [y0, y1, y2, y3]; the last N % 4
 * rows run the same code with the missing rows aimed at row 0 and store
 * only their own lanes.  Only the fp32 summation order differs from the C
 * reference.
 *
 * void pg_q<w>_q8_<a>_gemv_4row_{neon,dotprod}(size_t N, size_t K,
 *                                              x0        x1
 *         const void *W, size_t ldw, const void *x, float *y)
 *         x2             x3          x4             x5
 *
 * Registers: x0 rows left, x1 blocks per row, x2 row 0 of the group,
 * x3 ldw, x4 x, x5 y; x8-x11 the four row walks, x12 the x walk, x13
 * blocks left.  v0-v1 x, v2 x's scale, v3 0x0f bytes, v4 8s, v16-v23
 * scratch, v24-v27 the row sums, v28-v31 q4_1's offset sums.
 */
#include "pg_asm.h"

        .arch   armv8.2-a+dotprod

#define T_Q4_0 0
#define T_Q4_1 1
#define T_Q8_0 8

/* v\dst.4s = int32 sums of v\w0 * v0 and v\w1 * v1 (signed bytes). */
.macro IDOT dot, dst, w0, w1, t0, t1
.if \dot
        movi    v\dst\().4s, #0
        sdot    v\dst\().4s, v\w0\().16b, v0.16b
        sdot    v\dst\().4s, v\w1\().16b, v1.16b
.else
        smull   v\t0\().8h, v\w0\().8b, v0.8b
        smlal2  v\t0\().8h, v\w0\().16b, v0.16b
        smull   v\t1\().8h, v\w1\().8b, v1.8b
        smlal2  v\t1\().8h, v\w1\().16b, v1.16b
        saddlp  v\dst\().4s, v\t0\().8h
        sadalp  v\dst\().4s, v\t1\().8h
.endif
.endm

/* One row's block at [wp] (post-incremented): acc += d_w d_x * sums. */
.macro ROW dot, t, wp, acc, accm
.if \t == T_Q4_1
        ldr     s16, [\wp], #4
        fcvtl   v16.4s, v16.4h
        fmul    v16.2s, v16.2s, v2.2s
        fadd    v\accm\().2s, v\accm\().2s, v16.2s
.else
        ldr     h16, [\wp], #2
        fcvt    s16, h16
        fmul    s16, s16, s2
.endif
.if \t == T_Q8_0
        ld1     {v17.16b, v18.16b}, [\wp], #32
.else
        ld1     {v19.16b}, [\wp], #16
        and     v17.16b, v19.16b, v3.16b
        ushr    v18.16b, v19.16b, #4
  .if \t == T_Q4_0
        sub     v17.16b, v17.16b, v4.16b
        sub     v18.16b, v18.16b, v4.16b
  .endif
.endif
        IDOT    \dot, 20, 17, 18, 21, 22
        scvtf   v20.4s, v20.4s
        fmla    v\acc\().4s, v20.4s, v16.s[0]
.endm

.macro QGEMV name, dot, t
PG_FUNC(\name)
        lsr     x1, x1, #5
        movi    v3.16b, #0x0f
        movi    v4.16b, #8
1:      /* a group of four rows */
        cbz     x0, 9f
        mov     x8, x2
        add     x9, x2, x3
        add     x10, x9, x3
        add     x11, x10, x3
        cmp     x0, #4
        b.hs    2f
        /* fewer than 4 rows left: the missing ones read row 0 again */
        mov     x11, x2
        cmp     x0, #3
        csel    x10, x2, x10, lo
        cmp     x0, #2
        csel    x9, x2, x9, lo
2:      movi    v24.4s, #0
        movi    v25.4s, #0
        movi    v26.4s, #0
        movi    v27.4s, #0
        movi    v28.4s, #0
        movi    v29.4s, #0
        movi    v30.4s, #0
        movi    v31.4s, #0
        mov     x12, x4
        mov     x13, x1
        cbz     x13, 4f
3:      /* one block of x against the four rows */
.if \t == T_Q4_1
        ldr     s2, [x12], #4
        fcvtl   v2.4s, v2.4h
.else
        ldr     h2, [x12], #2
        fcvt    s2, h2
.endif
        ld1     {v0.16b, v1.16b}, [x12], #32
        ROW     \dot, \t, x8, 24, 28
        ROW     \dot, \t, x9, 25, 29
        ROW     \dot, \t, x10, 26, 30
        ROW     \dot, \t, x11, 27, 31
        subs    x13, x13, #1
        b.ne    3b
4:      faddp   v24.4s, v24.4s, v25.4s
        faddp   v26.4s, v26.4s, v27.4s
        faddp   v24.4s, v24.4s, v26.4s
.if \t == T_Q4_1
        /* lane 1 of each offset sum: [m0, m1, m2, m3] */
        trn2    v28.2s, v28.2s, v29.2s
        trn2    v30.2s, v30.2s, v31.2s
        ins     v28.d[1], v30.d[0]
        fadd    v24.4s, v24.4s, v28.4s
.endif
        cmp     x0, #4
        b.lo    5f
        st1     {v24.4s}, [x5], #16
        add     x2, x2, x3, lsl #2
        sub     x0, x0, #4
        b       1b
5:      /* the last 1..3 outputs */
        str     s24, [x5]
        cmp     x0, #2
        b.lo    9f
        add     x6, x5, #4
        st1     {v24.s}[1], [x6]
        cmp     x0, #3
        b.lo    9f
        add     x6, x5, #8
        st1     {v24.s}[2], [x6]
9:      ret
PG_ENDFUNC(\name)
.endm

        .text
QGEMV pg_q4_0_q8_0_gemv_4row_neon, 0, T_Q4_0
QGEMV pg_q4_1_q8_1_gemv_4row_neon, 0, T_Q4_1
QGEMV pg_q8_0_q8_0_gemv_4row_neon, 0, T_Q8_0
QGEMV pg_q4_0_q8_0_gemv_4row_dotprod, 1, T_Q4_0
QGEMV pg_q4_1_q8_1_gemv_4row_dotprod, 1, T_Q4_1
QGEMV pg_q8_0_q8_0_gemv_4row_dotprod, 1, T_Q8_0

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

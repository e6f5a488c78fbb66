/* q_gemm_4x1_neon.S - quantised GEMM C[m, n] = dot(W row n, X row m), W
 * rows of q4_0 / q4_1 / q8_0 blocks, X rows of q8_0 / q8_1 blocks
 * (qgemm.h).  Plain NEON (smull / smlal2 / sadalp) and dotprod (sdot)
 * from one macro body, the block arithmetic of q_gemv_4row_neon.S.
 *
 * The tile is four rows of X against one row of W: each weight block is
 * loaded and widened once (signed bytes in v17 / v18, its scale in v5) and
 * used by the four X rows.  The outer loop walks W's rows, so a row of W
 * is read from memory once and stays in L1 while every group of four X
 * rows passes over it.  The last M % 4 rows of X run the same code with
 * the missing rows aimed at the group's first row and their outputs not
 * stored.
 *
 * void pg_q<w>_q8_<a>_gemm_4x1_{neon,dotprod}(size_t M, size_t N, size_t K,
 *                                             x0        x1        x2
 *         const void *W, size_t ldw, const void *X, size_t ldx, float *C, size_t ldc)
 *         x3             x4          x5             x6          x7        [sp]
 *
 * Registers: x0 M, x1 W rows left, x2 blocks per row, x3 W row n, x4 ldw,
 * x5 X, x6 ldx, x7 C at (0, n), x8 ldc bytes; x9 the X group, x10 X rows
 * left, x11 C at (group, n); x12-x15 the four X row walks, x16 the W walk,
 * x17 blocks left.  v0-v1 one X row's block, v2 its scale, v3 0x0f, v4 8s,
 * v5 W's scale, v17-v18 W's signed bytes, v19-v23 scratch, v24-v27 the
 * sums, v28-v31 q4_1's offset sums.
 */
#include "pg_asm.h"

        .arch   armv8.2-a+dotprod

#define T_Q4_0 0
#define T_Q4_1 1
#define T_Q8_0 8

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

/* One X row's block at [xp] (post-incremented) against the W block. */
.macro XROW dot, t, xp, acc, accm
.if \t == T_Q4_1
        ldr     s2, [\xp], #4
        fcvtl   v2.4s, v2.4h
        fmul    v2.2s, v2.2s, v5.2s
        fadd    v\accm\().2s, v\accm\().2s, v2.2s
.else
        ldr     h2, [\xp], #2
        fcvt    s2, h2
        fmul    s2, s2, s5
.endif
        ld1     {v0.16b, v1.16b}, [\xp], #32
        IDOT    \dot, 20, 17, 18, 21, 22
        scvtf   v20.4s, v20.4s
        fmla    v\acc\().4s, v20.4s, v2.s[0]
.endm

.macro QGEMM name, dot, t
PG_FUNC(\name)
        ldr     x8, [sp]
        lsl     x8, x8, #2
        lsr     x2, x2, #5
        movi    v3.16b, #0x0f
        movi    v4.16b, #8
        cbz     x0, 9f
1:      /* W row n */
        cbz     x1, 9f
        mov     x9, x5
        mov     x10, x0
        mov     x11, x7
2:      /* a group of four X rows against W row n */
        mov     x12, x9
        add     x13, x9, x6
        add     x14, x13, x6
        add     x15, x14, x6
        cmp     x10, #4
        b.hs    3f
        /* fewer than 4 rows left: the missing ones read the first again */
        mov     x15, x9
        cmp     x10, #3
        csel    x14, x9, x14, lo
        cmp     x10, #2
        csel    x13, x9, x13, lo
3:      movi    v24.4s, #0
        movi    v25.4s, #0
        movi    v26.4s, #0
        movi    v27.4s, #0
        movi    v28.4s, #0
        movi    v29.4s, #0
        movi    v30.4s, #0
        movi    v31.4s, #0
        mov     x16, x3
        mov     x17, x2
        cbz     x17, 5f
4:      /* one W block, widened once, against the four X rows */
.if \t == T_Q4_1
        ldr     s5, [x16], #4
        fcvtl   v5.4s, v5.4h
.else
        ldr     h5, [x16], #2
        fcvt    s5, h5
.endif
.if \t == T_Q8_0
        ld1     {v17.16b, v18.16b}, [x16], #32
.else
        ld1     {v19.16b}, [x16], #16
        and     v17.16b, v19.16b, v3.16b
        ushr    v18.16b, v19.16b, #4
  .if \t == T_Q4_0
        sub     v17.16b, v17.16b, v4.16b
        sub     v18.16b, v18.16b, v4.16b
  .endif
.endif
        XROW    \dot, \t, x12, 24, 28
        XROW    \dot, \t, x13, 25, 29
        XROW    \dot, \t, x14, 26, 30
        XROW    \dot, \t, x15, 27, 31
        subs    x17, x17, #1
        b.ne    4b
5:      /* [row0, row1, row2, row3] of column n */
        faddp   v24.4s, v24.4s, v25.4s
        faddp   v26.4s, v26.4s, v27.4s
        faddp   v24.4s, v24.4s, v26.4s
.if \t == T_Q4_1
        trn2    v28.2s, v28.2s, v29.2s
        trn2    v30.2s, v30.2s, v31.2s
        ins     v28.d[1], v30.d[0]
        fadd    v24.4s, v24.4s, v28.4s
.endif
        str     s24, [x11]
        cmp     x10, #2
        b.lo    6f
        add     x16, x11, x8
        st1     {v24.s}[1], [x16]
        cmp     x10, #3
        b.lo    6f
        add     x16, x16, x8
        st1     {v24.s}[2], [x16]
        cmp     x10, #4
        b.lo    6f
        add     x16, x16, x8
        st1     {v24.s}[3], [x16]
        b.eq    6f
        /* next group of X rows */
        sub     x10, x10, #4
        add     x9, x9, x6, lsl #2
        add     x11, x11, x8, lsl #2
        b       2b
6:      /* next W row */
        add     x3, x3, x4
        add     x7, x7, #4
        subs    x1, x1, #1
        b       1b
9:      ret
PG_ENDFUNC(\name)
.endm

        .text
QGEMM pg_q4_0_q8_0_gemm_4x1_neon, 0, T_Q4_0
QGEMM pg_q4_1_q8_1_gemm_4x1_neon, 0, T_Q4_1
QGEMM pg_q8_0_q8_0_gemm_4x1_neon, 0, T_Q8_0
QGEMM pg_q4_0_q8_0_gemm_4x1_dotprod, 1, T_Q4_0
QGEMM pg_q4_1_q8_1_gemm_4x1_dotprod, 1, T_Q4_1
QGEMM pg_q8_0_q8_0_gemm_4x1_dotprod, 1, T_Q8_0

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

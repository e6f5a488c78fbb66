/* f32_attn_ggml_neon.S - the GGUF decoder's two attention products in
 * ggml's summation order (attn_ggml/attn_ggml.h), NEON: the 64
 * accumulators of one step are 16 q registers (v16-v31, accumulator
 * lanes 4i..4i+3 in v(16+i), so ggml's four 16-lane accumulators are
 * v16-19, v20-23, v24-27, v28-31), the fold is the reference's -
 * (a0 + a2) + (a1 + a3), 8+8, 4+4, (0+1)+(2+3) - and the elements past the
 * last whole step go one by one in double.  Every product is exact (f16
 * operands), so fmla rounds as fmul + fadd and the results are the
 * reference's floats bit for bit.  The first step multiplies (fmul), as
 * the reference does, rather than adding to zero (-0 stays -0).
 *
 * void pg_f32_attn_kq_ggml_neon(size_t n, size_t hd, const float *q,
 *                               x0        x1         x2
 *         const float *k, size_t ldk, float *s)
 *         x3              x4          x5
 *   x3 the key, x4 ldk in bytes, x6 the whole steps' length (hd & -64),
 *   x9 / x10 the q / key pointers, x11 / x12 the counts left;
 *   v16-v31 the accumulators, v0-v7 the loads, d0 the double sum.
 *
 * void pg_f32_attn_pv_ggml_neon(size_t n, size_t hd, const float *p,
 *                               x0        x1         x2
 *         const float *v, size_t ldv, float *acc, float *out)
 *         x3              x4          x5          x6
 *   Pass 1 (n >= 64): acc row r = sum over the steps of p[j] v_j, j = r
 *   mod 64, in j order, kept in registers: four rows by 16 columns at a
 *   time (v16-v31) run down all the steps - p[j..j+3] in v0, each row
 *   times its lane (fmla by element) - and are stored once.
 *   Pass 2, 4 columns at a time: lane l's sum (A[l] + A[l+32]) +
 *   (A[l+16] + A[l+48]) into v(16+l) from four row pointers a step of 16
 *   rows apart, the 16-lane fold, widened to two double pairs (v0, v1)
 *   that take the tail rows' products one by one, then narrowed to out.
 *   x4 ldv in bytes, x7 hd in bytes, x8 the whole steps' rows (n & -64),
 *   x9-x17 pointers and counts (below at each pass).
 * v8-v15 are not used.
 */
#include "pg_asm.h"

        .text

/* the accumulators a0..a3 (16 lanes) \op= q[16 floats at x9] * k[at x10] */
.macro KQ16 op, a0, a1, a2, a3
        ld1     {v0.4s-v3.4s}, [x9], #64
        ld1     {v4.4s-v7.4s}, [x10], #64
        \op     v\a0\().4s, v0.4s, v4.4s
        \op     v\a1\().4s, v1.4s, v5.4s
        \op     v\a2\().4s, v2.4s, v6.4s
        \op     v\a3\().4s, v3.4s, v7.4s
.endm

/* one step of 64 elements */
.macro KQ64 op
        KQ16    \op, 16, 17, 18, 19
        KQ16    \op, 20, 21, 22, 23
        KQ16    \op, 24, 25, 26, 27
        KQ16    \op, 28, 29, 30, 31
.endm

PG_FUNC(pg_f32_attn_kq_ggml_neon)
        cbz     x0, 9f
        lsl     x4, x4, #2
        and     x6, x1, #-64
1:      movi    d0, #0
        mov     x9, x2
        mov     x10, x3
        cbz     x6, 4f
        KQ64    fmul
        subs    x11, x6, #64
        b.eq    3f
2:      KQ64    fmla
        subs    x11, x11, #64
        b.ne    2b
3:      fadd    v16.4s, v16.4s, v24.4s          /* a0 + a2 */
        fadd    v17.4s, v17.4s, v25.4s
        fadd    v18.4s, v18.4s, v26.4s
        fadd    v19.4s, v19.4s, v27.4s
        fadd    v20.4s, v20.4s, v28.4s          /* a1 + a3 */
        fadd    v21.4s, v21.4s, v29.4s
        fadd    v22.4s, v22.4s, v30.4s
        fadd    v23.4s, v23.4s, v31.4s
        fadd    v16.4s, v16.4s, v20.4s          /* s, lanes 0-3 */
        fadd    v17.4s, v17.4s, v21.4s          /* 4-7 */
        fadd    v18.4s, v18.4s, v22.4s          /* 8-11 */
        fadd    v19.4s, v19.4s, v23.4s          /* 12-15 */
        fadd    v16.4s, v16.4s, v18.4s          /* t8: l + l+8, lanes 0-3 */
        fadd    v17.4s, v17.4s, v19.4s          /* lanes 4-7 */
        fadd    v16.4s, v16.4s, v17.4s          /* t4: l + l+4 */
        faddp   v16.4s, v16.4s, v16.4s          /* 0+1, 2+3 */
        faddp   s16, v16.2s                     /* (0+1) + (2+3) */
        fcvt    d0, s16
4:      sub     x12, x1, x6
        cbz     x12, 6f
5:      ldr     s1, [x9], #4
        ldr     s2, [x10], #4
        fmul    s1, s1, s2
        fcvt    d1, s1
        fadd    d0, d0, d1
        subs    x12, x12, #1
        b.ne    5b
6:      fcvt    s0, d0
        str     s0, [x5], #4
        add     x3, x3, x4
        subs    x0, x0, #1
        b.ne    1b
9:      ret
PG_ENDFUNC(pg_f32_attn_kq_ggml_neon)

/* one value row (16 columns at x9, then x9 += ldv) times p in lane \lane
 * of v0, \op'd into a0..a3 */
.macro PV_ROW op, lane, a0, a1, a2, a3
        ld1     {v4.4s-v7.4s}, [x9], x4
        \op     v\a0\().4s, v4.4s, v0.s[\lane]
        \op     v\a1\().4s, v5.4s, v0.s[\lane]
        \op     v\a2\().4s, v6.4s, v0.s[\lane]
        \op     v\a3\().4s, v7.4s, v0.s[\lane]
.endm

/* four rows of one step: p[j..j+3] at x10, rows j..j+3 from x9; x9 and
 * x10 move on to the next step's rows */
.macro PV_STEP op
        ldr     q0, [x10]
        add     x10, x10, #256
        PV_ROW  \op, 0, 16, 17, 18, 19
        PV_ROW  \op, 1, 20, 21, 22, 23
        PV_ROW  \op, 2, 24, 25, 26, 27
        PV_ROW  \op, 3, 28, 29, 30, 31
        add     x9, x9, x14
.endm

/* v\s = lane l's (A[l] + A[l+32]) + (A[l+16] + A[l+48]), 4 columns, rows
 * l, l+16, l+32, l+48 at x9, x10, x11, x12 (each moves on one row) */
.macro PV_LANE s
        ld1     {v1.4s}, [x9], x7
        ld1     {v2.4s}, [x10], x7
        ld1     {v3.4s}, [x11], x7
        ld1     {v4.4s}, [x12], x7
        fadd    v1.4s, v1.4s, v3.4s
        fadd    v2.4s, v2.4s, v4.4s
        fadd    v\s\().4s, v1.4s, v2.4s
.endm

PG_FUNC(pg_f32_attn_pv_ggml_neon)
        lsl     x4, x4, #2
        lsl     x7, x1, #2
        and     x8, x0, #-64
        cbz     x8, 20f
/* pass 1: x12 the row r (by 4), x13 the column in bytes (by 16 floats),
 * x9 / x10 the value / p pointers, x11 the rows left, x14 60 rows,
 * x15 the acc pointer */
        lsl     x14, x4, #6
        sub     x14, x14, x4, lsl #2
        mov     x12, #0
10:     mov     x13, #0
11:     madd    x9, x12, x4, x3
        add     x9, x9, x13
        add     x10, x2, x12, lsl #2
        PV_STEP fmul
        subs    x11, x8, #64
        b.eq    13f
12:     PV_STEP fmla
        subs    x11, x11, #64
        b.ne    12b
13:     madd    x15, x12, x7, x5
        add     x15, x15, x13
        st1     {v16.4s-v19.4s}, [x15], x7
        st1     {v20.4s-v23.4s}, [x15], x7
        st1     {v24.4s-v27.4s}, [x15], x7
        st1     {v28.4s-v31.4s}, [x15]
        add     x13, x13, #64
        cmp     x13, x7
        b.lo    11b
        add     x12, x12, #4
        cmp     x12, #64
        b.lo    10b
/* pass 2: x13 the column in bytes (by 4 floats), x9-x12 the acc rows
 * l, l+16, l+32, l+48, x14 16 acc rows, x15 the tail rows left, x16 / x17
 * the tail's value / p pointers */
20:     lsl     x14, x7, #4
        mov     x13, #0
21:     movi    v0.2d, #0
        movi    v1.2d, #0
        cbz     x8, 23f
        add     x9, x5, x13
        add     x10, x9, x14
        add     x11, x10, x14
        add     x12, x11, x14
        .irp s, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
        PV_LANE \s
        .endr
        fadd    v16.4s, v16.4s, v24.4s          /* t8: l + l+8 */
        fadd    v17.4s, v17.4s, v25.4s
        fadd    v18.4s, v18.4s, v26.4s
        fadd    v19.4s, v19.4s, v27.4s
        fadd    v20.4s, v20.4s, v28.4s
        fadd    v21.4s, v21.4s, v29.4s
        fadd    v22.4s, v22.4s, v30.4s
        fadd    v23.4s, v23.4s, v31.4s
        fadd    v16.4s, v16.4s, v20.4s          /* t4: l + l+4 */
        fadd    v17.4s, v17.4s, v21.4s
        fadd    v18.4s, v18.4s, v22.4s
        fadd    v19.4s, v19.4s, v23.4s
        fadd    v16.4s, v16.4s, v17.4s          /* 0+1 */
        fadd    v18.4s, v18.4s, v19.4s          /* 2+3 */
        fadd    v16.4s, v16.4s, v18.4s
        fcvtl   v0.2d, v16.2s
        fcvtl2  v1.2d, v16.4s
23:     subs    x15, x0, x8
        b.eq    25f
        madd    x16, x8, x4, x3
        add     x16, x16, x13
        add     x17, x2, x8, lsl #2
24:     ld1     {v2.4s}, [x16], x4
        ldr     s3, [x17], #4
        fmul    v2.4s, v2.4s, v3.s[0]
        fcvtl   v4.2d, v2.2s
        fcvtl2  v5.2d, v2.4s
        fadd    v0.2d, v0.2d, v4.2d
        fadd    v1.2d, v1.2d, v5.2d
        subs    x15, x15, #1
        b.ne    24b
25:     fcvtn   v0.2s, v0.2d
        fcvtn2  v0.4s, v1.2d
        str     q0, [x6, x13]
        add     x13, x13, #16
        cmp     x13, x7
        b.lo    21b
        ret
PG_ENDFUNC(pg_f32_attn_pv_ggml_neon)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

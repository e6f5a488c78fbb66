/* f32_gemv_nk_4row_neon.S - y = W . x (+ bias), W as N x K rows
 * (nn.Linear layout), M = 1.  The same plan as the AVX2 kernel:
 *   - four rows at a time: four contiguous forward streams, each load of x
 *     shared by four FMAs; two 4-lane sums per row (8 floats per step),
 *     then 4 per step, then the last K % 4 one at a time into scalar sums;
 *   - three faddp fold the four rows' lanes into [y0, y1, y2, y3];
 *   - the last N % 4 rows run the same code with the missing rows'
 *     pointers aimed at row 0, and store only their own lanes.
 *
 * void pg_f32_gemv_nk_4row_neon(size_t N, size_t K, const float *x,
 *                               x0        x1        x2
 *         const float *W, size_t ldw, const float *bias, float *y)
 *         x3              x4          x5                 x6
 *
 * Registers: x0 rows left, x1 K, x2 x, x3 row 0 of the group, x4 ldw bytes,
 * x5 bias (0 = none), x6 y, x7 x walk, x8/x9/x10/x11 the four row walks,
 * x12 K left; v0-v7 the sums, v16-v17 x, v18-v25 W, s26-s29 scalar sums.
 */
#include "pg_asm.h"

        .text
PG_FUNC(pg_f32_gemv_nk_4row_neon)
        lsl     x4, x4, #2
.Lnk_group:
        cbz     x0, .Lnk_done
        mov     x8, x3
        add     x9, x3, x4
        add     x10, x9, x4
        add     x11, x10, x4
        cmp     x0, #4
        b.hs    1f
        /* fewer than 4 rows left: the missing ones read row 0 again */
        mov     x11, x3
        cmp     x0, #3
        csel    x10, x3, x10, lo
        cmp     x0, #2
        csel    x9, x3, x9, lo
1:      movi    v0.4s, #0
        movi    v1.4s, #0
        movi    v2.4s, #0
        movi    v3.4s, #0
        movi    v4.4s, #0
        movi    v5.4s, #0
        movi    v6.4s, #0
        movi    v7.4s, #0
        mov     x7, x2
        mov     x12, x1
        cmp     x12, #8
        b.lo    3f
2:      ld1     {v16.4s, v17.4s}, [x7], #32
        ld1     {v18.4s, v19.4s}, [x8], #32
        ld1     {v20.4s, v21.4s}, [x9], #32
        ld1     {v22.4s, v23.4s}, [x10], #32
        ld1     {v24.4s, v25.4s}, [x11], #32
        fmla    v0.4s, v16.4s, v18.4s
        fmla    v1.4s, v17.4s, v19.4s
        fmla    v2.4s, v16.4s, v20.4s
        fmla    v3.4s, v17.4s, v21.4s
        fmla    v4.4s, v16.4s, v22.4s
        fmla    v5.4s, v17.4s, v23.4s
        fmla    v6.4s, v16.4s, v24.4s
        fmla    v7.4s, v17.4s, v25.4s
        sub     x12, x12, #8
        cmp     x12, #8
        b.hs    2b
3:      cmp     x12, #4
        b.lo    4f
        ld1     {v16.4s}, [x7], #16
        ld1     {v18.4s}, [x8], #16
        ld1     {v20.4s}, [x9], #16
        ld1     {v22.4s}, [x10], #16
        ld1     {v24.4s}, [x11], #16
        fmla    v0.4s, v16.4s, v18.4s
        fmla    v2.4s, v16.4s, v20.4s
        fmla    v4.4s, v16.4s, v22.4s
        fmla    v6.4s, v16.4s, v24.4s
        sub     x12, x12, #4
4:      movi    v26.4s, #0
        movi    v27.4s, #0
        movi    v28.4s, #0
        movi    v29.4s, #0
        cbz     x12, 6f
5:      ldr     s16, [x7], #4
        ldr     s18, [x8], #4
        ldr     s20, [x9], #4
        ldr     s22, [x10], #4
        ldr     s24, [x11], #4
        fmadd   s26, s16, s18, s26
        fmadd   s27, s16, s20, s27
        fmadd   s28, s16, s22, s28
        fmadd   s29, s16, s24, s29
        subs    x12, x12, #1
        b.ne    5b
        /* fold: [row0, row1, row2, row3] */
6:      fadd    v0.4s, v0.4s, v1.4s
        fadd    v2.4s, v2.4s, v3.4s
        fadd    v4.4s, v4.4s, v5.4s
        fadd    v6.4s, v6.4s, v7.4s
        faddp   v0.4s, v0.4s, v2.4s
        faddp   v4.4s, v4.4s, v6.4s
        faddp   v0.4s, v0.4s, v4.4s
        ins     v26.s[1], v27.s[0]
        ins     v26.s[2], v28.s[0]
        ins     v26.s[3], v29.s[0]
        fadd    v0.4s, v0.4s, v26.4s
        cmp     x0, #4
        b.lo    .Lnk_partial
        cbz     x5, 7f
        ld1     {v1.4s}, [x5], #16
        fadd    v0.4s, v0.4s, v1.4s
7:      st1     {v0.4s}, [x6], #16
        add     x3, x3, x4, lsl #2
        sub     x0, x0, #4
        b       .Lnk_group

.Lnk_partial:
        /* the last 1..3 outputs, lane by lane */
        movi    v1.4s, #0
        cbz     x5, 8f
        ld1     {v1.s}[0], [x5], #4
        cmp     x0, #2
        b.lo    8f
        ld1     {v1.s}[1], [x5], #4
        cmp     x0, #3
        b.lo    8f
        ld1     {v1.s}[2], [x5]
8:      fadd    v0.4s, v0.4s, v1.4s
        st1     {v0.s}[0], [x6], #4
        cmp     x0, #2
        b.lo    .Lnk_done
        st1     {v0.s}[1], [x6], #4
        cmp     x0, #3
        b.lo    .Lnk_done
        st1     {v0.s}[2], [x6]
.Lnk_done:
        ret
PG_ENDFUNC(pg_f32_gemv_nk_4row_neon)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

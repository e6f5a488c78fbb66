/* f32_gemv_panels12_neon.S - y = x . B (+ bias) for one row x (M = 1) on a
 * weight packed for the NEON SGEMM kernel: 12-column panels, panel p holding
 * columns 12p .. 12p + 11 as K rows of 12 floats (sgemm.h), the columns
 * past N zero.
 *
 * The AArch64 twin of the x86-64 readers (f32_gemv_panels16_avx2_fma3.S):
 * a decoding step at batch 1 streams B once and is bound by memory, and the
 * SGEMM kernel walks the panels one after another, while this reads four
 * panels at once, four streams for the hardware prefetchers.  12
 * accumulators (three per panel), x[k] broadcast, 12 fmla on 192 bytes a
 * k.  The panels left go one at a time; a last panel of fewer than 12
 * columns goes through a 48-byte buffer on the stack and is written float
 * by float, so nothing past N is read from bias or written to y.  Each y[j]
 * sums in k order, as the C reference does (fused multiply-adds: the
 * rounding differs slightly).  Only caller-saved registers (v0-v7,
 * v16-v31, x9-x14).
 *
 * void pg_f32_gemv_panels12_neon(size_t N, size_t K, const float *x,
 *                                x0        x1        x2
 *         const float *b, const float *bias, float *y, size_t nr)
 *         x3              x4                 x5        x6 (12)
 *
 * x7 bytes of a panel (48 K); x9..x12 the k rows of the four panels; x13
 * x[k]; x14 the k steps left.  Accumulators: panel 0 v0-v2, 1 v3-v5, 2
 * v6, v7, v20, 3 v21-v23 (columns in order). */
#include "pg_asm.h"

        .text
PG_FUNC(pg_f32_gemv_panels12_neon)
        mov     x9, #48
        mul     x7, x1, x9                      /* a panel: K rows of 48 bytes */

.Lgroup4:                                       /* four whole panels */
        cmp     x0, #48
        b.lo    .Lone
        movi    v0.16b, #0
        movi    v1.16b, #0
        movi    v2.16b, #0
        movi    v3.16b, #0
        movi    v4.16b, #0
        movi    v5.16b, #0
        movi    v6.16b, #0
        movi    v7.16b, #0
        movi    v20.16b, #0
        movi    v21.16b, #0
        movi    v22.16b, #0
        movi    v23.16b, #0
        mov     x9, x3
        add     x10, x3, x7
        add     x11, x10, x7
        add     x12, x11, x7
        mov     x13, x2
        mov     x14, x1
        cbz     x14, 2f
1:      ld1r    {v16.4s}, [x13], #4
        ld1     {v24.4s, v25.4s, v26.4s}, [x9], #48
        ld1     {v27.4s, v28.4s, v29.4s}, [x10], #48
        ld1     {v17.4s, v18.4s, v19.4s}, [x11], #48
        fmla    v0.4s, v24.4s, v16.4s
        fmla    v1.4s, v25.4s, v16.4s
        fmla    v2.4s, v26.4s, v16.4s
        ld1     {v24.4s, v25.4s, v26.4s}, [x12], #48
        fmla    v3.4s, v27.4s, v16.4s
        fmla    v4.4s, v28.4s, v16.4s
        fmla    v5.4s, v29.4s, v16.4s
        fmla    v6.4s, v17.4s, v16.4s
        fmla    v7.4s, v18.4s, v16.4s
        fmla    v20.4s, v19.4s, v16.4s
        fmla    v21.4s, v24.4s, v16.4s
        fmla    v22.4s, v25.4s, v16.4s
        fmla    v23.4s, v26.4s, v16.4s
        subs    x14, x14, #1
        b.ne    1b
2:      cbz     x4, 3f
        ld1     {v24.4s, v25.4s, v26.4s, v27.4s}, [x4], #64
        ld1     {v28.4s, v29.4s, v30.4s, v31.4s}, [x4], #64
        ld1     {v16.4s, v17.4s, v18.4s, v19.4s}, [x4], #64
        fadd    v0.4s, v0.4s, v24.4s
        fadd    v1.4s, v1.4s, v25.4s
        fadd    v2.4s, v2.4s, v26.4s
        fadd    v3.4s, v3.4s, v27.4s
        fadd    v4.4s, v4.4s, v28.4s
        fadd    v5.4s, v5.4s, v29.4s
        fadd    v6.4s, v6.4s, v30.4s
        fadd    v7.4s, v7.4s, v31.4s
        fadd    v20.4s, v20.4s, v16.4s
        fadd    v21.4s, v21.4s, v17.4s
        fadd    v22.4s, v22.4s, v18.4s
        fadd    v23.4s, v23.4s, v19.4s
3:      st1     {v0.4s, v1.4s, v2.4s, v3.4s}, [x5], #64
        st1     {v4.4s, v5.4s, v6.4s, v7.4s}, [x5], #64
        st1     {v20.4s, v21.4s, v22.4s, v23.4s}, [x5], #64
        add     x3, x3, x7, lsl #2
        sub     x0, x0, #48
        b       .Lgroup4

.Lone:                                          /* one panel, maybe partial */
        cbz     x0, .Ldone
        movi    v0.16b, #0
        movi    v1.16b, #0
        movi    v2.16b, #0
        mov     x9, x3
        mov     x13, x2
        mov     x14, x1
        cbz     x14, 5f
4:      ld1r    {v16.4s}, [x13], #4
        ld1     {v24.4s, v25.4s, v26.4s}, [x9], #48
        fmla    v0.4s, v24.4s, v16.4s
        fmla    v1.4s, v25.4s, v16.4s
        fmla    v2.4s, v26.4s, v16.4s
        subs    x14, x14, #1
        b.ne    4b
5:      cmp     x0, #12
        b.lo    .Lpartial
        cbz     x4, 6f
        ld1     {v24.4s, v25.4s, v26.4s}, [x4], #48
        fadd    v0.4s, v0.4s, v24.4s
        fadd    v1.4s, v1.4s, v25.4s
        fadd    v2.4s, v2.4s, v26.4s
6:      st1     {v0.4s, v1.4s, v2.4s}, [x5], #48
        add     x3, x3, x7
        subs    x0, x0, #12
        b.ne    .Lone
        ret

.Lpartial:                                      /* the last 1..11 columns */
        sub     sp, sp, #48
        st1     {v0.4s, v1.4s, v2.4s}, [sp]
        mov     x9, sp
7:      ldr     s16, [x9], #4
        cbz     x4, 8f
        ldr     s17, [x4], #4
        fadd    s16, s16, s17
8:      str     s16, [x5], #4
        subs    x0, x0, #1
        b.ne    7b
        add     sp, sp, #48
.Ldone:
        ret
PG_ENDFUNC(pg_f32_gemv_panels12_neon)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

/* f32_gemv_4row_neon.S - y = x . B (+ bias) for one row x (M = 1).
 *
 * The same memory plan as the AVX2 kernel (GEMV is bound by how fast B
 * streams in, not by the FMA units):
 *   - N is cut into column blocks of GEMV_NB floats (64 KiB of y) that stay
 *     in L1/L2 while all K rows pass through, as wide as that allows so the
 *     row streams run long;
 *   - rows go four at a time, y_blk += x[k]B[k] + ... + x[k+3]B[k+3]: four
 *     contiguous forward streams for the prefetchers, and y's L1 round trip
 *     paid once per four rows; x[k..k+3] sits in one vector and each row
 *     multiplies by its lane (fmla by element);
 *   - the last K % 4 rows take a one-row pass each;
 *   - 16 columns per step, then 4, then single lanes, so no byte outside
 *     B, bias or y is touched.
 * Each B element is loaded exactly once; y[j] sums in k order like the C
 * reference (fused multiply-adds, so rounding differs slightly).
 *
 * void pg_f32_gemv_4row_neon(size_t N, size_t K, const float *x,
 *                            x0        x1        x2
 *         const float *B, size_t ldb, const float *bias, float *y)
 *         x3              x4          x5                 x6
 *
 * Registers:
 *   x0  columns left     x1  K            x2  x          x3  B at this block
 *   x4  ldb in bytes     x5  bias at this block (0 = none)
 *   x6  y at this block  x7  block width  x8  rows left  x9  B row group
 *   x10 x at the group   x11..x14 the four row pointers
 *   x15 y column ptr     x16 columns left in the pass    x17 scratch
 *   v0..v3 y   v4 x[k..k+3]   v16..v31 B   (v8..v15 are not used)
 */
#include "pg_asm.h"

#define GEMV_NB 16384

        .text
PG_FUNC(pg_f32_gemv_4row_neon)
        lsl     x4, x4, #2

.Lgemv_block:
        cbz     x0, .Lgemv_done
        mov     x7, #GEMV_NB
        cmp     x0, x7
        csel    x7, x0, x7, lo

        /* ---- y_blk = bias_blk, or 0 ---------------------------------- */
        mov     x15, x6
        mov     x16, x7
        cbz     x5, .Lgemv_zero
        mov     x17, x5
.Lgemv_bias16:
        cmp     x16, #16
        b.lo    .Lgemv_bias4
        ld1     {v0.4s, v1.4s, v2.4s, v3.4s}, [x17], #64
        st1     {v0.4s, v1.4s, v2.4s, v3.4s}, [x15], #64
        sub     x16, x16, #16
        b       .Lgemv_bias16
.Lgemv_bias4:
        cmp     x16, #4
        b.lo    .Lgemv_bias1
        ldr     q0, [x17], #16
        str     q0, [x15], #16
        sub     x16, x16, #4
        b       .Lgemv_bias4
.Lgemv_bias1:
        cbz     x16, .Lgemv_init_done
        ldr     s0, [x17], #4
        str     s0, [x15], #4
        sub     x16, x16, #1
        b       .Lgemv_bias1
.Lgemv_zero:
        movi    v0.4s, #0
        movi    v1.4s, #0
        movi    v2.4s, #0
        movi    v3.4s, #0
.Lgemv_zero16:
        cmp     x16, #16
        b.lo    .Lgemv_zero1
        st1     {v0.4s, v1.4s, v2.4s, v3.4s}, [x15], #64
        sub     x16, x16, #16
        b       .Lgemv_zero16
.Lgemv_zero1:
        cbz     x16, .Lgemv_init_done
        str     s0, [x15], #4
        sub     x16, x16, #1
        b       .Lgemv_zero1
.Lgemv_init_done:
        mov     x10, x2
        mov     x9, x3
        mov     x8, x1

        /* ---- four rows at a time ------------------------------------- */
.Lgemv_group:
        cmp     x8, #4
        b.lo    .Lgemv_row
        ld1     {v4.4s}, [x10], #16
        mov     x11, x9
        add     x12, x9, x4
        add     x13, x12, x4
        add     x14, x13, x4
        mov     x15, x6
        mov     x16, x7
        cmp     x16, #16
        b.lo    .Lgemv_g4
.Lgemv_g16:
        ld1     {v0.4s, v1.4s, v2.4s, v3.4s}, [x15]
        ld1     {v16.4s, v17.4s, v18.4s, v19.4s}, [x11], #64
        ld1     {v20.4s, v21.4s, v22.4s, v23.4s}, [x12], #64
        ld1     {v24.4s, v25.4s, v26.4s, v27.4s}, [x13], #64
        ld1     {v28.4s, v29.4s, v30.4s, v31.4s}, [x14], #64
        fmla    v0.4s, v16.4s, v4.s[0]
        fmla    v1.4s, v17.4s, v4.s[0]
        fmla    v2.4s, v18.4s, v4.s[0]
        fmla    v3.4s, v19.4s, v4.s[0]
        fmla    v0.4s, v20.4s, v4.s[1]
        fmla    v1.4s, v21.4s, v4.s[1]
        fmla    v2.4s, v22.4s, v4.s[1]
        fmla    v3.4s, v23.4s, v4.s[1]
        fmla    v0.4s, v24.4s, v4.s[2]
        fmla    v1.4s, v25.4s, v4.s[2]
        fmla    v2.4s, v26.4s, v4.s[2]
        fmla    v3.4s, v27.4s, v4.s[2]
        fmla    v0.4s, v28.4s, v4.s[3]
        fmla    v1.4s, v29.4s, v4.s[3]
        fmla    v2.4s, v30.4s, v4.s[3]
        fmla    v3.4s, v31.4s, v4.s[3]
        st1     {v0.4s, v1.4s, v2.4s, v3.4s}, [x15], #64
        sub     x16, x16, #16
        cmp     x16, #16
        b.hs    .Lgemv_g16
.Lgemv_g4:
        cmp     x16, #4
        b.lo    .Lgemv_g1
        ldr     q0, [x15]
        ldr     q16, [x11], #16
        ldr     q20, [x12], #16
        ldr     q24, [x13], #16
        ldr     q28, [x14], #16
        fmla    v0.4s, v16.4s, v4.s[0]
        fmla    v0.4s, v20.4s, v4.s[1]
        fmla    v0.4s, v24.4s, v4.s[2]
        fmla    v0.4s, v28.4s, v4.s[3]
        str     q0, [x15], #16
        sub     x16, x16, #4
        b       .Lgemv_g4
.Lgemv_g1:
        cbz     x16, .Lgemv_gnext
        ldr     s0, [x15]
        ldr     s16, [x11], #4
        ldr     s20, [x12], #4
        ldr     s24, [x13], #4
        ldr     s28, [x14], #4
        fmla    s0, s16, v4.s[0]
        fmla    s0, s20, v4.s[1]
        fmla    s0, s24, v4.s[2]
        fmla    s0, s28, v4.s[3]
        str     s0, [x15], #4
        sub     x16, x16, #1
        b       .Lgemv_g1
.Lgemv_gnext:
        add     x9, x9, x4, lsl #2
        sub     x8, x8, #4
        b       .Lgemv_group

        /* ---- the last K % 4 rows, one at a time ---------------------- */
.Lgemv_row:
        cbz     x8, .Lgemv_block_next
        ldr     s4, [x10], #4
        mov     x11, x9
        mov     x15, x6
        mov     x16, x7
.Lgemv_r4:
        cmp     x16, #4
        b.lo    .Lgemv_r1
        ldr     q0, [x15]
        ldr     q16, [x11], #16
        fmla    v0.4s, v16.4s, v4.s[0]
        str     q0, [x15], #16
        sub     x16, x16, #4
        b       .Lgemv_r4
.Lgemv_r1:
        cbz     x16, .Lgemv_rnext
        ldr     s0, [x15]
        ldr     s16, [x11], #4
        fmla    s0, s16, v4.s[0]
        str     s0, [x15], #4
        sub     x16, x16, #1
        b       .Lgemv_r1
.Lgemv_rnext:
        add     x9, x9, x4
        sub     x8, x8, #1
        b       .Lgemv_row

.Lgemv_block_next:
        add     x3, x3, x7, lsl #2
        add     x6, x6, x7, lsl #2
        cbz     x5, 1f
        add     x5, x5, x7, lsl #2
1:      sub     x0, x0, x7
        b       .Lgemv_block

.Lgemv_done:
        ret
PG_ENDFUNC(pg_f32_gemv_4row_neon)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

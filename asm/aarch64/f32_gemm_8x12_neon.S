/* f32_gemm_8x12_neon.S - one 8x12 tile of C = A * B (+C) (+bias) (act).
 *
 * Accumulators: row r of the tile in v(3r), v(3r+1), v(3r+2) (columns 0-3,
 * 4-7, 8-11), v0..v23; d8-d15 are saved and restored.  A is read in place
 * with its stride: each step of two k loads two floats from each of the 8
 * rows, two rows per register (v24..v27 = [a(r,k) a(r,k+1) a(r+1,k)
 * a(r+1,k+1)]), and the fmla takes its broadcast by lane: lanes 0/2 for k,
 * 1/3 for k+1.  B: one 12-float row of the packed panel per k (v28..v30).
 * Rows at or past mr re-read the last valid row, so A is never read outside
 * the tile and the loop has no row branches.
 *
 * The epilogue runs with C in registers: + C (accumulate flag, for K
 * blocking), + bias (per column), then ReLU or GELU (erf form), then the
 * store.  Partial tiles (nr < 12) load and store lane-wise (8, 4, 2, 1
 * floats by the bits of nr); rows past mr are never loaded or stored.
 *
 * void pg_f32_gemm_8x12_neon(size_t mr, size_t nr, size_t k,
 *          x0 x1 x2
 *          const float *a, size_t lda, const float *b, float *c,
 *          x3              x4          x5              x6
 *          size_t ldc, const pg_sgemm_epilogue *ep);
 *          x7          [sp]
 * lda and ldc count floats.  ep: { const float *bias @0; int act @8;
 * int flags @12 }, see sgemm.h. */
#include "pg_asm.h"

/* two k steps: A pairs in v24..v27, B rows reloaded into v28..v30 */
.macro FMA_ROWS lane_lo, lane_hi
        fmla    v0.4s, v28.4s, v24.s[\lane_lo]
        fmla    v1.4s, v29.4s, v24.s[\lane_lo]
        fmla    v2.4s, v30.4s, v24.s[\lane_lo]
        fmla    v3.4s, v28.4s, v24.s[\lane_hi]
        fmla    v4.4s, v29.4s, v24.s[\lane_hi]
        fmla    v5.4s, v30.4s, v24.s[\lane_hi]
        fmla    v6.4s, v28.4s, v25.s[\lane_lo]
        fmla    v7.4s, v29.4s, v25.s[\lane_lo]
        fmla    v8.4s, v30.4s, v25.s[\lane_lo]
        fmla    v9.4s, v28.4s, v25.s[\lane_hi]
        fmla    v10.4s, v29.4s, v25.s[\lane_hi]
        fmla    v11.4s, v30.4s, v25.s[\lane_hi]
        fmla    v12.4s, v28.4s, v26.s[\lane_lo]
        fmla    v13.4s, v29.4s, v26.s[\lane_lo]
        fmla    v14.4s, v30.4s, v26.s[\lane_lo]
        fmla    v15.4s, v28.4s, v26.s[\lane_hi]
        fmla    v16.4s, v29.4s, v26.s[\lane_hi]
        fmla    v17.4s, v30.4s, v26.s[\lane_hi]
        fmla    v18.4s, v28.4s, v27.s[\lane_lo]
        fmla    v19.4s, v29.4s, v27.s[\lane_lo]
        fmla    v20.4s, v30.4s, v27.s[\lane_lo]
        fmla    v21.4s, v28.4s, v27.s[\lane_hi]
        fmla    v22.4s, v29.4s, v27.s[\lane_hi]
        fmla    v23.4s, v30.4s, v27.s[\lane_hi]
.endm

/* v28..v30 = the first n (w1, 1..11) floats at x16, the rest zero */
.macro LOAD_PARTIAL
        movi    v28.16b, #0
        movi    v29.16b, #0
        movi    v30.16b, #0
        movi    v31.16b, #0
        tbz     w1, #1, 3f
        tbz     w1, #3, 1f
        ld1     {v28.4s, v29.4s}, [x16], #32
        LOAD_TAIL
        mov     v30.16b, v31.16b
        b       9f
1:      tbz     w1, #2, 2f
        ld1     {v28.4s}, [x16], #16
        LOAD_TAIL
        mov     v29.16b, v31.16b
        b       9f
2:      LOAD_TAIL
        mov     v28.16b, v31.16b
        b       9f
3:      /* n & 2 == 0: the same three cases, tail of 0 or 1 floats */
        tbz     w1, #3, 4f
        ld1     {v28.4s, v29.4s}, [x16], #32
        tbz     w1, #0, 9f
        ld1     {v30.s}[0], [x16]
        b       9f
4:      tbz     w1, #2, 5f
        ld1     {v28.4s}, [x16], #16
        tbz     w1, #0, 9f
        ld1     {v29.s}[0], [x16]
        b       9f
5:      ld1     {v28.s}[0], [x16]
9:
.endm
/* v31 = the n & 3 floats at x16 when n & 2 (two or three) */
.macro LOAD_TAIL
        ldr     d31, [x16], #8
        tbz     w1, #0, 8f
        ld1     {v31.s}[2], [x16]
8:
.endm

/* store the first n (w1, 1..11) floats of va, vb, vc at x16, lane-wise */
.macro STORE_PARTIAL va, vb, vc
        mov     v28.16b, v\va\().16b
        tbz     w1, #3, 1f
        st1     {v\va\().4s, v\vb\().4s}, [x16], #32
        mov     v28.16b, v\vc\().16b
1:      tbz     w1, #2, 2f
        st1     {v28.4s}, [x16], #16
        mov     v28.16b, v\vb\().16b
2:      tbz     w1, #1, 3f
        str     d28, [x16], #8
        ext     v28.16b, v28.16b, v28.16b, #8
3:      tbz     w1, #0, 4f
        str     s28, [x16]
4:
.endm

/* row r of C at x6 + r * ldc (x7 bytes): x16 walks the rows */
.macro ROW_ACC r, va, vb, vc, done
        mov     x16, x15
        cmp     x1, #12
        b.lo    6f
        ld1     {v28.4s, v29.4s, v30.4s}, [x16]
        b       7f
6:      LOAD_PARTIAL
7:      fadd    v\va\().4s, v\va\().4s, v28.4s
        fadd    v\vb\().4s, v\vb\().4s, v29.4s
        fadd    v\vc\().4s, v\vc\().4s, v30.4s
        cmp     x0, #\r + 1
        b.ls    \done
        add     x15, x15, x7
.endm
.macro ROW_STORE r, va, vb, vc, done
        mov     x16, x15
        cmp     x1, #12
        b.lo    6f
        st1     {v\va\().4s, v\vb\().4s, v\vc\().4s}, [x16]
        b       7f
6:      STORE_PARTIAL \va, \vb, \vc
7:      cmp     x0, #\r + 1
        b.ls    \done
        add     x15, x15, x7
.endm
.macro ALL_ROWS m, done
        \m      0, 0, 1, 2, \done
        \m      1, 3, 4, 5, \done
        \m      2, 6, 7, 8, \done
        \m      3, 9, 10, 11, \done
        \m      4, 12, 13, 14, \done
        \m      5, 15, 16, 17, \done
        \m      6, 18, 19, 20, \done
        \m      7, 21, 22, 23, \done
.endm

/* x = 0.5 x (1 + erf(x / sqrt 2)); constants in v28..v31 (see the table),
 * temporaries v24..v27.  erf(z) ~ z P(z^2) / Q(z^2), z clamped to +-3.925 */
.macro GELU x
        fmul    v24.4s, v\x\().4s, v28.s[0]
        dup     v25.4s, v28.s[1]
        fmin    v24.4s, v24.4s, v25.4s
        fneg    v25.4s, v25.4s
        fmax    v24.4s, v24.4s, v25.4s          /* z */
        fmul    v25.4s, v24.4s, v24.4s          /* s = z^2 */
        dup     v26.4s, v30.s[2]                /* p6 */
        dup     v27.4s, v30.s[1]
        fmla    v27.4s, v26.4s, v25.4s
        dup     v26.4s, v30.s[0]
        fmla    v26.4s, v27.4s, v25.4s
        dup     v27.4s, v29.s[3]
        fmla    v27.4s, v26.4s, v25.4s
        dup     v26.4s, v29.s[2]
        fmla    v26.4s, v27.4s, v25.4s
        dup     v27.4s, v29.s[1]
        fmla    v27.4s, v26.4s, v25.4s
        dup     v26.4s, v29.s[0]
        fmla    v26.4s, v27.4s, v25.4s          /* P */
        fmul    v26.4s, v26.4s, v24.4s          /* z P */
        dup     v24.4s, v31.s[2]                /* q4 */
        dup     v27.4s, v31.s[1]
        fmla    v27.4s, v24.4s, v25.4s
        dup     v24.4s, v31.s[0]
        fmla    v24.4s, v27.4s, v25.4s
        dup     v27.4s, v30.s[3]
        fmla    v27.4s, v24.4s, v25.4s
        dup     v24.4s, v28.s[3]                /* 1 */
        fmla    v24.4s, v27.4s, v25.4s          /* Q */
        fdiv    v26.4s, v26.4s, v24.4s          /* erf */
        fmul    v\x\().4s, v\x\().4s, v28.s[2]  /* x / 2 */
        fmla    v\x\().4s, v\x\().4s, v26.4s
.endm

        .text
PG_FUNC(pg_f32_gemm_8x12_neon)
        ldr     x17, [sp]                       /* ep */
        stp     d8, d9, [sp, #-64]!
        stp     d10, d11, [sp, #16]
        stp     d12, d13, [sp, #32]
        stp     d14, d15, [sp, #48]
        lsl     x4, x4, #2
        lsl     x7, x7, #2
        /* A row pointers; rows >= mr alias the previous one */
        mov     x8, x3
        add     x9, x8, x4
        cmp     x0, #2
        csel    x9, x8, x9, lo
        add     x10, x9, x4
        cmp     x0, #3
        csel    x10, x9, x10, lo
        add     x11, x10, x4
        cmp     x0, #4
        csel    x11, x10, x11, lo
        add     x12, x11, x4
        cmp     x0, #5
        csel    x12, x11, x12, lo
        add     x13, x12, x4
        cmp     x0, #6
        csel    x13, x12, x13, lo
        add     x14, x13, x4
        cmp     x0, #7
        csel    x14, x13, x14, lo
        add     x15, x14, x4
        cmp     x0, #8
        csel    x15, x14, x15, lo

        .irp    r, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23
        movi    v\r\().16b, #0
        .endr

        lsr     x16, x2, #1
        cbz     x16, 2f
1:      ldr     d24, [x8], #8
        ld1     {v24.d}[1], [x9], #8
        ldr     d25, [x10], #8
        ld1     {v25.d}[1], [x11], #8
        ldr     d26, [x12], #8
        ld1     {v26.d}[1], [x13], #8
        ldr     d27, [x14], #8
        ld1     {v27.d}[1], [x15], #8
        ld1     {v28.4s, v29.4s, v30.4s}, [x5], #48
        FMA_ROWS 0, 2
        ld1     {v28.4s, v29.4s, v30.4s}, [x5], #48
        FMA_ROWS 1, 3
        subs    x16, x16, #1
        b.ne    1b
2:      tbz     x2, #0, 3f
        ldr     s24, [x8]
        ld1     {v24.s}[2], [x9]
        ldr     s25, [x10]
        ld1     {v25.s}[2], [x11]
        ldr     s26, [x12]
        ld1     {v26.s}[2], [x13]
        ldr     s27, [x14]
        ld1     {v27.s}[2], [x15]
        ld1     {v28.4s, v29.4s, v30.4s}, [x5]
        FMA_ROWS 0, 2
3:
        /* + C */
        ldr     w9, [x17, #12]
        tbz     w9, #0, .Lacc_done
        mov     x15, x6
        ALL_ROWS ROW_ACC, .Lacc_done
.Lacc_done:

        /* + bias */
        ldr     x16, [x17]
        cbz     x16, .Lbias_done
        cmp     x1, #12
        b.lo    .Lbias_partial
        ld1     {v28.4s, v29.4s, v30.4s}, [x16]
        b       .Lbias_add
.Lbias_partial:
        LOAD_PARTIAL
.Lbias_add:
        .irp    r, 0, 3, 6, 9, 12, 15, 18, 21
        fadd    v\r\().4s, v\r\().4s, v28.4s
        .endr
        .irp    r, 1, 4, 7, 10, 13, 16, 19, 22
        fadd    v\r\().4s, v\r\().4s, v29.4s
        .endr
        .irp    r, 2, 5, 8, 11, 14, 17, 20, 23
        fadd    v\r\().4s, v\r\().4s, v30.4s
        .endr
.Lbias_done:

        /* activation: 0 none, 1 ReLU, 2 GELU */
        ldr     w9, [x17, #8]
        cmp     w9, #1
        b.eq    .Lrelu
        cmp     w9, #2
        b.ne    .Lstore
        adr     x16, .Lgelu_consts
        ld1     {v28.4s, v29.4s, v30.4s, v31.4s}, [x16]
        .irp    r, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23
        GELU    \r
        .endr
        b       .Lstore
.Lrelu:
        movi    v28.16b, #0
        .irp    r, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23
        fmax    v\r\().4s, v\r\().4s, v28.4s
        .endr

.Lstore:
        mov     x15, x6
        ALL_ROWS ROW_STORE, .Ldone
.Ldone:
        ldp     d10, d11, [sp, #16]
        ldp     d12, d13, [sp, #32]
        ldp     d14, d15, [sp, #48]
        ldp     d8, d9, [sp], #64
        ret

/* GELU constants, in the lanes the macro reads them from:
 *   v28 = [1/sqrt 2, 3.925, 0.5, 1], v29 = [p0 p1 p2 p3], v30 = [p4 p5 p6 q1],
 *   v31 = [q2 q3 q4 0].
 * erf(z) ~ z * P(z^2) / Q(z^2) on |z| <= 3.925 (erf(3.925) rounds to 1.0f),
 * a (6,4) rational fitted for least maximum relative error by
 * engine/kernels/sgemm/gelu_erf_fit.py: max relative error 5.3e-8 in exact
 * arithmetic, 4.4e-7 (7 ulp) evaluated in float32 as here, against erf. */
        .p2align 4
.Lgelu_consts:
        .float  0.70710678118654752, 3.925, 0.5, 1.0
        .float  1.128379107e+00, 2.003775686e-01, 5.063291639e-02, 3.719719360e-03
        .float  1.421845227e-04, -1.956643018e-06, 1.986926357e-08, 5.109116435e-01
        .float  1.151851714e-01, 1.439111866e-02, 9.600991616e-04, 0.0
PG_ENDFUNC(pg_f32_gemm_8x12_neon)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

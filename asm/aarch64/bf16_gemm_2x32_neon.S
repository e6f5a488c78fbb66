/* bf16_gemm_2x32_neon.S - one 2x32 tile of C = A * B (+C) (+bias) (act),
 * A and B in bf16, fp32 accumulation: AArch64 BFDOT (FEAT_BF16).
 *
 * The 16 accumulators v0-v7 / v8-v15 hold rows 0 / 1 of the tile (32 fp32
 * lanes each).  Each group of 8 k loads 16 bytes (4 bf16 pairs) of each A
 * row (v24, v25) and, per pair, one 128-byte pair row of the packed panel
 * (v16-v23: 32 columns x 2 bf16): 16 BFDOT by element, each 4 lanes x 2
 * products.  gemm_bf16's packed layout as it is; a row past mr aliases
 * row 0.  k is a multiple of 8 (the driver passes the padded kp, a
 * multiple of 32).  The epilogue runs from a buffer on the stack, one
 * element at a time in scalar code: + C (accumulate flag), + bias, ReLU
 * (x > 0 ? x : 0) or GELU (the erf rational of f32_gemm_12x32_avx512f.S
 * with the same fused steps), then a store of the nr columns.
 *
 * void pg_bf16_gemm_2x32_neon(size_t mr, size_t nr, size_t k, const uint16_t *a,
 *          x0        x1        x2        x3
 *          size_t lda, const uint16_t *b, float *c, size_t ldc, const pg_sgemm_epilogue *ep)
 *          x4          x5                 x6        x7          [sp]                      */
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
        \op     v0.4s, v16.8h, v24.2h[\u]
        \op     v1.4s, v17.8h, v24.2h[\u]
        \op     v2.4s, v18.8h, v24.2h[\u]
        \op     v3.4s, v19.8h, v24.2h[\u]
        \op     v4.4s, v20.8h, v24.2h[\u]
        \op     v5.4s, v21.8h, v24.2h[\u]
        \op     v6.4s, v22.8h, v24.2h[\u]
        \op     v7.4s, v23.8h, v24.2h[\u]
        \op     v8.4s, v16.8h, v25.2h[\u]
        \op     v9.4s, v17.8h, v25.2h[\u]
        \op     v10.4s, v18.8h, v25.2h[\u]
        \op     v11.4s, v19.8h, v25.2h[\u]
        \op     v12.4s, v20.8h, v25.2h[\u]
        \op     v13.4s, v21.8h, v25.2h[\u]
        \op     v14.4s, v22.8h, v25.2h[\u]
        \op     v15.4s, v23.8h, v25.2h[\u]
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
PG_FUNC(pg_bf16_gemm_2x32_neon)
        ldr     x8, [sp]
        PROLOGUE
        lsl     x4, x4, #1
        mov     x9, x3
        add     x10, x3, x4
        cmp     x0, #2
        csel    x10, x10, x9, hs
        ZERO16
        lsr     x11, x2, #3
        cbz     x11, 2f
1:      ldr     q24, [x9], #16
        ldr     q25, [x10], #16
        GROUP   bfdot, 0
        GROUP   bfdot, 1
        GROUP   bfdot, 2
        GROUP   bfdot, 3
        subs    x11, x11, #1
        b.ne    1b
2:      STORE16
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
        EPILOGUE_RET
PG_ENDFUNC(pg_bf16_gemm_2x32_neon)

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

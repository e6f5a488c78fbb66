/* h_gemv_1row_neon.S - GEMV y[n] = dot(W row n, x) with f16 or bf16
 * weights and fp32 x (kquant.h), NEON: 16 weights a step widen to fp32
 * (f16: fcvtl / fcvtl2; bf16: shll / shll2 by 16, bf16 being the top half
 * of an fp32) into four FMA accumulators against x; one row at a time (x
 * stays in L1).  K a multiple of 16 (the driver asks 32).  Only the
 * summation order differs from the C reference.
 *
 * void pg_{f16,bf16}_f32_gemv_1row_neon(size_t N, size_t K, const void *W,
 *                                        x0        x1        x2
 *         size_t ldw, const void *x, float *y)
 *         x3          x4             x5
 * x6 the row walk, x7 the x walk, x8 steps left; v0-v3 the sums, v4-v7 and
 * v16-v21 scratch (no callee-saved register is touched).
 */
#include "pg_asm.h"

.macro HGEMV name, bf
PG_FUNC(\name)
        lsr     x1, x1, #4
1:      cbz     x0, 9f
        movi    v0.4s, #0
        movi    v1.4s, #0
        movi    v2.4s, #0
        movi    v3.4s, #0
        mov     x6, x2
        mov     x7, x4
        mov     x8, x1
        cbz     x8, 4f
3:      ld1     {v4.8h, v5.8h}, [x6], #32
        ld1     {v18.4s, v19.4s, v20.4s, v21.4s}, [x7], #64
.if \bf
        shll    v6.4s, v4.4h, #16
        shll2   v7.4s, v4.8h, #16
        shll    v16.4s, v5.4h, #16
        shll2   v17.4s, v5.8h, #16
.else
        fcvtl   v6.4s, v4.4h
        fcvtl2  v7.4s, v4.8h
        fcvtl   v16.4s, v5.4h
        fcvtl2  v17.4s, v5.8h
.endif
        fmla    v0.4s, v6.4s, v18.4s
        fmla    v1.4s, v7.4s, v19.4s
        fmla    v2.4s, v16.4s, v20.4s
        fmla    v3.4s, v17.4s, v21.4s
        subs    x8, x8, #1
        b.ne    3b
4:      fadd    v0.4s, v0.4s, v1.4s
        fadd    v2.4s, v2.4s, v3.4s
        fadd    v0.4s, v0.4s, v2.4s
        faddp   v0.4s, v0.4s, v0.4s
        faddp   s0, v0.2s
        str     s0, [x5], #4
        add     x2, x2, x3
        sub     x0, x0, #1
        b       1b
9:      ret
PG_ENDFUNC(\name)
.endm

        .text
HGEMV pg_f16_f32_gemv_1row_neon, 0
HGEMV pg_bf16_f32_gemv_1row_neon, 1

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

/* f32_rmsnorm_ggml_neon.S - one row of RMSNorm in llama.cpp's rounding
 * order: the squares x*x rounded in float (fmul), widened to double
 * (fcvtl / fcvtl2) and summed in two 2-lane double accumulators, the last
 * n % 4 one by one; scale = 1.0f / sqrtf((float)(sum / n) + eps) in float;
 * y = (x * scale) * gamma, two float roundings.
 * Semantics: engine/kernels/rmsnorm_ggml/rmsnorm_ggml.h.
 *
 * Registers: x0 n, x1 x, x2 gamma, s0 eps, x3 y; x9 / x10 / x11 the
 * moving pointers, x12 the count left; v16 / v17 the double sums, then
 * v16 the scale. */
#include "pg_asm.h"

        .text
/* void pg_f32_rmsnorm_ggml_neon(size_t n, const float *x, const float *gamma,
 *                               x0        x1              x2
 *                               float eps, float *y)
 *                               s0         x3 */
PG_FUNC(pg_f32_rmsnorm_ggml_neon)
        cbz             x0, 9f
        fmov            s22, s0
        movi            v16.2d, #0
        movi            v17.2d, #0
        mov             x9, x1
        mov             x12, x0
1:      cmp             x12, #4
        b.lo            2f
        ld1             {v0.4s}, [x9], #16
        fmul            v0.4s, v0.4s, v0.4s
        fcvtl           v1.2d, v0.2s
        fcvtl2          v2.2d, v0.4s
        fadd            v16.2d, v16.2d, v1.2d
        fadd            v17.2d, v17.2d, v2.2d
        sub             x12, x12, #4
        b               1b
2:      fadd            v16.2d, v16.2d, v17.2d
        faddp           d16, v16.2d
        cbz             x12, 4f
3:      ldr             s2, [x9], #4
        fmul            s2, s2, s2
        fcvt            d2, s2
        fadd            d16, d16, d2
        subs            x12, x12, #1
        b.ne            3b
4:      ucvtf           d1, x0
        fdiv            d16, d16, d1
        fcvt            s16, d16
        fadd            s16, s16, s22
        fsqrt           s16, s16
        fmov            s1, #1.0
        fdiv            s16, s1, s16
        dup             v16.4s, v16.s[0]
        mov             x9, x1
        mov             x10, x2
        mov             x11, x3
        mov             x12, x0
5:      cmp             x12, #4
        b.lo            6f
        ld1             {v0.4s}, [x9], #16
        ld1             {v1.4s}, [x10], #16
        fmul            v0.4s, v0.4s, v16.4s
        fmul            v0.4s, v0.4s, v1.4s
        st1             {v0.4s}, [x11], #16
        sub             x12, x12, #4
        b               5b
6:      cbz             x12, 9f
7:      ldr             s0, [x9], #4
        ldr             s1, [x10], #4
        fmul            s0, s0, s16
        fmul            s0, s0, s1
        str             s0, [x11], #4
        subs            x12, x12, #1
        b.ne            7b
9:      ret
PG_ENDFUNC(pg_f32_rmsnorm_ggml_neon)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

/* f32_rmsnorm_neon.S - one row: y = x / sqrt(mean(x^2) + eps) * gamma.
 * Pass 1 sums x^2 (fused, four 4-lane accumulators: 16 lanes, as the AVX2
 * kernel's two 8-lane ones), the last n % 4 in a scalar; the scalar
 * 1 / sqrt(ss / n + eps) is one sqrt and one divide per row (exact
 * rounding, no estimate); pass 2 writes y = (x r) gamma.
 * Semantics: engine/kernels/rmsnorm/rmsnorm.h. */
#include "pg_asm.h"

        .text
/* void pg_f32_rmsnorm_neon(size_t n, const float *x, const float *gamma,
 *                          x0        x1              x2
 *                          float eps, float *y)
 *                          s0         x3 */
PG_FUNC(pg_f32_rmsnorm_neon)
        cbz             x0, .Lrms_done
        fmov            s22, s0                 /* eps: v0 carries data below */
        /* pass 1: ss = sum x^2 */
        movi            v16.4s, #0
        movi            v17.4s, #0
        movi            v18.4s, #0
        movi            v19.4s, #0
        mov             x9, x1
        mov             x12, x0
        cmp             x12, #16
        b.lo            2f
1:      ld1             {v0.4s, v1.4s, v2.4s, v3.4s}, [x9], #64
        fmla            v16.4s, v0.4s, v0.4s
        fmla            v17.4s, v1.4s, v1.4s
        fmla            v18.4s, v2.4s, v2.4s
        fmla            v19.4s, v3.4s, v3.4s
        sub             x12, x12, #16
        cmp             x12, #16
        b.hs            1b
2:      cmp             x12, #4
        b.lo            3f
        ld1             {v0.4s}, [x9], #16
        fmla            v16.4s, v0.4s, v0.4s
        sub             x12, x12, #4
        b               2b
3:      fadd            v16.4s, v16.4s, v17.4s
        fadd            v18.4s, v18.4s, v19.4s
        fadd            v16.4s, v16.4s, v18.4s
        faddp           v16.4s, v16.4s, v16.4s
        faddp           s16, v16.2s
        cbz             x12, 5f
4:      ldr             s2, [x9], #4
        fmadd           s16, s2, s2, s16
        subs            x12, x12, #1
        b.ne            4b
        /* r = 1 / sqrt(ss / n + eps) */
5:      ucvtf           s1, x0
        fdiv            s16, s16, s1
        fadd            s16, s16, s22
        fsqrt           s16, s16
        fmov            s1, #1.0
        fdiv            s16, s1, s16
        dup             v16.4s, v16.s[0]
        /* pass 2: y = (x r) gamma */
        cmp             x0, #16
        b.lo            7f
6:      ld1             {v0.4s, v1.4s, v2.4s, v3.4s}, [x1], #64
        ld1             {v4.4s, v5.4s, v6.4s, v7.4s}, [x2], #64
        fmul            v0.4s, v0.4s, v16.4s
        fmul            v1.4s, v1.4s, v16.4s
        fmul            v2.4s, v2.4s, v16.4s
        fmul            v3.4s, v3.4s, v16.4s
        fmul            v0.4s, v0.4s, v4.4s
        fmul            v1.4s, v1.4s, v5.4s
        fmul            v2.4s, v2.4s, v6.4s
        fmul            v3.4s, v3.4s, v7.4s
        st1             {v0.4s, v1.4s, v2.4s, v3.4s}, [x3], #64
        sub             x0, x0, #16
        cmp             x0, #16
        b.hs            6b
7:      cmp             x0, #4
        b.lo            8f
        ld1             {v0.4s}, [x1], #16
        ld1             {v4.4s}, [x2], #16
        fmul            v0.4s, v0.4s, v16.4s
        fmul            v0.4s, v0.4s, v4.4s
        st1             {v0.4s}, [x3], #16
        sub             x0, x0, #4
        b               7b
8:      cbz             x0, .Lrms_done
9:      ldr             s0, [x1], #4
        ldr             s4, [x2], #4
        fmul            s0, s0, s16
        fmul            s0, s0, s4
        str             s0, [x3], #4
        subs            x0, x0, #1
        b.ne            9b
.Lrms_done:
        ret
PG_ENDFUNC(pg_f32_rmsnorm_neon)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

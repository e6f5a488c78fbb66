/* f32_tanh_neon.S - y[i] = tanh(x[i]), as the AVX2 kernel.
 * Both formulas per lane, then a select:
 *   |x| <  0.625: x + x^3 P(x^2), P of degree 5 (tools/fit_eltwise.py,
 *                 rel. error 2.9e-9 in exact arithmetic): no cancellation;
 *   |x| >= 0.625: 1 - 2 / (exp(2|x|) + 1), which is exactly 1 once exp
 *                 overflows (|x| > 44.4) and 1 - tiny rounds to 1;
 * then the magnitude takes x's sign bit (so tanh(-0) = -0).
 * Error bound: engine/kernels/tanh/tanh.h. */
#include "pg_asm.h"
#include "pg_eltwise_neon.h"

        .section .rodata
        PG_EXP_CONSTS
.Ltanh_tab:
        .float 0.00213822629, -0.00817178842, 0.0216982104, -0.0539462529 /* v28: p5..p2 */
        .float 0.133332014, -0.333333313, 0.0, 0.0                         /* v29: p1, p0 */
        PG_V4F 0.625                    /* v30: the switch point */
        PG_V4F 2.0                      /* v31 */

        .text
/* t6 = |x|, t5 = 2|x|, t4 = 1 - 2 / (exp(2|x|) + 1) (the large formula);
 * t6 = |x| < 0.625; t5 = x^2, t3 = P(x^2) (Horner, coefficients taken by
 * lane from v28/v29), t2 = x + P x^2 x (the small formula); select, then
 * |result| with the sign bit of x. */
.macro TANH_BODY v, t1, t2, t3, t4, t5, t6
        fabs            \t6\().4s, \v\().4s
        fadd            \t5\().4s, \t6\().4s, \t6\().4s
        PG_EXP          \t4, \t5, \t1, \t2, \t3
        fadd            \t4\().4s, \t4\().4s, v26.4s
        fdiv            \t4\().4s, v31.4s, \t4\().4s
        fsub            \t4\().4s, v26.4s, \t4\().4s
        fcmgt           \t6\().4s, v30.4s, \t6\().4s
        fmul            \t5\().4s, \v\().4s, \v\().4s
        dup             \t2\().4s, v28.s[0]
        dup             \t3\().4s, v28.s[1]
        fmla            \t3\().4s, \t2\().4s, \t5\().4s
        dup             \t2\().4s, v28.s[2]
        fmla            \t2\().4s, \t3\().4s, \t5\().4s
        dup             \t3\().4s, v28.s[3]
        fmla            \t3\().4s, \t2\().4s, \t5\().4s
        dup             \t2\().4s, v29.s[0]
        fmla            \t2\().4s, \t3\().4s, \t5\().4s
        dup             \t3\().4s, v29.s[1]
        fmla            \t3\().4s, \t2\().4s, \t5\().4s
        fmul            \t5\().4s, \t5\().4s, \v\().4s
        mov             \t2\().16b, \v\().16b
        fmla            \t2\().4s, \t3\().4s, \t5\().4s
        bsl             \t6\().16b, \t2\().16b, \t4\().16b
        fabs            \t6\().4s, \t6\().4s
        fneg            \t2\().4s, \t6\().4s
        sshr            \t1\().4s, \v\().4s, #31
        bsl             \t1\().16b, \t2\().16b, \t6\().16b
        mov             \v\().16b, \t1\().16b
.endm

/* void pg_f32_tanh_neon(size_t n, const float *x, float *y)
 *                       x0        x1              x2 */
PG_FUNC(pg_f32_tanh_neon)
        PG_SAVE_D8_D15
        PG_EXP_LOAD
        PG_ADR          x9, .Ltanh_tab
        ld1             {v28.4s, v29.4s, v30.4s, v31.4s}, [x9]
        PG_UNARY_LOOP tanh, TANH_BODY
PG_ENDFUNC(pg_f32_tanh_neon)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

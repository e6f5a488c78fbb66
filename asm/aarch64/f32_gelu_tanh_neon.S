/* f32_gelu_tanh_neon.S - y = 0.5 x (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3))).
 * With u2 = 2 sqrt(2/pi) (x + 0.044715 x^3) = x (a + b x^2), which has the
 * sign of x, 0.5 (1 + tanh(u2 / 2)) = sigmoid(u2), so
 *     y = x (x >= 0 ? 1 : t) / (1 + t),  t = exp(-|u2|)
 * as in silu and as the AVX2 kernel: one exp, one divide, no cancellation
 * for negative x.  Error bound: engine/kernels/gelu_tanh/gelu_tanh.h. */
#include "pg_asm.h"
#include "pg_eltwise_neon.h"

        .section .rodata
        PG_EXP_CONSTS
.Lgt_ab:
        PG_V4F 1.59576912               /* v28: a = 2 sqrt(2/pi) */
        PG_V4F 0.0713548162             /* v29: b = 2 sqrt(2/pi) 0.044715 */

        .text
/* t5 = x^2, t6 = a + b x^2, t5 = -|x t6|, t4 = t = exp(t5), t5 = 1 + t,
 * t6 = sign(x) ? t : 1, v = x t6 / (1 + t) */
.macro GELU_TANH_BODY v, t1, t2, t3, t4, t5, t6
        fmul            \t5\().4s, \v\().4s, \v\().4s
        mov             \t6\().16b, v28.16b
        fmla            \t6\().4s, v29.4s, \t5\().4s
        fmul            \t5\().4s, \t6\().4s, \v\().4s
        fabs            \t5\().4s, \t5\().4s
        fneg            \t5\().4s, \t5\().4s
        PG_EXP          \t4, \t5, \t1, \t2, \t3
        fadd            \t5\().4s, \t4\().4s, v26.4s
        sshr            \t6\().4s, \v\().4s, #31
        bsl             \t6\().16b, \t4\().16b, v26.16b
        fmul            \v\().4s, \v\().4s, \t6\().4s
        fdiv            \v\().4s, \v\().4s, \t5\().4s
.endm

/* void pg_f32_gelu_tanh_neon(size_t n, const float *x, float *y)
 *                            x0        x1              x2 */
PG_FUNC(pg_f32_gelu_tanh_neon)
        PG_SAVE_D8_D15
        PG_EXP_LOAD
        PG_ADR          x9, .Lgt_ab
        ld1             {v28.4s, v29.4s}, [x9]
        PG_UNARY_LOOP gelu_tanh, GELU_TANH_BODY
PG_ENDFUNC(pg_f32_gelu_tanh_neon)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

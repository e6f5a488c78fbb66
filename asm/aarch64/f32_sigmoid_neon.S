/* f32_sigmoid_neon.S - y[i] = 1 / (1 + exp(-x[i])), as
 * (x >= 0 ? 1 : t) / (1 + t) with t = exp(-|x|): no overflow, and relative
 * accuracy in both tails (as the AVX2 kernel).  Error bound:
 * engine/kernels/sigmoid/sigmoid.h. */
#include "pg_asm.h"
#include "pg_eltwise_neon.h"

        .section .rodata
        PG_EXP_CONSTS

        .text
/* t5 = -|x|, t4 = t = exp(-|x|), t5 = 1 + t, t6 = sign(x) ? t : 1,
 * v = t6 / (1 + t).  The sign test is on the sign bit (sshr), like
 * vblendvps, so -0 takes the t branch (t = 1: the same 1/2). */
.macro SIGMOID_BODY v, t1, t2, t3, t4, t5, t6
        fabs            \t5\().4s, \v\().4s
        fneg            \t5\().4s, \t5\().4s
        PG_EXP          \t4, \t5, \t1, \t2, \t3
        fadd            \t5\().4s, \t4\().4s, v26.4s
        sshr            \t6\().4s, \v\().4s, #31
        bsl             \t6\().16b, \t4\().16b, v26.16b
        fdiv            \v\().4s, \t6\().4s, \t5\().4s
.endm

/* void pg_f32_sigmoid_neon(size_t n, const float *x, float *y)
 *                          x0        x1              x2 */
PG_FUNC(pg_f32_sigmoid_neon)
        PG_SAVE_D8_D15
        PG_EXP_LOAD
        PG_UNARY_LOOP sigmoid, SIGMOID_BODY
PG_ENDFUNC(pg_f32_sigmoid_neon)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

/* f32_gelu_tanh_avx2_fma3.S - y = 0.5 x (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3))).
 * With u2 = 2 sqrt(2/pi) (x + 0.044715 x^3) = x (a + b x^2), which has the
 * sign of x, 0.5 (1 + tanh(u2 / 2)) = sigmoid(u2), so
 *     y = x (x >= 0 ? 1 : t) / (1 + t),  t = exp(-|u2|)
 * as in silu: one exp, one divide, no cancellation for negative x.
 * Error: engine/kernels/gelu_tanh/gelu_tanh.h. */
#include "pg_asm.h"
#include "pg_eltwise_avx2.h"

        PG_RODATA
        PG_EXP_CONSTS
        PG_VI .Lgt_sign, 0x80000000
        PG_VF .Lgt_a, 1.59576912            /* 2 sqrt(2/pi) */
        PG_VF .Lgt_b, 0.0713548162          /* 2 sqrt(2/pi) 0.044715 */

        .text
.macro GELU_TANH_BODY v, t1, t2, t3, t4, t5, t6
        vmulps          \t5, \v, \v
        vmovaps         \t6, [rip + .Lgt_b]
        vfmadd213ps     \t6, \t5, [rip + .Lgt_a]
        vmulps          \t5, \t6, \v
        vorps           \t5, \t5, [rip + .Lgt_sign]
        PG_EXP          \t4, \t5, \t1, \t2, \t3
        vaddps          \t5, \t4, [rip + .Lexp_one]
        vmovaps         \t6, [rip + .Lexp_one]
        vblendvps       \t6, \t6, \t4, \v
        vmulps          \v, \v, \t6
        vdivps          \v, \v, \t5
.endm

/* void pg_f32_gelu_tanh_avx2_fma3(size_t n, const float *x, float *y)
 *                                 rdi       rsi             rdx */
PG_FUNC(pg_f32_gelu_tanh_avx2_fma3)
        PG_UNARY_LOOP gelu_tanh, GELU_TANH_BODY
PG_ENDFUNC(pg_f32_gelu_tanh_avx2_fma3)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

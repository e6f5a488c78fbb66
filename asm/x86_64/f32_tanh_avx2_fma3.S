/* f32_tanh_avx2_fma3.S - y[i] = tanh(x[i]).
 * Both formulas per lane, then a blend:
 *   |x| <  0.625: x + x^3 P(x^2), P of degree 5 (tools/fit_eltwise.py,
 *                 rel. error 2.9e-9 in exact arithmetic): no cancellation;
 *   |x| >= 0.625: sign(x) (1 - 2 / (exp(2|x|) + 1)), which is exactly +-1
 *                 once exp overflows (|x| > 44.4) and 1 - tiny rounds to 1.
 * Error: engine/kernels/tanh/tanh.h. */
#include "pg_asm.h"
#include "pg_eltwise_avx2.h"

        PG_RODATA
        PG_EXP_CONSTS
        PG_VI .Ltanh_sign, 0x80000000
        PG_VI .Ltanh_abs, 0x7fffffff
        PG_VF .Ltanh_thr, 0.625
        PG_VF .Ltanh_two, 2.0
        PG_VF .Ltanh_p5, 0.00213822629
        PG_VF .Ltanh_p4, -0.00817178842
        PG_VF .Ltanh_p3, 0.0216982104
        PG_VF .Ltanh_p2, -0.0539462529
        PG_VF .Ltanh_p1, 0.133332014
        PG_VF .Ltanh_p0, -0.333333313

        .text
/* t6 = |x|, t5 = 2|x|, t4 = exp(2|x|), t4 = 1 - 2 / (t4 + 1);
 * t5 = x^2, t6 = P(x^2) x^2 x + x (the small formula); blend on |x| < 0.625,
 * then x's sign on the result (so tanh(-0) = -0). */
.macro TANH_BODY v, t1, t2, t3, t4, t5, t6
        vandps          \t6, \v, [rip + .Ltanh_abs]
        vaddps          \t5, \t6, \t6
        PG_EXP          \t4, \t5, \t1, \t2, \t3
        vaddps          \t4, \t4, [rip + .Lexp_one]
        vmovaps         \t1, [rip + .Ltanh_two]
        vdivps          \t4, \t1, \t4
        vmovaps         \t1, [rip + .Lexp_one]
        vsubps          \t4, \t1, \t4
        vandps          \t1, \v, [rip + .Ltanh_sign]
        vcmpltps        \t6, \t6, [rip + .Ltanh_thr]
        vmulps          \t5, \v, \v
        vmovaps         \t2, [rip + .Ltanh_p5]
        vfmadd213ps     \t2, \t5, [rip + .Ltanh_p4]
        vfmadd213ps     \t2, \t5, [rip + .Ltanh_p3]
        vfmadd213ps     \t2, \t5, [rip + .Ltanh_p2]
        vfmadd213ps     \t2, \t5, [rip + .Ltanh_p1]
        vfmadd213ps     \t2, \t5, [rip + .Ltanh_p0]
        vmulps          \t5, \t5, \v
        vfmadd213ps     \t2, \t5, \v
        vblendvps       \v, \t4, \t2, \t6
        vandps          \v, \v, [rip + .Ltanh_abs]
        vorps           \v, \v, \t1
.endm

/* void pg_f32_tanh_avx2_fma3(size_t n, const float *x, float *y)
 *                            rdi       rsi             rdx */
PG_FUNC(pg_f32_tanh_avx2_fma3)
        PG_UNARY_LOOP tanh, TANH_BODY
PG_ENDFUNC(pg_f32_tanh_avx2_fma3)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

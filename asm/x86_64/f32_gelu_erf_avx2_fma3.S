/* f32_gelu_erf_avx2_fma3.S - y = 0.5 x (1 + erf(x / sqrt 2)).
 * erf(z), z = min(|x| / sqrt 2, 4), by 8 polynomials of degree 7, one per
 * interval [k/2, k/2 + 1/2), k = 0..7, in t = z - k/2: k = min(trunc(2z), 7)
 * indexes 8-entry coefficient tables through vpermps, so every lane runs
 * the same Horner chain with its own coefficients.  z = 4 gives erf = 1 to
 * float precision (1 - erf(4) = 1.5e-8).  Then y = h + h sign(x) erf(z),
 * h = x / 2.  Coefficients: tools/fit_eltwise.py (max abs error of erf
 * 2.9e-8 in exact arithmetic).  Error: engine/kernels/gelu_erf/gelu_erf.h. */
#include "pg_asm.h"
#include "pg_eltwise_avx2.h"

        PG_RODATA
        PG_VI .Lerf_sign, 0x80000000
        PG_VI .Lerf_abs, 0x7fffffff
        PG_VI .Lerf_seven, 7
        PG_VF .Lerf_half, 0.5
        PG_VF .Lerf_rsqrt2, 0.707106781
        PG_VF .Lerf_four, 4.0
/* .Lerf_cJ[k]: the coefficient of t^J on interval k. */
        .p2align 5
.Lerf_c0: .float 0.0, 0.520499885, 0.842700779, 0.966105163, 0.995322287, 0.999593019, 0.999977887, 0.999999285
        .p2align 5
.Lerf_c1: .float 1.12837946, 0.87878269, 0.41510731, 0.118930303, 0.0206670184, 0.00217828224, 0.00013925042, 5.39904249e-06
        .p2align 5
.Lerf_c2: .float -1.13215992e-05, -0.439395279, -0.415100187, -0.178396031, -0.0413353406, -0.00544562936, -0.000417647476, -1.88814647e-05
        .p2align 5
.Lerf_c3: .float -0.375948995, -0.146395549, 0.138251558, 0.138760328, 0.0482452735, 0.00834890362, 0.000787283527, 4.20224096e-05
        .p2align 5
.Lerf_c4: .float -0.00135029701, 0.182494462, 0.0701134279, -0.0446500517, -0.0346245877, -0.00861439575, -0.00102978956, -6.54731411e-05
        .p2align 5
.Lerf_c5: .float 0.118305534, 0.0101318685, -0.073167704, -0.0147429621, 0.0138824033, 0.00609257445, 0.000952111906, 7.18711235e-05
        .p2align 5
.Lerf_c6: .float -0.0116848964, -0.0578824468, 0.0140437931, 0.019432418, -0.00151689292, -0.00278052757, -0.000577552302, -5.06956567e-05
        .p2align 5
.Lerf_c7: .float -0.0158033706, 0.017885495, 0.00374511047, -0.00593309943, -0.000721526972, 0.000635815377, 0.000173596491, 1.71447045e-05

        .text
/* t6 = h, t1 = z then t, t2 = k, t4 = erf(z) by Horner, v = h + h (+-erf) */
.macro GELU_ERF_BODY v, t1, t2, t3, t4, t5, t6
        vmulps          \t6, \v, [rip + .Lerf_half]
        vandps          \t1, \v, [rip + .Lerf_abs]
        vmulps          \t1, \t1, [rip + .Lerf_rsqrt2]
        vminps          \t1, \t1, [rip + .Lerf_four]
        vaddps          \t2, \t1, \t1
        vcvttps2dq      \t2, \t2
        vpminsd         \t2, \t2, [rip + .Lerf_seven]
        vcvtdq2ps       \t3, \t2
        vfnmadd231ps    \t1, \t3, [rip + .Lerf_half]
        vpermps         \t4, \t2, [rip + .Lerf_c7]
        vpermps         \t5, \t2, [rip + .Lerf_c6]
        vfmadd213ps     \t4, \t1, \t5
        vpermps         \t5, \t2, [rip + .Lerf_c5]
        vfmadd213ps     \t4, \t1, \t5
        vpermps         \t5, \t2, [rip + .Lerf_c4]
        vfmadd213ps     \t4, \t1, \t5
        vpermps         \t5, \t2, [rip + .Lerf_c3]
        vfmadd213ps     \t4, \t1, \t5
        vpermps         \t5, \t2, [rip + .Lerf_c2]
        vfmadd213ps     \t4, \t1, \t5
        vpermps         \t5, \t2, [rip + .Lerf_c1]
        vfmadd213ps     \t4, \t1, \t5
        vpermps         \t5, \t2, [rip + .Lerf_c0]
        vfmadd213ps     \t4, \t1, \t5
        vandps          \t5, \v, [rip + .Lerf_sign]
        vxorps          \t4, \t4, \t5
        vfmadd213ps     \t4, \t6, \t6
        vmovaps         \v, \t4
.endm

/* void pg_f32_gelu_erf_avx2_fma3(size_t n, const float *x, float *y)
 *                                rdi       rsi             rdx */
PG_FUNC(pg_f32_gelu_erf_avx2_fma3)
        PG_UNARY_LOOP gelu_erf, GELU_ERF_BODY
PG_ENDFUNC(pg_f32_gelu_erf_avx2_fma3)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

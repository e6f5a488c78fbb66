/* f32_gelu_erf_avx2_fma3.S - y = 0.5 x (1 + erf(x / sqrt 2)).
 * erf(z), z = |x| / sqrt 2 clamped just below 4, by 4 polynomials of
 * degree 9, one per interval [k, k + 1), k = 0..3, in t = z - k (exact,
 * where a centred t would round): k = trunc(z) indexes 4-entry coefficient tables
 * through vpermilps (both 128-bit lanes hold the same 4), so every lane
 * runs the same Horner chain with its own coefficients.  Four intervals
 * rather than eight because vpermilps stays in its lane and is cheap,
 * where vpermps over 8 entries was half of the kernel's time on Zen 3.
 * For z >= 4, erf = 1 (1 - erf(4) = 1.5e-8), set by a blend: the
 * polynomial there is within its 3.9e-8 of 1, not 1, and h (1 - erf)
 * would leave GELU(-88) at -2.6e-6 instead of 0.  Then y = h + h sign(x) erf(z), h = x / 2.  Coefficients:
 * tools/fit_eltwise.py, fit_erf(n=4, width=1.0, deg=9) (max abs error of erf 3.9e-8 in
 * exact arithmetic).  Error: engine/kernels/gelu_erf/gelu_erf.h. */
#include "pg_asm.h"
#include "pg_eltwise_avx2.h"

        PG_RODATA
        PG_VI .Lerf_sign, 0x80000000
        PG_VI .Lerf_abs, 0x7fffffff
        PG_VF .Lerf_half, 0.5
        PG_VF .Lerf_rsqrt2, 0.707106781
        PG_VI .Lerf_below4, 0x407fffff          /* 3.9999998: trunc is 3 */
        PG_VF .Lerf_four, 4.0
        PG_VF .Lerf_one, 1.0
/* .Lerf_cJ: the coefficient of t^J on intervals 0..3, twice (one a lane). */
        .p2align 5
.Lerf_c0: .float 2.90855495e-09, 0.842700779, 0.995322287, 0.999977887, 2.90855495e-09, 0.842700779, 0.995322287, 0.999977887
        .p2align 5
.Lerf_c1: .float 1.12837863, 0.415107518, 0.0206670091, 0.000139251424, 1.12837863, 0.415107518, 0.0206670091, 0.000139251424
        .p2align 5
.Lerf_c2: .float 1.96548408e-05, -0.415108204, -0.0413347669, -0.000417705451, 1.96548408e-05, -0.415108204, -0.0413347669, -0.000417705451
        .p2align 5
.Lerf_c3: .float -0.376381516, 0.138381794, 0.0482328795, 0.000788417354, -0.376381516, 0.138381794, 0.0482328795, 0.000788417354
        .p2align 5
.Lerf_c4: .float 0.00168392167, 0.0690717921, -0.034506917, -0.00104000675, 0.00168392167, 0.0690717921, -0.034506917, -0.00104000675
        .p2align 5
.Lerf_c5: .float 0.106448151, -0.068607986, 0.0133061223, 0.00100050226, 0.106448151, -0.068607986, 0.0133061223, 0.00100050226
        .p2align 5
.Lerf_c6: .float 0.0147467842, 0.00279966975, 1.88483646e-05, -0.000703135738, 0.0147467842, 0.00279966975, 1.88483646e-05, -0.000703135738
        .p2align 5
.Lerf_c7: .float -0.0477860123, 0.0187702607, -0.00289272517, 0.00034619373, -0.0477860123, 0.0187702607, -0.00289272517, 0.00034619373
        .p2align 5
.Lerf_c8: .float 0.0174414031, -0.0093337819, 0.0014105892, -0.000106985855, 0.0174414031, -0.0093337819, 0.0014105892, -0.000106985855
        .p2align 5
.Lerf_c9: .float -0.00185018731, 0.0015404115, -0.000245394942, 1.55440957e-05, -0.00185018731, 0.0015404115, -0.000245394942, 1.55440957e-05

        .text
/* t6 = h, t1 = z then t, t2 = k, t3 = (z >= 4), t4 = erf(z) by Horner, v = h + h (+-erf) */
.macro GELU_ERF_BODY v, t1, t2, t3, t4, t5, t6
        vmulps          \t6, \v, [rip + .Lerf_half]
        vandps          \t1, \v, [rip + .Lerf_abs]
        vmulps          \t1, \t1, [rip + .Lerf_rsqrt2]
        vcmpps          \t3, \t1, [rip + .Lerf_four], 13   /* z >= 4 (ge, ordered) */
        vminps          \t1, \t1, [rip + .Lerf_below4]
        vcvttps2dq      \t2, \t1
        vcvtdq2ps       \t5, \t2
        vsubps          \t1, \t1, \t5
        vmovaps         \t4, [rip + .Lerf_c9]
        vpermilps       \t4, \t4, \t2
        .irp j, 8, 7, 6, 5, 4, 3, 2, 1, 0
        vmovaps         \t5, [rip + .Lerf_c\j]
        vpermilps       \t5, \t5, \t2
        vfmadd213ps     \t4, \t1, \t5
        .endr
        vblendvps       \t4, \t4, [rip + .Lerf_one], \t3
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

/* f32_round_f16_neon.S - x (times scale) -> the nearest f16 value as fp32
 * (round_f16/round_f16.h), NEON.
 *
 * void pg_f32_round_f16_neon(size_t n, const float *x, float scale, float *y)
 *                            x0        x1              s0           x2
 *
 * y = fcvtl(fcvtn(x * scale)): the narrow rounds by the FPCR (its default,
 * nearest even), overflows to inf and keeps the f16 subnormals; the widen
 * is exact - pg_f16_to_f32(pg_f32_to_f16(v)) bit for bit.  A zero scale
 * (either sign; fcmp's eq is false for NaN) means none: it becomes 1.0,
 * and x * 1.0 is x exactly.  16 a step, then 4, then one at a time (fcvt
 * h / fcvt s); each step loads before it stores, so y == x works. */
#include "pg_asm.h"

        .text
PG_FUNC(pg_f32_round_f16_neon)
        fmov    s1, #1.0
        fcmp    s0, #0.0
        fcsel   s0, s1, s0, eq
        dup     v0.4s, v0.s[0]
        cmp     x0, #16
        b.lo    2f
1:      ld1     {v1.4s, v2.4s, v3.4s, v4.4s}, [x1], #64
        fmul    v1.4s, v1.4s, v0.4s
        fmul    v2.4s, v2.4s, v0.4s
        fmul    v3.4s, v3.4s, v0.4s
        fmul    v4.4s, v4.4s, v0.4s
        fcvtn   v5.4h, v1.4s
        fcvtn2  v5.8h, v2.4s
        fcvtn   v6.4h, v3.4s
        fcvtn2  v6.8h, v4.4s
        fcvtl   v1.4s, v5.4h
        fcvtl2  v2.4s, v5.8h
        fcvtl   v3.4s, v6.4h
        fcvtl2  v4.4s, v6.8h
        st1     {v1.4s, v2.4s, v3.4s, v4.4s}, [x2], #64
        sub     x0, x0, #16
        cmp     x0, #16
        b.hs    1b
2:      cmp     x0, #4
        b.lo    3f
        ld1     {v1.4s}, [x1], #16
        fmul    v1.4s, v1.4s, v0.4s
        fcvtn   v5.4h, v1.4s
        fcvtl   v1.4s, v5.4h
        st1     {v1.4s}, [x2], #16
        sub     x0, x0, #4
        b       2b
3:      cbz     x0, 9f
4:      ldr     s1, [x1], #4
        fmul    s1, s1, s0
        fcvt    h1, s1
        fcvt    s1, h1
        str     s1, [x2], #4
        subs    x0, x0, #1
        b.ne    4b
9:      ret
PG_ENDFUNC(pg_f32_round_f16_neon)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

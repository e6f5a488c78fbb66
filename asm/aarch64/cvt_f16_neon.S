/* cvt_f16_neon.S - fp32 <-> f16 rows with NEON (cvt_f16.h).
 *
 * void pg_cvt_f32_f16_neon(size_t n, const float *x, void *y)   x0 x1 x2
 * void pg_cvt_f16_f32_neon(size_t n, const void *x, float *y)   x0 x1 x2
 *
 * 8 elements a step (fcvtn / fcvtn2, fcvtl / fcvtl2; the FPCR's default
 * rounding is to nearest even, as the C reference), then one at a time. */
#include "pg_asm.h"

        .text
PG_FUNC(pg_cvt_f32_f16_neon)
        cmp     x0, #8
        b.lo    2f
1:      ld1     {v0.4s, v1.4s}, [x1], #32
        fcvtn   v2.4h, v0.4s
        fcvtn2  v2.8h, v1.4s
        st1     {v2.8h}, [x2], #16
        sub     x0, x0, #8
        cmp     x0, #8
        b.hs    1b
2:      cbz     x0, 9f
3:      ldr     s0, [x1], #4
        fcvt    h0, s0
        str     h0, [x2], #2
        subs    x0, x0, #1
        b.ne    3b
9:      ret
PG_ENDFUNC(pg_cvt_f32_f16_neon)

PG_FUNC(pg_cvt_f16_f32_neon)
        cmp     x0, #8
        b.lo    2f
1:      ld1     {v0.8h}, [x1], #16
        fcvtl   v1.4s, v0.4h
        fcvtl2  v2.4s, v0.8h
        st1     {v1.4s, v2.4s}, [x2], #32
        sub     x0, x0, #8
        cmp     x0, #8
        b.hs    1b
2:      cbz     x0, 9f
3:      ldr     h0, [x1], #2
        fcvt    s0, h0
        str     s0, [x2], #4
        subs    x0, x0, #1
        b.ne    3b
9:      ret
PG_ENDFUNC(pg_cvt_f16_f32_neon)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

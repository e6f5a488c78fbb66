/* f32_softmax_neon.S - one row: y = softmax(scale * x + mask), as the AVX2
 * kernel:
 *   pass 1: m = max of v = scale x (+ mask, fused), 8 floats per step;
 *   pass 2: y = exp(v - m) (v recomputed: cheaper than a store and reload),
 *           summed in four 4-lane accumulators (16 lanes);
 *   pass 3: y *= 1 / sum.
 * The last n % 4 floats of each pass go one at a time through scalar code
 * (the exp through the vector core, lane 0).  The row is walked with and
 * without the mask as separate code (SOFTMAX_ROW 1 / 0), picked once.
 * Semantics and error: engine/kernels/softmax/softmax.h.
 *
 * Registers: v16-v27 exp constants, v28 = scale, v29 = m, v12-v15 the sums,
 * x9 / x10 / x11 walk x / mask / y, x12 counts. */
#include "pg_asm.h"
#include "pg_eltwise_neon.h"

        .section .rodata
        PG_EXP_CONSTS

        .text
/* dst = scale * x (+ mask) for the next 4 floats (x9, x10 advance). */
.macro SM_LOAD usemask, dst, tmp
.if \usemask
        ld1             {\dst\().4s}, [x10], #16
        ld1             {\tmp\().4s}, [x9], #16
        fmla            \dst\().4s, \tmp\().4s, v28.4s
.else
        ld1             {\dst\().4s}, [x9], #16
        fmul            \dst\().4s, \dst\().4s, v28.4s
.endif
.endm
/* The same for one float into scalar register dst. */
.macro SM_LOAD1 usemask, dst, tmp
.if \usemask
        ldr             \dst, [x10], #4
        ldr             \tmp, [x9], #4
        fmadd           \dst, \tmp, s28, \dst
.else
        ldr             \dst, [x9], #4
        fmul            \dst, \dst, s28
.endif
.endm

/* y_4 = exp(v - m) for the next 4 floats into \d, stored at x11; sum into
 * \acc.  x in \x, temporaries t1..t3. */
.macro SM_EXP4 usemask, x, d, t1, t2, t3, acc
        SM_LOAD         \usemask, \x, \t1
        fsub            \x\().4s, \x\().4s, v29.4s
        PG_EXP          \d, \x, \t1, \t2, \t3
        st1             {\d\().4s}, [x11], #16
        fadd            \acc\().4s, \acc\().4s, \d\().4s
.endm

/* Passes 1 and 2: leaves 1 / sum in s30. */
.macro SOFTMAX_ROW usemask
        /* pass 1: m = max v */
        mov             x9, x1
        mov             x10, x2
        mov             x12, x0
        movi            v4.4s, #0xff, lsl #24   /* 0xff000000 ... */
        orr             v4.4s, #0x80, lsl #16   /* ... | 0x00800000 = -inf */
        mov             v5.16b, v4.16b
1:      cmp             x12, #8
        b.lo            2f
        SM_LOAD         \usemask, v0, v2
        SM_LOAD         \usemask, v1, v3
        fmax            v4.4s, v4.4s, v0.4s
        fmax            v5.4s, v5.4s, v1.4s
        sub             x12, x12, #8
        b               1b
2:      cmp             x12, #4
        b.lo            3f
        SM_LOAD         \usemask, v0, v2
        fmax            v4.4s, v4.4s, v0.4s
        sub             x12, x12, #4
3:      fmax            v4.4s, v4.4s, v5.4s
        fmaxv           s4, v4.4s
        cbz             x12, 5f
4:      SM_LOAD1        \usemask, s0, s2
        fmax            s4, s4, s0
        subs            x12, x12, #1
        b.ne            4b
5:      dup             v29.4s, v4.s[0]

        /* pass 2: y = exp(v - m), sum */
        mov             x9, x1
        mov             x10, x2
        mov             x11, x3
        mov             x12, x0
        movi            v12.4s, #0
        movi            v13.4s, #0
        movi            v14.4s, #0
        movi            v15.4s, #0
1:      cmp             x12, #16
        b.lo            2f
        SM_EXP4         \usemask, v0, v4, v1, v2, v3, v12
        SM_EXP4         \usemask, v5, v9, v6, v7, v8, v13
        SM_EXP4         \usemask, v0, v4, v1, v2, v3, v14
        SM_EXP4         \usemask, v5, v9, v6, v7, v8, v15
        sub             x12, x12, #16
        b               1b
2:      cmp             x12, #4
        b.lo            3f
        SM_EXP4         \usemask, v0, v4, v1, v2, v3, v12
        sub             x12, x12, #4
        b               2b
3:      fadd            v12.4s, v12.4s, v13.4s
        fadd            v14.4s, v14.4s, v15.4s
        fadd            v12.4s, v12.4s, v14.4s
        faddp           v12.4s, v12.4s, v12.4s
        faddp           s12, v12.2s
        cbz             x12, 5f
4:      SM_LOAD1        \usemask, s0, s2
        fsub            s0, s0, s29
        PG_EXP          v4, v0, v1, v2, v3
        str             s4, [x11], #4
        fadd            s12, s12, s4
        subs            x12, x12, #1
        b.ne            4b
5:      fmov            s30, #1.0
        fdiv            s30, s30, s12
.endm

/* void pg_f32_softmax_neon(size_t n, const float *x, float scale,
 *                          x0        x1              s0
 *                          const float *mask, float *y)
 *                          x2                 x3 */
PG_FUNC(pg_f32_softmax_neon)
        cbz             x0, .Lsm_ret
        PG_SAVE_D8_D15
        PG_EXP_LOAD
        dup             v28.4s, v0.s[0]
        cbz             x2, .Lsm_nomask
        SOFTMAX_ROW     1
        b               .Lsm_scale
.Lsm_nomask:
        SOFTMAX_ROW     0
.Lsm_scale:
        /* pass 3: y *= 1 / sum */
        dup             v30.4s, v30.s[0]
        mov             x11, x3
        mov             x12, x0
1:      cmp             x12, #16
        b.lo            2f
        ld1             {v0.4s, v1.4s, v2.4s, v3.4s}, [x11]
        fmul            v0.4s, v0.4s, v30.4s
        fmul            v1.4s, v1.4s, v30.4s
        fmul            v2.4s, v2.4s, v30.4s
        fmul            v3.4s, v3.4s, v30.4s
        st1             {v0.4s, v1.4s, v2.4s, v3.4s}, [x11], #64
        sub             x12, x12, #16
        b               1b
2:      cmp             x12, #4
        b.lo            3f
        ld1             {v0.4s}, [x11]
        fmul            v0.4s, v0.4s, v30.4s
        st1             {v0.4s}, [x11], #16
        sub             x12, x12, #4
        b               2b
3:      cbz             x12, .Lsm_done
4:      ldr             s0, [x11]
        fmul            s0, s0, s30
        str             s0, [x11], #4
        subs            x12, x12, #1
        b.ne            4b
.Lsm_done:
        PG_RESTORE_D8_D15
.Lsm_ret:
        ret
PG_ENDFUNC(pg_f32_softmax_neon)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

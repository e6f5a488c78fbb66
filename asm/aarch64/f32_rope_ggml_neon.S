/* f32_rope_ggml_neon.S - the GGUF decoder's RoPE in ggml's normal and NeoX
 * pair orders (rope_ggml/rope_ggml.h), NEON.
 *
 * void pg_f32_rope_ggml_neon(size_t rows, size_t ld, size_t heads,
 *                            x0           x1         x2
 *         size_t hd, size_t n_rot, int neox, const float *cos_tab,
 *         x3         x4            w5        x6
 *         const float *sin_tab, size_t ld_cs, float *x);
 *         x7                    [sp]          [sp + 8]
 *
 * Per row and head, 4 pairs a step, then one pair at a time.  Normal order:
 * ld2 splits 8 floats into a = v0 (a0..a3) and b = v1 (b0..b3), st2 joins
 * them back; NeoX: a = x[i..], b = x[i + half..] (x16 bytes on).  Then
 * a' = a c - b s, b' = a s + b c with both products rounded and one
 * fsub / fadd - no fmla, so the floats are the reference's.  The dims past
 * n_rot are never touched.
 *
 * Registers: x0 rows left, x1 ld bytes, x2 heads, x3 hd bytes, x4 half,
 * x6 / x7 this row's cos / sin, x8 ld_cs bytes, x9 this row's x, x10 the
 * head, x11 heads left, x12 the pair cursor, x13 / x14 cos / sin cursors,
 * x15 pairs left, x16 half bytes (NeoX: b - a). */
#include "pg_asm.h"

        .text

/* x = a c - b s, y = a s + b c: each product rounded to float, then one
 * subtraction or addition, as the reference (never a fused multiply-add) */
.macro ROTATE a, b, c, s, x, y, t0, t1
        fmul    \x, \a, \c
        fmul    \t0, \b, \s
        fmul    \y, \a, \s
        fmul    \t1, \b, \c
        fsub    \x, \x, \t0
        fadd    \y, \y, \t1
.endm

PG_FUNC(pg_f32_rope_ggml_neon)
        ldr     x8, [sp]                /* ld_cs */
        ldr     x9, [sp, #8]            /* x */
        lsr     x4, x4, #1              /* half */
        cbz     x4, 9f
        cbz     x0, 9f
        cbz     x2, 9f
        lsl     x1, x1, #2
        lsl     x3, x3, #2
        lsl     x8, x8, #2
        lsl     x16, x4, #2
        cbnz    w5, .Lneox_row

.Lnorm_row:
        mov     x10, x9
        mov     x11, x2
.Lnorm_head:
        mov     x12, x10
        mov     x13, x6
        mov     x14, x7
        mov     x15, x4
        cmp     x15, #4
        b.lo    2f
1:      ld2     {v0.4s, v1.4s}, [x12]           /* a, b */
        ld1     {v2.4s}, [x13], #16             /* c */
        ld1     {v3.4s}, [x14], #16             /* s */
        ROTATE  v0.4s, v1.4s, v2.4s, v3.4s, v16.4s, v17.4s, v18.4s, v19.4s
        st2     {v16.4s, v17.4s}, [x12], #32
        sub     x15, x15, #4
        cmp     x15, #4
        b.hs    1b
2:      cbz     x15, 4f
3:      ldp     s0, s1, [x12]
        ldr     s2, [x13], #4
        ldr     s3, [x14], #4
        ROTATE  s0, s1, s2, s3, s16, s17, s18, s19
        stp     s16, s17, [x12], #8
        subs    x15, x15, #1
        b.ne    3b
4:      add     x10, x10, x3
        subs    x11, x11, #1
        b.ne    .Lnorm_head
        add     x9, x9, x1
        add     x6, x6, x8
        add     x7, x7, x8
        subs    x0, x0, #1
        b.ne    .Lnorm_row
        ret

.Lneox_row:
        mov     x10, x9
        mov     x11, x2
.Lneox_head:
        mov     x12, x10
        mov     x13, x6
        mov     x14, x7
        mov     x15, x4
        cmp     x15, #4
        b.lo    2f
1:      ldr     q0, [x12]                       /* a */
        ldr     q1, [x12, x16]                  /* b */
        ld1     {v2.4s}, [x13], #16             /* c */
        ld1     {v3.4s}, [x14], #16             /* s */
        ROTATE  v0.4s, v1.4s, v2.4s, v3.4s, v16.4s, v17.4s, v18.4s, v19.4s
        str     q17, [x12, x16]
        str     q16, [x12], #16
        sub     x15, x15, #4
        cmp     x15, #4
        b.hs    1b
2:      cbz     x15, 4f
3:      ldr     s0, [x12]
        ldr     s1, [x12, x16]
        ldr     s2, [x13], #4
        ldr     s3, [x14], #4
        ROTATE  s0, s1, s2, s3, s16, s17, s18, s19
        str     s17, [x12, x16]
        str     s16, [x12], #4
        subs    x15, x15, #1
        b.ne    3b
4:      add     x10, x10, x3
        subs    x11, x11, #1
        b.ne    .Lneox_head
        add     x9, x9, x1
        add     x6, x6, x8
        add     x7, x7, x8
        subs    x0, x0, #1
        b.ne    .Lneox_row
9:      ret
PG_ENDFUNC(pg_f32_rope_ggml_neon)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

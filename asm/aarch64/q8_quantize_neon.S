/* q8_quantize_neon.S - fp32 activations -> q8_0 / q8_1 blocks of 32,
 * byte-exact with the C reference (qdot_ref.c), i.e. with ggml's
 * quantize_row_q8_0_ref / q8_1_ref:
 *   amax = max |x| (fabs + fmax + fmaxv), d = amax / 127 (fdiv, as C
 *   divides), id = 1 / d or 0 when d = 0, d stored as f16 by fcvt (the
 *   FPCR rounding, nearest even);
 *   q = roundf(x * id): fcvtas is exactly that (to nearest, ties away);
 *   sqxtn twice narrows the int32 to bytes (|q| <= 127, no saturation);
 *   q8_1 also stores (float)sum(q) * d as f16 (d the f32 value).
 *
 * void pg_quantize_row_q8_{0,1}_neon(size_t n, const float *x, void *y)
 *                                    x0        x1              x2
 */
#include "pg_asm.h"

.macro QUANTIZE name, q81
PG_FUNC(\name)
        lsr     x0, x0, #5
        cbz     x0, 9f
        movz    w9, #0x42fe, lsl #16
        fmov    s25, w9                     /* 127.0f */
        fmov    s26, #1.0
        movi    d27, #0
1:      ld1     {v0.4s, v1.4s, v2.4s, v3.4s}, [x1], #64
        ld1     {v4.4s, v5.4s, v6.4s, v7.4s}, [x1], #64
        fabs    v16.4s, v0.4s
        fabs    v17.4s, v1.4s
        fabs    v18.4s, v2.4s
        fabs    v19.4s, v3.4s
        fabs    v20.4s, v4.4s
        fabs    v21.4s, v5.4s
        fabs    v22.4s, v6.4s
        fabs    v23.4s, v7.4s
        fmax    v16.4s, v16.4s, v17.4s
        fmax    v18.4s, v18.4s, v19.4s
        fmax    v20.4s, v20.4s, v21.4s
        fmax    v22.4s, v22.4s, v23.4s
        fmax    v16.4s, v16.4s, v18.4s
        fmax    v20.4s, v20.4s, v22.4s
        fmax    v16.4s, v16.4s, v20.4s
        fmaxv   s16, v16.4s                 /* amax */
        fdiv    s17, s16, s25               /* d */
        fdiv    s18, s26, s17               /* 1 / d (inf when d = 0) */
        fcmp    s17, #0.0
        fcsel   s18, s18, s27, ne           /* id */
        fcvt    h19, s17
        str     h19, [x2]
        fmul    v0.4s, v0.4s, v18.s[0]
        fmul    v1.4s, v1.4s, v18.s[0]
        fmul    v2.4s, v2.4s, v18.s[0]
        fmul    v3.4s, v3.4s, v18.s[0]
        fmul    v4.4s, v4.4s, v18.s[0]
        fmul    v5.4s, v5.4s, v18.s[0]
        fmul    v6.4s, v6.4s, v18.s[0]
        fmul    v7.4s, v7.4s, v18.s[0]
        fcvtas  v0.4s, v0.4s
        fcvtas  v1.4s, v1.4s
        fcvtas  v2.4s, v2.4s
        fcvtas  v3.4s, v3.4s
        fcvtas  v4.4s, v4.4s
        fcvtas  v5.4s, v5.4s
        fcvtas  v6.4s, v6.4s
        fcvtas  v7.4s, v7.4s
.if \q81
        add     v20.4s, v0.4s, v1.4s
        add     v21.4s, v2.4s, v3.4s
        add     v22.4s, v4.4s, v5.4s
        add     v23.4s, v6.4s, v7.4s
        add     v20.4s, v20.4s, v21.4s
        add     v22.4s, v22.4s, v23.4s
        add     v20.4s, v20.4s, v22.4s
        addv    s20, v20.4s
        scvtf   s20, s20
        fmul    s20, s20, s17               /* (float)sum * d (s17 = d) */
        fcvt    h20, s20
        str     h20, [x2, #2]
        add     x2, x2, #4
.else
        add     x2, x2, #2
.endif
        sqxtn   v0.4h, v0.4s
        sqxtn2  v0.8h, v1.4s
        sqxtn   v2.4h, v2.4s
        sqxtn2  v2.8h, v3.4s
        sqxtn   v4.4h, v4.4s
        sqxtn2  v4.8h, v5.4s
        sqxtn   v6.4h, v6.4s
        sqxtn2  v6.8h, v7.4s
        sqxtn   v0.8b, v0.8h
        sqxtn2  v0.16b, v2.8h
        sqxtn   v4.8b, v4.8h
        sqxtn2  v4.16b, v6.8h
        st1     {v0.16b}, [x2], #16
        st1     {v4.16b}, [x2], #16
        subs    x0, x0, #1
        b.ne    1b
9:      ret
PG_ENDFUNC(\name)
.endm

        .text
QUANTIZE pg_quantize_row_q8_0_neon, 0
QUANTIZE pg_quantize_row_q8_1_neon, 1

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

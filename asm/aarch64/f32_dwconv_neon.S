/* f32_dwconv_neon.S - depthwise 3x3 / 5x5 / 7x7 convolution rows, NHWC, NEON.
 *
 * void pg_f32_dwconv3x3_neon(const pg_dwconv_args *a);   x0 = a
 * void pg_f32_dwconv5x5_neon(const pg_dwconv_args *a);
 * void pg_f32_dwconv7x7_neon(const pg_dwconv_args *a);
 * (dwconv.h: rows @0, w @8, out @16, channels @24, width @32, in_step @40,
 *  pix @48, out_step @56, lo @64, hi @68, act @72; steps count floats.)
 *
 * The loop of f32_dwconv_avx512f.S on 4-channel tiles (a quarter of a
 * 16-float packing group: the weight rows of quarter q start 16 q bytes
 * in): a tile's taps sit in v7.. (9 or 25 registers; v8..v15 are saved and
 * restored since their low halves are callee-saved), the pixels pass with
 * one load and one fmla per tap, the bias is the accumulator's first load.
 * The last 1..3 channels run a scalar copy of the loop one channel at a
 * time (taps read from memory), so nothing past the last channel is read
 * or written.  7x7's 49 taps do not fit the registers: every tap is read
 * from L1 into v7 next to its input (the vector loop as the scalar one),
 * and its two extra row cursors and the 5 and 6 pixel offsets take the
 * callee-saved x19..x22 (saved and restored).
 *
 * Registers:
 *   x0  args               x1  in_step bytes    x2  out_step bytes
 *   x3  this tile's weights  x4  channel offset (bytes)  x5  channels left
 *   x6  pixels left        x7  output cursor    x8 x9 x10 x15 x16 (x19 x20) row cursors
 *   x11..x14  pix, 2 pix, 3 pix, 4 pix bytes    (x21 x22: 5 pix, 6 pix)   x17 scratch
 *   v0 accumulator; v1, v2 lo, hi (clamp) or 0, temp (hardswish); v3 3.0,
 *   v4 6.0, v5 1/6; v6 input temp; v7..v31 taps.
 */
#include "pg_asm.h"

        .text

/* tap of kernel column kx at row cursor \r, vector (q) or scalar (s) */
.macro DW_LD kx, r, dst
.if \kx == 0
        ldr     \dst, [\r]
.elseif \kx == 1
        ldr     \dst, [\r, x11]
.elseif \kx == 2
        ldr     \dst, [\r, x12]
.elseif \kx == 3
        ldr     \dst, [\r, x13]
.elseif \kx == 4
        ldr     \dst, [\r, x14]
.elseif \kx == 5
        ldr     \dst, [\r, x21]
.else
        ldr     \dst, [\r, x22]
.endif
.endm

/* vector tap t from memory (7x7): input and tap both loaded */
.macro DW_MTAP kx, r, t
        DW_LD   \kx, \r, q6
        ldr     q7, [x3, #(64 * (1 + \t))]
        fmla    v0.4s, v6.4s, v7.4s
.endm

.macro DW_VTAP kx, r, w
        DW_LD   \kx, \r, q6
        fmla    v0.4s, v6.4s, \w\().4s
.endm

/* scalar: tap t's weight from memory (x3 points at this channel's group row) */
.macro DW_STAP kx, r, t
        DW_LD   \kx, \r, s6
        ldr     s7, [x3, #(64 * (1 + \t))]
        fmadd   s0, s6, s7, s0
.endm

.macro DW_VTAPS k
.if \k == 3
        DW_VTAP 0, x8, v7
        DW_VTAP 1, x8, v8
        DW_VTAP 2, x8, v9
        DW_VTAP 0, x9, v10
        DW_VTAP 1, x9, v11
        DW_VTAP 2, x9, v12
        DW_VTAP 0, x10, v13
        DW_VTAP 1, x10, v14
        DW_VTAP 2, x10, v15
.elseif \k == 7
        .irp kx, 0, 1, 2, 3, 4, 5, 6
        DW_MTAP \kx, x8, \kx
        DW_MTAP \kx, x9, (7 + \kx)
        DW_MTAP \kx, x10, (14 + \kx)
        DW_MTAP \kx, x15, (21 + \kx)
        DW_MTAP \kx, x16, (28 + \kx)
        DW_MTAP \kx, x19, (35 + \kx)
        DW_MTAP \kx, x20, (42 + \kx)
        .endr
.else
        DW_VTAP 0, x8, v7
        DW_VTAP 1, x8, v8
        DW_VTAP 2, x8, v9
        DW_VTAP 3, x8, v10
        DW_VTAP 4, x8, v11
        DW_VTAP 0, x9, v12
        DW_VTAP 1, x9, v13
        DW_VTAP 2, x9, v14
        DW_VTAP 3, x9, v15
        DW_VTAP 4, x9, v16
        DW_VTAP 0, x10, v17
        DW_VTAP 1, x10, v18
        DW_VTAP 2, x10, v19
        DW_VTAP 3, x10, v20
        DW_VTAP 4, x10, v21
        DW_VTAP 0, x15, v22
        DW_VTAP 1, x15, v23
        DW_VTAP 2, x15, v24
        DW_VTAP 3, x15, v25
        DW_VTAP 4, x15, v26
        DW_VTAP 0, x16, v27
        DW_VTAP 1, x16, v28
        DW_VTAP 2, x16, v29
        DW_VTAP 3, x16, v30
        DW_VTAP 4, x16, v31
.endif
.endm

.macro DW_STAPS k
.if \k == 3
        .irp kx, 0, 1, 2
        DW_STAP \kx, x8, \kx
        DW_STAP \kx, x9, (3 + \kx)
        DW_STAP \kx, x10, (6 + \kx)
        .endr
.elseif \k == 7
        .irp kx, 0, 1, 2, 3, 4, 5, 6
        DW_STAP \kx, x8, \kx
        DW_STAP \kx, x9, (7 + \kx)
        DW_STAP \kx, x10, (14 + \kx)
        DW_STAP \kx, x15, (21 + \kx)
        DW_STAP \kx, x16, (28 + \kx)
        DW_STAP \kx, x19, (35 + \kx)
        DW_STAP \kx, x20, (42 + \kx)
        .endr
.else
        .irp kx, 0, 1, 2, 3, 4
        DW_STAP \kx, x8, \kx
        DW_STAP \kx, x9, (5 + \kx)
        DW_STAP \kx, x10, (10 + \kx)
        DW_STAP \kx, x15, (15 + \kx)
        DW_STAP \kx, x16, (20 + \kx)
        .endr
.endif
.endm

/* act 0 none, 1 clamp, 2 hardswish; \t: 4s (vector) or s (scalar) */
.macro DW_VACT act
.if \act == 1
        fmax    v0.4s, v1.4s, v0.4s
        fmin    v0.4s, v2.4s, v0.4s
.elseif \act == 2
        fadd    v2.4s, v0.4s, v3.4s
        fmax    v2.4s, v1.4s, v2.4s
        fmin    v2.4s, v4.4s, v2.4s
        fmul    v2.4s, v2.4s, v5.4s
        fmul    v0.4s, v0.4s, v2.4s
.endif
.endm
.macro DW_SACT act
.if \act == 1
        fmax    s0, s1, s0
        fmin    s0, s2, s0
.elseif \act == 2
        fadd    s2, s0, s3
        fmax    s2, s1, s2
        fmin    s2, s4, s2
        fmul    s2, s2, s5
        fmul    s0, s0, s2
.endif
.endm

.macro DW_ADVANCE k
        add     x8, x8, x1
        add     x9, x9, x1
        add     x10, x10, x1
.if \k >= 5
        add     x15, x15, x1
        add     x16, x16, x1
.endif
.if \k == 7
        add     x19, x19, x1
        add     x20, x20, x1
.endif
        add     x7, x7, x2
        subs    x6, x6, #1
.endm

/* vector (\s = 0) or scalar (\s = 1) pixel loop with activation \act */
.macro DW_PIXELS k, s, act, lbl
\lbl:
.if \s == 0
        ldr     q0, [x3]
        DW_VTAPS \k
        DW_VACT \act
        str     q0, [x7]
.else
        ldr     s0, [x3]
        DW_STAPS \k
        DW_SACT \act
        str     s0, [x7]
.endif
        DW_ADVANCE \k
        b.ne    \lbl
.endm

.macro DW_LOOPS k, s, next
        ldr     w17, [x0, #72]
        cmp     w17, #1
        b.eq    .Ldw\k\()_\s\()_clamp
        b.hi    .Ldw\k\()_\s\()_hswish
        DW_PIXELS \k, \s, 0, .Ldw\k\()_\s\()_none
        b       \next
        DW_PIXELS \k, \s, 1, .Ldw\k\()_\s\()_clamp
        b       \next
        DW_PIXELS \k, \s, 2, .Ldw\k\()_\s\()_hswish
        b       \next
.endm

/* row cursors and the output at channel offset x4 */
.macro DW_CURSORS k
        ldr     x17, [x0]
        ldr     x8, [x17]
        add     x8, x8, x4
        ldr     x9, [x17, #8]
        add     x9, x9, x4
        ldr     x10, [x17, #16]
        add     x10, x10, x4
.if \k >= 5
        ldr     x15, [x17, #24]
        add     x15, x15, x4
        ldr     x16, [x17, #32]
        add     x16, x16, x4
.endif
.if \k == 7
        ldr     x19, [x17, #40]
        add     x19, x19, x4
        ldr     x20, [x17, #48]
        add     x20, x20, x4
.endif
        ldr     x7, [x0, #16]
        add     x7, x7, x4
        ldr     x6, [x0, #32]
.endm

.macro DW_FUNC name, k
PG_FUNC(\name)
        stp     d8, d9, [sp, #-64]!
        stp     d10, d11, [sp, #16]
        stp     d12, d13, [sp, #32]
        stp     d14, d15, [sp, #48]
.if \k == 7
        stp     x19, x20, [sp, #-32]!
        stp     x21, x22, [sp, #16]
.endif
        ldr     x1, [x0, #40]
        lsl     x1, x1, #2
        ldr     x2, [x0, #56]
        lsl     x2, x2, #2
        ldr     x11, [x0, #48]
        lsl     x11, x11, #2
        add     x12, x11, x11
        add     x13, x12, x11
        add     x14, x12, x12
.if \k == 7
        add     x21, x14, x11
        add     x22, x13, x13
.endif
        ldr     x3, [x0, #8]
        mov     x4, #0
        ldr     x5, [x0, #24]
        ldr     x17, [x0, #32]
        cbz     x17, .Ldw\k\()_done
        add     x17, x0, #64
        ld1r    {v1.4s}, [x17]
        add     x17, x0, #68
        ld1r    {v2.4s}, [x17]
        ldr     w17, [x0, #72]
        cmp     w17, #2
        b.ne    1f
        movi    v1.4s, #0
1:      fmov    v3.4s, #3.0
        fmov    v4.4s, #6.0
        ldr     w17, =0x3e2aaaab        /* 1/6 as a float, as the C reference rounds it */
        dup     v5.4s, w17

.Ldw\k\()_tile:
        cmp     x5, #4
        b.lo    .Ldw\k\()_tail
        DW_CURSORS \k
.if \k == 3
        ldr     q7, [x3, #64]
        ldr     q8, [x3, #128]
        ldr     q9, [x3, #192]
        ldr     q10, [x3, #256]
        ldr     q11, [x3, #320]
        ldr     q12, [x3, #384]
        ldr     q13, [x3, #448]
        ldr     q14, [x3, #512]
        ldr     q15, [x3, #576]
.elseif \k == 5
        ldr     q7, [x3, #64]
        ldr     q8, [x3, #128]
        ldr     q9, [x3, #192]
        ldr     q10, [x3, #256]
        ldr     q11, [x3, #320]
        ldr     q12, [x3, #384]
        ldr     q13, [x3, #448]
        ldr     q14, [x3, #512]
        ldr     q15, [x3, #576]
        ldr     q16, [x3, #640]
        ldr     q17, [x3, #704]
        ldr     q18, [x3, #768]
        ldr     q19, [x3, #832]
        ldr     q20, [x3, #896]
        ldr     q21, [x3, #960]
        ldr     q22, [x3, #1024]
        ldr     q23, [x3, #1088]
        ldr     q24, [x3, #1152]
        ldr     q25, [x3, #1216]
        ldr     q26, [x3, #1280]
        ldr     q27, [x3, #1344]
        ldr     q28, [x3, #1408]
        ldr     q29, [x3, #1472]
        ldr     q30, [x3, #1536]
        ldr     q31, [x3, #1600]
.endif
        DW_LOOPS \k, 0, .Ldw\k\()_next
.Ldw\k\()_next:
        /* the next 4 channels: the next quarter of this group, or the next group */
        and     x17, x4, #48
        cmp     x17, #48
        b.ne    2f
        add     x3, x3, #(64 * (1 + \k * \k) - 48)
        b       3f
2:      add     x3, x3, #16
3:      add     x4, x4, #16
        sub     x5, x5, #4
        b       .Ldw\k\()_tile

.Ldw\k\()_tail:
        /* one channel at a time; x3 moves by 4 bytes within the group */
        cbz     x5, .Ldw\k\()_done
        DW_CURSORS \k
        DW_LOOPS \k, 1, .Ldw\k\()_tnext
.Ldw\k\()_tnext:
        add     x3, x3, #4
        add     x4, x4, #4
        sub     x5, x5, #1
        b       .Ldw\k\()_tail

.Ldw\k\()_done:
.if \k == 7
        ldp     x21, x22, [sp, #16]
        ldp     x19, x20, [sp], #32
.endif
        ldp     d14, d15, [sp, #48]
        ldp     d12, d13, [sp, #32]
        ldp     d10, d11, [sp, #16]
        ldp     d8, d9, [sp], #64
        ret
        .ltorg
PG_ENDFUNC(\name)
.endm

        DW_FUNC pg_f32_dwconv3x3_neon, 3
        DW_FUNC pg_f32_dwconv5x5_neon, 5
        DW_FUNC pg_f32_dwconv7x7_neon, 7

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

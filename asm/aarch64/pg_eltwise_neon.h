/* pg_eltwise_neon.h - pieces shared by the NEON elementwise kernels (vexp,
 * sigmoid, silu, tanh, gelu_*, softmax): the exp core and its constants,
 * the loop skeleton of a unary kernel, and saving d8-d15.  Included by each
 * .S file after pg_asm.h; macros expand inside that file, so its constant
 * table and labels stay local to it.
 *
 * The arithmetic mirrors the AVX2 kernels (asm/x86_64/pg_eltwise_avx2.h)
 * operation for operation: the same constants, the same fused steps in the
 * same order, so the error bounds stated for those kernels hold here.
 * Constants live in registers v16-v31 for the whole call (32 vector
 * registers allow it); data uses v0-v13, so a kernel saves d8-d15. */
#ifndef PG_ELTWISE_NEON_H
#define PG_ELTWISE_NEON_H

/* reg = address of a local label in a data section. */
#if defined(__APPLE__)
.macro PG_ADR reg, label
        adrp            \reg, \label@PAGE
        add             \reg, \reg, \label@PAGEOFF
.endm
#else
.macro PG_ADR reg, label
        adrp            \reg, \label
        add             \reg, \reg, :lo12:\label
.endm
#endif

/* A 4-lane float / int32 constant. */
.macro PG_V4F value
        .float \value, \value, \value, \value
.endm
.macro PG_V4I value
        .long \value, \value, \value, \value
.endm

/* d8-d15 are callee-saved (their low 64 bits): kept on the stack. */
.macro PG_SAVE_D8_D15
        stp             d8, d9, [sp, #-64]!
        stp             d10, d11, [sp, #16]
        stp             d12, d13, [sp, #32]
        stp             d14, d15, [sp, #48]
.endm
.macro PG_RESTORE_D8_D15
        ldp             d10, d11, [sp, #16]
        ldp             d12, d13, [sp, #32]
        ldp             d14, d15, [sp, #48]
        ldp             d8, d9, [sp], #64
.endm

/* The table of PG_EXP's constants, in the order PG_EXP_LOAD puts them in
 * v16-v27; emit once per file in a data section.  Values and their meaning
 * as in pg_eltwise_avx2.h (degree-6 minimax e^r on [-ln2/2, ln2/2], from
 * tools/fit_eltwise.py; rel. error 1.7e-8 in exact arithmetic). */
.macro PG_EXP_CONSTS
        .p2align 4
.Lexp_tab:
        PG_V4F -104.0                   /* v16: e^-104 < 2^-150: rounds to +0 */
        PG_V4F 89.0                     /* v17: e^89 > FLT_MAX: rounds to +inf */
        PG_V4F 1.44269504               /* v18: log2 e */
        PG_V4F 0.693145752              /* v19: ln2_hi (0x3f317200: n ln2_hi exact) */
        PG_V4F 1.42860677e-06           /* v20: ln2_lo */
        PG_V4F 0.00138592848            /* v21: c6 */
        PG_V4F 0.00837477203            /* v22: c5 */
        PG_V4F 0.0416677259             /* v23: c4 */
        PG_V4F 0.166664213              /* v24: c3 */
        PG_V4F 0.49999994               /* v25: c2 */
        PG_V4F 1.0                      /* v26: c1, c0, and 1 */
        PG_V4I 0x3f800000               /* v27: 127 << 23, the exponent of 2^0 */
.endm

/* v16-v27 = the exp constants (x9 clobbered). */
.macro PG_EXP_LOAD
        PG_ADR          x9, .Lexp_tab
        ld1             {v16.4s, v17.4s, v18.4s, v19.4s}, [x9], #64
        ld1             {v20.4s, v21.4s, v22.4s, v23.4s}, [x9], #64
        ld1             {v24.4s, v25.4s, v26.4s, v27.4s}, [x9]
.endm

/* d = exp(x) for 4 lanes; x is left intact (d must be another register),
 * t1..t3 are clobbered.  Register names without arrangement (v4, not
 * v4.4s).
 *   x clamped to [-104, 89] (fmax/fmin propagate NaN);
 *   n = round-to-even(x log2e), r = x - n ln2_hi - n ln2_lo (fused);
 *   p = e^r = 1 + r (1 + r (c2 + r (c3 + r (c4 + r (c5 + r c6))))), Horner;
 *   d = p 2^(n >> 1) 2^(n - (n >> 1)): both factors normal for n in
 *   [-150, 129]; the first product is exact, the second rounds once, to
 *   +inf above FLT_MAX or into the subnormals below 2^-126. */
.macro PG_EXP d, x, t1, t2, t3
        fmax            \d\().4s, v16.4s, \x\().4s
        fmin            \d\().4s, v17.4s, \d\().4s
        fmul            \t1\().4s, \d\().4s, v18.4s
        frintn          \t1\().4s, \t1\().4s
        fmls            \d\().4s, \t1\().4s, v19.4s
        fmls            \d\().4s, \t1\().4s, v20.4s
        fcvtzs          \t1\().4s, \t1\().4s
        mov             \t2\().16b, v22.16b
        fmla            \t2\().4s, v21.4s, \d\().4s
        mov             \t3\().16b, v23.16b
        fmla            \t3\().4s, \t2\().4s, \d\().4s
        mov             \t2\().16b, v24.16b
        fmla            \t2\().4s, \t3\().4s, \d\().4s
        mov             \t3\().16b, v25.16b
        fmla            \t3\().4s, \t2\().4s, \d\().4s
        mov             \t2\().16b, v26.16b
        fmla            \t2\().4s, \t3\().4s, \d\().4s
        mov             \t3\().16b, v26.16b
        fmla            \t3\().4s, \t2\().4s, \d\().4s
        sshr            \t2\().4s, \t1\().4s, #1
        sub             \t1\().4s, \t1\().4s, \t2\().4s
        shl             \t2\().4s, \t2\().4s, #23
        add             \t2\().4s, \t2\().4s, v27.4s
        shl             \t1\().4s, \t1\().4s, #23
        add             \t1\().4s, \t1\().4s, v27.4s
        fmul            \t3\().4s, \t3\().4s, \t2\().4s
        fmul            \d\().4s, \t3\().4s, \t1\().4s
.endm

/* The loop of a unary kernel  void fn(size_t n, const float *x, float *y)
 * (x0 = n, x1 = x, x2 = y), entered after PG_SAVE_D8_D15 and the
 * constants; it restores d8-d15 and returns.  8 floats per iteration as two
 * independent 4-lane bodies (v0-v6 and v7-v13), then one body of 4, then
 * the last 1..3 gathered into the low lanes of one vector (lane loads and
 * stores: nothing past n is read or written).  body is a macro
 * `body v, t1, t2, t3, t4, t5, t6` (register names without arrangement)
 * that replaces v = x with v = f(x).  y may equal x: every load of a step
 * precedes its stores. */
.macro PG_UNARY_LOOP name, body
        cmp             x0, #8
        b.lo            .L\name\()_by4
.L\name\()_by8:
        ldp             q0, q7, [x1], #32
        \body           v0, v1, v2, v3, v4, v5, v6
        \body           v7, v8, v9, v10, v11, v12, v13
        stp             q0, q7, [x2], #32
        sub             x0, x0, #8
        cmp             x0, #8
        b.hs            .L\name\()_by8
.L\name\()_by4:
        cmp             x0, #4
        b.lo            .L\name\()_tail
        ldr             q0, [x1], #16
        \body           v0, v1, v2, v3, v4, v5, v6
        str             q0, [x2], #16
        sub             x0, x0, #4
.L\name\()_tail:
        cbz             x0, .L\name\()_done
        movi            v0.4s, #0
        ld1             {v0.s}[0], [x1]
        cmp             x0, #2
        b.lo            1f
        add             x3, x1, #4
        ld1             {v0.s}[1], [x3]
        cmp             x0, #3
        b.lo            1f
        add             x3, x1, #8
        ld1             {v0.s}[2], [x3]
1:      \body           v0, v1, v2, v3, v4, v5, v6
        st1             {v0.s}[0], [x2]
        cmp             x0, #2
        b.lo            .L\name\()_done
        add             x3, x2, #4
        st1             {v0.s}[1], [x3]
        cmp             x0, #3
        b.lo            .L\name\()_done
        add             x3, x2, #8
        st1             {v0.s}[2], [x3]
.L\name\()_done:
        PG_RESTORE_D8_D15
        ret
.endm

#endif

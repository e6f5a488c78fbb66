/* f32_layernorm_neon.S - one row:
 *     y = (x - mean) / sqrt(var + eps) * gamma (+ beta)
 * As the AVX2 kernel: pass 1 sums x, pass 2 sums (x - mean)^2 (two-pass
 * variance: a large common offset cannot cancel it away), pass 3 writes
 * y = ((x - mean) r) gamma + beta with one fused step, or without beta when
 * it is NULL (a separate pass 3 loop, picked once).  Sums in four 4-lane
 * accumulators (16 lanes), the last n % 4 in a scalar; r = 1 / sqrt(var +
 * eps) by one exact sqrt and divide.
 * Semantics: engine/kernels/layernorm/layernorm.h. */
#include "pg_asm.h"

        .text
/* acc (v16) = sum over the row at x1 of \op applied per 4 lanes, where
 * \op v, acc adds v's contribution; scalar tail through \sop s, acc (s16).
 * x9, x12 clobbered; v20 = mean for the deviation pass. */
.macro ROW_SUM name, op, sop
        movi            v16.4s, #0
        movi            v17.4s, #0
        movi            v18.4s, #0
        movi            v19.4s, #0
        mov             x9, x1
        mov             x12, x0
        cmp             x12, #16
        b.lo            .L\name\()_4
.L\name\()_16:
        ld1             {v0.4s, v1.4s, v2.4s, v3.4s}, [x9], #64
        \op             v0, v16
        \op             v1, v17
        \op             v2, v18
        \op             v3, v19
        sub             x12, x12, #16
        cmp             x12, #16
        b.hs            .L\name\()_16
.L\name\()_4:
        cmp             x12, #4
        b.lo            .L\name\()_red
        ld1             {v0.4s}, [x9], #16
        \op             v0, v16
        sub             x12, x12, #4
        b               .L\name\()_4
.L\name\()_red:
        fadd            v16.4s, v16.4s, v17.4s
        fadd            v18.4s, v18.4s, v19.4s
        fadd            v16.4s, v16.4s, v18.4s
        faddp           v16.4s, v16.4s, v16.4s
        faddp           s16, v16.2s
        cbz             x12, .L\name\()_end
.L\name\()_1:
        ldr             s2, [x9], #4
        \sop            s2, s16
        subs            x12, x12, #1
        b.ne            .L\name\()_1
.L\name\()_end:
.endm

.macro SUM v, acc
        fadd            \acc\().4s, \acc\().4s, \v\().4s
.endm
.macro SUM1 s, acc
        fadd            \acc, \acc, \s
.endm
/* acc += (x - mean)^2, mean in v20 */
.macro SUMDEV v, acc
        fsub            \v\().4s, \v\().4s, v20.4s
        fmla            \acc\().4s, \v\().4s, \v\().4s
.endm
.macro SUMDEV1 s, acc
        fsub            \s, \s, s20
        fmadd           \acc, \s, \s, \acc
.endm

/* void pg_f32_layernorm_neon(size_t n, const float *x, const float *gamma,
 *                            x0        x1              x2
 *                            const float *beta, float eps, float *y)
 *                            x3                 s0         x4 */
PG_FUNC(pg_f32_layernorm_neon)
        cbz             x0, .Lln_done
        fmov            s22, s0                 /* eps: v0 carries data below */
        ucvtf           s21, x0                 /* n */
        ROW_SUM         lnsum, SUM, SUM1
        fdiv            s20, s16, s21
        dup             v20.4s, v20.s[0]        /* mean */
        ROW_SUM         lndev, SUMDEV, SUMDEV1
        fdiv            s16, s16, s21
        fadd            s16, s16, s22
        fsqrt           s16, s16
        fmov            s1, #1.0
        fdiv            s21, s1, s16
        dup             v21.4s, v21.s[0]        /* r = 1 / sqrt(var + eps) */
        cbz             x3, .Lln_nobeta

        /* pass 3 with beta: y = ((x - mean) r) gamma + beta */
.Lln_b4:
        cmp             x0, #4
        b.lo            .Lln_b1
        ld1             {v0.4s}, [x1], #16
        ld1             {v1.4s}, [x2], #16
        ld1             {v2.4s}, [x3], #16
        fsub            v0.4s, v0.4s, v20.4s
        fmul            v0.4s, v0.4s, v21.4s
        fmla            v2.4s, v0.4s, v1.4s
        st1             {v2.4s}, [x4], #16
        sub             x0, x0, #4
        b               .Lln_b4
.Lln_b1:
        cbz             x0, .Lln_done
        ldr             s0, [x1], #4
        ldr             s1, [x2], #4
        ldr             s2, [x3], #4
        fsub            s0, s0, s20
        fmul            s0, s0, s21
        fmadd           s2, s0, s1, s2
        str             s2, [x4], #4
        sub             x0, x0, #1
        b               .Lln_b1

        /* pass 3 without beta: y = ((x - mean) r) gamma */
.Lln_nobeta:
        cmp             x0, #4
        b.lo            .Lln_n1
        ld1             {v0.4s}, [x1], #16
        ld1             {v1.4s}, [x2], #16
        fsub            v0.4s, v0.4s, v20.4s
        fmul            v0.4s, v0.4s, v21.4s
        fmul            v0.4s, v0.4s, v1.4s
        st1             {v0.4s}, [x4], #16
        sub             x0, x0, #4
        b               .Lln_nobeta
.Lln_n1:
        cbz             x0, .Lln_done
        ldr             s0, [x1], #4
        ldr             s1, [x2], #4
        fsub            s0, s0, s20
        fmul            s0, s0, s21
        fmul            s0, s0, s1
        str             s0, [x4], #4
        sub             x0, x0, #1
        b               .Lln_n1
.Lln_done:
        ret
PG_ENDFUNC(pg_f32_layernorm_neon)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

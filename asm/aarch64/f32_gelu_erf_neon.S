/* f32_gelu_erf_neon.S - y = 0.5 x (1 + erf(x / sqrt 2)), as the AVX2 kernel.
 * erf(z), z = min(|x| / sqrt 2, 4), by 8 polynomials of degree 7, one per
 * interval [k/2, k/2 + 1/2), k = 0..7, in t = z - k/2, k = trunc(min(2z, 7)).
 * Where the AVX2 kernel picks each lane's coefficient with vpermps, this one
 * uses tbl: the 8 values of coefficient J sit in a register pair (32 bytes)
 * and the byte indices 4k + {0,1,2,3} pick lane k's float.  z = 4 gives
 * erf = 1 to float precision.  Then y = h + h sign(x) erf(z), h = x / 2.
 * Coefficients: tools/fit_eltwise.py (max abs error of erf 2.9e-8 in exact
 * arithmetic).  Error bound: engine/kernels/gelu_erf/gelu_erf.h.
 *
 * Registers: v16-v31 the tables (coefficient J in v(16+2(7-J)), v(17+2(7-J))
 * from c7 down to c0), v14 = {0x03020100, -, -, 0x04040404} for the byte
 * indices, v15 = {0.5, 1/sqrt2, 4, 7}. */
#include "pg_asm.h"
#include "pg_eltwise_neon.h"

        .section .rodata
        .p2align 4
.Lerf_tab:
        .float -0.0158033706, 0.017885495, 0.00374511047, -0.00593309943, -0.000721526972, 0.000635815377, 0.000173596491, 1.71447045e-05                 /* c7 */
        .float -0.0116848964, -0.0578824468, 0.0140437931, 0.019432418, -0.00151689292, -0.00278052757, -0.000577552302, -5.06956567e-05                  /* c6 */
        .float 0.118305534, 0.0101318685, -0.073167704, -0.0147429621, 0.0138824033, 0.00609257445, 0.000952111906, 7.18711235e-05                       /* c5 */
        .float -0.00135029701, 0.182494462, 0.0701134279, -0.0446500517, -0.0346245877, -0.00861439575, -0.00102978956, -6.54731411e-05                  /* c4 */
        .float -0.375948995, -0.146395549, 0.138251558, 0.138760328, 0.0482452735, 0.00834890362, 0.000787283527, 4.20224096e-05                         /* c3 */
        .float -1.13215992e-05, -0.439395279, -0.415100187, -0.178396031, -0.0413353406, -0.00544562936, -0.000417647476, -1.88814647e-05                /* c2 */
        .float 1.12837946, 0.87878269, 0.41510731, 0.118930303, 0.0206670184, 0.00217828224, 0.00013925042, 5.39904249e-06                              /* c1 */
        .float 0.0, 0.520499885, 0.842700779, 0.966105163, 0.995322287, 0.999593019, 0.999977887, 0.999999285                                          /* c0 */
.Lerf_idx:
        .long 0x03020100, 0, 0, 0x04040404                                  /* v14 */
        .float 0.5, 0.707106781, 4.0, 7.0                                   /* v15 */

        .text
/* t6 = h = x/2; t1 = z = min(|x|/sqrt2, 4); t2 = k = trunc(min(2z, 7));
 * t1 = t = z - k/2; t3 = byte indices; t5 = erf(z) by Horner (t4/t5
 * alternate); t4 = sign(x) ? -erf : erf; v = h + h t4. */
.macro GELU_ERF_BODY v, t1, t2, t3, t4, t5, t6
        fmul            \t6\().4s, \v\().4s, v15.s[0]
        fabs            \t1\().4s, \v\().4s
        fmul            \t1\().4s, \t1\().4s, v15.s[1]
        dup             \t3\().4s, v15.s[2]
        fmin            \t1\().4s, \t1\().4s, \t3\().4s
        fadd            \t2\().4s, \t1\().4s, \t1\().4s
        dup             \t3\().4s, v15.s[3]
        fmin            \t2\().4s, \t2\().4s, \t3\().4s
        fcvtzs          \t2\().4s, \t2\().4s
        scvtf           \t3\().4s, \t2\().4s
        fmls            \t1\().4s, \t3\().4s, v15.s[0]
        dup             \t3\().4s, v14.s[0]
        mla             \t3\().4s, \t2\().4s, v14.s[3]
        tbl             \t4\().16b, {v16.16b, v17.16b}, \t3\().16b
        tbl             \t5\().16b, {v18.16b, v19.16b}, \t3\().16b
        fmla            \t5\().4s, \t4\().4s, \t1\().4s
        tbl             \t4\().16b, {v20.16b, v21.16b}, \t3\().16b
        fmla            \t4\().4s, \t5\().4s, \t1\().4s
        tbl             \t5\().16b, {v22.16b, v23.16b}, \t3\().16b
        fmla            \t5\().4s, \t4\().4s, \t1\().4s
        tbl             \t4\().16b, {v24.16b, v25.16b}, \t3\().16b
        fmla            \t4\().4s, \t5\().4s, \t1\().4s
        tbl             \t5\().16b, {v26.16b, v27.16b}, \t3\().16b
        fmla            \t5\().4s, \t4\().4s, \t1\().4s
        tbl             \t4\().16b, {v28.16b, v29.16b}, \t3\().16b
        fmla            \t4\().4s, \t5\().4s, \t1\().4s
        tbl             \t5\().16b, {v30.16b, v31.16b}, \t3\().16b
        fmla            \t5\().4s, \t4\().4s, \t1\().4s
        fneg            \t2\().4s, \t5\().4s
        sshr            \t4\().4s, \v\().4s, #31
        bsl             \t4\().16b, \t2\().16b, \t5\().16b
        fmla            \t6\().4s, \t4\().4s, \t6\().4s
        mov             \v\().16b, \t6\().16b
.endm

/* void pg_f32_gelu_erf_neon(size_t n, const float *x, float *y)
 *                           x0        x1              x2 */
PG_FUNC(pg_f32_gelu_erf_neon)
        PG_SAVE_D8_D15
        PG_ADR          x9, .Lerf_tab
        ld1             {v16.4s, v17.4s, v18.4s, v19.4s}, [x9], #64
        ld1             {v20.4s, v21.4s, v22.4s, v23.4s}, [x9], #64
        ld1             {v24.4s, v25.4s, v26.4s, v27.4s}, [x9], #64
        ld1             {v28.4s, v29.4s, v30.4s, v31.4s}, [x9], #64
        ld1             {v14.4s, v15.4s}, [x9]
        PG_UNARY_LOOP gelu_erf, GELU_ERF_BODY
PG_ENDFUNC(pg_f32_gelu_erf_neon)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

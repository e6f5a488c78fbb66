/* f32_silu_avx2_fma3.S - y[i] = x[i] * sigmoid(x[i]), as
 * x (x >= 0 ? 1 : t) / (1 + t) with t = exp(-|x|).
 * Error: engine/kernels/silu/silu.h. */
#include "pg_asm.h"
#include "pg_eltwise_avx2.h"

        PG_RODATA
        PG_EXP_CONSTS
        PG_VI .Lsilu_sign, 0x80000000

        .text
/* t5 = -|x|, t4 = t = exp(-|x|), t5 = 1 + t, t6 = sign(x) ? t : 1,
 * v = x t6 / (1 + t) */
.macro SILU_BODY v, t1, t2, t3, t4, t5, t6
        vorps           \t5, \v, [rip + .Lsilu_sign]
        PG_EXP          \t4, \t5, \t1, \t2, \t3
        vaddps          \t5, \t4, [rip + .Lexp_one]
        vmovaps         \t6, [rip + .Lexp_one]
        vblendvps       \t6, \t6, \t4, \v
        vmulps          \v, \v, \t6
        vdivps          \v, \v, \t5
.endm

/* void pg_f32_silu_avx2_fma3(size_t n, const float *x, float *y)
 *                            rdi       rsi             rdx */
PG_FUNC(pg_f32_silu_avx2_fma3)
        PG_UNARY_LOOP silu, SILU_BODY
PG_ENDFUNC(pg_f32_silu_avx2_fma3)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

/* f32_sigmoid_avx2_fma3.S - y[i] = 1 / (1 + exp(-x[i])), as
 * (x >= 0 ? 1 : t) / (1 + t) with t = exp(-|x|): no overflow, and relative
 * accuracy in both tails.  Error: engine/kernels/sigmoid/sigmoid.h. */
#include "pg_asm.h"
#include "pg_eltwise_avx2.h"

        PG_RODATA
        PG_EXP_CONSTS
        PG_VI .Lsig_sign, 0x80000000

        .text
/* v = sigmoid(v): t5 = -|x|, t4 = t = exp(-|x|), t5 = 1 + t,
 * v = (sign(x) ? t : 1) / (1 + t) */
.macro SIGMOID_BODY v, t1, t2, t3, t4, t5, t6
        vorps           \t5, \v, [rip + .Lsig_sign]
        PG_EXP          \t4, \t5, \t1, \t2, \t3
        vaddps          \t5, \t4, [rip + .Lexp_one]
        vmovaps         \t6, [rip + .Lexp_one]
        vblendvps       \v, \t6, \t4, \v
        vdivps          \v, \v, \t5
.endm

/* void pg_f32_sigmoid_avx2_fma3(size_t n, const float *x, float *y)
 *                               rdi       rsi             rdx */
PG_FUNC(pg_f32_sigmoid_avx2_fma3)
        PG_UNARY_LOOP sigmoid, SIGMOID_BODY
PG_ENDFUNC(pg_f32_sigmoid_avx2_fma3)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

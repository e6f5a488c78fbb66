/* f32_vexp_avx2_fma3.S - y[i] = exp(x[i]); the method and its measured
 * error are in engine/kernels/vexp/vexp.h, the exp core in pg_eltwise_avx2.h. */
#include "pg_asm.h"
#include "pg_eltwise_avx2.h"

        PG_RODATA
        PG_EXP_CONSTS

        .text
.macro VEXP_BODY v, t1, t2, t3, t4, t5, t6
        PG_EXP          \t4, \v, \t1, \t2, \t3
        vmovaps         \v, \t4
.endm

/* void pg_f32_vexp_avx2_fma3(size_t n, const float *x, float *y)
 *                            rdi       rsi             rdx */
PG_FUNC(pg_f32_vexp_avx2_fma3)
        PG_UNARY_LOOP vexp, VEXP_BODY
PG_ENDFUNC(pg_f32_vexp_avx2_fma3)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

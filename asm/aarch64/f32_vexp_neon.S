/* f32_vexp_neon.S - y[i] = exp(x[i]); the method and the error bound are in
 * engine/kernels/vexp/vexp.h, the exp core in pg_eltwise_neon.h (the same
 * steps and constants as the AVX2 kernel). */
#include "pg_asm.h"
#include "pg_eltwise_neon.h"

        .section .rodata
        PG_EXP_CONSTS

        .text
.macro VEXP_BODY v, t1, t2, t3, t4, t5, t6
        PG_EXP          \t4, \v, \t1, \t2, \t3
        mov             \v\().16b, \t4\().16b
.endm

/* void pg_f32_vexp_neon(size_t n, const float *x, float *y)
 *                       x0        x1              x2 */
PG_FUNC(pg_f32_vexp_neon)
        PG_SAVE_D8_D15
        PG_EXP_LOAD
        PG_UNARY_LOOP vexp, VEXP_BODY
PG_ENDFUNC(pg_f32_vexp_neon)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

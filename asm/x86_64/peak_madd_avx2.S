/* peak_madd_avx2.S - the throughput yardstick of the avx2 int8 kernel
 * (u8s8_gemm_6x32_avx2.S), as peak_lowp_avx512.S is the VNNI kernels':
 * its instruction pair, vpmaddwd ymm into a temporary then vpaddd into one
 * of 12 accumulators (12 chains, two temporaries in turn), 12 pairs an
 * iteration.  A pair is 16 products summed in twos and accumulated: 32
 * int8-equivalent ops, as one VNNI lane-quad counts, so an iteration is
 * 384.  Zero operands.
 *
 * void pg_peak_madd_avx2(uint64_t iterations)     rdi */
#include "pg_asm.h"

.macro PAIR acc, t
        vpmaddwd \t, ymm14, ymm15
        vpaddd  \acc, \acc, \t
.endm

        .text
PG_FUNC(pg_peak_madd_avx2)
        vpxor   ymm14, ymm14, ymm14
        vpxor   ymm15, ymm15, ymm15
        .irp i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
        vpxor   ymm\i, ymm\i, ymm\i
        .endr
        test    rdi, rdi
        jz      2f
        .p2align 5
1:      PAIR    ymm0, ymm12
        PAIR    ymm1, ymm13
        PAIR    ymm2, ymm12
        PAIR    ymm3, ymm13
        PAIR    ymm4, ymm12
        PAIR    ymm5, ymm13
        PAIR    ymm6, ymm12
        PAIR    ymm7, ymm13
        PAIR    ymm8, ymm12
        PAIR    ymm9, ymm13
        PAIR    ymm10, ymm12
        PAIR    ymm11, ymm13
        dec     rdi
        jnz     1b
2:      vzeroupper
        ret
PG_ENDFUNC(pg_peak_madd_avx2)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

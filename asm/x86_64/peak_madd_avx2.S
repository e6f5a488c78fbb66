/* peak_madd_avx2.S - the throughput yardsticks of the avx2 int8 kernels
 * (u8s8_gemm_6x32_avx2.S, u8s8_gemm_6x32_avx2_maddubs.S), as
 * peak_lowp_avx512.S is the VNNI kernels'.
 *
 * pg_peak_madd_avx2, the exact kernel's:
 * its instruction pair, vpmaddwd ymm into a temporary then vpaddd into one
 * of 12 accumulators (12 chains, two temporaries in turn), 12 pairs an
 * iteration.  A pair is 16 products summed in twos and accumulated: 32
 * int8-equivalent ops, as one VNNI lane-quad counts, so an iteration is
 * 384.  Zero operands.
 *
 *
 * pg_peak_maddubs_avx2, the maddubs kernel's: its triple, vpmaddubsw (32 u8 x
 * s8 products summed in twos) then vpmaddwd by ones (in fours) into a
 * temporary, vpaddd into an accumulator: 64 ops, 768 an iteration.
 *
 * void pg_peak_madd_avx2(uint64_t iterations)     rdi
 * void pg_peak_maddubs_avx2(uint64_t iterations)  rdi */
#include "pg_asm.h"

/* every operand and accumulator at zero */
.macro ZERO_ALL
        vpxor   ymm14, ymm14, ymm14
        vpxor   ymm15, ymm15, ymm15
        .irp i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
        vpxor   ymm\i, ymm\i, ymm\i
        .endr
.endm

.macro PAIR acc, t
        vpmaddwd \t, ymm14, ymm15
        vpaddd  \acc, \acc, \t
.endm

        .text
PG_FUNC(pg_peak_madd_avx2)
        ZERO_ALL
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

.macro TRIPLE acc, t
        vpmaddubsw \t, ymm14, ymm15
        vpmaddwd \t, \t, ymm15
        vpaddd  \acc, \acc, \t
.endm

PG_FUNC(pg_peak_maddubs_avx2)
        ZERO_ALL
        test    rdi, rdi
        jz      2f
        .p2align 5
1:      TRIPLE  ymm0, ymm12
        TRIPLE  ymm1, ymm13
        TRIPLE  ymm2, ymm12
        TRIPLE  ymm3, ymm13
        TRIPLE  ymm4, ymm12
        TRIPLE  ymm5, ymm13
        TRIPLE  ymm6, ymm12
        TRIPLE  ymm7, ymm13
        TRIPLE  ymm8, ymm12
        TRIPLE  ymm9, ymm13
        TRIPLE  ymm10, ymm12
        TRIPLE  ymm11, ymm13
        dec     rdi
        jnz     1b
2:      vzeroupper
        ret
PG_ENDFUNC(pg_peak_maddubs_avx2)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

/* peak_fma_avx2.S - the FMA throughput yardstick: 12 independent chains of
 * vfmadd231ps ymm, more than latency x FMA pipes (4 x 2 on current cores),
 * so the loop runs at the FMA units' peak: 12 * 16 = 192 flops per
 * iteration.  The operands are zeros: no denormals, no overflow.
 *
 * void pg_peak_fma_avx2(uint64_t iterations)     rdi */
#include "pg_asm.h"

        .text
PG_FUNC(pg_peak_fma_avx2)
        vxorps  ymm0, ymm0, ymm0
        vxorps  ymm1, ymm1, ymm1
        vxorps  ymm2, ymm2, ymm2
        vxorps  ymm3, ymm3, ymm3
        vxorps  ymm4, ymm4, ymm4
        vxorps  ymm5, ymm5, ymm5
        vxorps  ymm6, ymm6, ymm6
        vxorps  ymm7, ymm7, ymm7
        vxorps  ymm8, ymm8, ymm8
        vxorps  ymm9, ymm9, ymm9
        vxorps  ymm10, ymm10, ymm10
        vxorps  ymm11, ymm11, ymm11
        vxorps  ymm14, ymm14, ymm14
        vxorps  ymm15, ymm15, ymm15
        test    rdi, rdi
        jz      2f
        .p2align 5
1:      vfmadd231ps ymm0, ymm14, ymm15
        vfmadd231ps ymm1, ymm14, ymm15
        vfmadd231ps ymm2, ymm14, ymm15
        vfmadd231ps ymm3, ymm14, ymm15
        vfmadd231ps ymm4, ymm14, ymm15
        vfmadd231ps ymm5, ymm14, ymm15
        vfmadd231ps ymm6, ymm14, ymm15
        vfmadd231ps ymm7, ymm14, ymm15
        vfmadd231ps ymm8, ymm14, ymm15
        vfmadd231ps ymm9, ymm14, ymm15
        vfmadd231ps ymm10, ymm14, ymm15
        vfmadd231ps ymm11, ymm14, ymm15
        dec     rdi
        jnz     1b
2:      vzeroupper
        ret
PG_ENDFUNC(pg_peak_fma_avx2)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

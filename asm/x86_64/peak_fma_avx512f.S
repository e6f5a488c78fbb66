/* peak_fma_avx512f.S - the FMA throughput yardstick at 512 bits: 16
 * independent chains of vfmadd231ps zmm, twice latency x FMA pipes (4 x 2
 * on current cores), so the loop runs at the FMA units' peak: 16 * 32 = 512
 * flops per iteration.  The operands are zeros: no denormals, no overflow.
 *
 * void pg_peak_fma_avx512f(uint64_t iterations)     rdi */
#include "pg_asm.h"

        .text
PG_FUNC(pg_peak_fma_avx512f)
        vpxord  zmm0, zmm0, zmm0
        vmovaps zmm1, zmm0
        vmovaps zmm2, zmm0
        vmovaps zmm3, zmm0
        vmovaps zmm4, zmm0
        vmovaps zmm5, zmm0
        vmovaps zmm6, zmm0
        vmovaps zmm7, zmm0
        vmovaps zmm8, zmm0
        vmovaps zmm9, zmm0
        vmovaps zmm10, zmm0
        vmovaps zmm11, zmm0
        vmovaps zmm12, zmm0
        vmovaps zmm13, zmm0
        vmovaps zmm14, zmm0
        vmovaps zmm15, zmm0
        vmovaps zmm30, zmm0
        vmovaps zmm31, zmm0
        test    rdi, rdi
        jz      2f
        .p2align 5
1:      vfmadd231ps zmm0, zmm30, zmm31
        vfmadd231ps zmm1, zmm30, zmm31
        vfmadd231ps zmm2, zmm30, zmm31
        vfmadd231ps zmm3, zmm30, zmm31
        vfmadd231ps zmm4, zmm30, zmm31
        vfmadd231ps zmm5, zmm30, zmm31
        vfmadd231ps zmm6, zmm30, zmm31
        vfmadd231ps zmm7, zmm30, zmm31
        vfmadd231ps zmm8, zmm30, zmm31
        vfmadd231ps zmm9, zmm30, zmm31
        vfmadd231ps zmm10, zmm30, zmm31
        vfmadd231ps zmm11, zmm30, zmm31
        vfmadd231ps zmm12, zmm30, zmm31
        vfmadd231ps zmm13, zmm30, zmm31
        vfmadd231ps zmm14, zmm30, zmm31
        vfmadd231ps zmm15, zmm30, zmm31
        dec     rdi
        jnz     1b
2:      vzeroupper
        ret
PG_ENDFUNC(pg_peak_fma_avx512f)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

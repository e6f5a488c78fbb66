/* peak_lowp_avx512.S - the throughput yardsticks of the low-precision
 * GEMM instructions, as peak_fma_avx512f.S is the FMA's: 16 independent
 * chains of vdpbf16ps zmm (16 x 64 = 1024 flops an iteration) and of
 * vpdpbusd zmm (16 x 128 = 2048 int8 ops an iteration).  Zero operands.
 *
 * And AVX-VNNI's (the VEX vpdpbusd ymm of CPUs without AVX-512, which the
 * avxvnni kernel runs): 12 chains on ymm0..ymm11 (12 x 64 = 768 int8 ops
 * an iteration; 12 covers its latency at two a cycle).
 *
 * And the AMX tile unit's: 4 independent TDPBF16PS / TDPBUSD on full
 * 16 x 64-byte tiles an iteration (4 x 16 x 16 x 32 x 2 = 65536 flops,
 * 4 x 16 x 16 x 64 x 2 = 131072 int8 ops).
 *
 * void pg_peak_bf16_avx512bf16(uint64_t iterations)     rdi
 * void pg_peak_vnni_avx512vnni(uint64_t iterations)     rdi
 * void pg_peak_vnni_avxvnni(uint64_t iterations)        rdi
 * void pg_peak_amx_bf16(uint64_t iterations)            rdi
 * void pg_peak_amx_int8(uint64_t iterations)            rdi */
#include "pg_asm.h"

.macro ZERO16
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
.endm

.macro BODY16 op
        \op     zmm0, zmm30, zmm31
        \op     zmm1, zmm30, zmm31
        \op     zmm2, zmm30, zmm31
        \op     zmm3, zmm30, zmm31
        \op     zmm4, zmm30, zmm31
        \op     zmm5, zmm30, zmm31
        \op     zmm6, zmm30, zmm31
        \op     zmm7, zmm30, zmm31
        \op     zmm8, zmm30, zmm31
        \op     zmm9, zmm30, zmm31
        \op     zmm10, zmm30, zmm31
        \op     zmm11, zmm30, zmm31
        \op     zmm12, zmm30, zmm31
        \op     zmm13, zmm30, zmm31
        \op     zmm14, zmm30, zmm31
        \op     zmm15, zmm30, zmm31
.endm

        .text
PG_FUNC(pg_peak_bf16_avx512bf16)
        ZERO16
        test    rdi, rdi
        jz      2f
        .p2align 5
1:      BODY16  vdpbf16ps
        dec     rdi
        jnz     1b
2:      vzeroupper
        ret
PG_ENDFUNC(pg_peak_bf16_avx512bf16)

PG_FUNC(pg_peak_vnni_avx512vnni)
        ZERO16
        test    rdi, rdi
        jz      2f
        .p2align 5
1:      BODY16  vpdpbusd
        dec     rdi
        jnz     1b
2:      vzeroupper
        ret
PG_ENDFUNC(pg_peak_vnni_avx512vnni)

PG_FUNC(pg_peak_vnni_avxvnni)
        vpxor   ymm0, ymm0, ymm0
        vmovdqa ymm1, ymm0
        vmovdqa ymm2, ymm0
        vmovdqa ymm3, ymm0
        vmovdqa ymm4, ymm0
        vmovdqa ymm5, ymm0
        vmovdqa ymm6, ymm0
        vmovdqa ymm7, ymm0
        vmovdqa ymm8, ymm0
        vmovdqa ymm9, ymm0
        vmovdqa ymm10, ymm0
        vmovdqa ymm11, ymm0
        vmovdqa ymm14, ymm0
        vmovdqa ymm15, ymm0
        test    rdi, rdi
        jz      2f
        .p2align 5
1:      {vex} vpdpbusd ymm0, ymm14, ymm15
        {vex} vpdpbusd ymm1, ymm14, ymm15
        {vex} vpdpbusd ymm2, ymm14, ymm15
        {vex} vpdpbusd ymm3, ymm14, ymm15
        {vex} vpdpbusd ymm4, ymm14, ymm15
        {vex} vpdpbusd ymm5, ymm14, ymm15
        {vex} vpdpbusd ymm6, ymm14, ymm15
        {vex} vpdpbusd ymm7, ymm14, ymm15
        {vex} vpdpbusd ymm8, ymm14, ymm15
        {vex} vpdpbusd ymm9, ymm14, ymm15
        {vex} vpdpbusd ymm10, ymm14, ymm15
        {vex} vpdpbusd ymm11, ymm14, ymm15
        dec     rdi
        jnz     1b
2:      vzeroupper
        ret
PG_ENDFUNC(pg_peak_vnni_avxvnni)

.macro AMXLOOP op
        ldtilecfg [rip + amx_cfg]
        tilezero tmm0
        tilezero tmm1
        tilezero tmm2
        tilezero tmm3
        tilezero tmm4
        tilezero tmm5
        tilezero tmm6
        tilezero tmm7
        test    rdi, rdi
        jz      2f
        .p2align 5
1:      \op     tmm0, tmm4, tmm6
        \op     tmm1, tmm4, tmm7
        \op     tmm2, tmm5, tmm6
        \op     tmm3, tmm5, tmm7
        dec     rdi
        jnz     1b
2:      tilerelease
        ret
.endm

PG_FUNC(pg_peak_amx_bf16)
        AMXLOOP tdpbf16ps
PG_ENDFUNC(pg_peak_amx_bf16)

PG_FUNC(pg_peak_amx_int8)
        AMXLOOP tdpbusd
PG_ENDFUNC(pg_peak_amx_int8)

        PG_RODATA
        .p2align 6
amx_cfg:
        .byte   1, 0
        .zero   14
        .short  64, 64, 64, 64, 64, 64, 64, 64
        .zero   16
        .byte   16, 16, 16, 16, 16, 16, 16, 16
        .zero   8

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

/* f32_rmsnorm_avx2_fma3.S - one row: y = x / sqrt(mean(x^2) + eps) * gamma.
 * Pass 1 sums x^2 (FMA, two 8-lane accumulators); the scalar
 * 1 / sqrt(ss / n + eps) is one sqrt and one divide per row (exact
 * rounding, no rsqrt estimate); pass 2 writes y = (x r) gamma.
 * Semantics: engine/kernels/rmsnorm/rmsnorm.h. */
#include "pg_asm.h"
#include "pg_eltwise_avx2.h"

        .text
.macro SUMSQ off, acc, tmp
        vmovups         \tmp, [rsi+\off]
        vfmadd231ps     \acc, \tmp, \tmp
.endm
.macro SUMSQ_TAIL off, acc, tmp
        vmaskmovps      \tmp, ymm14, [rsi+\off]
        vfmadd231ps     \acc, \tmp, \tmp
.endm
/* y = (x r) gamma, r in ymm13 */
.macro SCALE off, acc, tmp
        vmulps          \tmp, ymm13, [rsi+\off]
        vmulps          \tmp, \tmp, [rdx+\off]
        vmovups         [rcx+\off], \tmp
.endm
.macro SCALE_TAIL off, acc, tmp
        vmaskmovps      \tmp, ymm14, [rsi+\off]
        vmaskmovps      ymm4, ymm14, [rdx+\off]
        vmulps          \tmp, \tmp, ymm13
        vmulps          \tmp, \tmp, ymm4
        vmaskmovps      [rcx+\off], ymm14, \tmp
.endm

/* void pg_f32_rmsnorm_avx2_fma3(size_t n, const float *x, const float *gamma,
 *                               rdi       rsi             rdx
 *                               float eps, float *y)
 *                               xmm0       rcx */
PG_FUNC(pg_f32_rmsnorm_avx2_fma3)
        test            rdi, rdi
        jz              .Lrms_done
        PG_ROW_SETUP
        vxorps          ymm10, ymm10, ymm10
        vxorps          ymm11, ymm11, ymm11
        PG_ROW_PASS     SUMSQ, SUMSQ_TAIL
        PG_HSUM2        xmm5
        vcvtsi2ss       xmm6, xmm6, rdi
        vdivss          xmm5, xmm5, xmm6
        vaddss          xmm5, xmm5, xmm0
        vsqrtss         xmm5, xmm5, xmm5
        mov             eax, 0x3f800000
        vmovd           xmm6, eax
        vdivss          xmm5, xmm6, xmm5
        vbroadcastss    ymm13, xmm5
        PG_ROW_PASS     SCALE, SCALE_TAIL
.Lrms_done:
        vzeroupper
        ret
PG_ENDFUNC(pg_f32_rmsnorm_avx2_fma3)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

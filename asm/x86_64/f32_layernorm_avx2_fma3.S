/* f32_layernorm_avx2_fma3.S - one row:
 *     y = (x - mean) / sqrt(var + eps) * gamma (+ beta)
 * Pass 1 sums x, pass 2 sums (x - mean)^2 (two-pass variance: a large
 * common offset cannot cancel it away), pass 3 writes
 * y = ((x - mean) r) gamma + beta with one FMA, or without beta when it is
 * NULL (a separate pass 3 loop, picked once).  Sums in two 8-lane
 * accumulators; r = 1 / sqrt(var + eps) by one exact sqrt and divide.
 * Semantics: engine/kernels/layernorm/layernorm.h. */
#include "pg_asm.h"
#include "pg_eltwise_avx2.h"

        .text
.macro SUM off, acc, tmp
        vaddps          \acc, \acc, [rsi+\off]
.endm
.macro SUM_TAIL off, acc, tmp
        vmaskmovps      \tmp, ymm14, [rsi+\off]
        vaddps          \acc, \acc, \tmp
.endm
/* acc += (x - mean)^2, mean in ymm12 */
.macro SUMDEV off, acc, tmp
        vmovups         \tmp, [rsi+\off]
        vsubps          \tmp, \tmp, ymm12
        vfmadd231ps     \acc, \tmp, \tmp
.endm
.macro SUMDEV_TAIL off, acc, tmp
        vmaskmovps      \tmp, ymm14, [rsi+\off]
        vsubps          \tmp, \tmp, ymm12
        vandps          \tmp, \tmp, ymm14
        vfmadd231ps     \acc, \tmp, \tmp
.endm
/* y = ((x - mean) r) gamma + beta, r in ymm13 */
.macro NORM_B off, acc, tmp
        vmovups         \tmp, [rsi+\off]
        vsubps          \tmp, \tmp, ymm12
        vmulps          \tmp, \tmp, ymm13
        vmovups         ymm4, [rdx+\off]
        vfmadd213ps     \tmp, ymm4, [rcx+\off]
        vmovups         [r9+\off], \tmp
.endm
.macro NORM_B_TAIL off, acc, tmp
        vmaskmovps      \tmp, ymm14, [rsi+\off]
        vmaskmovps      ymm4, ymm14, [rdx+\off]
        vmaskmovps      ymm5, ymm14, [rcx+\off]
        vsubps          \tmp, \tmp, ymm12
        vmulps          \tmp, \tmp, ymm13
        vfmadd213ps     \tmp, ymm4, ymm5
        vmaskmovps      [r9+\off], ymm14, \tmp
.endm
.macro NORM off, acc, tmp
        vmovups         \tmp, [rsi+\off]
        vsubps          \tmp, \tmp, ymm12
        vmulps          \tmp, \tmp, ymm13
        vmulps          \tmp, \tmp, [rdx+\off]
        vmovups         [r9+\off], \tmp
.endm
.macro NORM_TAIL off, acc, tmp
        vmaskmovps      \tmp, ymm14, [rsi+\off]
        vmaskmovps      ymm4, ymm14, [rdx+\off]
        vsubps          \tmp, \tmp, ymm12
        vmulps          \tmp, \tmp, ymm13
        vmulps          \tmp, \tmp, ymm4
        vmaskmovps      [r9+\off], ymm14, \tmp
.endm

/* void pg_f32_layernorm_avx2_fma3(size_t n, const float *x, const float *gamma,
 *                                 rdi       rsi             rdx
 *                                 const float *beta, float eps, float *y)
 *                                 rcx                xmm0       r8 */
PG_FUNC(pg_f32_layernorm_avx2_fma3)
        test            rdi, rdi
        jz              .Lln_done
        push            rbx
        mov             rbx, r8                 /* y: r8 is taken by the row setup */
        PG_ROW_SETUP
        vcvtsi2ss       xmm7, xmm7, rdi         /* n */
        vxorps          ymm10, ymm10, ymm10
        vxorps          ymm11, ymm11, ymm11
        PG_ROW_PASS     SUM, SUM_TAIL
        PG_HSUM2        xmm5
        vdivss          xmm5, xmm5, xmm7
        vbroadcastss    ymm12, xmm5             /* mean */
        vxorps          ymm10, ymm10, ymm10
        vxorps          ymm11, ymm11, ymm11
        PG_ROW_PASS     SUMDEV, SUMDEV_TAIL
        PG_HSUM2        xmm5
        vdivss          xmm5, xmm5, xmm7
        vaddss          xmm5, xmm5, xmm0
        vsqrtss         xmm5, xmm5, xmm5
        mov             eax, 0x3f800000
        vmovd           xmm6, eax
        vdivss          xmm5, xmm6, xmm5
        vbroadcastss    ymm13, xmm5             /* 1 / sqrt(var + eps) */
        mov             r9, rbx
        pop             rbx
        test            rcx, rcx
        jz              .Lln_nobeta
        PG_ROW_PASS     NORM_B, NORM_B_TAIL
        jmp             .Lln_done
.Lln_nobeta:
        PG_ROW_PASS     NORM, NORM_TAIL
.Lln_done:
        vzeroupper
        ret
PG_ENDFUNC(pg_f32_layernorm_avx2_fma3)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

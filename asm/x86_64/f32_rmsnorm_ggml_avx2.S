/* f32_rmsnorm_ggml_avx2.S - one row of RMSNorm in llama.cpp's rounding
 * order: the squares x*x rounded in float (vmulps), widened to double
 * (vcvtps2pd) and summed in two 4-lane double accumulators, the last n % 8
 * one by one; scale = 1.0f / sqrtf((float)(sum / n) + eps) in float (one
 * exact sqrt and divide); y = (x * scale) * gamma, two float roundings.
 * Semantics: engine/kernels/rmsnorm_ggml/rmsnorm_ggml.h.
 *
 * Registers: rdi n, rsi x, rdx gamma, xmm0 eps, rcx y; rax the index, r8
 * n rounded down to 8; ymm1 / ymm2 the double sums, then ymm1 the scale. */
#include "pg_asm.h"

        .text
/* void pg_f32_rmsnorm_ggml_avx2(size_t n, const float *x, const float *gamma,
 *                               rdi       rsi             rdx
 *                               float eps, float *y)
 *                               xmm0       rcx */
PG_FUNC(pg_f32_rmsnorm_ggml_avx2)
        test            rdi, rdi
        jz              .Lg_done
        vxorpd          ymm1, ymm1, ymm1
        vxorpd          ymm2, ymm2, ymm2
        xor             eax, eax
        mov             r8, rdi
        and             r8, -8
.Lg_sum8:
        cmp             rax, r8
        jae             .Lg_sum_fold
        vmovups         ymm3, [rsi+rax*4]
        vmulps          ymm3, ymm3, ymm3
        vcvtps2pd       ymm4, xmm3
        vextractf128    xmm5, ymm3, 1
        vcvtps2pd       ymm5, xmm5
        vaddpd          ymm1, ymm1, ymm4
        vaddpd          ymm2, ymm2, ymm5
        add             rax, 8
        jmp             .Lg_sum8
.Lg_sum_fold:
        vaddpd          ymm1, ymm1, ymm2
        vextractf128    xmm2, ymm1, 1
        vaddpd          xmm1, xmm1, xmm2
        vunpckhpd       xmm2, xmm1, xmm1
        vaddsd          xmm1, xmm1, xmm2
.Lg_sum1:
        cmp             rax, rdi
        jae             .Lg_scale
        vmovss          xmm3, [rsi+rax*4]
        vmulss          xmm3, xmm3, xmm3
        vcvtss2sd       xmm3, xmm3, xmm3
        vaddsd          xmm1, xmm1, xmm3
        inc             rax
        jmp             .Lg_sum1
.Lg_scale:
        vcvtsi2sd       xmm2, xmm2, rdi
        vdivsd          xmm1, xmm1, xmm2
        vcvtsd2ss       xmm1, xmm1, xmm1
        vaddss          xmm1, xmm1, xmm0
        vsqrtss         xmm1, xmm1, xmm1
        mov             eax, 0x3f800000
        vmovd           xmm2, eax
        vdivss          xmm1, xmm2, xmm1
        vbroadcastss    ymm1, xmm1
        xor             eax, eax
.Lg_y8:
        cmp             rax, r8
        jae             .Lg_y1
        vmulps          ymm3, ymm1, [rsi+rax*4]
        vmulps          ymm3, ymm3, [rdx+rax*4]
        vmovups         [rcx+rax*4], ymm3
        add             rax, 8
        jmp             .Lg_y8
.Lg_y1:
        cmp             rax, rdi
        jae             .Lg_done
        vmulss          xmm3, xmm1, [rsi+rax*4]
        vmulss          xmm3, xmm3, [rdx+rax*4]
        vmovss          [rcx+rax*4], xmm3
        inc             rax
        jmp             .Lg_y1
.Lg_done:
        vzeroupper
        ret
PG_ENDFUNC(pg_f32_rmsnorm_ggml_avx2)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

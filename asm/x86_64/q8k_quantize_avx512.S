/* q8k_quantize_avx512.S - f32 activations to q8_K super-blocks (kquant.h),
 * byte for byte as the C reference pg_quantize_row_q8_K_c (ggml's
 * quantize_row_q8_K_ref):
 *   max: the first value of the largest magnitude (max |x| by vmaxps, then
 *        the first lane equal to it: vcmpps + tzcnt, in element order);
 *   iscale = -127 / max and d = 1 / iscale by vdivss (the C divisions);
 *   q = min(127, round-half-even(iscale x)) (vmulps, vcvtps2dq under the
 *        default MXCSR rounding, as rintf; vpminsd), narrowed by vpmovdb;
 *   bsums: each 16 q (one zmm of int32) summed across its lanes;
 *   a super-block of zeros (max |x| = 0) is all zero bytes.
 *
 * void pg_quantize_row_q8_K_avx512(size_t n, const float *x, void *y)
 *                                   rdi       rsi             rdx
 * n a multiple of 256 (the caller checks).  zmm0 max |x|, zmm3 iscale,
 * zmm5-7 scratch, zmm30 127s, zmm31 the abs mask; rax, rcx scratch.
 */
#include "pg_asm.h"

        .text
PG_FUNC(pg_quantize_row_q8_K_avx512)
        shr     rdi, 8
        jz      9f
        mov     eax, 0x7fffffff
        vpbroadcastd zmm31, eax
        mov     eax, 127
        vpbroadcastd zmm30, eax
1:      /* max |x| over the 256 */
        vandps  zmm0, zmm31, [rsi]
        .irp i, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
        vandps  zmm1, zmm31, [rsi + 64*\i]
        vmaxps  zmm0, zmm0, zmm1
        .endr
        vextractf64x4 ymm1, zmm0, 1
        vmaxps  ymm0, ymm0, ymm1
        vextractf128 xmm1, ymm0, 1
        vmaxps  xmm0, xmm0, xmm1
        vshufps xmm1, xmm0, xmm0, 0x4e
        vmaxps  xmm0, xmm0, xmm1
        vshufps xmm1, xmm0, xmm0, 0xb1
        vmaxps  xmm0, xmm0, xmm1
        vxorps  xmm1, xmm1, xmm1
        vucomiss xmm0, xmm1
        je      7f
        vbroadcastss zmm0, xmm0
        /* the first element whose magnitude is the max */
        .irp i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
        vandps  zmm1, zmm31, [rsi + 64*\i]
        vcmpps  k1, zmm1, zmm0, 0
        kmovw   eax, k1
        mov     ecx, 16*\i
        test    eax, eax
        jnz     2f
        .endr
2:      tzcnt   eax, eax
        add     eax, ecx
        vmovss  xmm2, dword ptr [rsi + 4*rax]
        mov     eax, 0xc2fe0000          /* -127.0f */
        vmovd   xmm3, eax
        vdivss  xmm3, xmm3, xmm2
        mov     eax, 0x3f800000          /* 1.0f */
        vmovd   xmm4, eax
        vdivss  xmm4, xmm4, xmm3
        vmovss  dword ptr [rdx], xmm4
        vbroadcastss zmm3, xmm3
        .irp i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
        vmulps  zmm5, zmm3, [rsi + 64*\i]
        vcvtps2dq zmm5, zmm5
        vpminsd zmm5, zmm5, zmm30
        vpmovdb xmmword ptr [rdx + 4 + 16*\i], zmm5
        vextracti64x4 ymm6, zmm5, 1
        vpaddd  ymm6, ymm6, ymm5
        vextracti128 xmm7, ymm6, 1
        vpaddd  xmm6, xmm6, xmm7
        vpshufd xmm7, xmm6, 0x4e
        vpaddd  xmm6, xmm6, xmm7
        vpshufd xmm7, xmm6, 0xb1
        vpaddd  xmm6, xmm6, xmm7
        vpextrw word ptr [rdx + 260 + 2*\i], xmm6, 0
        .endr
        jmp     8f
7:      /* all zero: d = 0, q = 0, sums 0 */
        vpxord  zmm5, zmm5, zmm5
        vmovdqu64 [rdx], zmm5
        vmovdqu64 [rdx + 64], zmm5
        vmovdqu64 [rdx + 128], zmm5
        vmovdqu64 [rdx + 192], zmm5
        vmovdqu   [rdx + 256], ymm5
        vmovd   dword ptr [rdx + 288], xmm5
8:      add     rsi, 1024
        add     rdx, 292
        dec     rdi
        jnz     1b
9:      vzeroupper
        ret
PG_ENDFUNC(pg_quantize_row_q8_K_avx512)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

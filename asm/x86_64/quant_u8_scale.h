/* quant_u8_scale.h - the scalar middle of the dynamic activation
 * quantisers (quant_u8_row_avx2.S, quant_u8_row_avx512.S): from the
 * row's min and max lanes in ymm0 / ymm1 (started at +0) and qmax (255,
 * or 127 for the vpmaddubsw kernel's narrow activations) as a float in
 * xmm14, the scale and the zero point, the C reference's operations
 * (gemm_u8s8.h):
 *   lo, hi = the horizontal min / max; scale = (hi - lo) / qmax, 1 unless
 *   > 0, stored at [rcx]; xmm6 = inv = 1 / scale;
 *   zero = clamp(rint(-lo inv), 0, qmax) (MXCSR's mode, nearest even) in
 *   eax, stored at [r8].
 * Clobbers xmm0-xmm5. */
#ifndef PG_QUANT_U8_SCALE_H
#define PG_QUANT_U8_SCALE_H

.macro QUANT_U8_SCALE
        vextractf128 xmm2, ymm0, 1
        vminps  xmm0, xmm2, xmm0
        vextractf128 xmm3, ymm1, 1
        vmaxps  xmm1, xmm3, xmm1
        vmovhlps xmm2, xmm2, xmm0
        vminps  xmm0, xmm2, xmm0
        vmovhlps xmm3, xmm3, xmm1
        vmaxps  xmm1, xmm3, xmm1
        vmovshdup xmm2, xmm0
        vminss  xmm0, xmm2, xmm0
        vmovshdup xmm3, xmm1
        vmaxss  xmm1, xmm3, xmm1
        /* scale = (hi - lo) / qmax, 1 unless > 0 */
        vsubss  xmm4, xmm1, xmm0
        vdivss  xmm4, xmm4, xmm14
        vxorps  xmm5, xmm5, xmm5
        vucomiss xmm4, xmm5
        ja      4f
        vmovss  xmm4, dword ptr [rip + one]
4:      vmovss  [rcx], xmm4
        vmovss  xmm6, dword ptr [rip + one]
        vdivss  xmm6, xmm6, xmm4                /* inv */
        /* zero = clamp(rint(-lo * inv), 0, qmax) */
        vxorps  xmm0, xmm0, xmmword ptr [rip + sign_bit]
        vmulss  xmm0, xmm0, xmm6
        vroundss xmm0, xmm0, xmm0, 4           /* current mode: nearest even */
        vmaxss  xmm0, xmm0, xmm5
        vminss  xmm0, xmm0, xmm14
        vcvttss2si eax, xmm0
        mov     [r8], eax
.endm

/* its constants (and big, +1e9, the clamp of x inv), inside PG_RODATA */
.macro QUANT_U8_CONSTS
        .p2align 4
sign_bit: .long 0x80000000, 0, 0, 0
one:     .float 1.0
big:     .float 1.0e9
.endm

#endif

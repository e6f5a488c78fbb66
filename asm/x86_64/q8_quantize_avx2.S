/* q8_quantize_avx2.S - fp32 activations -> q8_0 / q8_1 blocks of 32,
 * byte-exact with the C reference (qdot_ref.c), i.e. with ggml's
 * quantize_row_q8_0_ref / q8_1_ref:
 *   amax = max |x|, d = amax / 127 (vdivss, as C divides), id = 1 / d or
 *   0 when d = 0, d stored as f16 by vcvtps2ph rounding to nearest even;
 *   q = roundf(x * id): round half AWAY from zero, which no AVX rounding
 *   mode does, so it is trunc(v + copysign(0.5 - 2^-25, v)) - for the
 *   |v| <= 127 here the add rounds up to the next integer exactly when the
 *   fraction of |v| is 0.5 or more (0.5 - 2^-25 keeps 0.49999997 at 0);
 *   q8_1 also stores (float)sum(q) * d as f16 (d the f32 value).
 * The 32 int32 become bytes through vpackssdw / vpacksswb, which work per
 * 128-bit lane, and one vpermd puts the 4-byte groups back in order.
 *
 * void pg_quantize_row_q8_{0,1}_avx2(size_t n, const float *x, void *y)
 *                                    rdi       rsi             rdx
 */
#include "pg_asm.h"

        PG_RODATA
        .p2align 5
q8_pack_order:
        .long   0, 4, 1, 5, 2, 6, 3, 7

.macro QUANTIZE name, q81
        .text
PG_FUNC(\name)
.if \q81
  .set YB, 36
  .set QOFF, 4
.else
  .set YB, 34
  .set QOFF, 2
.endif
        shr     rdi, 5
        jz      9f
        mov     eax, 0x7fffffff
        vmovd   xmm15, eax
        vpbroadcastd ymm15, xmm15           /* |x| mask */
        mov     eax, 0x3effffff
        vmovd   xmm14, eax
        vpbroadcastd ymm14, xmm14           /* 0.5 - 2^-25 */
        vmovdqa ymm13, [rip + q8_pack_order]
        mov     eax, 0x42fe0000
        vmovd   xmm12, eax                  /* 127.0f */
        mov     eax, 0x3f800000
        vmovd   xmm11, eax                  /* 1.0f */
        vxorps  xmm10, xmm10, xmm10

1:      vmovups ymm0, [rsi]
        vmovups ymm1, [rsi + 32]
        vmovups ymm2, [rsi + 64]
        vmovups ymm3, [rsi + 96]
        vandps  ymm4, ymm0, ymm15
        vandps  ymm5, ymm1, ymm15
        vandps  ymm6, ymm2, ymm15
        vandps  ymm7, ymm3, ymm15
        vmaxps  ymm4, ymm4, ymm5
        vmaxps  ymm6, ymm6, ymm7
        vmaxps  ymm4, ymm4, ymm6
        vextractf128 xmm5, ymm4, 1
        vmaxps  xmm4, xmm4, xmm5
        vpermilps xmm5, xmm4, 0x4e
        vmaxps  xmm4, xmm4, xmm5
        vpermilps xmm5, xmm4, 0xb1
        vmaxps  xmm4, xmm4, xmm5            /* amax */
        vdivss  xmm6, xmm4, xmm12           /* d */
        vdivss  xmm7, xmm11, xmm6           /* 1 / d (inf when d = 0) */
        vcmpneqss xmm8, xmm6, xmm10
        vandps  xmm7, xmm7, xmm8            /* id */
        vcvtps2ph xmm8, xmm6, 0
        vpextrw word ptr [rdx], xmm8, 0
        vbroadcastss ymm7, xmm7
        /* v = x * id, rounded half away: trunc(v + copysign(0.5 - 2^-25, v)) */
.irp r, 0, 1, 2, 3
        vmulps  ymm\r, ymm\r, ymm7
        vandnps ymm8, ymm15, ymm\r
        vorps   ymm8, ymm8, ymm14
        vaddps  ymm\r, ymm\r, ymm8
        vcvttps2dq ymm\r, ymm\r
.endr
.if \q81
        vpaddd  ymm4, ymm0, ymm1
        vpaddd  ymm5, ymm2, ymm3
        vpaddd  ymm4, ymm4, ymm5
        vextracti128 xmm5, ymm4, 1
        vpaddd  xmm4, xmm4, xmm5
        vpshufd xmm5, xmm4, 0x4e
        vpaddd  xmm4, xmm4, xmm5
        vpshufd xmm5, xmm4, 0xb1
        vpaddd  xmm4, xmm4, xmm5
        vcvtdq2ps xmm4, xmm4
        vmulss  xmm4, xmm4, xmm6            /* (float)sum * d */
        vcvtps2ph xmm4, xmm4, 0
        vpextrw word ptr [rdx + 2], xmm4, 0
.endif
        vpackssdw ymm0, ymm0, ymm1
        vpackssdw ymm2, ymm2, ymm3
        vpacksswb ymm0, ymm0, ymm2
        vpermd  ymm0, ymm13, ymm0
        vmovdqu [rdx + QOFF], ymm0
        add     rsi, 128
        add     rdx, YB
        dec     rdi
        jnz     1b
9:      vzeroupper
        ret
PG_ENDFUNC(\name)
.endm

QUANTIZE pg_quantize_row_q8_0_avx2, 0
QUANTIZE pg_quantize_row_q8_1_avx2, 1

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

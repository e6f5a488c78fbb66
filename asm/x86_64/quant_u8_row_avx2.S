/* quant_u8_row_avx2.S - one row of n floats to u8 with its own scale and
 * zero point (the dynamic activation quantiser, gemm_u8s8.h), the AVX2
 * twin of quant_u8_row_avx512.S for the avx2 int8 kernel:
 *   lo = min(0, min x), hi = max(0, max x), scale = (hi - lo) / qmax (1 if
 *   not > 0), inv = 1 / scale, zero = clamp(rint(-lo inv), 0, qmax),
 *   y = clamp(rint(x inv) + zero, 0, qmax)
 * with rint round-half-even and x inv clamped to +-1e9 in float before it
 * becomes an integer - the C reference's operations, so the bytes are the
 * same.  Two passes over x: the min / max 8 lanes at a time (the lanes
 * start at +0 and only take strictly smaller / larger values, so no -0
 * enters; a NaN is never taken), then the bytes, where the clamp to
 * [0, 255] is the saturation of vpackssdw then vpackuswb (the same value
 * for every int32), then vpminub to qmax.  The last n % 8 floats are read through the tail mask
 * (zeros: harmless to the min / max) and their bytes stored one by one, so
 * nothing past n is touched.
 *
 * void pg_quant_u8_row_avx2(size_t n, const float *x, uint8_t *y,
 *                           rdi       rsi             rdx
 *                           float *scale, int32_t *zero, int qmax)
 *                           rcx           r8             r9d */
#include "pg_asm.h"
#include "quant_u8_scale.h"

/* ymm2 (8 floats) -> 8 bytes in the low qword of xmm2 */
.macro BYTES
        vmulps  ymm2, ymm2, ymm6
        vroundps ymm2, ymm2, 0                  /* nearest even */
        vminps  ymm2, ymm2, ymm8                /* NaN -> +1e9, as the reference */
        vmaxps  ymm2, ymm2, ymm9
        vcvtps2dq ymm2, ymm2
        vpaddd  ymm2, ymm2, ymm7
        vextracti128 xmm3, ymm2, 1
        vpackssdw xmm2, xmm2, xmm3
        vpackuswb xmm2, xmm2, xmm2
        vpminub xmm2, xmm2, xmm10
.endm

        .text
PG_FUNC(pg_quant_u8_row_avx2)
        vcvtsi2ss xmm14, xmm14, r9d             /* qmax: a float, and a byte in xmm10 */
        vmovd   xmm10, r9d
        vpbroadcastb xmm10, xmm10
        /* the tail's mask: the first n % 8 lanes */
        mov     rax, rdi
        and     rax, 7
        neg     rax
        lea     r9, [rip + PG_SYM(pg_avx2_tail_mask)]
        vmovdqu ymm15, [r9 + 4 * rax + 32]
        vxorps  ymm0, ymm0, ymm0                /* lo lanes */
        vxorps  ymm1, ymm1, ymm1                /* hi lanes */
        mov     r9, rsi
        mov     r10, rdi
        cmp     r10, 8
        jb      2f
1:      vmovups ymm2, [r9]
        vminps  ymm0, ymm2, ymm0                /* x < lo ? x : lo */
        vmaxps  ymm1, ymm2, ymm1
        add     r9, 32
        sub     r10, 8
        cmp     r10, 8
        jae     1b
2:      test    r10, r10
        jz      3f
        vmaskmovps ymm2, ymm15, [r9]
        vminps  ymm0, ymm2, ymm0
        vmaxps  ymm1, ymm2, ymm1
3:      QUANT_U8_SCALE                          /* scale, zero point (eax), inv (xmm6) */
        /* the bytes */
        vbroadcastss ymm6, xmm6
        vmovd   xmm7, eax
        vpbroadcastd ymm7, xmm7                 /* zero */
        vbroadcastss ymm8, dword ptr [rip + big]
        vbroadcastss ymm9, dword ptr [rip + nbig]
        cmp     rdi, 8
        jb      6f
5:      vmovups ymm2, [rsi]
        BYTES
        vmovq   qword ptr [rdx], xmm2
        add     rsi, 32
        add     rdx, 8
        sub     rdi, 8
        cmp     rdi, 8
        jae     5b
6:      test    rdi, rdi
        jz      8f
        vmaskmovps ymm2, ymm15, [rsi]
        BYTES
        vmovq   rax, xmm2
7:      mov     byte ptr [rdx], al
        shr     rax, 8
        inc     rdx
        dec     rdi
        jnz     7b
8:      vzeroupper
        ret
PG_ENDFUNC(pg_quant_u8_row_avx2)

        PG_RODATA
        QUANT_U8_CONSTS
nbig:    .float -1.0e9

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

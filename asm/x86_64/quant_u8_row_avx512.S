/* quant_u8_row_avx512.S - one row of n floats to u8 with its own scale and
 * zero point (the dynamic activation quantiser, gemm_u8s8.h):
 *   lo = min(0, min x), hi = max(0, max x), scale = (hi - lo) / qmax (1 if
 *   not > 0), inv = 1 / scale, zero = clamp(rint(-lo inv), 0, qmax),
 *   y = clamp(rint(x inv) + zero, 0, qmax)
 * with rint round-half-even and x inv clamped to +-1e9 in float before it
 * becomes an integer - the C reference's operations, so the bytes are the
 * same.  Two passes over x (it stays in L1 for a row of a few KiB): the
 * min / max 16 lanes at a time (the lanes start at +0 and only take
 * strictly smaller / larger values, so no -0 enters), then the bytes.
 * The last n % 16 go through an opmask (zeros in the min / max, no access
 * past n).
 *
 * void pg_quant_u8_row_avx512(size_t n, const float *x, uint8_t *y,
 *                             rdi       rsi             rdx
 *                             float *scale, int32_t *zero, int qmax)
 *                             rcx           r8             r9d */
#include "pg_asm.h"
#include "quant_u8_scale.h"

        .text
PG_FUNC(pg_quant_u8_row_avx512)
        vcvtsi2ss xmm14, xmm14, r9d             /* qmax: a float, and int32 lanes in zmm11 */
        vpbroadcastd zmm11, r9d
        vpxord  zmm0, zmm0, zmm0                /* lo lanes */
        vpxord  zmm1, zmm1, zmm1                /* hi lanes */
        mov     r9, rsi
        mov     r10, rdi
        cmp     r10, 16
        jb      2f
1:      vmovups zmm2, [r9]
        vminps  zmm0, zmm2, zmm0                /* x < lo ? x : lo */
        vmaxps  zmm1, zmm2, zmm1
        add     r9, 64
        sub     r10, 16
        cmp     r10, 16
        jae     1b
2:      test    r10, r10
        jz      3f
        mov     r11, rcx
        mov     ecx, r10d
        mov     eax, 1
        shl     eax, cl
        dec     eax
        mov     rcx, r11
        kmovw   k1, eax
        vmovups zmm2{k1}{z}, [r9]
        vminps  zmm0, zmm2, zmm0
        vmaxps  zmm1, zmm2, zmm1
3:      /* horizontal min / max */
        vextractf32x8 ymm2, zmm0, 1
        vminps  ymm0, ymm2, ymm0
        vextractf32x8 ymm3, zmm1, 1
        vmaxps  ymm1, ymm3, ymm1
        QUANT_U8_SCALE
        /* the bytes */
        vbroadcastss zmm6, xmm6
        vpbroadcastd zmm7, eax                  /* zero */
        vbroadcastss zmm8, dword ptr [rip + big]
        vxorps  zmm9, zmm8, dword ptr [rip + sign_bit]{1to16}
        vpxord  zmm10, zmm10, zmm10
        cmp     rdi, 16
        jb      6f
5:      vmulps  zmm2, zmm6, [rsi]
        vrndscaleps zmm2, zmm2, 0
        vminps  zmm2, zmm2, zmm8
        vmaxps  zmm2, zmm2, zmm9
        vcvtps2dq zmm2, zmm2
        vpaddd  zmm2, zmm2, zmm7
        vpmaxsd zmm2, zmm2, zmm10
        vpminsd zmm2, zmm2, zmm11
        vpmovdb [rdx], zmm2
        add     rsi, 64
        add     rdx, 16
        sub     rdi, 16
        cmp     rdi, 16
        jae     5b
6:      test    rdi, rdi
        jz      7f
        mov     ecx, edi
        mov     eax, 1
        shl     eax, cl
        dec     eax
        kmovw   k1, eax
        vmulps  zmm2{k1}{z}, zmm6, [rsi]
        vrndscaleps zmm2, zmm2, 0
        vminps  zmm2, zmm2, zmm8
        vmaxps  zmm2, zmm2, zmm9
        vcvtps2dq zmm2, zmm2
        vpaddd  zmm2, zmm2, zmm7
        vpmaxsd zmm2, zmm2, zmm10
        vpminsd zmm2, zmm2, zmm11
        vpmovdb xmm2, zmm2
        vmovdqu8 [rdx]{k1}, xmm2
7:      vzeroupper
        ret
PG_ENDFUNC(pg_quant_u8_row_avx512)

        PG_RODATA
        QUANT_U8_CONSTS

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

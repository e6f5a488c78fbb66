/* quant_u8_span_avx512.S - floats to u8 with a given scale and zero point
 * (per-tensor dynamic quantisation's second pass, gemm_u8s8.h):
 *   y = clamp(rint(x / scale) + zero, 0, 255)
 * for finite x with |x / scale| < 2^22, the bytes of the reference
 * (quant_u8_span.h, the arithmetic shared with the avx2 variant).  64
 * floats a step (four divisions in flight), the last
 * n % 64 16 at a time through an opmask (no access past n).
 *
 * void pg_quant_u8_span_avx512(size_t n, const float *x, float scale,
 *                              rdi       rsi             xmm0
 *                              int32_t zero, uint8_t *y)
 *                              edx           rcx                       */
#include "pg_asm.h"
#include "quant_u8_span.h"

/* zmm \r: x / scale rounded, + zero, clamped to 0..255 */
.macro QUANT r
        QUANT_U8_SPAN \r, zmm16, zmm17, zmm18, zmm19
.endm

        .text
PG_FUNC(pg_quant_u8_span_avx512)
        vbroadcastss zmm16, xmm0
        vpbroadcastd zmm17, edx
        vpxord  zmm18, zmm18, zmm18
        vpbroadcastd zmm19, dword ptr [rip + c255]
        mov     rax, rdi
        shr     rax, 6
        jz      2f
1:      vmovups zmm0, [rsi]
        vmovups zmm1, [rsi + 64]
        vmovups zmm2, [rsi + 128]
        vmovups zmm3, [rsi + 192]
        QUANT   zmm0
        QUANT   zmm1
        QUANT   zmm2
        QUANT   zmm3
        vpmovdb [rcx], zmm0
        vpmovdb [rcx + 16], zmm1
        vpmovdb [rcx + 32], zmm2
        vpmovdb [rcx + 48], zmm3
        add     rsi, 256
        add     rcx, 64
        dec     rax
        jnz     1b
2:      and     edi, 63
        jz      4f
        mov     r8, rcx
3:      mov     ecx, edi
        mov     eax, -1
        cmp     edi, 16
        jae     5f
        mov     eax, 1
        shl     eax, cl
        dec     eax
5:      kmovw   k1, eax
        vmovups zmm0{k1}{z}, [rsi]
        QUANT   zmm0
        vpmovdb [r8]{k1}, zmm0
        add     rsi, 64
        add     r8, 16
        sub     edi, 16
        jg      3b
4:      vzeroupper
        ret
PG_ENDFUNC(pg_quant_u8_span_avx512)

        PG_RODATA
        .p2align 2
c255:   .long 255

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

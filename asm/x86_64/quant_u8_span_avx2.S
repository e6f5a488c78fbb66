/* quant_u8_span_avx2.S - floats to u8 with a given scale and zero point
 * (per-tensor dynamic quantisation's second pass, gemm_u8s8.h), for CPUs
 * without AVX-512 (the C reference runs at ~2 ns a float, 13% of an
 * ORT-quantised FFN-down product on Zen 3):
 *   y = clamp(rint(x / scale) + zero, 0, 255)
 * for finite x with |x / scale| < 2^22, the bytes of the reference
 * (quant_u8_span.h, the arithmetic shared with the avx512 variant).
 *
 * 32 floats a step (four divisions in flight).  The values are in 0..255
 * already, so the two saturating packs keep them; they leave the dwords of
 * bytes in lane order (a0-3 b0-3 c0-3 d0-3 | a4-7 ...) and vpermd puts
 * them back in order.  The last n % 32 go 8 at a time through vmaskmovps
 * (pg_avx2_tail_mask: no float past n is read) and byte stores of the
 * lanes that exist.
 *
 * void pg_quant_u8_span_avx2(size_t n, const float *x, float scale,
 *                            rdi       rsi             xmm0
 *                            int32_t zero, uint8_t *y)
 *                            edx           rcx                         */
#include "pg_asm.h"
#include "quant_u8_span.h"

/* ymm \r: x / scale rounded, + zero, clamped to 0..255 */
.macro QUANT r
        QUANT_U8_SPAN \r, ymm8, ymm9, ymm10, ymm11
.endm

        .text
PG_FUNC(pg_quant_u8_span_avx2)
        vbroadcastss ymm8, xmm0
        vmovd   xmm9, edx
        vpbroadcastd ymm9, xmm9
        vpxor   xmm10, xmm10, xmm10
        vpbroadcastd ymm11, dword ptr [rip + c255]
        vmovdqu ymm12, [rip + order]
        mov     rax, rdi
        shr     rax, 5
        jz      2f
1:      vmovups ymm0, [rsi]
        vmovups ymm1, [rsi + 32]
        vmovups ymm2, [rsi + 64]
        vmovups ymm3, [rsi + 96]
        QUANT   ymm0
        QUANT   ymm1
        QUANT   ymm2
        QUANT   ymm3
        vpackssdw ymm0, ymm0, ymm1
        vpackssdw ymm2, ymm2, ymm3
        vpackuswb ymm0, ymm0, ymm2
        vpermd  ymm0, ymm12, ymm0
        vmovdqu [rcx], ymm0
        add     rsi, 128
        add     rcx, 32
        dec     rax
        jnz     1b
2:      and     edi, 31                         /* floats left */
        jz      5f
        lea     r8, [rip + PG_SYM(pg_avx2_tail_mask) + 32]
3:      mov     eax, 8
        cmp     edi, eax
        cmovb   eax, edi                        /* this step's floats */
        mov     r9, rax
        neg     r9
        vmovdqu ymm4, [r8 + 4 * r9]             /* the first eax lanes set */
        vmaskmovps ymm0, ymm4, [rsi]
        QUANT   ymm0
        vpackssdw ymm0, ymm0, ymm0
        vpackuswb ymm0, ymm0, ymm0
        vpermd  ymm0, ymm12, ymm0               /* the 8 bytes in the low qword */
        vmovq   r9, xmm0
        cmp     eax, 8
        jne     4f
        mov     qword ptr [rcx], r9
        add     rsi, 32
        add     rcx, 8
        sub     edi, 8
        jnz     3b
        jmp     5f
4:      mov     byte ptr [rcx], r9b             /* the last 1..7 */
        shr     r9, 8
        inc     rcx
        dec     eax
        jnz     4b
5:      vzeroupper
        ret
PG_ENDFUNC(pg_quant_u8_span_avx2)

        PG_RODATA
        .p2align 5
order:  .long 0, 4, 1, 5, 2, 6, 3, 7
c255:   .long 255

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

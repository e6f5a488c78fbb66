/* cvt_f32_bf16_avx512bf16.S - n floats to bf16, round to nearest even
 * (vcvtne2ps2bf16: 32 floats a step into one zmm of bf16; zero and
 * denormal inputs give a zero of their sign, NaN stays NaN - the C
 * reference's rules, gemm_bf16.h).  The last n % 16 go through an opmask:
 * masked loads and stores touch nothing past n.
 *
 * void pg_cvt_f32_bf16_avx512bf16(size_t n, const float *x, uint16_t *y)
 *                                 rdi       rsi             rdx */
#include "pg_asm.h"

        .text
PG_FUNC(pg_cvt_f32_bf16_avx512bf16)
        cmp     rdi, 32
        jb      2f
        .p2align 4
1:      vmovups zmm0, [rsi]
        vmovups zmm1, [rsi + 64]
        vcvtne2ps2bf16 zmm2, zmm1, zmm0
        vmovdqu16 [rdx], zmm2
        add     rsi, 128
        add     rdx, 64
        sub     rdi, 32
        cmp     rdi, 32
        jae     1b
2:      cmp     rdi, 16
        jb      3f
        vcvtneps2bf16 ymm0, zmmword ptr [rsi]
        vmovdqu16 [rdx], ymm0
        add     rsi, 64
        add     rdx, 32
        sub     rdi, 16
3:      test    rdi, rdi
        jz      4f
        mov     ecx, edi
        mov     eax, 1
        shl     eax, cl
        dec     eax
        kmovd   k1, eax
        vmovups zmm0{k1}{z}, [rsi]
        vcvtneps2bf16 ymm0, zmm0
        vmovdqu16 [rdx]{k1}, ymm0
4:      vzeroupper
        ret
PG_ENDFUNC(pg_cvt_f32_bf16_avx512bf16)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

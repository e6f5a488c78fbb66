/* f32_round_f16_avx512f.S - x (times scale) -> the nearest f16 value as
 * fp32 (round_f16/round_f16.h), zmm.
 *
 * void pg_f32_round_f16_avx512f(size_t n, const float *x, float scale, float *y)
 *                               rdi       rsi             xmm0         rdx
 *
 * f32_round_f16_f16c.S with zmm: y = vcvtph2ps(vcvtps2ph(x * scale, 0))
 * (nearest even, overflow to inf, exact f16 subnormals: the reference bit
 * for bit); a zero scale means none and becomes 1.0 (exact).  32 a step
 * (two zmm), then steps of 16 whose last one is masked (k1: its first
 * 1..16 lanes), so nothing past n is read or written.  Each step loads
 * before it stores: y == x works. */
#include "pg_asm.h"

        .text
PG_FUNC(pg_f32_round_f16_avx512f)
        vxorps  xmm1, xmm1, xmm1
        vucomiss xmm0, xmm1
        jp      1f                      /* NaN: a scale */
        jne     1f
        mov     eax, 0x3f800000         /* 0: none, times 1.0 */
        vmovd   xmm0, eax
1:      vbroadcastss zmm0, xmm0
        cmp     rdi, 32
        jb      3f
2:      vmulps  zmm1, zmm0, [rsi]
        vmulps  zmm2, zmm0, [rsi + 64]
        vcvtps2ph ymm1, zmm1, 0
        vcvtps2ph ymm2, zmm2, 0
        vcvtph2ps zmm1, ymm1
        vcvtph2ps zmm2, ymm2
        vmovups [rdx], zmm1
        vmovups [rdx + 64], zmm2
        add     rsi, 128
        add     rdx, 128
        sub     rdi, 32
        cmp     rdi, 32
        jae     2b
3:      test    rdi, rdi
        jz      9f
        mov     ecx, 16
        cmp     rdi, rcx
        cmovb   rcx, rdi                /* this step's lanes, 1..16 */
        mov     eax, 1
        shl     eax, cl
        dec     eax
        kmovw   k1, eax
        vmovups zmm1{k1}{z}, [rsi]
        vmulps  zmm1, zmm1, zmm0
        vcvtps2ph ymm1, zmm1, 0
        vcvtph2ps zmm1, ymm1
        vmovups [rdx]{k1}, zmm1
        add     rsi, 64
        add     rdx, 64
        sub     rdi, rcx
        jmp     3b
9:      vzeroupper
        ret
PG_ENDFUNC(pg_f32_round_f16_avx512f)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

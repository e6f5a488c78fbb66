/* f32_round_f16_f16c.S - x (times scale) -> the nearest f16 value as fp32,
 * with F16C (round_f16/round_f16.h), ymm.
 *
 * void pg_f32_round_f16_f16c(size_t n, const float *x, float scale, float *y)
 *                            rdi       rsi             xmm0         rdx
 *
 * y = vcvtph2ps(vcvtps2ph(x * scale, 0)): immediate 0 rounds to nearest
 * even, overflow goes to inf, the f16 subnormals are exact, and the widen
 * is exact - pg_f16_to_f32(pg_f32_to_f16(v)) bit for bit.  A zero scale
 * (either sign) means none: it becomes 1.0, and x * 1.0 is x exactly.
 * 16 a step (two ymm), then 8, then a vmaskmovps step of the last 1..7
 * (mask from pg_avx2_tail_mask), so nothing past n is read or written.
 * Each step loads before it stores: y == x works.  AVX + F16C only (no
 * AVX2: the scale is broadcast with vpermilps / vinsertf128). */
#include "pg_asm.h"

        .text
PG_FUNC(pg_f32_round_f16_f16c)
        vxorps  xmm1, xmm1, xmm1
        vucomiss xmm0, xmm1
        jp      1f                      /* NaN: a scale */
        jne     1f
        mov     eax, 0x3f800000         /* 0: none, times 1.0 */
        vmovd   xmm0, eax
1:      vpermilps xmm0, xmm0, 0
        vinsertf128 ymm0, ymm0, xmm0, 1
        cmp     rdi, 16
        jb      3f
2:      vmulps  ymm1, ymm0, [rsi]
        vmulps  ymm2, ymm0, [rsi + 32]
        vcvtps2ph xmm1, ymm1, 0
        vcvtps2ph xmm2, ymm2, 0
        vcvtph2ps ymm1, xmm1
        vcvtph2ps ymm2, xmm2
        vmovups [rdx], ymm1
        vmovups [rdx + 32], ymm2
        add     rsi, 64
        add     rdx, 64
        sub     rdi, 16
        cmp     rdi, 16
        jae     2b
3:      cmp     rdi, 8
        jb      4f
        vmulps  ymm1, ymm0, [rsi]
        vcvtps2ph xmm1, ymm1, 0
        vcvtph2ps ymm1, xmm1
        vmovups [rdx], ymm1
        add     rsi, 32
        add     rdx, 32
        sub     rdi, 8
4:      test    rdi, rdi
        jz      9f
        lea     rax, [rip + PG_SYM(pg_avx2_tail_mask) + 32]
        neg     rdi
        vmovdqu ymm3, [rax + rdi*4]     /* the first n lanes */
        vmaskmovps ymm1, ymm3, [rsi]
        vmulps  ymm1, ymm1, ymm0
        vcvtps2ph xmm1, ymm1, 0
        vcvtph2ps ymm1, xmm1
        vmaskmovps [rdx], ymm3, ymm1
9:      vzeroupper
        ret
PG_ENDFUNC(pg_f32_round_f16_f16c)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

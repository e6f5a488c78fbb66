/* cvt_f16_f16c.S - fp32 <-> f16 rows with F16C (cvt_f16.h).
 *
 * void pg_cvt_f32_f16_f16c(size_t n, const float *x, void *y)   rdi rsi rdx
 * void pg_cvt_f16_f32_f16c(size_t n, const void *x, float *y)   rdi rsi rdx
 *
 * 16 elements a step (two ymm), then 8, then one at a time; vcvtps2ph with
 * immediate 0 rounds to nearest even, as the C reference.  No callee-saved
 * register is used. */
#include "pg_asm.h"

        .text
PG_FUNC(pg_cvt_f32_f16_f16c)
        cmp     rdi, 16
        jb      2f
1:      vmovups ymm0, [rsi]
        vmovups ymm1, [rsi + 32]
        vcvtps2ph xmmword ptr [rdx], ymm0, 0
        vcvtps2ph xmmword ptr [rdx + 16], ymm1, 0
        add     rsi, 64
        add     rdx, 32
        sub     rdi, 16
        cmp     rdi, 16
        jae     1b
2:      test    rdi, rdi
        jz      9f
3:      vmovss  xmm0, dword ptr [rsi]
        vcvtps2ph xmm0, xmm0, 0
        vpextrw word ptr [rdx], xmm0, 0
        add     rsi, 4
        add     rdx, 2
        dec     rdi
        jnz     3b
9:      vzeroupper
        ret
PG_ENDFUNC(pg_cvt_f32_f16_f16c)

PG_FUNC(pg_cvt_f16_f32_f16c)
        cmp     rdi, 16
        jb      2f
1:      vcvtph2ps ymm0, xmmword ptr [rsi]
        vcvtph2ps ymm1, xmmword ptr [rsi + 16]
        vmovups [rdx], ymm0
        vmovups [rdx + 32], ymm1
        add     rsi, 32
        add     rdx, 64
        sub     rdi, 16
        cmp     rdi, 16
        jae     1b
2:      test    rdi, rdi
        jz      9f
3:      movzx   eax, word ptr [rsi]
        vmovd   xmm0, eax
        vcvtph2ps xmm0, xmm0
        vmovss  dword ptr [rdx], xmm0
        add     rsi, 2
        add     rdx, 4
        dec     rdi
        jnz     3b
9:      vzeroupper
        ret
PG_ENDFUNC(pg_cvt_f16_f32_f16c)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

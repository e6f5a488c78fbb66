/* minmax_keys_avx2.S - the range of n floats as ordered integer keys
 * (per-tensor dynamic quantisation's first pass, gemm_u8s8.h), for CPUs
 * without AVX-512: what minmax_keys_avx512.S computes, the same way -
 *   key(x) = bits(x) ^ ((bits(x) >> 31) & 0x7fffffff)
 *   out[0] = min(0, min key), out[1] = max(0, max key),
 *   out[2] = 1 if some x is NaN or infinite
 * with integer operations only, the flag read off the range's ends
 * (minmax_keys_end.h, shared with it).  16
 * floats a step in two sets of lanes, then 8; the last n % 8 through
 * vpmaskmovd (pg_avx2_tail_mask: no float past n is read; a masked lane
 * loads 0, whose key the range holds already).
 *
 * void pg_minmax_keys_avx2(size_t n, const float *x, int32_t *out)
 *                          rdi       rsi             rdx            */
#include "pg_asm.h"
#include "minmax_keys_end.h"

/* \x: 8 floats in (\t a temporary); their keys into the lanes \mn, \mx */
.macro KEYS x, t, mn, mx
        vpsrad  \t, \x, 31
        vpand   \t, \t, ymm2
        vpxor   \t, \t, \x
        vpminsd \mn, \mn, \t
        vpmaxsd \mx, \mx, \t
.endm

        .text
PG_FUNC(pg_minmax_keys_avx2)
        vpxor   xmm0, xmm0, xmm0
        vpxor   xmm1, xmm1, xmm1
        vpxor   xmm3, xmm3, xmm3
        vpxor   xmm4, xmm4, xmm4
        vpbroadcastd ymm2, dword ptr [rip + low31]
        mov     rax, rdi
        shr     rax, 4
        jz      2f
1:      vmovdqu ymm5, [rsi]
        vmovdqu ymm7, [rsi + 32]
        KEYS    ymm5, ymm6, ymm0, ymm1
        KEYS    ymm7, ymm8, ymm3, ymm4
        add     rsi, 64
        dec     rax
        jnz     1b
2:      test    edi, 8
        jz      5f
        vmovdqu ymm5, [rsi]
        KEYS    ymm5, ymm6, ymm0, ymm1
        add     rsi, 32
5:      and     edi, 7
        jz      3f
        neg     rdi
        lea     rax, [rip + PG_SYM(pg_avx2_tail_mask) + 32]
        vmovdqu ymm9, [rax + 4 * rdi]           /* the first n % 8 lanes set */
        vpmaskmovd ymm5, ymm9, [rsi]
        KEYS    ymm5, ymm6, ymm0, ymm1
3:      vpminsd ymm0, ymm0, ymm3
        vpmaxsd ymm1, ymm1, ymm4
        MINMAX_KEYS_END
        vzeroupper
        ret
PG_ENDFUNC(pg_minmax_keys_avx2)

        PG_RODATA
        .p2align 2
low31:  .long 0x7fffffff

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

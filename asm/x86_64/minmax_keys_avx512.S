/* minmax_keys_avx512.S - the range of n floats as ordered integer keys
 * (per-tensor dynamic quantisation's first pass, gemm_u8s8.h):
 *   key(x) = bits(x) ^ ((bits(x) >> 31) & 0x7fffffff)   (orders as the floats do)
 *   out[0] = min(0, min key), out[1] = max(0, max key),
 *   out[2] = 1 if some x is NaN or infinite (exponent all ones), else 0
 * - integer operations only, so any input (NaN, -0, denormals) gives the C
 * reference's words.  The flag comes from the range itself
 * (minmax_keys_end.h, shared with the avx2 variant): the keys of
 * the non-finite floats are the extremes, >= 0x7f800000 (+inf, +NaN) or
 * <= 0x807fffff as int32 (-inf, -NaN), so 5 operations a vector (the key,
 * the min, the max).  32 floats a step in two sets of lanes; the last
 * n % 16 through a zero-masking load (a 0 key leaves the range, which
 * holds 0 already, as it is).
 *
 * void pg_minmax_keys_avx512(size_t n, const float *x, int32_t *out)
 *                            rdi       rsi             rdx            */
#include "pg_asm.h"
#include "minmax_keys_end.h"

/* \x: 16 floats in (\t a temporary); their keys into the lanes \mn, \mx */
.macro KEYS x, t, mn, mx
        vpsrad  \t, \x, 31
        vpternlogd \t, \x, zmm2, 0x6c       /* x ^ (t & 0x7fffffff) */
        vpminsd \mn, \mn, \t
        vpmaxsd \mx, \mx, \t
.endm

        .text
PG_FUNC(pg_minmax_keys_avx512)
        vpxord  zmm0, zmm0, zmm0
        vpxord  zmm1, zmm1, zmm1
        vpxord  zmm3, zmm3, zmm3
        vpxord  zmm4, zmm4, zmm4
        vpbroadcastd zmm2, dword ptr [rip + low31]
        mov     rax, rdi
        shr     rax, 5
        jz      2f
1:      vmovdqu32 zmm5, [rsi]
        vmovdqu32 zmm7, [rsi + 64]
        KEYS    zmm5, zmm6, zmm0, zmm1
        KEYS    zmm7, zmm8, zmm3, zmm4
        add     rsi, 128
        dec     rax
        jnz     1b
2:      test    edi, 16
        jz      5f
        vmovdqu32 zmm5, [rsi]
        KEYS    zmm5, zmm6, zmm0, zmm1
        add     rsi, 64
5:      and     edi, 15
        jz      3f
        mov     ecx, edi
        mov     eax, 1
        shl     eax, cl
        dec     eax
        kmovw   k3, eax
        vmovdqu32 zmm5{k3}{z}, [rsi]
        KEYS    zmm5, zmm6, zmm0, zmm1
3:      vpminsd zmm0, zmm0, zmm3
        vpmaxsd zmm1, zmm1, zmm4
        vextracti32x8 ymm5, zmm0, 1
        vpminsd ymm0, ymm0, ymm5
        vextracti32x8 ymm6, zmm1, 1
        vpmaxsd ymm1, ymm1, ymm6
        MINMAX_KEYS_END
        vzeroupper
        ret
PG_ENDFUNC(pg_minmax_keys_avx512)

        PG_RODATA
        .p2align 2
low31:  .long 0x7fffffff

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

/* minmax_keys_end.h - the end of the range passes (minmax_keys_avx2.S,
 * minmax_keys_avx512.S): from the min and max key lanes in ymm0 / ymm1,
 * the horizontal min and max stored at [rdx] and [rdx + 4], and at
 * [rdx + 8] whether some float was NaN or infinite - read off the range's
 * ends: those keys are >= 0x7f800000 (+inf, +NaN) or <= 0x807fffff as
 * int32 (-inf, -NaN).  Clobbers xmm5, xmm6, eax, ecx, r8d, r9d. */
#ifndef PG_MINMAX_KEYS_END_H
#define PG_MINMAX_KEYS_END_H

.macro MINMAX_KEYS_END
        vextracti128 xmm5, ymm0, 1
        vpminsd xmm0, xmm0, xmm5
        vextracti128 xmm6, ymm1, 1
        vpmaxsd xmm1, xmm1, xmm6
        vpshufd xmm5, xmm0, 0x4e
        vpminsd xmm0, xmm0, xmm5
        vpshufd xmm6, xmm1, 0x4e
        vpmaxsd xmm1, xmm1, xmm6
        vpshufd xmm5, xmm0, 0xb1
        vpminsd xmm0, xmm0, xmm5
        vpshufd xmm6, xmm1, 0xb1
        vpmaxsd xmm1, xmm1, xmm6
        vmovd   eax, xmm0
        vmovd   ecx, xmm1
        mov     dword ptr [rdx], eax
        mov     dword ptr [rdx + 4], ecx
        xor     r8d, r8d
        cmp     ecx, 0x7f800000
        setge   r8b
        xor     r9d, r9d
        cmp     eax, 0x807fffff
        setle   r9b
        or      r8d, r9d
        mov     dword ptr [rdx + 8], r8d
.endm

#endif

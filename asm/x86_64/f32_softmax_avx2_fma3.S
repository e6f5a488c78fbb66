/* f32_softmax_avx2_fma3.S - one row: y = softmax(scale * x + mask).
 *   pass 1: m = max of v = scale x (+ mask), 16 floats per step, 2 maxima;
 *   pass 2: y = exp(v - m) (v recomputed: cheaper than a store and reload),
 *           summed in 2 accumulators;
 *   pass 3: y *= 1 / sum.
 * The last 0..7 floats of each pass go through the tail mask (ymm14):
 * masked loads and stores, and masked-off lanes forced to -inf (max) or 0
 * (sum).  The row is walked twice without and twice with the mask as
 * separate loops (SOFTMAX_ROW 0 / 1), picked once at entry.
 * Semantics and error: engine/kernels/softmax/softmax.h. */
#include "pg_asm.h"
#include "pg_eltwise_avx2.h"

        PG_RODATA
        PG_EXP_CONSTS
        PG_VI .Lsm_ninf, 0xff800000

        .text
/* dst = scale * x[off] (+ mask[off]); scale in ymm15. */
.macro SM_LOAD usemask, dst, off
.if \usemask
        vmovups         \dst, [rdx + \off]
        vfmadd231ps     \dst, ymm15, [rsi + \off]
.else
        vmulps          \dst, ymm15, [rsi + \off]
.endif
.endm
/* The same for the last n & 7 lanes, under the mask ymm14 (others 0). */
.macro SM_LOAD_TAIL usemask, dst, off, tmp
        vmaskmovps      \dst, ymm14, [rsi + \off]
        vmulps          \dst, \dst, ymm15
.if \usemask
        vmaskmovps      \tmp, ymm14, [rdx + \off]
        vaddps          \dst, \dst, \tmp
.endif
.endm

/* Horizontal max / sum of ymm0 into every lane of \dst. */
.macro HREDUCE op, dst
        vextractf128    xmm1, ymm0, 1
        \op             xmm0, xmm0, xmm1
        vpermilps       xmm1, xmm0, 0x4e
        \op             xmm0, xmm0, xmm1
        vpermilps       xmm1, xmm0, 0xb1
        \op             xmm0, xmm0, xmm1
        vbroadcastss    \dst, xmm0
.endm

/* r11 = bytes in whole vectors, r10 = byte offset, r8 = n & 7. */
.macro SOFTMAX_ROW usemask
        /* pass 1: max */
        vmovaps         ymm0, [rip + .Lsm_ninf]
        vmovaps         ymm1, ymm0
        xor             r10, r10
1:      lea             rax, [r10 + 64]
        cmp             rax, r11
        ja              2f
        SM_LOAD         \usemask, ymm2, r10
        SM_LOAD         \usemask, ymm3, r10 + 32
        vmaxps          ymm0, ymm0, ymm2
        vmaxps          ymm1, ymm1, ymm3
        mov             r10, rax
        jmp             1b
2:      cmp             r10, r11
        jae             3f
        SM_LOAD         \usemask, ymm2, r10
        vmaxps          ymm0, ymm0, ymm2
        add             r10, 32
3:      test            r8, r8
        jz              4f
        SM_LOAD_TAIL    \usemask, ymm2, r10, ymm3
        vblendvps       ymm2, ymm1, ymm2, ymm14   /* ymm1 lanes are -inf or a max: harmless */
        vmaxps          ymm0, ymm0, ymm2
4:      vmaxps          ymm0, ymm0, ymm1
        HREDUCE         vmaxps, ymm13

        /* pass 2: y = exp(v - m), sum */
        vxorps          ymm10, ymm10, ymm10
        vxorps          ymm11, ymm11, ymm11
        xor             r10, r10
1:      lea             rax, [r10 + 64]
        cmp             rax, r11
        ja              2f
        SM_LOAD         \usemask, ymm0, r10
        SM_LOAD         \usemask, ymm5, r10 + 32
        vsubps          ymm0, ymm0, ymm13
        vsubps          ymm5, ymm5, ymm13
        PG_EXP          ymm4, ymm0, ymm1, ymm2, ymm3
        PG_EXP          ymm9, ymm5, ymm6, ymm7, ymm8
        vmovups         [rcx + r10], ymm4
        vmovups         [rcx + r10 + 32], ymm9
        vaddps          ymm10, ymm10, ymm4
        vaddps          ymm11, ymm11, ymm9
        mov             r10, rax
        jmp             1b
2:      cmp             r10, r11
        jae             3f
        SM_LOAD         \usemask, ymm0, r10
        vsubps          ymm0, ymm0, ymm13
        PG_EXP          ymm4, ymm0, ymm1, ymm2, ymm3
        vmovups         [rcx + r10], ymm4
        vaddps          ymm10, ymm10, ymm4
        add             r10, 32
3:      test            r8, r8
        jz              4f
        SM_LOAD_TAIL    \usemask, ymm0, r10, ymm1
        vsubps          ymm0, ymm0, ymm13
        PG_EXP          ymm4, ymm0, ymm1, ymm2, ymm3
        vandps          ymm4, ymm4, ymm14
        vmaskmovps      [rcx + r10], ymm14, ymm4
        vaddps          ymm10, ymm10, ymm4
4:      vaddps          ymm0, ymm10, ymm11
        HREDUCE         vaddps, ymm0
        vmovaps         ymm12, [rip + .Lexp_one]
        vdivps          ymm12, ymm12, ymm0
.endm

/* void pg_f32_softmax_avx2_fma3(size_t n, const float *x, float scale,
 *                               rdi       rsi             xmm0
 *                               const float *mask, float *y)
 *                               rdx                rcx */
PG_FUNC(pg_f32_softmax_avx2_fma3)
        test            rdi, rdi
        jz              .Lsm_done
        vbroadcastss    ymm15, xmm0
        mov             r8, rdi
        and             r8, 7
        mov             rax, r8
        neg             rax
        lea             r9, [rip + PG_SYM(pg_avx2_tail_mask)]
        vmovdqu         ymm14, [r9 + 4 * rax + 32]
        mov             r11, rdi
        sub             r11, r8
        shl             r11, 2
        test            rdx, rdx
        jz              .Lsm_nomask
        SOFTMAX_ROW     1
        jmp             .Lsm_scale
.Lsm_nomask:
        SOFTMAX_ROW     0
.Lsm_scale:
        /* pass 3: y *= 1 / sum (ymm12) */
        xor             r10, r10
1:      lea             rax, [r10 + 64]
        cmp             rax, r11
        ja              2f
        vmulps          ymm0, ymm12, [rcx + r10]
        vmulps          ymm1, ymm12, [rcx + r10 + 32]
        vmovups         [rcx + r10], ymm0
        vmovups         [rcx + r10 + 32], ymm1
        mov             r10, rax
        jmp             1b
2:      cmp             r10, r11
        jae             3f
        vmulps          ymm0, ymm12, [rcx + r10]
        vmovups         [rcx + r10], ymm0
        add             r10, 32
3:      test            r8, r8
        jz              .Lsm_done
        vmaskmovps      ymm0, ymm14, [rcx + r10]
        vmulps          ymm0, ymm0, ymm12
        vmaskmovps      [rcx + r10], ymm14, ymm0
.Lsm_done:
        vzeroupper
        ret
PG_ENDFUNC(pg_f32_softmax_avx2_fma3)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

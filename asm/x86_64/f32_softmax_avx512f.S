/* f32_softmax_avx512f.S - one row: y = softmax(scale * x + mask), zmm.
 *
 * The three passes of f32_softmax_avx2_fma3.S at twice the width:
 *   pass 1: m = max of v = scale x (+ mask), 32 floats per step, 2 maxima;
 *   pass 2: y = exp(v - m) (v recomputed: cheaper than a store and reload),
 *           summed in 2 accumulators;
 *   pass 3: y *= 1 / sum.
 * The last n % 16 floats go through the opmask k1 (masked loads suppress
 * faults on the lanes they skip, so nothing past n is read or written;
 * lanes outside k1 leave the maxima and the sums as they were).
 *
 * exp is PG_EXP's (pg_eltwise_avx2.h): the same clamp to [-104, 89], the
 * same n = round(x log2e), two-step reduction and polynomial, with the
 * constants held in zmm16-zmm26 for the whole row.  Where PG_EXP builds
 * 2^n from two exponent fields to round once, vscalefps multiplies p by
 * 2^n with one rounding itself (into the subnormals, to 0, or to +inf).
 * A NaN v, and so a row whose every v is -inf (-inf - -inf), gives NaN as
 * in the other variants.  Semantics and error: softmax.h.
 *
 * void pg_f32_softmax_avx512f(size_t n, const float *x, float scale,
 *                             rdi       rsi             xmm0
 *                             const float *mask, float *y)
 *                             rdx                rcx                  */
#include "pg_asm.h"

        PG_RODATA
        .p2align 2
.Lsx_consts:
        .float  -104.0                  /* zmm16: e^-104 < 2^-150: rounds to +0 */
        .float  89.0                    /* zmm17: e^89 > FLT_MAX: rounds to +inf */
        .float  1.44269504              /* zmm18: log2 e */
        .float  0.693145752             /* zmm19: ln2_hi, 0x3f317200: n ln2_hi exact */
        .float  1.42860677e-06          /* zmm20: ln2_lo */
        .float  0.00138592848           /* zmm21..zmm25: c6..c2 (tools/fit_eltwise.py) */
        .float  0.00837477203
        .float  0.0416677259
        .float  0.166664213
        .float  0.49999994
        .float  1.0                     /* zmm26: c1 and c0 */
        .long   0xff800000              /* -inf: the maxima's start */

        .text
/* dst = scale * x[off] (+ mask[off]); scale in zmm15. */
.macro SX_LOAD usemask, dst, off
.if \usemask
        vmovups         \dst, [rdx + \off]
        vfmadd231ps     \dst, zmm15, [rsi + \off]
.else
        vmulps          \dst, zmm15, [rsi + \off]
.endif
.endm
/* The same for the lanes of k1 (the others 0). */
.macro SX_LOAD_TAIL usemask, dst, off, tmp
        vmulps          \dst{k1}{z}, zmm15, [rsi + \off]
.if \usemask
        vmovups         \tmp{k1}{z}, [rdx + \off]
        vaddps          \dst, \dst, \tmp
.endif
.endm

/* d = exp(x) for 16 lanes; x is left intact, t1 and t2 are clobbered. */
.macro SX_EXP d, x, t1, t2
        vmaxps          \d, zmm16, \x           /* a NaN x passes (second operand) */
        vminps          \d, zmm17, \d
        vmulps          \t1, \d, zmm18
        vrndscaleps     \t1, \t1, 8             /* n: nearest even, no inexact flag */
        vfnmadd231ps    \d, \t1, zmm19
        vfnmadd231ps    \d, \t1, zmm20          /* r = x - n ln2 */
        vmovaps         \t2, zmm21
        vfmadd213ps     \t2, \d, zmm22
        vfmadd213ps     \t2, \d, zmm23
        vfmadd213ps     \t2, \d, zmm24
        vfmadd213ps     \t2, \d, zmm25
        vfmadd213ps     \t2, \d, zmm26
        vfmadd213ps     \t2, \d, zmm26          /* p = e^r */
        vscalefps       \d, \t2, \t1            /* p 2^n */
.endm

/* Horizontal max / sum of zmm0 into every lane of \dst. */
.macro SX_HREDUCE op, dst
        vextractf64x4   ymm1, zmm0, 1
        \op             ymm0, ymm0, ymm1
        vextractf128    xmm1, ymm0, 1
        \op             xmm0, xmm0, xmm1
        vpermilps       xmm1, xmm0, 0x4e
        \op             xmm0, xmm0, xmm1
        vpermilps       xmm1, xmm0, 0xb1
        \op             xmm0, xmm0, xmm1
        vbroadcastss    \dst, xmm0
.endm

/* r11 = bytes in whole vectors, r8 = n % 16 (tail lanes in k1). */
.macro SOFTMAX_ROW usemask
        /* pass 1: max */
        vbroadcastss    zmm0, dword ptr [rip + .Lsx_consts + 44]
        vmovaps         zmm1, zmm0
        xor             r10, r10
1:      lea             rax, [r10 + 128]
        cmp             rax, r11
        ja              2f
        SX_LOAD         \usemask, zmm2, r10
        SX_LOAD         \usemask, zmm3, r10 + 64
        vmaxps          zmm0, zmm0, zmm2
        vmaxps          zmm1, zmm1, zmm3
        mov             r10, rax
        jmp             1b
2:      cmp             r10, r11
        jae             3f
        SX_LOAD         \usemask, zmm2, r10
        vmaxps          zmm0, zmm0, zmm2
        add             r10, 64
3:      test            r8, r8
        jz              4f
        SX_LOAD_TAIL    \usemask, zmm2, r10, zmm3
        vmaxps          zmm0{k1}, zmm0, zmm2
4:      vmaxps          zmm0, zmm0, zmm1
        SX_HREDUCE      vmaxps, zmm13

        /* pass 2: y = exp(v - m), sum */
        vpxord          zmm10, zmm10, zmm10
        vpxord          zmm11, zmm11, zmm11
        xor             r10, r10
1:      lea             rax, [r10 + 128]
        cmp             rax, r11
        ja              2f
        SX_LOAD         \usemask, zmm0, r10
        SX_LOAD         \usemask, zmm5, r10 + 64
        vsubps          zmm0, zmm0, zmm13
        vsubps          zmm5, zmm5, zmm13
        SX_EXP          zmm4, zmm0, zmm1, zmm2
        SX_EXP          zmm9, zmm5, zmm6, zmm7
        vmovups         [rcx + r10], zmm4
        vmovups         [rcx + r10 + 64], zmm9
        vaddps          zmm10, zmm10, zmm4
        vaddps          zmm11, zmm11, zmm9
        mov             r10, rax
        jmp             1b
2:      cmp             r10, r11
        jae             3f
        SX_LOAD         \usemask, zmm0, r10
        vsubps          zmm0, zmm0, zmm13
        SX_EXP          zmm4, zmm0, zmm1, zmm2
        vmovups         [rcx + r10], zmm4
        vaddps          zmm10, zmm10, zmm4
        add             r10, 64
3:      test            r8, r8
        jz              4f
        SX_LOAD_TAIL    \usemask, zmm0, r10, zmm1
        vsubps          zmm0, zmm0, zmm13
        SX_EXP          zmm4, zmm0, zmm1, zmm2
        vmovups         [rcx + r10]{k1}, zmm4
        vaddps          zmm10{k1}, zmm10, zmm4
4:      vaddps          zmm0, zmm10, zmm11
        SX_HREDUCE      vaddps, zmm0
        vdivps          zmm12, zmm26, zmm0
.endm

PG_FUNC(pg_f32_softmax_avx512f)
        test            rdi, rdi
        jz              .Lsx_done
        vbroadcastss    zmm15, xmm0
        lea             rax, [rip + .Lsx_consts]
        vbroadcastss    zmm16, dword ptr [rax]
        vbroadcastss    zmm17, dword ptr [rax + 4]
        vbroadcastss    zmm18, dword ptr [rax + 8]
        vbroadcastss    zmm19, dword ptr [rax + 12]
        vbroadcastss    zmm20, dword ptr [rax + 16]
        vbroadcastss    zmm21, dword ptr [rax + 20]
        vbroadcastss    zmm22, dword ptr [rax + 24]
        vbroadcastss    zmm23, dword ptr [rax + 28]
        vbroadcastss    zmm24, dword ptr [rax + 32]
        vbroadcastss    zmm25, dword ptr [rax + 36]
        vbroadcastss    zmm26, dword ptr [rax + 40]
        mov             r8, rdi
        and             r8, 15
        mov             r9, rcx                 /* the tail mask needs cl */
        mov             ecx, r8d
        mov             eax, 1
        shl             eax, cl
        dec             eax
        kmovw           k1, eax                 /* the last n % 16 lanes */
        mov             rcx, r9
        mov             r11, rdi
        sub             r11, r8
        shl             r11, 2
        test            rdx, rdx
        jz              .Lsx_nomask
        SOFTMAX_ROW     1
        jmp             .Lsx_scale
.Lsx_nomask:
        SOFTMAX_ROW     0
.Lsx_scale:
        /* pass 3: y *= 1 / sum (zmm12) */
        xor             r10, r10
1:      lea             rax, [r10 + 128]
        cmp             rax, r11
        ja              2f
        vmulps          zmm0, zmm12, [rcx + r10]
        vmulps          zmm1, zmm12, [rcx + r10 + 64]
        vmovups         [rcx + r10], zmm0
        vmovups         [rcx + r10 + 64], zmm1
        mov             r10, rax
        jmp             1b
2:      cmp             r10, r11
        jae             3f
        vmulps          zmm0, zmm12, [rcx + r10]
        vmovups         [rcx + r10], zmm0
        add             r10, 64
3:      test            r8, r8
        jz              .Lsx_done
        vmulps          zmm0{k1}{z}, zmm12, [rcx + r10]
        vmovups         [rcx + r10]{k1}, zmm0
.Lsx_done:
        vzeroupper
        ret
PG_ENDFUNC(pg_f32_softmax_avx512f)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

/* pg_eltwise_avx2.h - pieces shared by the AVX2+FMA elementwise kernels
 * (vexp, sigmoid, silu, tanh, gelu_*, softmax): the exp core, its
 * constants, and the loop skeleton of a unary kernel.  Included by each
 * .S file after pg_asm.h; the macros expand inside that file, so its
 * constant table and labels stay local to it.
 *
 * Constants live in .rodata as 8-lane vectors (AVX2 has no embedded
 * broadcast), used as memory operands: loads from L1 are nearly free next
 * to the FMA chain, and they leave the 16 ymm registers to the data. */
#ifndef PG_ELTWISE_AVX2_H
#define PG_ELTWISE_AVX2_H

/* An 8-lane float / int32 constant. */
.macro PG_VF label, value
        .p2align 5
\label: .rept 8
        .float \value
        .endr
.endm
.macro PG_VI label, value
        .p2align 5
\label: .rept 8
        .long \value
        .endr
.endm

/* The constants of PG_EXP; emit once per file inside PG_RODATA.
 * The polynomial is 1 + r (c1 + c2 r + ... + c6 r^5) ~ e^r on
 * [-ln2/2, ln2/2], from tools/fit_eltwise.py (rel. error 1.7e-8 in exact
 * arithmetic with these float coefficients). */
.macro PG_EXP_CONSTS
        PG_VF .Lexp_lo, -104.0          /* e^-104 < 2^-150: rounds to +0 */
        PG_VF .Lexp_hi, 89.0            /* e^89 > FLT_MAX: rounds to +inf */
        PG_VF .Lexp_log2e, 1.44269504
        PG_VF .Lexp_ln2_hi, 0.693145752 /* 0x3f317200: n * ln2_hi is exact */
        PG_VF .Lexp_ln2_lo, 1.42860677e-06
        PG_VF .Lexp_c6, 0.00138592848
        PG_VF .Lexp_c5, 0.00837477203
        PG_VF .Lexp_c4, 0.0416677259
        PG_VF .Lexp_c3, 0.166664213
        PG_VF .Lexp_c2, 0.49999994
        PG_VF .Lexp_one, 1.0            /* c1 and c0 */
        PG_VI .Lexp_bias, 0x3f800000    /* 127 << 23: the exponent field of 2^0 */
.endm

/* d = exp(x) for 8 lanes; x is left intact (d must be another register),
 * t1..t3 are clobbered.
 *   x clamped to [-104, 89] (NaN passes through: vmaxps/vminps return their
 *   second operand when either is NaN);
 *   n = round(x log2e), r = x - n ln2_hi - n ln2_lo (FMA: exact to ~2^-48);
 *   p = e^r by the polynomial, in [0.70, 1.42];
 *   d = p 2^(n >> 1) 2^(n - (n >> 1)): both factors are normal for
 *   n in [-150, 129], the first product is exact, and the second rounds
 *   once, to +inf above FLT_MAX or into the subnormals below 2^-126. */
.macro PG_EXP d, x, t1, t2, t3
        vmovaps         \d, [rip + .Lexp_lo]
        vmaxps          \d, \d, \x
        vmovaps         \t1, [rip + .Lexp_hi]
        vminps          \d, \t1, \d
        vmulps          \t1, \d, [rip + .Lexp_log2e]
        vroundps        \t1, \t1, 0
        vfnmadd231ps    \d, \t1, [rip + .Lexp_ln2_hi]
        vfnmadd231ps    \d, \t1, [rip + .Lexp_ln2_lo]
        vcvtps2dq       \t1, \t1
        vmovaps         \t2, [rip + .Lexp_c6]
        vfmadd213ps     \t2, \d, [rip + .Lexp_c5]
        vfmadd213ps     \t2, \d, [rip + .Lexp_c4]
        vfmadd213ps     \t2, \d, [rip + .Lexp_c3]
        vfmadd213ps     \t2, \d, [rip + .Lexp_c2]
        vfmadd213ps     \t2, \d, [rip + .Lexp_one]
        vfmadd213ps     \t2, \d, [rip + .Lexp_one]
        vpsrad          \t3, \t1, 1
        vpsubd          \t1, \t1, \t3
        vpslld          \t3, \t3, 23
        vpaddd          \t3, \t3, [rip + .Lexp_bias]
        vpslld          \t1, \t1, 23
        vpaddd          \t1, \t1, [rip + .Lexp_bias]
        vmulps          \t2, \t2, \t3
        vmulps          \d, \t2, \t1
.endm

/* The loop of a unary kernel  void fn(size_t n, const float *x, float *y)
 * (rdi = n, rsi = x, rdx = y): 16 floats per iteration as two independent
 * 8-lane bodies (registers ymm0-6 and ymm8-14), then one body of 8, then the
 * last 0..7 with masked loads and stores (mask in ymm15) so nothing past n
 * is read or written.  body is a macro `body v, t1, t2, t3, t4, t5, t6`
 * that replaces v = x with v = f(x) using the six temporaries. */
.macro PG_UNARY_LOOP name, body
        cmp             rdi, 16
        jb              .L\name\()_by8
.L\name\()_by16:
        vmovups         ymm0, [rsi]
        vmovups         ymm8, [rsi + 32]
        \body           ymm0, ymm1, ymm2, ymm3, ymm4, ymm5, ymm6
        \body           ymm8, ymm9, ymm10, ymm11, ymm12, ymm13, ymm14
        vmovups         [rdx], ymm0
        vmovups         [rdx + 32], ymm8
        add             rsi, 64
        add             rdx, 64
        sub             rdi, 16
        cmp             rdi, 16
        jae             .L\name\()_by16
.L\name\()_by8:
        cmp             rdi, 8
        jb              .L\name\()_tail
        vmovups         ymm0, [rsi]
        \body           ymm0, ymm1, ymm2, ymm3, ymm4, ymm5, ymm6
        vmovups         [rdx], ymm0
        add             rsi, 32
        add             rdx, 32
        sub             rdi, 8
.L\name\()_tail:
        test            rdi, rdi
        jz              .L\name\()_done
        lea             rax, [rip + PG_SYM(pg_avx2_tail_mask)]
        neg             rdi
        vmovdqu         ymm15, [rax + 4 * rdi + 32]
        vmaskmovps      ymm0, ymm15, [rsi]
        \body           ymm0, ymm1, ymm2, ymm3, ymm4, ymm5, ymm6
        vmaskmovps      [rdx], ymm15, ymm0
.L\name\()_done:
        vzeroupper
        ret
.endm

/* One pass over a row for the row kernels (norms): r11 = bytes in whole
 * vectors, r8 = n & 7 floats left, ymm14 = their tail mask, r10 and rax
 * are clobbered.  `body off, acc, tmp` handles the 8 floats at byte offset
 * off, 16 per step as two independent chains (ymm10/ymm2 and ymm11/ymm3);
 * `tail off, acc, tmp` the last r8 floats under ymm14. */
.macro PG_ROW_PASS body, tail
        xor             r10, r10
1:      lea             rax, [r10+64]
        cmp             rax, r11
        ja              2f
        \body           r10, ymm10, ymm2
        \body           r10+32, ymm11, ymm3
        mov             r10, rax
        jmp             1b
2:      cmp             r10, r11
        jae             3f
        \body           r10, ymm10, ymm2
        add             r10, 32
3:      test            r8, r8
        jz              4f
        \tail           r10, ymm10, ymm2
4:
.endm

/* Row setup for PG_ROW_PASS from n in rdi: r8, r11, ymm14 (r9 clobbered). */
.macro PG_ROW_SETUP
        mov             r8, rdi
        and             r8, 7
        mov             r9, r8
        neg             r9
        lea             rax, [rip + PG_SYM(pg_avx2_tail_mask)]
        vmovdqu         ymm14, [rax + 4 * r9 + 32]
        mov             r11, rdi
        sub             r11, r8
        shl             r11, 2
.endm

/* Horizontal sum of ymm10 + ymm11 into the low lane of \dst (xmm), ymm1 clobbered. */
.macro PG_HSUM2 dst
        vaddps          ymm10, ymm10, ymm11
        vextractf128    xmm1, ymm10, 1
        vaddps          \dst, xmm10, xmm1
        vpermilps       xmm1, \dst, 0x4e
        vaddps          \dst, \dst, xmm1
        vpermilps       xmm1, \dst, 0xb1
        vaddps          \dst, \dst, xmm1
.endm

#endif

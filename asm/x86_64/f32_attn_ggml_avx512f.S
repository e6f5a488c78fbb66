/* f32_attn_ggml_avx512f.S - the GGUF decoder's two attention products in
 * ggml's summation order (attn_ggml/attn_ggml.h), zmm.
 *
 * void pg_f32_attn_kq_ggml_avx512f(size_t n, size_t hd, const float *q,
 *                                  rdi       rsi        rdx
 *         const float *k, size_t ldk, float *s);
 *         rcx             r8          r9
 * Per key: the four 16-lane accumulators of ggml's AVX-512 dot (zmm0-3:
 * elements 0-15, 16-31, 32-47, 48-63 of each step of 64; the first step a
 * product, the rest fused multiply-adds - the operands are f16 values, so
 * the products are exact and the FMA rounds as ggml's multiply and add),
 * folded (0+2) + (1+3), then 8+8, 4+4, (0+1)+(2+3) as the reference does;
 * the elements past the last step of 64 (80- and 96-wide heads) one by
 * one in double.  q is read from memory per key (L1: at most 1 KB).
 * f32_attn_ggml_avx2_fma3.S is the same with each 16-lane accumulator as
 * two ymm.
 *
 * void pg_f32_attn_pv_ggml_avx512f(size_t n, size_t hd, const float *p,
 *                                  rdi       rsi        rdx
 *         const float *v, size_t ldv, float *acc, float *out);
 *         rcx             r8          r9          [rsp + 8]
 * Accumulator a, lane l of every output d is row r = 16 a + l of acc
 * (64 rows of hd floats): value row j goes into row j % 64, times p[j]
 * (the first 64 rows a product, later ones an FMA), over the whole steps of
 * 64; then per 16 outputs the 64 rows fold as above (zmm0-15 the 16 lanes'
 * sums) into double sums on the stack, to which the rows past the last
 * step add one by one (8 outputs a zmm of doubles); out = those sums
 * rounded to float.
 *
 * Registers (pv): rdi n, rsi hd, rdx p, rcx v, r8 ldv bytes, r9 acc,
 * r10 np, r11 hd bytes (an acc row), r12 16 acc rows, r13 j, r14 the
 * chunk's byte offset, r15 out, rax / rbx row cursors, [rsp] 2 KB of
 * double sums.
 */
#include "pg_asm.h"

        .text

PG_FUNC(pg_f32_attn_kq_ggml_avx512f)
        shl     r8, 2
        mov     r10, rsi
        and     r10, -64                /* np: elements in whole steps */
        test    rdi, rdi
        jz      .Lkq_done
.Lkq_key:
        vxorpd  xmm4, xmm4, xmm4        /* the double sum */
        test    r10, r10
        jz      .Lkq_tail
        vmovups zmm0, [rdx]
        vmulps  zmm0, zmm0, [rcx]
        vmovups zmm1, [rdx + 64]
        vmulps  zmm1, zmm1, [rcx + 64]
        vmovups zmm2, [rdx + 128]
        vmulps  zmm2, zmm2, [rcx + 128]
        vmovups zmm3, [rdx + 192]
        vmulps  zmm3, zmm3, [rcx + 192]
        mov     eax, 64
.Lkq_step:
        cmp     rax, r10
        jae     .Lkq_fold
        vmovups zmm5, [rdx + rax*4]
        vfmadd231ps zmm0, zmm5, [rcx + rax*4]
        vmovups zmm5, [rdx + rax*4 + 64]
        vfmadd231ps zmm1, zmm5, [rcx + rax*4 + 64]
        vmovups zmm5, [rdx + rax*4 + 128]
        vfmadd231ps zmm2, zmm5, [rcx + rax*4 + 128]
        vmovups zmm5, [rdx + rax*4 + 192]
        vfmadd231ps zmm3, zmm5, [rcx + rax*4 + 192]
        add     rax, 64
        jmp     .Lkq_step
.Lkq_fold:
        vaddps  zmm0, zmm0, zmm2        /* (a0 + a2) + (a1 + a3) */
        vaddps  zmm1, zmm1, zmm3
        vaddps  zmm0, zmm0, zmm1
        vextractf64x4 ymm1, zmm0, 1     /* lanes l + l + 8 */
        vaddps  ymm0, ymm0, ymm1
        vextractf128 xmm1, ymm0, 1      /* l + l + 4 */
        vaddps  xmm0, xmm0, xmm1
        vpermilps xmm1, xmm0, 0xb1      /* [t1, t0, t3, t2] */
        vaddps  xmm0, xmm0, xmm1        /* [t0 + t1, ., t2 + t3, .] */
        vmovhlps xmm1, xmm1, xmm0
        vaddss  xmm0, xmm0, xmm1
        vcvtss2sd xmm4, xmm4, xmm0
.Lkq_tail:
        mov     rax, r10
.Lkq_one:
        cmp     rax, rsi
        jae     .Lkq_store
        vmovss  xmm0, [rdx + rax*4]
        vmulss  xmm0, xmm0, [rcx + rax*4]
        vcvtss2sd xmm0, xmm0, xmm0
        vaddsd  xmm4, xmm4, xmm0
        inc     rax
        jmp     .Lkq_one
.Lkq_store:
        vcvtsd2ss xmm0, xmm4, xmm4
        vmovss  [r9], xmm0
        add     r9, 4
        add     rcx, r8
        dec     rdi
        jnz     .Lkq_key
.Lkq_done:
        vzeroupper
        ret
PG_ENDFUNC(pg_f32_attn_kq_ggml_avx512f)

/* acc row (j % 64) = (row j of v) * p[j], or += from the second step on;
 * rax the value row, rbx the acc row, zmm16 p[j] */
.macro PV_ROW op
        xor     r14, r14
1:
.ifc \op, mul
        vmulps  zmm0, zmm16, [rax + r14]
.else
        vmovups zmm0, [rbx + r14]
        vfmadd231ps zmm0, zmm16, [rax + r14]
.endif
        vmovups [rbx + r14], zmm0
        add     r14, 64
        cmp     r14, r11
        jb      1b
.endm

/* lane l's sum of the chunk: (A[l] + A[l + 32]) + (A[l + 16] + A[l + 48]),
 * A[r] at rax + r hd 4 (r12 = 16 rows); rax moves to the next row */
.macro PV_LANE l
        lea     rbx, [rax + r12*2]
        vmovups zmm\l, [rax]
        vaddps  zmm\l, zmm\l, [rbx]
        vmovups zmm16, [rax + r12]
        vaddps  zmm16, zmm16, [rbx + r12]
        vaddps  zmm\l, zmm\l, zmm16
        add     rax, r11
.endm

PG_FUNC(pg_f32_attn_pv_ggml_avx512f)
        push    rbp
        mov     rbp, rsp
        push    rbx
        push    r12
        push    r13
        push    r14
        push    r15
        sub     rsp, 2048 + 64
        and     rsp, -64
        mov     r15, [rbp + 16]         /* out */
        shl     r8, 2
        mov     r11, rsi
        shl     r11, 2                  /* bytes of a row of hd */
        mov     r12, r11
        shl     r12, 4                  /* 16 acc rows */
        mov     r10, rdi
        and     r10, -64                /* np */
        /* the double sums start at 0 */
        vpxord  zmm0, zmm0, zmm0
        xor     r14, r14
.Lpv_zero:
        vmovapd [rsp + r14*2], zmm0
        vmovapd [rsp + r14*2 + 64], zmm0
        add     r14, 64
        cmp     r14, r11
        jb      .Lpv_zero
        test    r10, r10
        jz      .Lpv_tail
        /* the whole steps: row j into acc row j % 64 */
        xor     r13, r13
        mov     rax, rcx
.Lpv_acc:
        vbroadcastss zmm16, [rdx + r13*4]
        mov     rbx, r13
        and     rbx, 63
        imul    rbx, r11
        add     rbx, r9
        cmp     r13, 64
        jae     .Lpv_fma
        PV_ROW  mul
        jmp     .Lpv_next
.Lpv_fma:
        PV_ROW  fma
.Lpv_next:
        add     rax, r8
        inc     r13
        cmp     r13, r10
        jb      .Lpv_acc
        /* fold 16 outputs at a time into the double sums */
        xor     r14, r14
.Lpv_fold:
        lea     rax, [r9 + r14]
        .irp l, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
        PV_LANE \l
        .endr
        vaddps  zmm0, zmm0, zmm8        /* t8: l + l + 8 */
        vaddps  zmm1, zmm1, zmm9
        vaddps  zmm2, zmm2, zmm10
        vaddps  zmm3, zmm3, zmm11
        vaddps  zmm4, zmm4, zmm12
        vaddps  zmm5, zmm5, zmm13
        vaddps  zmm6, zmm6, zmm14
        vaddps  zmm7, zmm7, zmm15
        vaddps  zmm0, zmm0, zmm4        /* t4: l + l + 4 */
        vaddps  zmm1, zmm1, zmm5
        vaddps  zmm2, zmm2, zmm6
        vaddps  zmm3, zmm3, zmm7
        vaddps  zmm0, zmm0, zmm1        /* (t0 + t1) + (t2 + t3) */
        vaddps  zmm2, zmm2, zmm3
        vaddps  zmm0, zmm0, zmm2
        vcvtps2pd zmm1, ymm0
        vextractf64x4 ymm2, zmm0, 1
        vcvtps2pd zmm2, ymm2
        vmovapd [rsp + r14*2], zmm1
        vmovapd [rsp + r14*2 + 64], zmm2
        add     r14, 64
        cmp     r14, r11
        jb      .Lpv_fold
.Lpv_tail:
        /* rows past the last step: p[j] v[j] (float, exact) into the doubles */
        mov     r13, r10
.Lpv_trow:
        cmp     r13, rdi
        jae     .Lpv_out
        vbroadcastss ymm1, [rdx + r13*4]
        mov     rax, r13
        imul    rax, r8
        add     rax, rcx
        xor     r14, r14
.Lpv_tcol:
        vmulps  ymm0, ymm1, [rax + r14]
        vcvtps2pd zmm0, ymm0
        vaddpd  zmm0, zmm0, [rsp + r14*2]
        vmovapd [rsp + r14*2], zmm0
        add     r14, 32
        cmp     r14, r11
        jb      .Lpv_tcol
        inc     r13
        jmp     .Lpv_trow
.Lpv_out:
        xor     r14, r14
.Lpv_round:
        vcvtpd2ps ymm0, zmmword ptr [rsp + r14*2]
        vmovups [r15 + r14], ymm0
        add     r14, 32
        cmp     r14, r11
        jb      .Lpv_round
        lea     rsp, [rbp - 40]
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbx
        pop     rbp
        vzeroupper
        ret
PG_ENDFUNC(pg_f32_attn_pv_ggml_avx512f)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

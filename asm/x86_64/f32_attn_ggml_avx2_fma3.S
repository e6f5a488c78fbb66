/* f32_attn_ggml_avx2_fma3.S - the GGUF decoder's two attention products in
 * ggml's summation order (attn_ggml/attn_ggml.h), ymm: the AVX-512 file's
 * algorithm (f32_attn_ggml_avx512f.S) with each 16-lane accumulator held
 * as two ymm (lanes 0-7, 8-15), so the sums and folds are the same ones -
 * the reference's floats bit for bit.
 *
 * void pg_f32_attn_kq_ggml_avx2_fma3(size_t n, size_t hd, const float *q,
 *         const float *k, size_t ldk, float *s);       rdi rsi rdx rcx r8 r9
 *   ymm0-7 the accumulators (a0 lanes 0-7, 8-15, a1 ..., a3), ymm8 scratch,
 *   xmm9 the double sum.
 *
 * void pg_f32_attn_pv_ggml_avx2_fma3(size_t n, size_t hd, const float *p,
 *         const float *v, size_t ldv, float *acc, float *out);
 *                                         rdi rsi rdx rcx r8 r9 [rsp + 8]
 *   As the AVX-512 routine, 8 outputs a chunk: lane l's sum of the chunk in
 *   ymm l (l < 8) plus lane l + 8's (ymm8) gives the first fold directly;
 *   ymm14-15 scratch; double sums on the stack.
 */
#include "pg_asm.h"

        .text

PG_FUNC(pg_f32_attn_kq_ggml_avx2_fma3)
        shl     r8, 2
        mov     r10, rsi
        and     r10, -64
        test    rdi, rdi
        jz      .Lkq2_done
.Lkq2_key:
        vxorpd  xmm9, xmm9, xmm9
        test    r10, r10
        jz      .Lkq2_tail
        .irp i, 0, 1, 2, 3, 4, 5, 6, 7
        vmovups ymm\i, [rdx + 32*\i]
        vmulps  ymm\i, ymm\i, [rcx + 32*\i]
        .endr
        mov     eax, 64
.Lkq2_step:
        cmp     rax, r10
        jae     .Lkq2_fold
        .irp i, 0, 1, 2, 3, 4, 5, 6, 7
        vmovups ymm8, [rdx + rax*4 + 32*\i]
        vfmadd231ps ymm\i, ymm8, [rcx + rax*4 + 32*\i]
        .endr
        add     rax, 64
        jmp     .Lkq2_step
.Lkq2_fold:
        vaddps  ymm0, ymm0, ymm4        /* a0 + a2, lanes 0-7 and 8-15 */
        vaddps  ymm1, ymm1, ymm5
        vaddps  ymm2, ymm2, ymm6        /* a1 + a3 */
        vaddps  ymm3, ymm3, ymm7
        vaddps  ymm0, ymm0, ymm2        /* s, lanes 0-7 */
        vaddps  ymm1, ymm1, ymm3        /* s, lanes 8-15 */
        vaddps  ymm0, ymm0, ymm1        /* t8: l + l + 8 */
        vextractf128 xmm1, ymm0, 1
        vaddps  xmm0, xmm0, xmm1        /* t4 */
        vpermilps xmm1, xmm0, 0xb1
        vaddps  xmm0, xmm0, xmm1
        vmovhlps xmm1, xmm1, xmm0
        vaddss  xmm0, xmm0, xmm1
        vcvtss2sd xmm9, xmm9, xmm0
.Lkq2_tail:
        mov     rax, r10
.Lkq2_one:
        cmp     rax, rsi
        jae     .Lkq2_store
        vmovss  xmm0, [rdx + rax*4]
        vmulss  xmm0, xmm0, [rcx + rax*4]
        vcvtss2sd xmm0, xmm0, xmm0
        vaddsd  xmm9, xmm9, xmm0
        inc     rax
        jmp     .Lkq2_one
.Lkq2_store:
        vcvtsd2ss xmm0, xmm9, xmm9
        vmovss  [r9], xmm0
        add     r9, 4
        add     rcx, r8
        dec     rdi
        jnz     .Lkq2_key
.Lkq2_done:
        vzeroupper
        ret
PG_ENDFUNC(pg_f32_attn_kq_ggml_avx2_fma3)

/* acc row (j % 64) = (row j of v) * p[j], or += from the second step on;
 * rax the value row, rbx the acc row, ymm13 p[j] */
.macro PV2_ROW op
        xor     r14, r14
1:
.ifc \op, mul
        vmulps  ymm0, ymm13, [rax + r14]
.else
        vmovups ymm0, [rbx + r14]
        vfmadd231ps ymm0, ymm13, [rax + r14]
.endif
        vmovups [rbx + r14], ymm0
        add     r14, 32
        cmp     r14, r11
        jb      1b
.endm

/* ymm\d = lane \l's chunk sum (A[l] + A[l + 32]) + (A[l + 16] + A[l + 48]),
 * A[r] at r9 + r14 + r hd 4: rax = row l, r12 = 16 rows */
.macro PV2_LANE d
        lea     rbx, [rax + r12*2]
        vmovups ymm\d, [rax]
        vaddps  ymm\d, ymm\d, [rbx]
        vmovups ymm15, [rax + r12]
        vaddps  ymm15, ymm15, [rbx + r12]
        vaddps  ymm\d, ymm\d, ymm15
.endm

PG_FUNC(pg_f32_attn_pv_ggml_avx2_fma3)
        push    rbp
        mov     rbp, rsp
        push    rbx
        push    r12
        push    r13
        push    r14
        push    r15
        sub     rsp, 2048 + 32
        and     rsp, -32
        mov     r15, [rbp + 16]
        shl     r8, 2
        mov     r11, rsi
        shl     r11, 2
        mov     r12, r11
        shl     r12, 4
        mov     r10, rdi
        and     r10, -64
        vxorpd  xmm0, xmm0, xmm0
        xor     r14, r14
.Lpv2_zero:
        vmovapd [rsp + r14*2], ymm0
        vmovapd [rsp + r14*2 + 32], ymm0
        add     r14, 32
        cmp     r14, r11
        jb      .Lpv2_zero
        test    r10, r10
        jz      .Lpv2_tail
        xor     r13, r13
        mov     rax, rcx
.Lpv2_acc:
        vbroadcastss ymm13, [rdx + r13*4]
        mov     rbx, r13
        and     rbx, 63
        imul    rbx, r11
        add     rbx, r9
        cmp     r13, 64
        jae     .Lpv2_fma
        PV2_ROW mul
        jmp     .Lpv2_next
.Lpv2_fma:
        PV2_ROW fma
.Lpv2_next:
        add     rax, r8
        inc     r13
        cmp     r13, r10
        jb      .Lpv2_acc
        xor     r14, r14
.Lpv2_fold:
        .irp l, 0, 1, 2, 3, 4, 5, 6, 7
        lea     rax, [r9 + r14]
        imul    r13, r11, \l
        add     rax, r13
        PV2_LANE \l                     /* lane l */
        imul    r13, r11, 8
        add     rax, r13
        PV2_LANE 8                      /* lane l + 8 */
        vaddps  ymm\l, ymm\l, ymm8      /* t8 */
        .endr
        vaddps  ymm0, ymm0, ymm4        /* t4 */
        vaddps  ymm1, ymm1, ymm5
        vaddps  ymm2, ymm2, ymm6
        vaddps  ymm3, ymm3, ymm7
        vaddps  ymm0, ymm0, ymm1
        vaddps  ymm2, ymm2, ymm3
        vaddps  ymm0, ymm0, ymm2
        vcvtps2pd ymm1, xmm0
        vextractf128 xmm2, ymm0, 1
        vcvtps2pd ymm2, xmm2
        vmovapd [rsp + r14*2], ymm1
        vmovapd [rsp + r14*2 + 32], ymm2
        add     r14, 32
        cmp     r14, r11
        jb      .Lpv2_fold
.Lpv2_tail:
        mov     r13, r10
.Lpv2_trow:
        cmp     r13, rdi
        jae     .Lpv2_out
        vbroadcastss xmm1, [rdx + r13*4]
        mov     rax, r13
        imul    rax, r8
        add     rax, rcx
        xor     r14, r14
.Lpv2_tcol:
        vmulps  xmm0, xmm1, [rax + r14]
        vcvtps2pd ymm0, xmm0
        vaddpd  ymm0, ymm0, [rsp + r14*2]
        vmovapd [rsp + r14*2], ymm0
        add     r14, 16
        cmp     r14, r11
        jb      .Lpv2_tcol
        inc     r13
        jmp     .Lpv2_trow
.Lpv2_out:
        xor     r14, r14
.Lpv2_round:
        vcvtpd2ps xmm0, ymmword ptr [rsp + r14*2]
        vmovups [r15 + r14], xmm0
        add     r14, 16
        cmp     r14, r11
        jb      .Lpv2_round
        lea     rsp, [rbp - 40]
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbx
        pop     rbp
        vzeroupper
        ret
PG_ENDFUNC(pg_f32_attn_pv_ggml_avx2_fma3)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

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
 * Heads of whole steps (64, 128, 192, 256) take four keys at a time:
 * q's step in zmm16-19, key k's accumulators in zmm 4k..4k+3, and the
 * four folds shared - 8+8 by 128-bit shuffles of two keys into one zmm,
 * 4+4 by shuffles of all four into one lane each, (0+1)+(2+3) by in-lane
 * permutes - the same additions on the same operands as one key's fold.
 * f32_attn_ggml_avx2_fma3.S is the same with each 16-lane accumulator as
 * two ymm.
 *
 * void pg_f32_attn_pv_ggml_avx512f(size_t n, size_t hd, const float *p,
 *                                  rdi       rsi        rdx
 *         const float *v, size_t ldv, float *acc, float *out);
 *         rcx             r8          r9          [rsp + 8]
 * Per chunk of 16 outputs, the sums stay in registers: T[l] (zmm l, the
 * sixteen lanes l of the four accumulators) is four chains A(l + 16 a)
 * over the whole steps of 64 rows (value row r + 64 s times p[r + 64 s]
 * broadcast from memory: the first a product, then FMAs - exact products,
 * so the FMA rounds as ggml's multiply and add), folded (A(l) + A(l + 32))
 * + (A(l + 16) + A(l + 48)); the sixteen T fold 8+8, 4+4, (0+1)+(2+3)
 * into the chunk's outputs, widened to doubles (zmm24-25), to which the
 * rows past the last step add one by one as double FMAs of the widened
 * value and p (exact products: the one rounding of ggml's double add);
 * out = those sums rounded to float.  acc is not used.  (The chunk walk
 * reads each value row once per chunk: a power-of-two row stride of 1 KB
 * or more maps the rows to few L1 sets and costs L2 reads.)
 *
 * Registers (pv): rdi n, rsi hd bytes, rdx p, rcx v, r8 ldv bytes,
 * r10 / r11 / r15 / rbx 32 / 48 / 16 / 64 rows, r12 the chunk's byte
 * offset, r13 / r14 row l and p[l], rax / r9 / rbp the step walk; the
 * frame (PV_*) holds np, the steps, the tail's count, out, and the tail
 * rows' p as doubles.
 */
#include "pg_asm.h"

        .text

PG_FUNC(pg_f32_attn_kq_ggml_avx512f)
        shl     r8, 2
        mov     r10, rsi
        and     r10, -64                /* np: elements in whole steps */
        /* whole 64-element heads: four keys at a time, their folds
         * shared (KQ4 below); the rest one by one */
        test    rsi, 63
        jnz     .Lkq_one_by_one
        cmp     rdi, 4
        jb      .Lkq_one_by_one
        push    r12
        push    r13
        vmovups zmm20, [rip + .Lkq_pick]
        shl     r10, 2                  /* hd bytes */
.Lkq_four:
        lea     r11, [rcx + r8]
        lea     r12, [rcx + r8*2]
        lea     r13, [r11 + r8*2]
        xor     eax, eax
        vmovups zmm16, [rdx + rax]
        vmovups zmm17, [rdx + rax + 64]
        vmovups zmm18, [rdx + rax + 128]
        vmovups zmm19, [rdx + rax + 192]
        vmulps      zmm0, zmm16, [rcx + rax]
        vmulps      zmm1, zmm17, [rcx + rax + 64]
        vmulps      zmm2, zmm18, [rcx + rax + 128]
        vmulps      zmm3, zmm19, [rcx + rax + 192]
        vmulps      zmm4, zmm16, [r11 + rax]
        vmulps      zmm5, zmm17, [r11 + rax + 64]
        vmulps      zmm6, zmm18, [r11 + rax + 128]
        vmulps      zmm7, zmm19, [r11 + rax + 192]
        vmulps      zmm8, zmm16, [r12 + rax]
        vmulps      zmm9, zmm17, [r12 + rax + 64]
        vmulps      zmm10, zmm18, [r12 + rax + 128]
        vmulps      zmm11, zmm19, [r12 + rax + 192]
        vmulps      zmm12, zmm16, [r13 + rax]
        vmulps      zmm13, zmm17, [r13 + rax + 64]
        vmulps      zmm14, zmm18, [r13 + rax + 128]
        vmulps      zmm15, zmm19, [r13 + rax + 192]
        mov     eax, 256
.Lkq_four_step:
        cmp     rax, r10
        jae     .Lkq_four_fold
        vmovups zmm16, [rdx + rax]
        vmovups zmm17, [rdx + rax + 64]
        vmovups zmm18, [rdx + rax + 128]
        vmovups zmm19, [rdx + rax + 192]
        vfmadd231ps zmm0, zmm16, [rcx + rax]
        vfmadd231ps zmm1, zmm17, [rcx + rax + 64]
        vfmadd231ps zmm2, zmm18, [rcx + rax + 128]
        vfmadd231ps zmm3, zmm19, [rcx + rax + 192]
        vfmadd231ps zmm4, zmm16, [r11 + rax]
        vfmadd231ps zmm5, zmm17, [r11 + rax + 64]
        vfmadd231ps zmm6, zmm18, [r11 + rax + 128]
        vfmadd231ps zmm7, zmm19, [r11 + rax + 192]
        vfmadd231ps zmm8, zmm16, [r12 + rax]
        vfmadd231ps zmm9, zmm17, [r12 + rax + 64]
        vfmadd231ps zmm10, zmm18, [r12 + rax + 128]
        vfmadd231ps zmm11, zmm19, [r12 + rax + 192]
        vfmadd231ps zmm12, zmm16, [r13 + rax]
        vfmadd231ps zmm13, zmm17, [r13 + rax + 64]
        vfmadd231ps zmm14, zmm18, [r13 + rax + 128]
        vfmadd231ps zmm15, zmm19, [r13 + rax + 192]
        add     rax, 256
        jmp     .Lkq_four_step
.Lkq_four_fold:
        /* per key (a0 + a2) + (a1 + a3) into zmm 4k */
        vaddps  zmm0, zmm0, zmm2
        vaddps  zmm1, zmm1, zmm3
        vaddps  zmm0, zmm0, zmm1
        vaddps  zmm4, zmm4, zmm6
        vaddps  zmm5, zmm5, zmm7
        vaddps  zmm4, zmm4, zmm5
        vaddps  zmm8, zmm8, zmm10
        vaddps  zmm9, zmm9, zmm11
        vaddps  zmm8, zmm8, zmm9
        vaddps  zmm12, zmm12, zmm14
        vaddps  zmm13, zmm13, zmm15
        vaddps  zmm12, zmm12, zmm13
        /* 8+8: [key0 | key1] and [key2 | key3], lanes l + l+8 */
        vshuff32x4 zmm16, zmm0, zmm4, 0x44
        vshuff32x4 zmm17, zmm0, zmm4, 0xee
        vaddps  zmm16, zmm16, zmm17
        vshuff32x4 zmm17, zmm8, zmm12, 0x44
        vshuff32x4 zmm18, zmm8, zmm12, 0xee
        vaddps  zmm17, zmm17, zmm18
        /* 4+4: one 128-bit lane per key, l + l+4 */
        vshuff32x4 zmm18, zmm16, zmm17, 0x88
        vshuff32x4 zmm19, zmm16, zmm17, 0xdd
        vaddps  zmm18, zmm18, zmm19
        /* (0+1)+(2+3) in each lane, then element 0 of each lane */
        vpermilps zmm19, zmm18, 0xb1
        vaddps  zmm18, zmm18, zmm19
        vpermilps zmm19, zmm18, 0x4e
        vaddps  zmm18, zmm18, zmm19
        vpermps zmm0, zmm20, zmm18
        vmovups [r9], xmm0
        add     r9, 16
        lea     rcx, [rcx + r8*4]
        sub     rdi, 4
        cmp     rdi, 4
        jae     .Lkq_four
        pop     r13
        pop     r12
        shr     r10, 2
.Lkq_one_by_one:
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

/* stack frame of pv (rsp 64-aligned): the tail rows' p as doubles, then */
#define PV_NP       512         /* np: rows in whole steps of 64 */
#define PV_NSTEPS   520         /* np / 64 */
#define PV_NTAIL    528         /* n - np */
#define PV_OUT      536         /* out */
#define PV_SAVED    544         /* rsp before the frame */

/* T[l] (zmm l) for the chunk: the four accumulators A(l + 16a), A(r) the
 * chain over the steps of v's row r + 64 s times p[r + 64 s] (the first a
 * product, then FMAs), folded (A(l) + A(l + 32)) + (A(l + 16) + A(l + 48));
 * r13 row l of the chunk, r14 &p[l]; both move on to l + 1 */
.macro PV_T l
        vmovups zmm20, [r13]
        vmulps  zmm16, zmm20, dword ptr [r14]{1to16}
        vmovups zmm21, [r13 + r15]
        vmulps  zmm17, zmm21, dword ptr [r14 + 64]{1to16}
        vmovups zmm22, [r13 + r10]
        vmulps  zmm18, zmm22, dword ptr [r14 + 128]{1to16}
        vmovups zmm23, [r13 + r11]
        vmulps  zmm19, zmm23, dword ptr [r14 + 192]{1to16}
        mov     rbp, [rsp + PV_NSTEPS]
        dec     rbp
        jz      2f
        lea     rax, [r13 + rbx]
        lea     r9, [r14 + 256]
1:      vmovups zmm20, [rax]
        vfmadd231ps zmm16, zmm20, dword ptr [r9]{1to16}
        vmovups zmm21, [rax + r15]
        vfmadd231ps zmm17, zmm21, dword ptr [r9 + 64]{1to16}
        vmovups zmm22, [rax + r10]
        vfmadd231ps zmm18, zmm22, dword ptr [r9 + 128]{1to16}
        vmovups zmm23, [rax + r11]
        vfmadd231ps zmm19, zmm23, dword ptr [r9 + 192]{1to16}
        add     rax, rbx
        add     r9, 256
        dec     rbp
        jnz     1b
2:      vaddps  zmm16, zmm16, zmm18
        vaddps  zmm17, zmm17, zmm19
        vaddps  zmm\l, zmm16, zmm17
        add     r13, r8
        add     r14, 4
.endm

PG_FUNC(pg_f32_attn_pv_ggml_avx512f)
        push    rbx
        push    rbp
        push    r12
        push    r13
        push    r14
        push    r15
        mov     rax, [rsp + 56]         /* out */
        mov     r9, rsp
        sub     rsp, PV_SAVED + 8
        and     rsp, -64
        mov     [rsp + PV_SAVED], r9
        mov     [rsp + PV_OUT], rax
        mov     rax, rdi
        and     rax, -64
        mov     [rsp + PV_NP], rax
        mov     r9, rax
        shr     r9, 6
        mov     [rsp + PV_NSTEPS], r9
        mov     r9, rdi
        sub     r9, rax
        mov     [rsp + PV_NTAIL], r9
        /* the tail rows' p, widened (exact) for the double FMAs */
        xor     r9, r9
.Lpv_pd:
        cmp     r9, [rsp + PV_NTAIL]
        jae     .Lpv_strides
        lea     rbp, [rax + r9]
        vcvtss2sd xmm0, xmm0, dword ptr [rdx + rbp*4]
        vmovsd  [rsp + r9*8], xmm0
        inc     r9
        jmp     .Lpv_pd
.Lpv_strides:
        shl     r8, 2                   /* ldv bytes */
        mov     r15, r8
        shl     r15, 4                  /* 16 rows */
        lea     r10, [r15 + r15]        /* 32 rows */
        lea     r11, [r10 + r15]        /* 48 rows */
        lea     rbx, [r10 + r10]        /* 64 rows: one step */
        shl     rsi, 2                  /* hd bytes */
        xor     r12, r12                /* the chunk's byte offset */
.Lpv_chunk:
        cmp     qword ptr [rsp + PV_NSTEPS], 0
        je      .Lpv_nofold
        lea     r13, [rcx + r12]
        mov     r14, rdx
        .irp l, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
        PV_T    \l
        .endr
        /* the 16 T[l] folded 8+8, 4+4, (0+1)+(2+3): sixteen outputs */
        vaddps  zmm0, zmm0, zmm8
        vaddps  zmm1, zmm1, zmm9
        vaddps  zmm2, zmm2, zmm10
        vaddps  zmm3, zmm3, zmm11
        vaddps  zmm4, zmm4, zmm12
        vaddps  zmm5, zmm5, zmm13
        vaddps  zmm6, zmm6, zmm14
        vaddps  zmm7, zmm7, zmm15
        vaddps  zmm0, zmm0, zmm4
        vaddps  zmm1, zmm1, zmm5
        vaddps  zmm2, zmm2, zmm6
        vaddps  zmm3, zmm3, zmm7
        vaddps  zmm0, zmm0, zmm1
        vaddps  zmm2, zmm2, zmm3
        vaddps  zmm0, zmm0, zmm2
        vcvtps2pd zmm24, ymm0
        vextractf64x4 ymm1, zmm0, 1
        vcvtps2pd zmm25, ymm1
        jmp     .Lpv_tail
.Lpv_nofold:
        vpxord  zmm24, zmm24, zmm24
        vpxord  zmm25, zmm25, zmm25
.Lpv_tail:
        /* rows np.. one by one in double: sum += v p (exact) */
        mov     rbp, [rsp + PV_NTAIL]
        test    rbp, rbp
        jz      .Lpv_store
        mov     rax, [rsp + PV_NP]
        imul    rax, r8
        add     rax, rcx
        add     rax, r12
        xor     r9, r9
.Lpv_trow:
        vcvtps2pd zmm20, ymmword ptr [rax]
        vcvtps2pd zmm21, ymmword ptr [rax + 32]
        vfmadd231pd zmm24, zmm20, qword ptr [rsp + r9*8]{1to8}
        vfmadd231pd zmm25, zmm21, qword ptr [rsp + r9*8]{1to8}
        add     rax, r8
        inc     r9
        cmp     r9, rbp
        jb      .Lpv_trow
.Lpv_store:
        vcvtpd2ps ymm0, zmm24
        vcvtpd2ps ymm1, zmm25
        vinsertf64x4 zmm0, zmm0, ymm1, 1
        mov     rax, [rsp + PV_OUT]
        vmovups [rax + r12], zmm0
        add     r12, 64
        cmp     r12, rsi
        jb      .Lpv_chunk
        mov     rsp, [rsp + PV_SAVED]
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbp
        pop     rbx
        vzeroupper
        ret
PG_ENDFUNC(pg_f32_attn_pv_ggml_avx512f)

        PG_RODATA
        .p2align 6
.Lkq_pick:                              /* element 0 of each 128-bit lane */
        .long   0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

/* f32_gemm_6x16_avx2_fma3.S - one 6x16 tile of C = A * B (+C) (+bias) (act).
 *
 * The 12 accumulators ymm0..ymm11 hold rows 0..5 of the tile, two ymm per
 * row (columns 0-7 and 8-15).  Each k step loads one 16-float row of the
 * packed B panel (ymm12, ymm13) and broadcasts one float of each A row
 * (ymm14, ymm15 in turn): 12 independent FMA chains, enough to hide the FMA
 * latency at two FMAs per cycle.  A is read in place with its stride; rows
 * at or past mr re-read the last valid row so nothing outside A is touched
 * and the loop has no row branches; a tile of at most 4 (2) rows runs a
 * copy of the loop without the FMAs of rows 4-5 (2-5), which it would
 * throw away (M = 128 ends in a 2-row tile: BERT-base's layer products
 * +3-7%).  Every 4 k steps a prefetcht1 carries on the driver's L2 stream
 * (ep->pf, see pg_sgemm_epilogue_pf), so that the first tile of a panel
 * finds B in L2 (+2-5% on the same products).  Measured on Zen 3 and left
 * out: a prefetcht0 of B ahead in the loop (1-2% slower: the hardware
 * prefetcher keeps up) and a prefetch of the C tile before the loop (no
 * gain on large products, 3% lost on attention's k = 32 tiles).
 *
 * The epilogue runs while C is still in registers: + C (accumulate flag, for
 * K blocking), + bias (per column), then ReLU or GELU (erf form), then the
 * store.  Partial tiles (nr < 16) load and store through vmaskmovps with
 * masks from pg_avx2_tail_mask; rows past mr are never loaded or stored.
 *
 * void pg_f32_gemm_6x16_avx2_fma3(size_t mr, size_t nr, size_t k,
 *          rdi       rsi        rdx
 *          const float *a, size_t lda, const float *b, float *c,
 *          rcx             r8          r9              [rsp+8]
 *          size_t ldc, const pg_sgemm_epilogue *ep);
 *          [rsp+16]    [rsp+24]
 * lda and ldc count floats.  ep: { const float *bias @0; int act @8;
 * int flags @12; with flags bit 1, const void *pf @16 }, see sgemm.h. */
#include "pg_asm.h"

#define NREG_PUSHED 6
#define ARG_C   [rsp + 8 * NREG_PUSHED + 8]
#define ARG_LDC [rsp + 8 * NREG_PUSHED + 16]
#define ARG_EP  [rsp + 8 * NREG_PUSHED + 24]

/* one A row of one k step: broadcast into \t, two FMAs */
.macro ROW1 ra, acc0, acc1, t, u
        vbroadcastss \t, [\ra + r11 + 4 * \u]
        vfmadd231ps \acc0, ymm12, \t
        vfmadd231ps \acc1, ymm13, \t
.endm

/* one k step of the first \rows rows (2, 4 or 6): B row at [r9 + 64*u],
 * A column at byte offset 4*u + r11 */
.macro KSTEP rows, u
        vmovups ymm12, [r9 + 64 * \u]
        vmovups ymm13, [r9 + 64 * \u + 32]
        ROW1    rcx, ymm0, ymm1, ymm14, \u
        ROW1    rax, ymm2, ymm3, ymm15, \u
.if \rows > 2
        ROW1    rbx, ymm4, ymm5, ymm14, \u
        ROW1    rbp, ymm6, ymm7, ymm15, \u
.endif
.if \rows > 4
        ROW1    r12, ymm8, ymm9, ymm14, \u
        ROW1    r13, ymm10, ymm11, ymm15, \u
.endif
.endm

/* the K loop over the first \rows rows: by 4, then the k % 4 left; every
 * 4 k steps one prefetcht1 carries on the driver's L2 stream (r14) */
.macro KLOOP rows
        mov     r10, rdx
        shr     r10, 2
        jz      .Lk_tail\rows
        .p2align 4
.Lk_by4\rows:
        KSTEP   \rows, 0
        KSTEP   \rows, 1
        prefetcht1 [r14]
        KSTEP   \rows, 2
        KSTEP   \rows, 3
        add     r14, 64
        add     r11, 16
        add     r9, 256
        dec     r10
        jnz     .Lk_by4\rows
.Lk_tail\rows:
        and     rdx, 3
        jz      .Lepilogue
.Lk_by1\rows:
        KSTEP   \rows, 0
        add     r11, 4
        add     r9, 64
        dec     rdx
        jnz     .Lk_by1\rows
        jmp     .Lepilogue
.endm

/* x = gelu(x) = 0.5 x (1 + erf(x / sqrt 2)), temporaries ymm12..ymm15.
 * erf(z) ~ z P(z^2) / Q(z^2) with z clamped to +-3.925 (see the table). */
.macro GELU x
        vmulps  ymm12, \x, [rip + gelu_rsqrt2]
        vminps  ymm12, ymm12, [rip + gelu_clamp]
        vmaxps  ymm12, ymm12, [rip + gelu_nclamp]
        vmulps  ymm13, ymm12, ymm12
        vmovaps ymm14, [rip + gelu_p6]
        vfmadd213ps ymm14, ymm13, [rip + gelu_p5]
        vfmadd213ps ymm14, ymm13, [rip + gelu_p4]
        vfmadd213ps ymm14, ymm13, [rip + gelu_p3]
        vfmadd213ps ymm14, ymm13, [rip + gelu_p2]
        vfmadd213ps ymm14, ymm13, [rip + gelu_p1]
        vfmadd213ps ymm14, ymm13, [rip + gelu_p0]
        vmovaps ymm15, [rip + gelu_q4]
        vfmadd213ps ymm15, ymm13, [rip + gelu_q3]
        vfmadd213ps ymm15, ymm13, [rip + gelu_q2]
        vfmadd213ps ymm15, ymm13, [rip + gelu_q1]
        vfmadd213ps ymm15, ymm13, [rip + gelu_one]
        vmulps  ymm14, ymm14, ymm12
        vdivps  ymm14, ymm14, ymm15
        vmulps  \x, \x, [rip + gelu_half]
        vfmadd231ps \x, \x, ymm14
.endm

/* rows of the tile: row r lives in ymm(2r), ymm(2r+1); r14 walks C */
.macro ROW_ACC_FULL lo, hi, r, done
        vaddps  \lo, \lo, [r14]
        vaddps  \hi, \hi, [r14 + 32]
        cmp     rdi, \r + 1
        jbe     \done
        add     r14, r15
.endm
.macro ROW_ACC_MASKED lo, hi, r, done
        vmaskmovps ymm12, ymm14, [r14]
        vaddps  \lo, \lo, ymm12
        vmaskmovps ymm12, ymm15, [r14 + 32]
        vaddps  \hi, \hi, ymm12
        cmp     rdi, \r + 1
        jbe     \done
        add     r14, r15
.endm
.macro ROW_STORE_FULL lo, hi, r, done
        vmovups [r14], \lo
        vmovups [r14 + 32], \hi
        cmp     rdi, \r + 1
        jbe     \done
        add     r14, r15
.endm
.macro ROW_STORE_MASKED lo, hi, r, done
        vmaskmovps [r14], ymm14, \lo
        vmaskmovps [r14 + 32], ymm15, \hi
        cmp     rdi, \r + 1
        jbe     \done
        add     r14, r15
.endm
.macro ALL_ROWS m, done
        \m      ymm0, ymm1, 0, \done
        \m      ymm2, ymm3, 1, \done
        \m      ymm4, ymm5, 2, \done
        \m      ymm6, ymm7, 3, \done
        \m      ymm8, ymm9, 4, \done
        \m      ymm10, ymm11, 5, \done
.endm

        .text
PG_FUNC(pg_f32_gemm_6x16_avx2_fma3)
        push    rbx
        push    rbp
        push    r12
        push    r13
        push    r14
        push    r15
        /* A row pointers; rows >= mr alias the previous one */
        shl     r8, 2
        PG_NEXT_ROW rax, rcx, rcx, 2
        PG_NEXT_ROW rbx, rax, rax, 3
        PG_NEXT_ROW rbp, rbx, rbx, 4
        PG_NEXT_ROW r12, rbp, rbp, 5
        PG_NEXT_ROW r13, r12, r12, 6

        /* r14: the L2 prefetch stream */
        mov     r10, ARG_EP
        PG_SGEMM_PF_STREAM r14, r10
        vxorps  ymm0, ymm0, ymm0
        vxorps  ymm1, ymm1, ymm1
        vxorps  ymm2, ymm2, ymm2
        vxorps  ymm3, ymm3, ymm3
        vxorps  ymm4, ymm4, ymm4
        vxorps  ymm5, ymm5, ymm5
        vxorps  ymm6, ymm6, ymm6
        vxorps  ymm7, ymm7, ymm7
        vxorps  ymm8, ymm8, ymm8
        vxorps  ymm9, ymm9, ymm9
        vxorps  ymm10, ymm10, ymm10
        vxorps  ymm11, ymm11, ymm11

        /* a short tile (mr <= 4, mr <= 2) runs a loop without the FMAs of
         * the rows it does not store: the last tile of M = 128 is 2 rows */
        xor     r11, r11                /* byte offset into each A row */
        cmp     rdi, 2
        jbe     .Lrows2
        cmp     rdi, 4
        jbe     .Lrows4
        KLOOP   6
.Lrows4:
        KLOOP   4
.Lrows2:
        KLOOP   2

.Lepilogue:
        mov     r14, ARG_C
        mov     r15, ARG_LDC
        shl     r15, 2
        mov     r10, ARG_EP
        /* column masks (all ones when nr = 16): lanes 0-7 from min(nr, 8),
         * lanes 8-15 from max(nr - 8, 0); table + 32 - 4n has n lanes set */
        lea     rax, [rip + PG_SYM(pg_avx2_tail_mask) + 32]
        mov     rcx, 8
        cmp     rsi, rcx
        cmovb   rcx, rsi
        mov     rdx, rsi
        sub     rdx, rcx                /* max(nr - 8, 0) */
        shl     rcx, 2
        shl     rdx, 2
        mov     rbx, rax
        sub     rbx, rcx                /* mask of columns 0-7 */
        mov     rbp, rax
        sub     rbp, rdx                /* mask of columns 8-15 */
        vmovdqu ymm14, [rbx]
        vmovdqu ymm15, [rbp]

        /* + C */
        test    dword ptr [r10 + 12], 1
        jz      .Lacc_done
        cmp     rsi, 16
        jb      .Lacc_masked
        ALL_ROWS ROW_ACC_FULL, .Lacc_rewind
.Lacc_masked:
        ALL_ROWS ROW_ACC_MASKED, .Lacc_rewind
.Lacc_rewind:
        mov     r14, ARG_C
.Lacc_done:

        /* + bias (masked loads read only the nr valid columns) */
        mov     rax, [r10]
        test    rax, rax
        jz      .Lbias_done
        vmaskmovps ymm12, ymm14, [rax]
        vmaskmovps ymm13, ymm15, [rax + 32]
        vaddps  ymm0, ymm0, ymm12
        vaddps  ymm1, ymm1, ymm13
        vaddps  ymm2, ymm2, ymm12
        vaddps  ymm3, ymm3, ymm13
        vaddps  ymm4, ymm4, ymm12
        vaddps  ymm5, ymm5, ymm13
        vaddps  ymm6, ymm6, ymm12
        vaddps  ymm7, ymm7, ymm13
        vaddps  ymm8, ymm8, ymm12
        vaddps  ymm9, ymm9, ymm13
        vaddps  ymm10, ymm10, ymm12
        vaddps  ymm11, ymm11, ymm13
.Lbias_done:

        /* activation: 0 none, 1 ReLU, 2 GELU */
        mov     eax, dword ptr [r10 + 8]
        cmp     eax, 1
        je      .Lrelu
        cmp     eax, 2
        jne     .Lstore
        GELU    ymm0
        GELU    ymm1
        GELU    ymm2
        GELU    ymm3
        GELU    ymm4
        GELU    ymm5
        GELU    ymm6
        GELU    ymm7
        GELU    ymm8
        GELU    ymm9
        GELU    ymm10
        GELU    ymm11
        /* the GELU temporaries overwrote the masks */
        vmovdqu ymm14, [rbx]
        vmovdqu ymm15, [rbp]
        jmp     .Lstore
.Lrelu:
        vxorps  ymm12, ymm12, ymm12
        vmaxps  ymm0, ymm0, ymm12
        vmaxps  ymm1, ymm1, ymm12
        vmaxps  ymm2, ymm2, ymm12
        vmaxps  ymm3, ymm3, ymm12
        vmaxps  ymm4, ymm4, ymm12
        vmaxps  ymm5, ymm5, ymm12
        vmaxps  ymm6, ymm6, ymm12
        vmaxps  ymm7, ymm7, ymm12
        vmaxps  ymm8, ymm8, ymm12
        vmaxps  ymm9, ymm9, ymm12
        vmaxps  ymm10, ymm10, ymm12
        vmaxps  ymm11, ymm11, ymm12

.Lstore:
        cmp     rsi, 16
        jb      .Lstore_masked
        ALL_ROWS ROW_STORE_FULL, .Ldone
.Lstore_masked:
        ALL_ROWS ROW_STORE_MASKED, .Ldone
.Ldone:
        vzeroupper
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbp
        pop     rbx
        ret
PG_ENDFUNC(pg_f32_gemm_6x16_avx2_fma3)

/* GELU constants, each splatted to 8 lanes for full-width memory operands.
 * erf(z) ~ z * P(z^2) / Q(z^2) on |z| <= 3.925 (erf(3.925) rounds to 1.0f),
 * a (6,4) rational fitted for least maximum relative error by
 * engine/kernels/sgemm/gelu_erf_fit.py: max relative error 5.3e-8 in exact
 * arithmetic, 4.4e-7 (7 ulp) evaluated in float32 as here, against erf. */
        PG_RODATA
        .p2align 5
.macro SPLAT name, value
\name:
        .rept 8
        .float \value
        .endr
.endm
SPLAT gelu_rsqrt2, 0.70710678118654752
SPLAT gelu_clamp, 3.925
SPLAT gelu_nclamp, -3.925
SPLAT gelu_half, 0.5
SPLAT gelu_one, 1.0
SPLAT gelu_p0, 1.128379107e+00
SPLAT gelu_p1, 2.003775686e-01
SPLAT gelu_p2, 5.063291639e-02
SPLAT gelu_p3, 3.719719360e-03
SPLAT gelu_p4, 1.421845227e-04
SPLAT gelu_p5, -1.956643018e-06
SPLAT gelu_p6, 1.986926357e-08
SPLAT gelu_q1, 5.109116435e-01
SPLAT gelu_q2, 1.151851714e-01
SPLAT gelu_q3, 1.439111866e-02
SPLAT gelu_q4, 9.600991616e-04

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

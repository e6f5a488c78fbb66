/* f32_gemm_12x32_avx512f.S - one 12x32 tile of C = A * B (+C) (+bias) (act).
 *
 * The 24 accumulators zmm0..zmm23 hold rows 0..11 of the tile, two zmm per
 * row (columns 0-15 and 16-31).  Each k step loads one 32-float row of the
 * packed B panel (zmm24, zmm25) and broadcasts one float of each A row
 * (zmm26..zmm31 in turn): 24 independent FMA chains, three times the
 * 4-cycle latency x 2 FMA pipes, and 14 loads for 24 FMAs, within the two
 * loads a cycle the core sustains.  A is read in place with its stride;
 * rows at or past mr re-read the last valid row, so nothing outside A is
 * touched and the loop has no row branches; a tile of at most 8 (4) rows
 * runs a copy of the loop without the FMAs of rows 8-11 (4-11), which it
 * would throw away.  The C tile is prefetched before the loop.  Every 4 k
 * steps two prefetcht1 carry on the driver's L2 stream (ep->pf, see
 * pg_sgemm_epilogue_pf): its share of the next B slice, so that the first
 * tile of a panel finds B in L2 rather than in memory (BERT-base's layer
 * products with weights from DRAM: +10-13%).  The 12 row pointers, the B
 * pointer, the A offset and the prefetch pointer use all 15 spare GPRs, so
 * mr, k and the loop counts live on the stack.  Why 12 rows and not 14: 12 + 3 GPRs is all
 * there are, and a 128-row M (MiniLM) wastes 3% of a 12-row tile grid
 * against 9% of a 14-row one.
 *
 * The epilogue runs while C is still in registers: + C (accumulate flag, for
 * K blocking), + bias (per column), then ReLU or GELU (erf form), then the
 * store.  Columns go through the opmasks k1 (0-15) and k2 (16-31) built from
 * nr, so a partial tile needs no tail table and no second code path: masked
 * loads suppress faults on the lanes they skip.  Rows past mr are never
 * loaded or stored.
 *
 * void pg_f32_gemm_12x32_avx512f(size_t mr, size_t nr, size_t k,
 *          rdi       rsi        rdx
 *          const float *a, size_t lda, const float *b, float *c,
 *          rcx             r8          r9              [rsp+8]
 *          size_t ldc, const pg_sgemm_epilogue *ep);
 *          [rsp+16]    [rsp+24]
 * lda and ldc count floats.  ep: { const float *bias @0; int act @8;
 * int flags @12; with flags bit 1, const void *pf @16 }, see sgemm.h. */
#include "pg_asm.h"

/* 6 pushed registers + 4 locals (mr, k, the two loop counts) */
#define FRAME   (10 * 8)
#define LOC_MR  [rsp]
#define LOC_K   [rsp + 8]
#define LOC_CNT [rsp + 16]
#define LOC_TAIL [rsp + 24]
#define ARG_C   [rsp + FRAME + 8]
#define ARG_LDC [rsp + FRAME + 16]
#define ARG_EP  [rsp + FRAME + 24]

/* B is prefetched 16 k steps (2 KiB) ahead: when a B slice is not in L1
 * (the first tile of each panel, or panels streaming from L2 in the
 * driver's tall-A order) the hardware prefetcher alone leaves the loop
 * waiting; measured +5-15% on 1024^3 and the MiniLM shapes.  Prefetches
 * past the slice touch nothing architecturally. */
#define B_PREFETCH 2048

/* two A rows of one k step: broadcast into \t, two FMAs each */
.macro ROW2 ra, rb, acc0, acc1, acc2, acc3, t0, t1, u
        vbroadcastss \t0, dword ptr [\ra + r11 + 4 * \u]
        vfmadd231ps \acc0, zmm24, \t0
        vfmadd231ps \acc1, zmm25, \t0
        vbroadcastss \t1, dword ptr [\rb + r11 + 4 * \u]
        vfmadd231ps \acc2, zmm24, \t1
        vfmadd231ps \acc3, zmm25, \t1
.endm

/* one k step of the first \rows rows (4, 8 or 12): B row at
 * [r9 + 128*u], A column at byte offset 4*u + r11.
 * Row order: rcx rax rbx rbp rdi rsi r10 r12 r13 r14 r15 r8. */
.macro KSTEP rows, u
        vmovups zmm24, [r9 + 128 * \u]
        vmovups zmm25, [r9 + 128 * \u + 64]
        prefetcht0 [r9 + 128 * \u + B_PREFETCH]
        prefetcht0 [r9 + 128 * \u + B_PREFETCH + 64]
        ROW2    rcx, rax, zmm0, zmm1, zmm2, zmm3, zmm26, zmm27, \u
        ROW2    rbx, rbp, zmm4, zmm5, zmm6, zmm7, zmm28, zmm29, \u
.if \rows > 4
        ROW2    rdi, rsi, zmm8, zmm9, zmm10, zmm11, zmm30, zmm31, \u
        ROW2    r10, r12, zmm12, zmm13, zmm14, zmm15, zmm26, zmm27, \u
.endif
.if \rows > 8
        ROW2    r13, r14, zmm16, zmm17, zmm18, zmm19, zmm28, zmm29, \u
        ROW2    r15, r8, zmm20, zmm21, zmm22, zmm23, zmm30, zmm31, \u
.endif
.endm

/* the K loop over the first \rows rows: by 4, then the k % 4 left */
.macro KLOOP rows
        cmp     qword ptr LOC_CNT, 0
        je      .Lk_tail\rows
        .p2align 5
.Lk_by4\rows:
        KSTEP   \rows, 0
        KSTEP   \rows, 1
        prefetcht1 [rdx]
        KSTEP   \rows, 2
        KSTEP   \rows, 3
        prefetcht1 [rdx + 64]
        add     rdx, 128
        add     r11, 16
        add     r9, 512
        dec     qword ptr LOC_CNT
        jnz     .Lk_by4\rows
.Lk_tail\rows:
        cmp     qword ptr LOC_TAIL, 0
        je      .Lepilogue
.Lk_by1\rows:
        KSTEP   \rows, 0
        add     r11, 4
        add     r9, 128
        dec     qword ptr LOC_TAIL
        jnz     .Lk_by1\rows
        jmp     .Lepilogue
.endm

/* x = gelu(x) = 0.5 x (1 + erf(x / sqrt 2)), temporaries zmm24..zmm28, the
 * constants broadcast from single floats.  erf(z) ~ z P(z^2) / Q(z^2) with
 * z clamped to +-3.925: the same rational as the AVX2 kernel (see below).
 * 1/Q (Q in [1, 14]) is vrcp14ps and one Newton step, r (2 - Q r), good to
 * about 1 ulp: a 512-bit vdivps per register issued 24 times per tile costs
 * ~4% of a BERT FFN product, the three ops ~1%. */
#define BC(name) dword ptr [rip + name]{1to16}
.macro GELU x
        vmulps  zmm24, \x, BC(gelu_rsqrt2)
        vminps  zmm24, zmm24, BC(gelu_clamp)
        vmaxps  zmm24, zmm24, BC(gelu_nclamp)
        vmulps  zmm25, zmm24, zmm24
        vbroadcastss zmm26, dword ptr [rip + gelu_p6]
        vfmadd213ps zmm26, zmm25, BC(gelu_p5)
        vfmadd213ps zmm26, zmm25, BC(gelu_p4)
        vfmadd213ps zmm26, zmm25, BC(gelu_p3)
        vfmadd213ps zmm26, zmm25, BC(gelu_p2)
        vfmadd213ps zmm26, zmm25, BC(gelu_p1)
        vfmadd213ps zmm26, zmm25, BC(gelu_p0)
        vbroadcastss zmm27, dword ptr [rip + gelu_q4]
        vfmadd213ps zmm27, zmm25, BC(gelu_q3)
        vfmadd213ps zmm27, zmm25, BC(gelu_q2)
        vfmadd213ps zmm27, zmm25, BC(gelu_q1)
        vfmadd213ps zmm27, zmm25, BC(gelu_one)
        vmulps  zmm26, zmm26, zmm24
        vrcp14ps zmm28, zmm27
        vfnmadd213ps zmm27, zmm28, BC(gelu_one)
        vfmadd213ps zmm27, zmm28, zmm28
        vmulps  zmm26, zmm26, zmm27
        vmulps  \x, \x, BC(gelu_half)
        vfmadd231ps \x, \x, zmm26
.endm

/* rows of the tile: row r lives in zmm(2r), zmm(2r+1); r14 walks C, rdi = mr */
.macro ROW_ACC lo, hi, r, done
        vmovups zmm24{k1}{z}, [r14]
        vmovups zmm25{k2}{z}, [r14 + 64]
        vaddps  \lo, \lo, zmm24
        vaddps  \hi, \hi, zmm25
        cmp     rdi, \r + 1
        jbe     \done
        add     r14, r15
.endm
.macro ROW_STORE lo, hi, r, done
        vmovups [r14]{k1}, \lo
        vmovups [r14 + 64]{k2}, \hi
        cmp     rdi, \r + 1
        jbe     \done
        add     r14, r15
.endm
.macro ALL_ROWS m, done
        \m      zmm0, zmm1, 0, \done
        \m      zmm2, zmm3, 1, \done
        \m      zmm4, zmm5, 2, \done
        \m      zmm6, zmm7, 3, \done
        \m      zmm8, zmm9, 4, \done
        \m      zmm10, zmm11, 5, \done
        \m      zmm12, zmm13, 6, \done
        \m      zmm14, zmm15, 7, \done
        \m      zmm16, zmm17, 8, \done
        \m      zmm18, zmm19, 9, \done
        \m      zmm20, zmm21, 10, \done
        \m      zmm22, zmm23, 11, \done
.endm
.macro ALL_ACC op, src0, src1
        \op     zmm0, zmm0, \src0
        \op     zmm1, zmm1, \src1
        \op     zmm2, zmm2, \src0
        \op     zmm3, zmm3, \src1
        \op     zmm4, zmm4, \src0
        \op     zmm5, zmm5, \src1
        \op     zmm6, zmm6, \src0
        \op     zmm7, zmm7, \src1
        \op     zmm8, zmm8, \src0
        \op     zmm9, zmm9, \src1
        \op     zmm10, zmm10, \src0
        \op     zmm11, zmm11, \src1
        \op     zmm12, zmm12, \src0
        \op     zmm13, zmm13, \src1
        \op     zmm14, zmm14, \src0
        \op     zmm15, zmm15, \src1
        \op     zmm16, zmm16, \src0
        \op     zmm17, zmm17, \src1
        \op     zmm18, zmm18, \src0
        \op     zmm19, zmm19, \src1
        \op     zmm20, zmm20, \src0
        \op     zmm21, zmm21, \src1
        \op     zmm22, zmm22, \src0
        \op     zmm23, zmm23, \src1
.endm

/* row pointer \dst = \prev + lda (r8 bytes), or \prev when row \r >= mr */
.macro NEXT_ROW dst, prev, r
        lea     \dst, [\prev + r8]
        cmp     qword ptr LOC_MR, \r
        cmovbe  \dst, \prev
.endm

        .text
PG_FUNC(pg_f32_gemm_12x32_avx512f)
        push    rbx
        push    rbp
        push    r12
        push    r13
        push    r14
        push    r15
        sub     rsp, 32
        mov     LOC_MR, rdi
        mov     LOC_K, rdx
        mov     rax, rdx
        shr     rax, 2
        mov     LOC_CNT, rax
        and     rdx, 3
        mov     LOC_TAIL, rdx
        /* rdx: the L2 prefetch stream */
        mov     rax, ARG_EP
        PG_SGEMM_PF_STREAM rdx, rax

        /* prefetch the C tile (mr rows, the up to 3 lines of 32 floats
         * each) for the epilogue: a C larger than L2 otherwise misses on
         * every row at the end of the tile, 10-25% of a 1024^3 product.
         * A prefetch is a hint that never faults nor reads architecturally,
         * so the lines past nr it may touch are not reads outside C. */
        mov     r10, ARG_C
        mov     r11, ARG_LDC
        shl     r11, 2
        mov     rax, rdi
1:      prefetchw [r10]
        prefetchw [r10 + 64]
        prefetchw [r10 + 124]
        add     r10, r11
        dec     rax
        jnz     1b

        /* column masks: the low nr bits of 32 (nr <= 32, so the shift
         * stays inside 64 bits); k1 columns 0-15, k2 columns 16-31 */
        mov     r10, rcx
        mov     ecx, esi
        mov     eax, 1
        shl     rax, cl
        dec     rax
        kmovd   k1, eax
        kshiftrd k2, k1, 16
        mov     rcx, r10

        /* A row pointers; rows >= mr alias the previous one.  r8 (lda in
         * bytes) is read by every step, so its own row comes last. */
        shl     r8, 2
        NEXT_ROW rax, rcx, 1
        NEXT_ROW rbx, rax, 2
        NEXT_ROW rbp, rbx, 3
        NEXT_ROW rdi, rbp, 4
        NEXT_ROW rsi, rdi, 5
        NEXT_ROW r10, rsi, 6
        NEXT_ROW r12, r10, 7
        NEXT_ROW r13, r12, 8
        NEXT_ROW r14, r13, 9
        NEXT_ROW r15, r14, 10
        lea     r8, [r15 + r8]
        cmp     qword ptr LOC_MR, 11
        cmovbe  r8, r15

        vpxord  zmm0, zmm0, zmm0
        vmovaps zmm1, zmm0
        vmovaps zmm2, zmm0
        vmovaps zmm3, zmm0
        vmovaps zmm4, zmm0
        vmovaps zmm5, zmm0
        vmovaps zmm6, zmm0
        vmovaps zmm7, zmm0
        vmovaps zmm8, zmm0
        vmovaps zmm9, zmm0
        vmovaps zmm10, zmm0
        vmovaps zmm11, zmm0
        vmovaps zmm12, zmm0
        vmovaps zmm13, zmm0
        vmovaps zmm14, zmm0
        vmovaps zmm15, zmm0
        vmovaps zmm16, zmm0
        vmovaps zmm17, zmm0
        vmovaps zmm18, zmm0
        vmovaps zmm19, zmm0
        vmovaps zmm20, zmm0
        vmovaps zmm21, zmm0
        vmovaps zmm22, zmm0
        vmovaps zmm23, zmm0

        /* a short tile (mr <= 8, mr <= 4) runs a loop without the FMAs of
         * the rows it does not store: the last tile of M = 128 is 8 rows */
        xor     r11, r11                /* byte offset into each A row */
        cmp     qword ptr LOC_MR, 4
        jbe     .Lrows4
        cmp     qword ptr LOC_MR, 8
        jbe     .Lrows8
        KLOOP   12
.Lrows8:
        KLOOP   8
.Lrows4:
        KLOOP   4

.Lepilogue:
        mov     rdi, LOC_MR
        mov     r14, ARG_C
        mov     r15, ARG_LDC
        shl     r15, 2
        mov     r10, ARG_EP

        /* + C */
        test    dword ptr [r10 + 12], 1
        jz      .Lacc_done
        ALL_ROWS ROW_ACC, .Lacc_rewind
.Lacc_rewind:
        mov     r14, ARG_C
.Lacc_done:

        /* + bias (masked loads read only the nr valid columns) */
        mov     rax, [r10]
        test    rax, rax
        jz      .Lbias_done
        vmovups zmm24{k1}{z}, [rax]
        vmovups zmm25{k2}{z}, [rax + 64]
        ALL_ACC vaddps, zmm24, zmm25
.Lbias_done:

        /* activation: 0 none, 1 ReLU, 2 GELU */
        mov     eax, dword ptr [r10 + 8]
        cmp     eax, 1
        je      .Lrelu
        cmp     eax, 2
        jne     .Lstore
        GELU    zmm0
        GELU    zmm1
        GELU    zmm2
        GELU    zmm3
        GELU    zmm4
        GELU    zmm5
        GELU    zmm6
        GELU    zmm7
        GELU    zmm8
        GELU    zmm9
        GELU    zmm10
        GELU    zmm11
        GELU    zmm12
        GELU    zmm13
        GELU    zmm14
        GELU    zmm15
        GELU    zmm16
        GELU    zmm17
        GELU    zmm18
        GELU    zmm19
        GELU    zmm20
        GELU    zmm21
        GELU    zmm22
        GELU    zmm23
        jmp     .Lstore
.Lrelu:
        vpxord  zmm24, zmm24, zmm24
        ALL_ACC vmaxps, zmm24, zmm24

.Lstore:
        ALL_ROWS ROW_STORE, .Ldone
.Ldone:
        vzeroupper
        add     rsp, 32
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbp
        pop     rbx
        ret
PG_ENDFUNC(pg_f32_gemm_12x32_avx512f)

/* GELU constants, one float each (broadcast by the operands above).
 * erf(z) ~ z * P(z^2) / Q(z^2) on |z| <= 3.925 (erf(3.925) rounds to 1.0f),
 * the (6,4) rational of f32_gemm_6x16_avx2_fma3.S, fitted for least maximum
 * relative error by engine/kernels/sgemm/gelu_erf_fit.py: max relative
 * error 5.3e-8 in exact arithmetic, 4.4e-7 (7 ulp) evaluated in float32 as
 * here, against erf. */
        PG_RODATA
        .p2align 2
gelu_rsqrt2:    .float 0.70710678118654752
gelu_clamp:     .float 3.925
gelu_nclamp:    .float -3.925
gelu_half:      .float 0.5
gelu_one:       .float 1.0
gelu_p0:        .float 1.128379107e+00
gelu_p1:        .float 2.003775686e-01
gelu_p2:        .float 5.063291639e-02
gelu_p3:        .float 3.719719360e-03
gelu_p4:        .float 1.421845227e-04
gelu_p5:        .float -1.956643018e-06
gelu_p6:        .float 1.986926357e-08
gelu_q1:        .float 5.109116435e-01
gelu_q2:        .float 1.151851714e-01
gelu_q3:        .float 1.439111866e-02
gelu_q4:        .float 9.600991616e-04

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

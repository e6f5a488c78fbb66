/* u8s8_gemm_12x32_avx512vnni.S - one 12x32 tile of C = epilogue(A_u8 . B_s8).
 *
 * The 24 accumulators zmm0..zmm23 hold rows 0..11 of the tile as int32,
 * two zmm per row (columns 0-15 and 16-31).  Each k step takes 4 bytes of
 * k: it loads one 128-byte group of the packed panel (zmm24, zmm25: 32
 * columns x 4 bytes), broadcasts 4 bytes of each A row (vpbroadcastd into
 * zmm26..zmm31 in turn; vpdpbusd wants the unsigned bytes in a register)
 * and runs 24 vpdpbusd, each 64 u8 x s8 products summed into 16 int32
 * lanes.  The loop is sgemm's 12x32 AVX-512 loop with vpdpbusd for
 * vfmadd231ps (f32_gemm_12x32_avx512f.S: the A row pointers, rows past mr
 * aliasing the last valid row, the 4- and 8-row copies of the loop, B
 * prefetched 2 KiB ahead).
 *
 * The epilogue (gemm_u8s8.h) runs row by row while the tile is in
 * registers: q = acc - a_zero[i] col_sum (- row_corr[i] b_zero), then by
 * ep->out_mode: store q (I32); or y = cvt(q) * (a_scale[i] * b_scale)
 * (+ bias) and store y (F32); or y * out_inv_scale rounded to nearest
 * even (vcvtps2dq, MXCSR's default), + out_zero, clamped, narrowed
 * (vpmovdb) and stored as bytes (U8, S8).  The same operations in the
 * same order as the C reference's.  Columns go through the opmasks k1
 * (0-15) and k2 (16-31) built from nr: the per-column arrays and C are
 * touched only at the tile's nr columns, rows past mr not at all.
 *
 * void pg_u8s8_gemm_12x32_avx512vnni(size_t mr, size_t nr, size_t k,
 *          rdi       rsi        rdx
 *          const uint8_t *a, size_t lda, const int8_t *b, void *c,
 *          rcx               r8          r9              [rsp+8]
 *          size_t ldc, const pg_u8s8_epilogue *ep);
 *          [rsp+16]    [rsp+24]
 * k: a multiple of 4 (bytes of each A row read); lda bytes; ldc elements
 * of the output type.  ep: see gemm_u8s8.h (offsets there). */
#include "pg_asm.h"

#define FRAME   (8 * 8)
#define LOC_MR  [rsp]
#define LOC_K   [rsp + 8]
#define ARG_C   [rsp + FRAME + 8]
#define ARG_LDC [rsp + FRAME + 16]
#define ARG_EP  [rsp + FRAME + 24]

#define B_PREFETCH 2048

.macro ROW2 ra, rb, acc0, acc1, acc2, acc3, t0, t1, u
        vpbroadcastd \t0, dword ptr [\ra + r11 + 4 * \u]
        vpdpbusd \acc0, \t0, zmm24
        vpdpbusd \acc1, \t0, zmm25
        vpbroadcastd \t1, dword ptr [\rb + r11 + 4 * \u]
        vpdpbusd \acc2, \t1, zmm24
        vpdpbusd \acc3, \t1, zmm25
.endm

/* one group of 4 k: B group at [r9 + 128*u], A bytes at offset 4*u + r11.
 * Row order: rcx rax rbx rbp rdi rsi r10 r12 r13 r14 r15 r8. */
.macro KSTEP rows, u
        vmovdqu32 zmm24, [r9 + 128 * \u]
        vmovdqu32 zmm25, [r9 + 128 * \u + 64]
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

/* LOC_K holds the number of 4-byte groups */
.macro KLOOP rows
        mov     rdx, LOC_K
        shr     rdx, 2
        jz      .Lk_tail\rows
        .p2align 5
.Lk_by4\rows:
        KSTEP   \rows, 0
        KSTEP   \rows, 1
        KSTEP   \rows, 2
        KSTEP   \rows, 3
        add     r11, 16
        add     r9, 512
        dec     rdx
        jnz     .Lk_by4\rows
.Lk_tail\rows:
        mov     rdx, LOC_K
        and     rdx, 3
        jz      .Lepilogue
.Lk_by1\rows:
        KSTEP   \rows, 0
        add     r11, 4
        add     r9, 128
        dec     rdx
        jnz     .Lk_by1\rows
        jmp     .Lepilogue
.endm

.macro NEXT_ROW dst, prev, r
        lea     \dst, [\prev + r8]
        cmp     qword ptr LOC_MR, \r
        cmovbe  \dst, \prev
.endm

/* Epilogue registers: r10 ep, r14 C row, r15 ldc in bytes, rdi mr,
 * rsi a_zero, rbp a_scale, r12 col_sum, r13 b_scale, rbx bias (or 0),
 * rcx b_zero (or 0), rdx row_corr; r11 = 4 * row (per-row arrays);
 * zmm27 out_inv_scale, zmm28 out_zero, zmm29 / zmm30 the clamp bounds,
 * zmm31 +-1e9 bounds source. */

/* q = acc - a_zero[i] col_sum - row_corr[i] b_zero */
.macro ZP lo, hi
        vpbroadcastd zmm24, dword ptr [rsi + r11]
        vpmulld zmm25{k1}{z}, zmm24, [r12]
        vpmulld zmm26{k2}{z}, zmm24, [r12 + 64]
        vpsubd  \lo, \lo, zmm25
        vpsubd  \hi, \hi, zmm26
        test    rcx, rcx
        jz      1f
        vpbroadcastd zmm24, dword ptr [rdx + r11]
        vpmulld zmm25{k1}{z}, zmm24, [rcx]
        vpmulld zmm26{k2}{z}, zmm24, [rcx + 64]
        vpsubd  \lo, \lo, zmm25
        vpsubd  \hi, \hi, zmm26
1:
.endm

/* y = cvt(q) * (a_scale[i] * b_scale) (+ bias) */
.macro DEQ lo, hi
        vcvtdq2ps \lo, \lo
        vcvtdq2ps \hi, \hi
        vbroadcastss zmm24, dword ptr [rbp + r11]
        vmulps  zmm25{k1}{z}, zmm24, [r13]
        vmulps  zmm26{k2}{z}, zmm24, [r13 + 64]
        vmulps  \lo, \lo, zmm25
        vmulps  \hi, \hi, zmm26
        test    rbx, rbx
        jz      1f
        vaddps  \lo{k1}{z}, \lo, [rbx]
        vaddps  \hi{k2}{z}, \hi, [rbx + 64]
1:
.endm

.macro NEXT r, done
        cmp     rdi, \r + 1
        jbe     \done
        add     r14, r15
        add     r11, 4
.endm

.macro ROW_I32 lo, hi, r, done
        ZP      \lo, \hi
        vmovdqu32 [r14]{k1}, \lo
        vmovdqu32 [r14 + 64]{k2}, \hi
        NEXT    \r, \done
.endm

.macro ROW_F32 lo, hi, r, done
        ZP      \lo, \hi
        DEQ     \lo, \hi
        vmovups [r14]{k1}, \lo
        vmovups [r14 + 64]{k2}, \hi
        NEXT    \r, \done
.endm

.macro ROW_Q8 lo, hi, r, done
        ZP      \lo, \hi
        DEQ     \lo, \hi
        vmulps  \lo, \lo, zmm27
        vmulps  \hi, \hi, zmm27
        vrndscaleps \lo, \lo, 0         /* rint, as the reference, before the float clamp */
        vrndscaleps \hi, \hi, 0
        vminps  \lo, \lo, zmm31
        vminps  \hi, \hi, zmm31
        vxorps  zmm24, zmm31, dword ptr [rip + sign_bit]{1to16}
        vmaxps  \lo, \lo, zmm24
        vmaxps  \hi, \hi, zmm24
        vcvtps2dq \lo, \lo
        vcvtps2dq \hi, \hi
        vpaddd  \lo, \lo, zmm28
        vpaddd  \hi, \hi, zmm28
        vpmaxsd \lo, \lo, zmm29
        vpmaxsd \hi, \hi, zmm29
        vpminsd \lo, \lo, zmm30
        vpminsd \hi, \hi, zmm30
        vpmovdb xmm24, \lo
        vpmovdb xmm25, \hi
        vmovdqu8 [r14]{k1}, xmm24
        vmovdqu8 [r14 + 16]{k2}, xmm25
        NEXT    \r, \done
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

        .text
PG_FUNC(pg_u8s8_gemm_12x32_avx512vnni)
        push    rbx
        push    rbp
        push    r12
        push    r13
        push    r14
        push    r15
        sub     rsp, 16
        mov     LOC_MR, rdi
        shr     rdx, 2
        mov     LOC_K, rdx

        /* column masks: the low nr bits of 32; k1 columns 0-15, k2 16-31 */
        mov     r10, rcx
        mov     ecx, esi
        mov     eax, 1
        shl     rax, cl
        dec     rax
        kmovd   k1, eax
        kshiftrd k2, k1, 16
        mov     rcx, r10

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
        vmovdqa32 zmm1, zmm0
        vmovdqa32 zmm2, zmm0
        vmovdqa32 zmm3, zmm0
        vmovdqa32 zmm4, zmm0
        vmovdqa32 zmm5, zmm0
        vmovdqa32 zmm6, zmm0
        vmovdqa32 zmm7, zmm0
        vmovdqa32 zmm8, zmm0
        vmovdqa32 zmm9, zmm0
        vmovdqa32 zmm10, zmm0
        vmovdqa32 zmm11, zmm0
        vmovdqa32 zmm12, zmm0
        vmovdqa32 zmm13, zmm0
        vmovdqa32 zmm14, zmm0
        vmovdqa32 zmm15, zmm0
        vmovdqa32 zmm16, zmm0
        vmovdqa32 zmm17, zmm0
        vmovdqa32 zmm18, zmm0
        vmovdqa32 zmm19, zmm0
        vmovdqa32 zmm20, zmm0
        vmovdqa32 zmm21, zmm0
        vmovdqa32 zmm22, zmm0
        vmovdqa32 zmm23, zmm0

        xor     r11, r11
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
        mov     r10, ARG_EP
        mov     r14, ARG_C
        mov     rsi, [r10]              /* a_zero */
        mov     rbp, [r10 + 8]          /* a_scale */
        mov     r12, [r10 + 16]         /* col_sum */
        mov     r13, [r10 + 24]         /* b_scale */
        mov     rbx, [r10 + 32]         /* bias */
        mov     rcx, [r10 + 40]         /* b_zero */
        mov     rdx, [r10 + 48]         /* row_corr */
        xor     r11, r11
        mov     eax, dword ptr [r10 + 64]
        mov     r15, ARG_LDC
        cmp     eax, 2
        jae     .Lq8
        shl     r15, 2                  /* F32 / I32: 4-byte elements */
        cmp     eax, 1
        je      .Li32
        ALL_ROWS ROW_F32, .Ldone
        jmp     .Ldone
.Li32:
        ALL_ROWS ROW_I32, .Ldone
        jmp     .Ldone
.Lq8:
        vbroadcastss zmm27, dword ptr [r10 + 56]
        vpbroadcastd zmm28, dword ptr [r10 + 60]
        vbroadcastss zmm31, dword ptr [rip + big]
        cmp     eax, 2
        jne     .Ls8
        vpxord  zmm29, zmm29, zmm29
        vpbroadcastd zmm30, dword ptr [rip + c255]
        jmp     .Lq8rows
.Ls8:
        vpbroadcastd zmm29, dword ptr [rip + cm128]
        vpbroadcastd zmm30, dword ptr [rip + c127]
.Lq8rows:
        ALL_ROWS ROW_Q8, .Ldone
.Ldone:
        vzeroupper
        add     rsp, 16
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbp
        pop     rbx
        ret
PG_ENDFUNC(pg_u8s8_gemm_12x32_avx512vnni)

        PG_RODATA
        .p2align 2
big:     .float 1.0e9
sign_bit: .long 0x80000000
c255:    .long 255
c127:    .long 127
cm128:   .long -128

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

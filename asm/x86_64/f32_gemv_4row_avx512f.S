/* f32_gemv_4row_avx512f.S - y = x . B (+ bias) for one row x (M = 1), zmm.
 *
 * The loop of f32_gemv_4row_avx2_fma3.S (read its header for the why) at
 * twice the width: column blocks of GEMV_NB floats that stay in L1/L2 while
 * all K rows pass, rows four at a time as four contiguous forward streams,
 * 64 columns per step, the K % 4 rows left one at a time.  The last nb % 16
 * columns of a block go through the opmask k1 (masked loads suppress
 * faults on the lanes they skip), so no byte outside B, bias or y is
 * touched.  Only B held in L1/L2 (small N x K) can stream faster than with
 * ymm; from memory both are bound by DRAM.
 *
 * void pg_f32_gemv_4row_avx512f(size_t N, size_t K, const float *x,
 *                               rdi       rsi       rdx
 *         const float *B, size_t ldb, const float *bias, float *y)
 *         rcx             r8          r9                [rsp + 8]
 *
 * Registers after the prologue:
 *   rdi  columns left          rsi  K               rbp  x
 *   rcx  B at this block       r8   ldb in bytes    rax  3 * ldb in bytes
 *   r9   bias at this block (0 = none)              r10  y at this block
 *   rbx  block width nb        r12  rows left       r13  B row group
 *   rdx  x at the row group    r11  B column ptr    r14  y column ptr
 *   r15  columns left in the pass
 *   zmm12..15  x[k..k+3] broadcast                  k1  tail mask
 */
#include "pg_asm.h"

#define GEMV_NB 16384

/* acc += x[k..k+3] * B[k..k+3][col], the four rows at r11, r11 + ldb,
 * r11 + 2 ldb, r11 + 3 ldb, byte offset off. */
.macro ROWS4_FMA acc, off
        vfmadd231ps \acc, zmm12, [r11 + \off]
        vfmadd231ps \acc, zmm13, [r11 + r8 + \off]
        vfmadd231ps \acc, zmm14, [r11 + r8*2 + \off]
        vfmadd231ps \acc, zmm15, [r11 + rax + \off]
.endm

        .text
PG_FUNC(pg_f32_gemv_4row_avx512f)
        push    rbx
        push    rbp
        push    r12
        push    r13
        push    r14
        push    r15
        mov     r10, [rsp + 56]
        shl     r8, 2
        lea     rax, [r8 + r8*2]
        mov     rbp, rdx

.Lgemv_block:
        test    rdi, rdi
        jz      .Lgemv_done
        mov     rbx, GEMV_NB
        cmp     rdi, rbx
        cmovb   rbx, rdi
        /* k1: the first nb % 16 lanes */
        mov     r15, rcx
        mov     ecx, ebx
        and     ecx, 15
        mov     r14d, 1
        shl     r14d, cl
        dec     r14d
        kmovw   k1, r14d
        mov     rcx, r15

        /* ---- y_blk = bias_blk, or 0 ---------------------------------- */
        mov     r14, r10
        mov     r15, rbx
        test    r9, r9
        jz      .Lgemv_zero16
        mov     r11, r9
.Lgemv_bias16:
        cmp     r15, 16
        jb      .Lgemv_bias_tail
        vmovups zmm0, [r11]
        vmovups [r14], zmm0
        add     r11, 64
        add     r14, 64
        sub     r15, 16
        jmp     .Lgemv_bias16
.Lgemv_bias_tail:
        test    r15, r15
        jz      .Lgemv_init_done
        vmovups zmm0{k1}{z}, [r11]
        vmovups [r14]{k1}, zmm0
        jmp     .Lgemv_init_done
.Lgemv_zero16:
        vpxord  zmm0, zmm0, zmm0
.Lgemv_zero16_loop:
        cmp     r15, 16
        jb      .Lgemv_zero_tail
        vmovups [r14], zmm0
        add     r14, 64
        sub     r15, 16
        jmp     .Lgemv_zero16_loop
.Lgemv_zero_tail:
        test    r15, r15
        jz      .Lgemv_init_done
        vmovups [r14]{k1}, zmm0
.Lgemv_init_done:
        mov     rdx, rbp
        mov     r13, rcx
        mov     r12, rsi

        /* ---- four rows at a time ------------------------------------- */
.Lgemv_group:
        cmp     r12, 4
        jb      .Lgemv_row
        vbroadcastss zmm12, [rdx]
        vbroadcastss zmm13, [rdx + 4]
        vbroadcastss zmm14, [rdx + 8]
        vbroadcastss zmm15, [rdx + 12]
        mov     r11, r13
        mov     r14, r10
        mov     r15, rbx
        cmp     r15, 64
        jb      .Lgemv_g16
.Lgemv_g64:
        vmovups zmm0, [r14]
        vmovups zmm1, [r14 + 64]
        vmovups zmm2, [r14 + 128]
        vmovups zmm3, [r14 + 192]
        ROWS4_FMA zmm0, 0
        ROWS4_FMA zmm1, 64
        ROWS4_FMA zmm2, 128
        ROWS4_FMA zmm3, 192
        vmovups [r14], zmm0
        vmovups [r14 + 64], zmm1
        vmovups [r14 + 128], zmm2
        vmovups [r14 + 192], zmm3
        add     r11, 256
        add     r14, 256
        sub     r15, 64
        cmp     r15, 64
        jae     .Lgemv_g64
.Lgemv_g16:
        cmp     r15, 16
        jb      .Lgemv_gtail
        vmovups zmm0, [r14]
        ROWS4_FMA zmm0, 0
        vmovups [r14], zmm0
        add     r11, 64
        add     r14, 64
        sub     r15, 16
        jmp     .Lgemv_g16
.Lgemv_gtail:
        test    r15, r15
        jz      .Lgemv_gnext
        vmovups zmm0{k1}{z}, [r14]
        vmovups zmm4{k1}{z}, [r11]
        vmovups zmm5{k1}{z}, [r11 + r8]
        vmovups zmm6{k1}{z}, [r11 + r8*2]
        vmovups zmm7{k1}{z}, [r11 + rax]
        vfmadd231ps zmm0, zmm12, zmm4
        vfmadd231ps zmm0, zmm13, zmm5
        vfmadd231ps zmm0, zmm14, zmm6
        vfmadd231ps zmm0, zmm15, zmm7
        vmovups [r14]{k1}, zmm0
.Lgemv_gnext:
        add     rdx, 16
        lea     r13, [r13 + r8*4]
        sub     r12, 4
        jmp     .Lgemv_group

        /* ---- the last K % 4 rows, one at a time ---------------------- */
.Lgemv_row:
        test    r12, r12
        jz      .Lgemv_block_next
        vbroadcastss zmm12, [rdx]
        mov     r11, r13
        mov     r14, r10
        mov     r15, rbx
.Lgemv_r16:
        cmp     r15, 16
        jb      .Lgemv_rtail
        vmovups zmm0, [r14]
        vfmadd231ps zmm0, zmm12, [r11]
        vmovups [r14], zmm0
        add     r11, 64
        add     r14, 64
        sub     r15, 16
        jmp     .Lgemv_r16
.Lgemv_rtail:
        test    r15, r15
        jz      .Lgemv_rnext
        vmovups zmm0{k1}{z}, [r14]
        vmovups zmm4{k1}{z}, [r11]
        vfmadd231ps zmm0, zmm12, zmm4
        vmovups [r14]{k1}, zmm0
.Lgemv_rnext:
        add     rdx, 4
        add     r13, r8
        sub     r12, 1
        jmp     .Lgemv_row

.Lgemv_block_next:
        lea     rcx, [rcx + 4*rbx]
        lea     r10, [r10 + 4*rbx]
        test    r9, r9
        jz      1f
        lea     r9, [r9 + 4*rbx]
1:      sub     rdi, rbx
        jmp     .Lgemv_block

.Lgemv_done:
        vzeroupper
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbp
        pop     rbx
        ret
PG_ENDFUNC(pg_f32_gemv_4row_avx512f)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

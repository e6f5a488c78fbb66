/* f32_gemv_4row_avx2_fma3.S - y = x . B (+ bias) for one row x (M = 1).
 *
 * GEMV does 2 flops per 4-byte weight, so it is bound by how fast B streams
 * in from memory, never by the FMA units.  The loop order serves the memory
 * system:
 *   - N is cut into column blocks of GEMV_NB floats (64 KiB of y), which
 *     stay in L1/L2 while all K rows pass through.  Blocks are as wide as
 *     that allows because each row stream then runs longer before it jumps
 *     (2048-column blocks measured ~20% slower at N = 11008);
 *   - rows are taken four at a time: y_blk += x[k]B[k] + ... + x[k+3]B[k+3],
 *     so B is read as four contiguous forward streams (what the hardware
 *     prefetchers follow) and y's L1 round trip is paid once per 4 rows;
 *   - the 1..3 rows left when K % 4 != 0 take a one-row pass each;
 *   - the last N % 8 columns of a block use masked loads and stores
 *     (pg_avx2_tail_mask), so no byte outside B, bias or y is touched.
 * Each B element is loaded exactly once; the sum for y[j] runs in k order
 * like the C reference (fused multiply-adds, so rounding differs slightly).
 *
 * void pg_f32_gemv_4row_avx2_fma3(size_t N, size_t K, const float *x,
 *                                 rdi       rsi       rdx
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
 *   ymm12..15  x[k..k+3] broadcast                  ymm11  tail mask
 */
#include "pg_asm.h"

#define GEMV_NB 16384

/* acc += x[k..k+3] * B[k..k+3][col], the four rows at r11, r11 + ldb,
 * r11 + 2 ldb, r11 + 3 ldb, byte offset off. */
.macro ROWS4_FMA acc, off
        vfmadd231ps \acc, ymm12, [r11 + \off]
        vfmadd231ps \acc, ymm13, [r11 + r8 + \off]
        vfmadd231ps \acc, ymm14, [r11 + r8*2 + \off]
        vfmadd231ps \acc, ymm15, [r11 + rax + \off]
.endm

        .text
PG_FUNC(pg_f32_gemv_4row_avx2_fma3)
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
        /* mask with the first nb % 8 lanes set */
        mov     r15, rbx
        and     r15, 7
        neg     r15
        lea     r14, [rip + PG_SYM(pg_avx2_tail_mask)]
        vmovdqu ymm11, [r14 + 4*r15 + 32]

        /* ---- y_blk = bias_blk, or 0 ---------------------------------- */
        mov     r14, r10
        mov     r15, rbx
        test    r9, r9
        jz      .Lgemv_zero8
        mov     r11, r9
.Lgemv_bias8:
        cmp     r15, 8
        jb      .Lgemv_bias_tail
        vmovups ymm0, [r11]
        vmovups [r14], ymm0
        add     r11, 32
        add     r14, 32
        sub     r15, 8
        jmp     .Lgemv_bias8
.Lgemv_bias_tail:
        test    r15, r15
        jz      .Lgemv_init_done
        vmaskmovps ymm0, ymm11, [r11]
        vmaskmovps [r14], ymm11, ymm0
        jmp     .Lgemv_init_done
.Lgemv_zero8:
        vxorps  ymm0, ymm0, ymm0
.Lgemv_zero8_loop:
        cmp     r15, 8
        jb      .Lgemv_zero_tail
        vmovups [r14], ymm0
        add     r14, 32
        sub     r15, 8
        jmp     .Lgemv_zero8_loop
.Lgemv_zero_tail:
        test    r15, r15
        jz      .Lgemv_init_done
        vmaskmovps [r14], ymm11, ymm0
.Lgemv_init_done:
        mov     rdx, rbp
        mov     r13, rcx
        mov     r12, rsi

        /* ---- four rows at a time ------------------------------------- */
.Lgemv_group:
        cmp     r12, 4
        jb      .Lgemv_row
        vbroadcastss ymm12, [rdx]
        vbroadcastss ymm13, [rdx + 4]
        vbroadcastss ymm14, [rdx + 8]
        vbroadcastss ymm15, [rdx + 12]
        mov     r11, r13
        mov     r14, r10
        mov     r15, rbx
        cmp     r15, 32
        jb      .Lgemv_g8
.Lgemv_g32:
        vmovups ymm0, [r14]
        vmovups ymm1, [r14 + 32]
        vmovups ymm2, [r14 + 64]
        vmovups ymm3, [r14 + 96]
        ROWS4_FMA ymm0, 0
        ROWS4_FMA ymm1, 32
        ROWS4_FMA ymm2, 64
        ROWS4_FMA ymm3, 96
        vmovups [r14], ymm0
        vmovups [r14 + 32], ymm1
        vmovups [r14 + 64], ymm2
        vmovups [r14 + 96], ymm3
        add     r11, 128
        add     r14, 128
        sub     r15, 32
        cmp     r15, 32
        jae     .Lgemv_g32
.Lgemv_g8:
        cmp     r15, 8
        jb      .Lgemv_gtail
        vmovups ymm0, [r14]
        ROWS4_FMA ymm0, 0
        vmovups [r14], ymm0
        add     r11, 32
        add     r14, 32
        sub     r15, 8
        jmp     .Lgemv_g8
.Lgemv_gtail:
        test    r15, r15
        jz      .Lgemv_gnext
        vmaskmovps ymm0, ymm11, [r14]
        vmaskmovps ymm4, ymm11, [r11]
        vmaskmovps ymm5, ymm11, [r11 + r8]
        vmaskmovps ymm6, ymm11, [r11 + r8*2]
        vmaskmovps ymm7, ymm11, [r11 + rax]
        vfmadd231ps ymm0, ymm12, ymm4
        vfmadd231ps ymm0, ymm13, ymm5
        vfmadd231ps ymm0, ymm14, ymm6
        vfmadd231ps ymm0, ymm15, ymm7
        vmaskmovps [r14], ymm11, ymm0
.Lgemv_gnext:
        add     rdx, 16
        lea     r13, [r13 + r8*4]
        sub     r12, 4
        jmp     .Lgemv_group

        /* ---- the last K % 4 rows, one at a time ---------------------- */
.Lgemv_row:
        test    r12, r12
        jz      .Lgemv_block_next
        vbroadcastss ymm12, [rdx]
        mov     r11, r13
        mov     r14, r10
        mov     r15, rbx
.Lgemv_r8:
        cmp     r15, 8
        jb      .Lgemv_rtail
        vmovups ymm0, [r14]
        vfmadd231ps ymm0, ymm12, [r11]
        vmovups [r14], ymm0
        add     r11, 32
        add     r14, 32
        sub     r15, 8
        jmp     .Lgemv_r8
.Lgemv_rtail:
        test    r15, r15
        jz      .Lgemv_rnext
        vmaskmovps ymm0, ymm11, [r14]
        vmaskmovps ymm4, ymm11, [r11]
        vfmadd231ps ymm0, ymm12, ymm4
        vmaskmovps [r14], ymm11, ymm0
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
PG_ENDFUNC(pg_f32_gemv_4row_avx2_fma3)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

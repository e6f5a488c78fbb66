/* f32_gemv_nk_4row_avx2_fma3.S - y = W . x (+ bias), W as N x K rows
 * (nn.Linear layout), M = 1.
 *
 * Bound by how fast W streams in.  Four rows go together: four contiguous
 * forward streams for the prefetchers, each 8-float load of x (from L1)
 * shared by four FMAs.  Each row sums into two 8-lane accumulators (16
 * floats per step), then 8 per step, then the last K % 8 under the tail
 * mask (masked loads of x and of W: nothing past a row is read).  The four
 * rows' 16 lanes each reduce with three vhaddps and one 128-bit add into
 * the four outputs, bias is added, and four floats are stored.  The last
 * N % 4 rows run the same code with the missing rows' pointers aimed at
 * row 0 and a masked store, so there is one path.
 *
 * void pg_f32_gemv_nk_4row_avx2_fma3(size_t N, size_t K, const float *x,
 *                                    rdi       rsi       rdx
 *         const float *W, size_t ldw, const float *bias, float *y)
 *         rcx             r8          r9                [rsp + 8]
 *
 * Registers after the prologue:
 *   rdi rows left   rsi K   rdx x   rcx row 0 of the group   r8 ldw bytes
 *   r12, r13, r14 rows 1, 2, 3   r9 bias (0 = none)   r10 y
 *   rbx K bytes rounded down to 64   rbp K bytes rounded down to 32
 *   r11 byte offset along the rows   rax scratch
 *   ymm0-7 the sums (two per row)   ymm8-9 x   ymm10-13 W in the tail
 *   ymm15 the mask of the last K % 8 floats   xmm14 the mask of the rows
 */
#include "pg_asm.h"

        .text
PG_FUNC(pg_f32_gemv_nk_4row_avx2_fma3)
        push    rbx
        push    rbp
        push    r12
        push    r13
        push    r14
        mov     r10, [rsp + 48]
        shl     r8, 2
        lea     rbx, [4*rsi]
        and     rbx, -64
        lea     rbp, [4*rsi]
        and     rbp, -32
        mov     rax, rsi
        and     rax, 7
        neg     rax
        lea     r11, [rip + PG_SYM(pg_avx2_tail_mask)]
        vmovdqu ymm15, [r11 + 4*rax + 32]

.Lnk_group:
        test    rdi, rdi
        jz      .Lnk_done
        lea     r12, [rcx + r8]
        lea     r13, [rcx + r8*2]
        lea     r14, [r12 + r8*2]
        cmp     rdi, 4
        jae     .Lnk_rows_ok
        /* fewer than 4 rows left: the missing ones read row 0 again */
        mov     r14, rcx
        cmp     rdi, 3
        cmovb   r13, rcx
        cmp     rdi, 2
        cmovb   r12, rcx
.Lnk_rows_ok:
        vxorps  ymm0, ymm0, ymm0
        vxorps  ymm1, ymm1, ymm1
        vxorps  ymm2, ymm2, ymm2
        vxorps  ymm3, ymm3, ymm3
        vxorps  ymm4, ymm4, ymm4
        vxorps  ymm5, ymm5, ymm5
        vxorps  ymm6, ymm6, ymm6
        vxorps  ymm7, ymm7, ymm7
        xor     r11, r11
        cmp     r11, rbx
        jae     .Lnk_k8
.Lnk_k16:
        vmovups ymm8, [rdx + r11]
        vmovups ymm9, [rdx + r11 + 32]
        vfmadd231ps ymm0, ymm8, [rcx + r11]
        vfmadd231ps ymm1, ymm9, [rcx + r11 + 32]
        vfmadd231ps ymm2, ymm8, [r12 + r11]
        vfmadd231ps ymm3, ymm9, [r12 + r11 + 32]
        vfmadd231ps ymm4, ymm8, [r13 + r11]
        vfmadd231ps ymm5, ymm9, [r13 + r11 + 32]
        vfmadd231ps ymm6, ymm8, [r14 + r11]
        vfmadd231ps ymm7, ymm9, [r14 + r11 + 32]
        add     r11, 64
        cmp     r11, rbx
        jb      .Lnk_k16
.Lnk_k8:
        cmp     r11, rbp
        jae     .Lnk_ktail
        vmovups ymm8, [rdx + r11]
        vfmadd231ps ymm0, ymm8, [rcx + r11]
        vfmadd231ps ymm2, ymm8, [r12 + r11]
        vfmadd231ps ymm4, ymm8, [r13 + r11]
        vfmadd231ps ymm6, ymm8, [r14 + r11]
        add     r11, 32
.Lnk_ktail:
        test    rsi, 7
        jz      .Lnk_reduce
        vmaskmovps ymm8, ymm15, [rdx + r11]
        vmaskmovps ymm10, ymm15, [rcx + r11]
        vmaskmovps ymm11, ymm15, [r12 + r11]
        vmaskmovps ymm12, ymm15, [r13 + r11]
        vmaskmovps ymm13, ymm15, [r14 + r11]
        vfmadd231ps ymm1, ymm8, ymm10
        vfmadd231ps ymm3, ymm8, ymm11
        vfmadd231ps ymm5, ymm8, ymm12
        vfmadd231ps ymm7, ymm8, ymm13

.Lnk_reduce:
        /* per 128-bit half: [row0, row1, row2, row3] partial sums */
        vaddps  ymm0, ymm0, ymm1
        vaddps  ymm2, ymm2, ymm3
        vaddps  ymm4, ymm4, ymm5
        vaddps  ymm6, ymm6, ymm7
        vhaddps ymm0, ymm0, ymm2
        vhaddps ymm4, ymm4, ymm6
        vhaddps ymm0, ymm0, ymm4
        vextractf128 xmm1, ymm0, 1
        vaddps  xmm0, xmm0, xmm1
        cmp     rdi, 4
        jb      .Lnk_partial
        test    r9, r9
        jz      1f
        vaddps  xmm0, xmm0, [r9]
        add     r9, 16
1:      vmovups [r10], xmm0
        add     r10, 16
        lea     rcx, [rcx + r8*4]
        sub     rdi, 4
        jmp     .Lnk_group

.Lnk_partial:
        /* the last 1..3 outputs, under the mask of their lanes */
        mov     rax, rdi
        neg     rax
        lea     r11, [rip + PG_SYM(pg_avx2_tail_mask)]
        vmovdqu xmm14, [r11 + 4*rax + 32]
        test    r9, r9
        jz      2f
        vmaskmovps xmm1, xmm14, [r9]
        vaddps  xmm0, xmm0, xmm1
2:      vmaskmovps [r10], xmm14, xmm0

.Lnk_done:
        vzeroupper
        pop     r14
        pop     r13
        pop     r12
        pop     rbp
        pop     rbx
        ret
PG_ENDFUNC(pg_f32_gemv_nk_4row_avx2_fma3)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

/* f32_gemv_panels32_avx512f.S - y = x . B (+ bias) for one row x (M = 1)
 * on a weight packed for the AVX-512 SGEMM kernel: 32-column panels, panel
 * p holding columns 32p .. 32p + 31 as K rows of 32 floats (sgemm.h), the
 * columns past N zero.
 *
 * The AVX-512 twin of f32_gemv_panels16_avx2_fma3.S, for the same reason:
 * a decoding step at batch 1 streams B once and is bound by memory, and the
 * SGEMM kernel walks the panels one after another (one forward stream, with
 * its tile set-up per panel), while this reads four panels at once, four
 * streams that the hardware prefetchers run side by side.  8 accumulators
 * (two per panel), x[k] broadcast, 8 FMAs on 512 bytes a k: far above
 * DRAM's pace, so neither unrolled nor prefetched by hand.  The panels
 * left (fewer than four, or the last one when N % 32 != 0) go one at a
 * time; their bias loads and y stores go through the opmasks k1 (columns
 * 0-15 of the panel) and k2 (16-31), so nothing past N is touched (B's
 * columns past N are zeros of the packing, read whole).  Each y[j] sums in
 * k order, as the C reference does (fused multiply-adds: the rounding
 * differs slightly).
 *
 * void pg_f32_gemv_panels32_avx512f(size_t N, size_t K, const float *x,
 *                                   rdi       rsi       rdx
 *         const float *b, const float *bias, float *y, size_t nr)
 *         rcx             r8                 r9        [rsp + 8] (32)
 *
 * Registers: rdi columns left, rsi K, rdx x, rcx this group's first panel,
 * r8 bias (0: none), r9 y, r10 bytes of a panel (128 K), r11 the k row of
 * panels 0 and 1, rax the k row of panels 2 and 3, rbx x[k] (pushed), r12
 * the k steps left (pushed), zmm16 x[k] broadcast. */
#include "pg_asm.h"

/* acc += x[k] * B[k] of the panel at \base + \off (its two halves) */
.macro PANEL a0, a1, base, off
        vfmadd231ps \a0, zmm16, [\base + \off]
        vfmadd231ps \a1, zmm16, [\base + \off + 64]
.endm

        .text
PG_FUNC(pg_f32_gemv_panels32_avx512f)
        push    rbx
        push    r12
        mov     r10, rsi
        shl     r10, 7                          /* a panel: K rows of 128 bytes */

.Lgroup4:                                       /* four whole panels */
        cmp     rdi, 128
        jb      .Lone
        vpxord  zmm0, zmm0, zmm0
        vpxord  zmm1, zmm1, zmm1
        vpxord  zmm2, zmm2, zmm2
        vpxord  zmm3, zmm3, zmm3
        vpxord  zmm4, zmm4, zmm4
        vpxord  zmm5, zmm5, zmm5
        vpxord  zmm6, zmm6, zmm6
        vpxord  zmm7, zmm7, zmm7
        mov     r11, rcx
        lea     rax, [rcx + 2 * r10]
        mov     rbx, rdx
        mov     r12, rsi
        test    r12, r12
        jz      2f
        .p2align 4
1:      vbroadcastss zmm16, dword ptr [rbx]
        PANEL   zmm0, zmm1, r11, 0
        PANEL   zmm2, zmm3, r11, r10
        PANEL   zmm4, zmm5, rax, 0
        PANEL   zmm6, zmm7, rax, r10
        add     r11, 128
        add     rax, 128
        add     rbx, 4
        dec     r12
        jnz     1b
2:      test    r8, r8
        jz      3f
        vaddps  zmm0, zmm0, [r8]
        vaddps  zmm1, zmm1, [r8 + 64]
        vaddps  zmm2, zmm2, [r8 + 128]
        vaddps  zmm3, zmm3, [r8 + 192]
        vaddps  zmm4, zmm4, [r8 + 256]
        vaddps  zmm5, zmm5, [r8 + 320]
        vaddps  zmm6, zmm6, [r8 + 384]
        vaddps  zmm7, zmm7, [r8 + 448]
        add     r8, 512
3:      vmovups [r9], zmm0
        vmovups [r9 + 64], zmm1
        vmovups [r9 + 128], zmm2
        vmovups [r9 + 192], zmm3
        vmovups [r9 + 256], zmm4
        vmovups [r9 + 320], zmm5
        vmovups [r9 + 384], zmm6
        vmovups [r9 + 448], zmm7
        add     r9, 512
        lea     rcx, [rcx + 4 * r10]
        sub     rdi, 128
        jmp     .Lgroup4

.Lone:                                          /* one panel, maybe partial */
        test    rdi, rdi
        jz      .Ldone
        /* the opmasks of its two halves: min(n, 16) and n - 16 (clamped to
         * 0..16) lanes, from the table of (1 << lanes) - 1 */
        lea     rbx, [rip + lanes_mask]
        mov     r11, rdi
        mov     eax, 16
        cmp     r11, 16
        cmova   r11, rax
        kmovw   k1, word ptr [rbx + 2 * r11]
        mov     r11, rdi
        sub     r11, 16
        mov     eax, 0
        cmovb   r11, rax
        mov     eax, 16
        cmp     r11, 16
        cmova   r11, rax
        kmovw   k2, word ptr [rbx + 2 * r11]
        vpxord  zmm0, zmm0, zmm0
        vpxord  zmm1, zmm1, zmm1
        mov     r11, rcx
        mov     rbx, rdx
        mov     r12, rsi
        test    r12, r12
        jz      6f
5:      vbroadcastss zmm16, dword ptr [rbx]
        PANEL   zmm0, zmm1, r11, 0
        add     r11, 128
        add     rbx, 4
        dec     r12
        jnz     5b
6:      test    r8, r8
        jz      7f
        vmovups zmm2{k1}{z}, [r8]
        vmovups zmm3{k2}{z}, [r8 + 64]
        vaddps  zmm0, zmm0, zmm2
        vaddps  zmm1, zmm1, zmm3
        add     r8, 128
7:      vmovups [r9]{k1}, zmm0
        vmovups [r9 + 64]{k2}, zmm1
        add     r9, 128
        add     rcx, r10
        sub     rdi, 32
        ja      .Lone
.Ldone:
        vzeroupper
        pop     r12
        pop     rbx
        ret
PG_ENDFUNC(pg_f32_gemv_panels32_avx512f)

        PG_RODATA
        .p2align 5
/* (1 << lanes) - 1 for lanes 0..16: the opmask of a panel half's columns */
lanes_mask:
        .short  0x0000, 0x0001, 0x0003, 0x0007, 0x000f, 0x001f, 0x003f, 0x007f
        .short  0x00ff, 0x01ff, 0x03ff, 0x07ff, 0x0fff, 0x1fff, 0x3fff, 0x7fff
        .short  0xffff

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

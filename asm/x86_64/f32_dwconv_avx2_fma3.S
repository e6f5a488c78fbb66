/* f32_dwconv_avx2_fma3.S - depthwise 3x3 / 5x5 / 7x7 convolution rows, NHWC, ymm.
 *
 * void pg_f32_dwconv3x3_avx2_fma3(const pg_dwconv_args *a);   rdi = a
 * void pg_f32_dwconv5x5_avx2_fma3(const pg_dwconv_args *a);
 * (dwconv.h: rows @0, w @8, out @16, channels @24, width @32, in_step @40,
 *  pix @48, out_step @56, lo @64, hi @68, act @72; steps count floats.)
 *
 * The loop of f32_dwconv_avx512f.S at half the width: channel tiles of 8
 * (half of a 16-float packing group: the weight rows of the second half
 * start 32 bytes in) outside, pixels inside.  3x3 keeps the tile's nine
 * taps in ymm7..ymm15 and reads the bias with the first FMA's operand; 5x5
 * has 25 taps for 16 registers, so it reads each tap from L1 next to its
 * input (two loads per FMA).  The last 1..7 channels run a copy of the
 * loop with vmaskmovps loads and stores (mask from pg_avx2_tail_mask), so
 * nothing past the last channel is read or written.
 *
 * Registers:
 *   rdi  args                 rsi  in_step bytes       rax  pix bytes
 *   rbx  3 * pix bytes        rbp  out_step bytes      rcx  pixels left
 *   rdx  output cursor        r8..r12  row cursors (ky = 0..4)
 *   r13  this tile's weights  r14  channel offset (bytes)  r15  channels left
 *   ymm0 accumulator; ymm1, ymm2 lo, hi (clamp) or 0, temp (hardswish);
 *   ymm3 3.0, ymm4 6.0, ymm5 1/6; ymm6 tail mask or input temp;
 *   ymm7..ymm15 taps (3x3; ymm7 the input temp of the tail loop).
 */
#include "pg_asm.h"

        PG_RODATA
        .p2align 2
.Ldw2_three:  .float 3.0
.Ldw2_six:    .float 6.0
.Ldw2_sixth:  .float 0.16666667163372040

        .text

/* Tap t (kernel column kx of row cursor \r):
 *   mode 0: acc += \w * input            (taps in registers)
 *   mode 1: acc += input * tap from L1   (5x5)
 *   mode 2: the same, input through the tail mask ymm6 */
.macro DW_TAP mode, r, kx, t, w
.if \kx == 0
        DW_TAP_AT \mode, \t, \w, [\r]
.elseif \kx == 1
        DW_TAP_AT \mode, \t, \w, [\r + rax]
.elseif \kx == 2
        DW_TAP_AT \mode, \t, \w, [\r + rax*2]
.elseif \kx == 3
        DW_TAP_AT \mode, \t, \w, [\r + rbx]
.else
        DW_TAP_AT \mode, \t, \w, [\r + rax*4]
.endif
.endm
.macro DW_TAP_AT mode, t, w, m:vararg
.if \mode == 0
        vfmadd231ps ymm0, \w, \m
.elseif \mode == 1
        vmovups ymm6, \m
        vfmadd231ps ymm0, ymm6, [r13 + 64 * (1 + \t)]
.else
        vmaskmovps ymm7, ymm6, \m
        vfmadd231ps ymm0, ymm7, [r13 + 64 * (1 + \t)]
.endif
.endm

.macro DW_ROW5 mode, r, ky
        .irp kx, 0, 1, 2, 3, 4
        DW_TAP \mode, \r, \kx, (\ky * 5 + \kx), ymm7
        .endr
.endm

.macro DW_TAPS k, mode
.if \k == 3
        DW_TAP \mode, r8, 0, 0, ymm7
        DW_TAP \mode, r8, 1, 1, ymm8
        DW_TAP \mode, r8, 2, 2, ymm9
        DW_TAP \mode, r9, 0, 3, ymm10
        DW_TAP \mode, r9, 1, 4, ymm11
        DW_TAP \mode, r9, 2, 5, ymm12
        DW_TAP \mode, r10, 0, 6, ymm13
        DW_TAP \mode, r10, 1, 7, ymm14
        DW_TAP \mode, r10, 2, 8, ymm15
.else
        DW_ROW5 \mode, r8, 0
        DW_ROW5 \mode, r9, 1
        DW_ROW5 \mode, r10, 2
        DW_ROW5 \mode, r11, 3
        DW_ROW5 \mode, r12, 4
.endif
.endm

.macro DW_ACT act
.if \act == 1
        vmaxps  ymm0, ymm1, ymm0
        vminps  ymm0, ymm2, ymm0
.elseif \act == 2
        vaddps  ymm2, ymm0, ymm3
        vmaxps  ymm2, ymm1, ymm2
        vminps  ymm2, ymm4, ymm2
        vmulps  ymm2, ymm2, ymm5
        vmulps  ymm0, ymm0, ymm2
.endif
.endm

.macro DW_PIXELS k, mode, act, lbl
\lbl:
        vmovups ymm0, [r13]
        DW_TAPS \k, \mode
        DW_ACT  \act
.if \mode == 2
        vmaskmovps [rdx], ymm6, ymm0
.else
        vmovups [rdx], ymm0
.endif
        add     r8, rsi
        add     r9, rsi
        add     r10, rsi
.if \k == 5
        add     r11, rsi
        add     r12, rsi
.endif
        add     rdx, rbp
        dec     rcx
        jnz     \lbl
.endm

/* the three activation loops of one mode, then jump to \next */
.macro DW_LOOPS k, mode, next
        cmp     dword ptr [rdi + 72], 1
        je      .Ldw\k\()_\mode\()_clamp
        ja      .Ldw\k\()_\mode\()_hswish
        DW_PIXELS \k, \mode, 0, .Ldw\k\()_\mode\()_none
        jmp     \next
        DW_PIXELS \k, \mode, 1, .Ldw\k\()_\mode\()_clamp
        jmp     \next
        DW_PIXELS \k, \mode, 2, .Ldw\k\()_\mode\()_hswish
        jmp     \next
.endm

/* the epilogue's constants: ymm1, ymm2 the clamp bounds (or 0 for
 * hardswish), ymm3..ymm5 3, 6 and 1/6 */
.macro DW_ACT_CONSTS
        cmp     dword ptr [rdi + 72], 2
        je      1f
        vbroadcastss ymm1, [rdi + 64]
        vbroadcastss ymm2, [rdi + 68]
        jmp     2f
1:      vxorps  ymm1, ymm1, ymm1
2:      vbroadcastss ymm3, [rip + .Ldw2_three]
        vbroadcastss ymm4, [rip + .Ldw2_six]
        vbroadcastss ymm5, [rip + .Ldw2_sixth]
.endm

.macro DW_FUNC name, k, fullmode
PG_FUNC(\name)
        push    rbx
        push    rbp
        push    r12
        push    r13
        push    r14
        push    r15
        mov     rsi, [rdi + 40]
        shl     rsi, 2
        mov     rax, [rdi + 48]
        shl     rax, 2
        lea     rbx, [rax + rax*2]
        mov     rbp, [rdi + 56]
        shl     rbp, 2
        mov     r13, [rdi + 8]
        xor     r14d, r14d
        mov     r15, [rdi + 24]
        cmp     qword ptr [rdi + 32], 0
        je      .Ldw\k\()_done
        DW_ACT_CONSTS

.Ldw\k\()_tile:
        test    r15, r15
        jz      .Ldw\k\()_done
        /* row cursors and output at this tile's channels */
        mov     rcx, [rdi]
        mov     r8, [rcx]
        add     r8, r14
        mov     r9, [rcx + 8]
        add     r9, r14
        mov     r10, [rcx + 16]
        add     r10, r14
.if \k == 5
        mov     r11, [rcx + 24]
        add     r11, r14
        mov     r12, [rcx + 32]
        add     r12, r14
.endif
        mov     rdx, [rdi + 16]
        add     rdx, r14
        mov     rcx, [rdi + 32]
        cmp     r15, 8
        jb      .Ldw\k\()_tail
.if \k == 3
        vmovups ymm7, [r13 + 64]
        vmovups ymm8, [r13 + 128]
        vmovups ymm9, [r13 + 192]
        vmovups ymm10, [r13 + 256]
        vmovups ymm11, [r13 + 320]
        vmovups ymm12, [r13 + 384]
        vmovups ymm13, [r13 + 448]
        vmovups ymm14, [r13 + 512]
        vmovups ymm15, [r13 + 576]
.endif
        DW_LOOPS \k, \fullmode, .Ldw\k\()_next

.Ldw\k\()_tail:
        /* ymm6: the first r15 (1..7) lanes */
        lea     rcx, [rip + PG_SYM(pg_avx2_tail_mask)]
        neg     r15
        vmovdqu ymm6, [rcx + 4*r15 + 32]
        neg     r15
        mov     rcx, [rdi + 32]
        DW_LOOPS \k, 2, .Ldw\k\()_done

.Ldw\k\()_next:
        /* the next 8 channels: the second half of this group, or the next group */
        test    r14, 32
        jz      3f
        add     r13, 64 * (1 + \k * \k) - 32
        jmp     4f
3:      add     r13, 32
4:      add     r14, 32
        sub     r15, 8
        jmp     .Ldw\k\()_tile

.Ldw\k\()_done:
        vzeroupper
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbp
        pop     rbx
        ret
PG_ENDFUNC(\name)
.endm

        DW_FUNC pg_f32_dwconv3x3_avx2_fma3, 3, 0
        DW_FUNC pg_f32_dwconv5x5_avx2_fma3, 5, 1

/* ---- 7x7 (ConvNeXt) -----------------------------------------------------
 *
 * void pg_f32_dwconv7x7_avx2_fma3(const pg_dwconv_args *a);
 *
 * The 5x5 loop's form (every tap read from L1 next to its input) for 49
 * taps.  Seven row cursors need two more registers than the 5x5 loop has,
 * and the taps at 5 and 6 pixels an offset register of their own: the
 * tile's channel offset and channels left, and the args pointer, live on
 * the stack while the pixels run.
 *
 * Registers in the pixel loop:
 *   rsi  in_step bytes   rax  pix bytes   rbx  3 pix   rdi  5 pix
 *   rbp  out_step bytes  rcx  pixels left rdx  output cursor
 *   r8..r12, r14, r15  row cursors (ky = 0..6)   r13  this tile's weights
 *   ymm0 accumulator; ymm1..ymm5 the epilogue's; ymm6 input (tail: the
 *   lane mask), ymm7 the tail's input.
 * Stack: [rsp] args, [rsp + 8] channel offset, [rsp + 16] channels left. */

/* tap \t against the input at row cursor \r + \off: mode 1 whole, 2 masked */
.macro DW7_TAP mode, r, off, t
.if \mode == 1
        vmovups ymm6, [\r + \off]
        vfmadd231ps ymm0, ymm6, [r13 + 64 * (1 + \t)]
.else
        vmaskmovps ymm7, ymm6, [\r + \off]
        vfmadd231ps ymm0, ymm7, [r13 + 64 * (1 + \t)]
.endif
.endm

.macro DW7_ROW mode, r, t0
        DW7_TAP \mode, \r, 0, \t0
        DW7_TAP \mode, \r, rax, (\t0 + 1)
        DW7_TAP \mode, \r, rax*2, (\t0 + 2)
        DW7_TAP \mode, \r, rbx, (\t0 + 3)
        DW7_TAP \mode, \r, rax*4, (\t0 + 4)
        DW7_TAP \mode, \r, rdi, (\t0 + 5)
        DW7_TAP \mode, \r, rbx*2, (\t0 + 6)
.endm

.macro DW7_PIXELS mode, act, lbl
\lbl:
        vmovups ymm0, [r13]
        DW7_ROW \mode, r8, 0
        DW7_ROW \mode, r9, 7
        DW7_ROW \mode, r10, 14
        DW7_ROW \mode, r11, 21
        DW7_ROW \mode, r12, 28
        DW7_ROW \mode, r14, 35
        DW7_ROW \mode, r15, 42
        DW_ACT  \act
.if \mode == 2
        vmaskmovps [rdx], ymm6, ymm0
.else
        vmovups [rdx], ymm0
.endif
        add     r8, rsi
        add     r9, rsi
        add     r10, rsi
        add     r11, rsi
        add     r12, rsi
        add     r14, rsi
        add     r15, rsi
        add     rdx, rbp
        dec     rcx
        jnz     \lbl
.endm

/* the three activation loops of one mode (the flags of the act compare
 * are set), then jump to \next */
.macro DW7_LOOPS mode, next
        je      .Ldw7_\mode\()_clamp
        ja      .Ldw7_\mode\()_hswish
        DW7_PIXELS \mode, 0, .Ldw7_\mode\()_none
        jmp     \next
        DW7_PIXELS \mode, 1, .Ldw7_\mode\()_clamp
        jmp     \next
        DW7_PIXELS \mode, 2, .Ldw7_\mode\()_hswish
        jmp     \next
.endm

PG_FUNC(pg_f32_dwconv7x7_avx2_fma3)
        push    rbx
        push    rbp
        push    r12
        push    r13
        push    r14
        push    r15
        sub     rsp, 24
        mov     [rsp], rdi
        mov     rsi, [rdi + 40]
        shl     rsi, 2
        mov     rax, [rdi + 48]
        shl     rax, 2
        lea     rbx, [rax + rax*2]
        mov     rbp, [rdi + 56]
        shl     rbp, 2
        mov     r13, [rdi + 8]
        mov     qword ptr [rsp + 8], 0
        mov     rcx, [rdi + 24]
        mov     [rsp + 16], rcx
        cmp     qword ptr [rdi + 32], 0
        je      .Ldw7_done
        DW_ACT_CONSTS

.Ldw7_tile:
        mov     rdi, [rsp]
        mov     rcx, [rsp + 16]
        test    rcx, rcx
        jz      .Ldw7_done
        cmp     rcx, 8
        jae     3f
        /* ymm6: the first 1..7 lanes */
        lea     rdx, [rip + PG_SYM(pg_avx2_tail_mask)]
        neg     rcx
        vmovdqu ymm6, [rdx + 4*rcx + 32]
3:
        /* row cursors and output at this tile's channels */
        mov     r15, [rsp + 8]
        mov     rcx, [rdi]
        mov     r8, [rcx]
        add     r8, r15
        mov     r9, [rcx + 8]
        add     r9, r15
        mov     r10, [rcx + 16]
        add     r10, r15
        mov     r11, [rcx + 24]
        add     r11, r15
        mov     r12, [rcx + 32]
        add     r12, r15
        mov     r14, [rcx + 40]
        add     r14, r15
        mov     rdx, [rdi + 16]
        add     rdx, r15
        mov     r15, [rcx + 48]
        add     r15, [rsp + 8]
        mov     rcx, [rdi + 32]
        cmp     qword ptr [rsp + 16], 8
        jb      .Ldw7_tail
        cmp     dword ptr [rdi + 72], 1
        lea     rdi, [rax + rax*4]      /* 5 pix: rdi is the args again at the next tile */
        DW7_LOOPS 1, .Ldw7_next
.Ldw7_tail:
        cmp     dword ptr [rdi + 72], 1
        lea     rdi, [rax + rax*4]
        DW7_LOOPS 2, .Ldw7_done

.Ldw7_next:
        /* the next 8 channels: the second half of this group, or the next group */
        test    qword ptr [rsp + 8], 32
        jz      4f
        add     r13, 64 * 50 - 32
        jmp     5f
4:      add     r13, 32
5:      add     qword ptr [rsp + 8], 32
        sub     qword ptr [rsp + 16], 8
        jmp     .Ldw7_tile

.Ldw7_done:
        vzeroupper
        add     rsp, 24
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbp
        pop     rbx
        ret
PG_ENDFUNC(pg_f32_dwconv7x7_avx2_fma3)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

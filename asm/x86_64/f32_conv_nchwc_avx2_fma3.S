/* f32_conv_nchwc_avx2_fma3.S - direct convolution on NCHW16c activations, ymm.
 *
 * void pg_f32_conv_nchwc_1x16_avx2_fma3(const pg_conv_nchwc_args *a);   rdi = a
 * (conv_nchwc.h: x @0, w @8, y @16, bias @24, pixels @32, fb @40,
 *  cin_blocks @48, cin_blk @56, kh @64, kw @72, x_pix @80, x_kx @88,
 *  x_ky @96, x_cb @104, w_ky @112, w_cb @120, y_fb @128, lo @136, hi @140,
 *  act @144, flags @148, res @152, res_fb @160; strides in bytes.)
 *
 * The block stays 16 channels on AVX2 (the layout is the same as the
 * AVX-512 row's, so the passes, the pools, the depthwise form and a saved
 * model do not change with the CPU): one block is two ymm.  One filter
 * block (FB = 1: fb is always 1) x 6 output pixels in 12 accumulators
 * (ymm0..ymm11, pixel p = ymm(2p), ymm(2p + 1)), the shape of the 6x16
 * SGEMM tile: per input channel of each tap the block's two weight
 * vectors are loaded (ymm12, ymm13) and each pixel's input value is
 * broadcast once (ymm14 / ymm15 alternating) into its two accumulators,
 * 2 + 6 loads per 12 FMAs.  Two filter blocks would need 4 weight
 * registers beside at most 3 pixels' 12 accumulators and leave none for
 * the broadcast.  One body per pixel count (CONV_CHUNK): the row goes in
 * chunks of 6, then one chunk of the 1..5 left.  Bias first (the
 * accumulators start from it), then the optional sum with y (flag
 * ACCUMULATE), the optional skip tensor (flag RESIDUAL: res at the
 * chunk's offset from y), then act 1: clamp max(lo, .) then min(hi, .),
 * or act 2: hardswish (ymm12..15, free by then, and 3.0 from memory), each
 * in the C reference's order (NaN passes), then the stores.
 *
 * Registers:
 *   rdi  args                rsi  x_pix                rax  input cursor, pixels 0..2
 *   rbx  input cursor, pixels 3..5 (rax + 3 x_pix)    rcx  input channels left
 *   rdx  weight cursor       r8   kx left              r9   ky left
 *   r10  input blocks left   r11  input row (cb, ky)    r12  input block base
 *   r13  chunk's input       r14  chunk's output        r15  pixels left
 *   rbp  weight row (cb, ky)
 *   [rsp]     x_kx - 4 cin_blk (the cursor step from one tap to the next)
 *   [rsp + 8] weights of the current input block
 */
#include "pg_asm.h"

        PG_RODATA
        .p2align 5
.Lcv_three8: .float 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0
        .float 6.0, 0.16666667163372040

        .text
        .altmacro

/* ymm\r = broadcast of pixel \p's input */
.macro CV_BC p, r
.if \p == 0
        vbroadcastss ymm\r, [rax]
.elseif \p == 1
        vbroadcastss ymm\r, [rax + rsi]
.elseif \p == 2
        vbroadcastss ymm\r, [rax + rsi*2]
.elseif \p == 3
        vbroadcastss ymm\r, [rbx]
.elseif \p == 4
        vbroadcastss ymm\r, [rbx + rsi]
.else
        vbroadcastss ymm\r, [rbx + rsi*2]
.endif
.endm

/* every pixel p < P: \m p, its two accumulators a, b and its broadcast
 * register r */
.macro CV_EACH m, P
        .set .Lcv_p, 0
        .rept \P
        \m %.Lcv_p, %(2 * .Lcv_p), %(2 * .Lcv_p + 1), %(14 + .Lcv_p - 2 * (.Lcv_p >> 1))
        .set .Lcv_p, .Lcv_p + 1
        .endr
.endm
.macro CV_INIT p, a, b, r
        vmovaps ymm\a, ymm12
        vmovaps ymm\b, ymm13
.endm
/* pixel \p's 64 bytes at [base + 64 p] added in */
.macro CV_ADDY p, a, b, r
        vaddps  ymm\a, ymm\a, [r14 + 64 * \p]
        vaddps  ymm\b, ymm\b, [r14 + 64 * \p + 32]
.endm
.macro CV_ADDR p, a, b, r
        vaddps  ymm\a, ymm\a, [rax + 64 * \p]
        vaddps  ymm\b, ymm\b, [rax + 64 * \p + 32]
.endm
.macro CV_CLMP p, a, b, r
        vmaxps  ymm\a, ymm12, ymm\a
        vminps  ymm\a, ymm13, ymm\a
        vmaxps  ymm\b, ymm12, ymm\b
        vminps  ymm\b, ymm13, ymm\b
.endm
/* hardswish x min(max(x + 3, 0), 6) / 6 in the C reference's order:
 * ymm12 = 0, ymm13 = 6, ymm15 = 1/6, 3.0 from memory (8 lanes of it),
 * ymm14 the temporary */
.macro CV_HSW1 a
        vaddps  ymm14, ymm\a, [rip + .Lcv_three8]
        vmaxps  ymm14, ymm12, ymm14
        vminps  ymm14, ymm13, ymm14
        vmulps  ymm14, ymm14, ymm15
        vmulps  ymm\a, ymm\a, ymm14
.endm
.macro CV_HSWISH p, a, b, r
        CV_HSW1 \a
        CV_HSW1 \b
.endm
.macro CV_STORE p, a, b, r
        vmovups [r14 + 64 * \p], ymm\a
        vmovups [r14 + 64 * \p + 32], ymm\b
.endm
/* one input channel: pixel \p's broadcast into its two accumulators */
.macro CV_FMA2 p, a, b, r
        CV_BC   \p, \r
        vfmadd231ps ymm\a, ymm12, ymm\r
        vfmadd231ps ymm\b, ymm13, ymm\r
.endm

/* one chunk of P pixels; \lbl names its local labels */
.macro CONV_CHUNK P, lbl
        /* the accumulators start from the bias */
        mov     rcx, [rdi + 24]
        vmovups ymm12, [rcx]
        vmovups ymm13, [rcx + 32]
        CV_EACH CV_INIT, \P
        mov     r12, r13
        mov     rcx, [rdi + 8]
        mov     [rsp + 8], rcx
        mov     r10, [rdi + 48]
\lbl\()_cb:
        mov     r11, r12
        mov     rbp, [rsp + 8]
        mov     r9, [rdi + 64]
        test    r9, r9
        jz      \lbl\()_cbnext
\lbl\()_ky:
        mov     rax, r11
        lea     rbx, [rax + rsi*2]
        add     rbx, rsi
        mov     rdx, rbp
        mov     r8, [rdi + 72]
        test    r8, r8
        jz      \lbl\()_kynext
\lbl\()_kx:
        mov     rcx, [rdi + 56]
\lbl\()_ic:
        vmovups ymm12, [rdx]
        vmovups ymm13, [rdx + 32]
        CV_EACH CV_FMA2, \P
        add     rax, 4
.if \P > 3
        add     rbx, 4
.endif
        add     rdx, 64
        dec     rcx
        jnz     \lbl\()_ic
        add     rax, [rsp]
.if \P > 3
        add     rbx, [rsp]
.endif
        dec     r8
        jnz     \lbl\()_kx
\lbl\()_kynext:
        add     r11, [rdi + 96]
        add     rbp, [rdi + 112]
        dec     r9
        jnz     \lbl\()_ky
\lbl\()_cbnext:
        add     r12, [rdi + 104]
        mov     rcx, [rdi + 120]
        add     [rsp + 8], rcx
        dec     r10
        jnz     \lbl\()_cb
        /* epilogue: + y, + res, clamp or hardswish, store */
        test    dword ptr [rdi + 148], 1
        jz      \lbl\()_noacc
        CV_EACH CV_ADDY, \P
\lbl\()_noacc:
        test    dword ptr [rdi + 148], 2
        jz      \lbl\()_nores
        mov     rax, r14
        sub     rax, [rdi + 16]
        add     rax, [rdi + 152]
        CV_EACH CV_ADDR, \P
\lbl\()_nores:
        cmp     dword ptr [rdi + 144], 1
        jb      \lbl\()_noclamp
        ja      \lbl\()_hswish
        vbroadcastss ymm12, [rdi + 136]
        vbroadcastss ymm13, [rdi + 140]
        CV_EACH CV_CLMP, \P
        jmp     \lbl\()_noclamp
\lbl\()_hswish:
        vxorps  xmm12, xmm12, xmm12
        vbroadcastss ymm13, [rip + .Lcv_three8 + 32]
        vbroadcastss ymm15, [rip + .Lcv_three8 + 36]
        CV_EACH CV_HSWISH, \P
\lbl\()_noclamp:
        CV_EACH CV_STORE, \P
        .rept \P
        add     r13, rsi
        .endr
        add     r14, 64 * \P
        sub     r15, \P
.endm

PG_FUNC(pg_f32_conv_nchwc_1x16_avx2_fma3)
        push    rbx
        push    rbp
        push    r12
        push    r13
        push    r14
        push    r15
        sub     rsp, 24
        mov     rsi, [rdi + 80]
        mov     rax, [rdi + 56]
        shl     rax, 2
        mov     rcx, [rdi + 88]
        sub     rcx, rax
        mov     [rsp], rcx
        mov     r13, [rdi + 0]
        mov     r14, [rdi + 16]
        mov     r15, [rdi + 32]
.Lcv_loop:
        cmp     r15, 6
        jb      .Lcv_tail
        CONV_CHUNK 6, .Lcv_c6
        jmp     .Lcv_loop
.Lcv_tail:
        cmp     r15, 1
        je      .Lcv_t1
        cmp     r15, 2
        je      .Lcv_t2
        cmp     r15, 3
        je      .Lcv_t3
        cmp     r15, 4
        je      .Lcv_t4
        cmp     r15, 5
        je      .Lcv_t5
        jmp     .Lcv_done
.Lcv_t1:
        CONV_CHUNK 1, .Lcv_c1
        jmp     .Lcv_done
.Lcv_t2:
        CONV_CHUNK 2, .Lcv_c2
        jmp     .Lcv_done
.Lcv_t3:
        CONV_CHUNK 3, .Lcv_c3
        jmp     .Lcv_done
.Lcv_t4:
        CONV_CHUNK 4, .Lcv_c4
        jmp     .Lcv_done
.Lcv_t5:
        CONV_CHUNK 5, .Lcv_c5
.Lcv_done:
        vzeroupper
        add     rsp, 24
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbp
        pop     rbx
        ret
PG_ENDFUNC(pg_f32_conv_nchwc_1x16_avx2_fma3)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

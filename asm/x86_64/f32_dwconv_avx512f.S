/* f32_dwconv_avx512f.S - depthwise 3x3 / 5x5 / 7x7 convolution rows, NHWC, zmm.
 *
 * void pg_f32_dwconv3x3_avx512f(const pg_dwconv_args *a);   rdi = a
 * void pg_f32_dwconv5x5_avx512f(const pg_dwconv_args *a);
 * (dwconv.h: rows @0, w @8, out @16, channels @24, width @32, in_step @40,
 *  pix @48, out_step @56, lo @64, hi @68, act @72; steps count floats.)
 *
 * Channel tiles of 16 (one zmm, the packing group) outside, pixels inside:
 * a tile's taps stay in registers (zmm6.. for up to 25 taps, zmm31 the
 * bias) while its row of pixels passes, so each FMA has one memory operand
 * (the input) and each pixel costs kh*kw FMAs, kh pointer increments and
 * a store.  One accumulator per pixel: successive pixels are independent,
 * so out-of-order execution overlaps their FMA chains (about 14 uops per
 * pixel for 3x3, far inside the reorder window).  The last tile's
 * channels past C go through the opmask k1: masked FMAs and stores
 * suppress faults on the lanes they skip, so nothing past the input's or
 * output's last channel is touched.  Weights are padded to the group, so
 * their loads are always whole.
 *
 * 3x3 with a stride of 1 or 2 (in_step = pix or 2 pix, every MobileNet
 * layer) goes 8 pixels at a time in zmm16..zmm23: each input vector of a
 * kernel row is loaded once (zero-masked) into zmm24 and multiplied into
 * every pixel whose window holds it - 10 loads for 24 FMAs a row at stride
 * 1, 17 at stride 2, instead of one load per FMA - and the 8 chains are
 * independent in the instruction stream, not only across loop iterations
 * (one chain per pixel left the FMA pipes waiting on its 11-deep
 * dependency: 83 GFLOP/s in a network, against ~250 peak, on Zen 5).  Each
 * pixel's FMAs keep the single-pixel order (bias, then ky-major taps), so
 * both paths round alike.  A row's last pixels short of 8 go as the last 8
 * again (the driver never writes a dwconv's output over its input); rows
 * under 8 pixels and the other strides take the single-pixel loop.
 *
 * Registers:
 *   rdi  args                 rsi  in_step bytes       rax  pix bytes
 *   rbx  3 * pix bytes        rbp  out_step bytes      rcx  pixels left
 *   rdx  output cursor        r8..r12  row cursors (ky = 0..4)
 *   r13  this tile's weights  r14  channel offset (bytes)  r15  channels left
 *   zmm0 accumulator; zmm1, zmm2 lo, hi (clamp) or 0, temp (hardswish);
 *   zmm3 3.0, zmm4 6.0, zmm5 1/6; zmm6..zmm30 taps; zmm31 bias; k1 lanes.
 */
#include "pg_asm.h"

        PG_RODATA
        .p2align 2
.Ldw_three:  .float 3.0
.Ldw_six:    .float 6.0
.Ldw_sixth:  .float 0.16666667163372040

        .text

/* one kernel row: FMAs of taps w0.. against row cursor \r */
.macro DW_ROW3 r, w0, w1, w2
        vfmadd231ps zmm0{k1}, \w0, [\r]
        vfmadd231ps zmm0{k1}, \w1, [\r + rax]
        vfmadd231ps zmm0{k1}, \w2, [\r + rax*2]
.endm
.macro DW_ROW5 r, w0, w1, w2, w3, w4
        vfmadd231ps zmm0{k1}, \w0, [\r]
        vfmadd231ps zmm0{k1}, \w1, [\r + rax]
        vfmadd231ps zmm0{k1}, \w2, [\r + rax*2]
        vfmadd231ps zmm0{k1}, \w3, [\r + rbx]
        vfmadd231ps zmm0{k1}, \w4, [\r + rax*4]
.endm

.macro DW_TAPS k
.if \k == 3
        DW_ROW3 r8, zmm6, zmm7, zmm8
        DW_ROW3 r9, zmm9, zmm10, zmm11
        DW_ROW3 r10, zmm12, zmm13, zmm14
.else
        DW_ROW5 r8, zmm6, zmm7, zmm8, zmm9, zmm10
        DW_ROW5 r9, zmm11, zmm12, zmm13, zmm14, zmm15
        DW_ROW5 r10, zmm16, zmm17, zmm18, zmm19, zmm20
        DW_ROW5 r11, zmm21, zmm22, zmm23, zmm24, zmm25
        DW_ROW5 r12, zmm26, zmm27, zmm28, zmm29, zmm30
.endif
.endm

/* act on register \r: 0 none, 1 clamp, 2 hardswish (same operation order
 * as the C reference: max(lo, x) then min(hi, .), NaN passes through) */
.macro DW_ACT act, r=zmm0
.if \act == 1
        vmaxps  \r, zmm1, \r
        vminps  \r, zmm2, \r
.elseif \act == 2
        vaddps  zmm2, \r, zmm3
        vmaxps  zmm2, zmm1, zmm2
        vminps  zmm2, zmm4, zmm2
        vmulps  zmm2, zmm2, zmm5
        vmulps  \r, \r, zmm2
.endif
.endm

/* the 8-pixel path: accumulator of pixel \j is zmm(16 + j) */
.macro DW8_FMA j, w
.if \j == 0
        vfmadd231ps zmm16, \w, zmm24
.elseif \j == 1
        vfmadd231ps zmm17, \w, zmm24
.elseif \j == 2
        vfmadd231ps zmm18, \w, zmm24
.elseif \j == 3
        vfmadd231ps zmm19, \w, zmm24
.elseif \j == 4
        vfmadd231ps zmm20, \w, zmm24
.elseif \j == 5
        vfmadd231ps zmm21, \w, zmm24
.elseif \j == 6
        vfmadd231ps zmm22, \w, zmm24
.else
        vfmadd231ps zmm23, \w, zmm24
.endif
.endm

/* input vector c of a kernel row (in zmm24) into every pixel j with
 * c = s j + kx, tap \w0 + kx; in order of j, so of c, per pixel */
.macro DW8_TAPS s, c, w0, w1, w2
.irp j, 0, 1, 2, 3, 4, 5, 6, 7
.if \c == \s * \j
        DW8_FMA \j, \w0
.elseif \c == \s * \j + 1
        DW8_FMA \j, \w1
.elseif \c == \s * \j + 2
        DW8_FMA \j, \w2
.endif
.endr
.endm

/* one kernel row for 8 pixels at stride \s: the 7 s + 3 input vectors
 * from row cursor \r, five per step of r11 (offsets 0, 1, 2, 3, 4 pix) */
.macro DW8_ROW s, r, w0, w1, w2
        mov     r11, \r
.irp g, 0, 1, 2, 3
.irp o, 0, 1, 2, 3, 4
.if 5 * \g + \o < 7 * \s + 3
.if \o == 0
        vmovups zmm24{k1}{z}, [r11]
.elseif \o == 1
        vmovups zmm24{k1}{z}, [r11 + rax]
.elseif \o == 2
        vmovups zmm24{k1}{z}, [r11 + rax*2]
.elseif \o == 3
        vmovups zmm24{k1}{z}, [r11 + rbx]
.else
        vmovups zmm24{k1}{z}, [r11 + rax*4]
.endif
        DW8_TAPS \s, (5*\g+\o), \w0, \w1, \w2
.endif
.endr
.if 5 * \g + 5 < 7 * \s + 3
        lea     r11, [r11 + rax*4]
        add     r11, rax
.endif
.endr
.endm

/* 8 pixels at a time while 8 are left (3x3, stride \s), then the rest
 * in the single-pixel loop \one with activation \act */
.macro DW8_PIXELS s, act, lbl, one, next
\lbl:
        cmp     rcx, 8
        jb      \lbl\()_rest
        vmovaps zmm16, zmm31
        vmovaps zmm17, zmm31
        vmovaps zmm18, zmm31
        vmovaps zmm19, zmm31
        vmovaps zmm20, zmm31
        vmovaps zmm21, zmm31
        vmovaps zmm22, zmm31
        vmovaps zmm23, zmm31
        DW8_ROW \s, r8, zmm6, zmm7, zmm8
        DW8_ROW \s, r9, zmm9, zmm10, zmm11
        DW8_ROW \s, r10, zmm12, zmm13, zmm14
.irp r, zmm16, zmm17, zmm18, zmm19, zmm20, zmm21, zmm22, zmm23
        DW_ACT  \act, \r
        vmovups [rdx]{k1}, \r
        add     rdx, rbp
.endr
        lea     r8, [r8 + rsi*8]
        lea     r9, [r9 + rsi*8]
        lea     r10, [r10 + rsi*8]
        sub     rcx, 8
        jmp     \lbl
\lbl\()_rest:
        test    rcx, rcx
        jz      \next
        /* a row of 8 or more: the last 8 pixels again, overlapping the
         * ones done (the same values are stored twice), so no pixel of it
         * takes the single-pixel loop */
        cmp     qword ptr [rdi + 32], 8
        jb      \one
        mov     r11, 8
        sub     r11, rcx
        mov     r12, r11
        imul    r12, rsi
        sub     r8, r12
        sub     r9, r12
        sub     r10, r12
        imul    r11, rbp
        sub     rdx, r11
        mov     ecx, 8
        jmp     \lbl
.endm

/* the 8-pixel loops of one stride, by activation */
.macro DW8_STRIDE s
.Ldw3_s\s:
        cmp     dword ptr [rdi + 72], 1
        je      .Ldw3_s\s\()_clamp
        ja      .Ldw3_s\s\()_hswish
        DW8_PIXELS \s, 0, .Ldw3_s\s\()_none, .Ldw3_none, .Ldw3_next
        DW8_PIXELS \s, 1, .Ldw3_s\s\()_clamp, .Ldw3_clamp, .Ldw3_next
        DW8_PIXELS \s, 2, .Ldw3_s\s\()_hswish, .Ldw3_hswish, .Ldw3_next
.endm

/* the pixels of one tile with activation \act */
.macro DW_PIXELS k, act, lbl
\lbl:
        vmovaps zmm0, zmm31
        DW_TAPS \k
        DW_ACT  \act
        vmovups [rdx]{k1}, zmm0
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

/* a tile's taps into zmm6..: 9 (3x3) or 25 (5x5, and 7x7's first 25) */
.macro DW_LOAD_TAPS k
        vmovups zmm6, [r13 + 64]
        vmovups zmm7, [r13 + 128]
        vmovups zmm8, [r13 + 192]
        vmovups zmm9, [r13 + 256]
        vmovups zmm10, [r13 + 320]
        vmovups zmm11, [r13 + 384]
        vmovups zmm12, [r13 + 448]
        vmovups zmm13, [r13 + 512]
        vmovups zmm14, [r13 + 576]
.if \k >= 5
        vmovups zmm15, [r13 + 640]
        vmovups zmm16, [r13 + 704]
        vmovups zmm17, [r13 + 768]
        vmovups zmm18, [r13 + 832]
        vmovups zmm19, [r13 + 896]
        vmovups zmm20, [r13 + 960]
        vmovups zmm21, [r13 + 1024]
        vmovups zmm22, [r13 + 1088]
        vmovups zmm23, [r13 + 1152]
        vmovups zmm24, [r13 + 1216]
        vmovups zmm25, [r13 + 1280]
        vmovups zmm26, [r13 + 1344]
        vmovups zmm27, [r13 + 1408]
        vmovups zmm28, [r13 + 1472]
        vmovups zmm29, [r13 + 1536]
        vmovups zmm30, [r13 + 1600]
.endif
.endm

/* the epilogue's constants: zmm1, zmm2 the clamp bounds (or 0 for
 * hardswish), zmm3..zmm5 3, 6 and 1/6 */
.macro DW_ACT_CONSTS
        cmp     dword ptr [rdi + 72], 2
        je      1f
        vbroadcastss zmm1, [rdi + 64]
        vbroadcastss zmm2, [rdi + 68]
        jmp     2f
1:      vpxord  zmm1, zmm1, zmm1
2:      vbroadcastss zmm3, [rip + .Ldw_three]
        vbroadcastss zmm4, [rip + .Ldw_six]
        vbroadcastss zmm5, [rip + .Ldw_sixth]
.endm

.macro DW_FUNC name, k
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
        /* k1: min(16, channels left) lanes */
        mov     ecx, 16
        cmp     r15, 16
        cmovb   ecx, r15d
        mov     edx, 1
        shl     edx, cl
        dec     edx
        kmovw   k1, edx
        /* the tile's bias and taps */
        vmovups zmm31, [r13]
        DW_LOAD_TAPS \k
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
.if \k == 3
        cmp     rsi, rax
        je      .Ldw3_s1
        lea     r11, [rax + rax]
        cmp     rsi, r11
        je      .Ldw3_s2
.endif
        cmp     dword ptr [rdi + 72], 1
        je      .Ldw\k\()_clamp
        ja      .Ldw\k\()_hswish
        DW_PIXELS \k, 0, .Ldw\k\()_none
        jmp     .Ldw\k\()_next
        DW_PIXELS \k, 1, .Ldw\k\()_clamp
        jmp     .Ldw\k\()_next
        DW_PIXELS \k, 2, .Ldw\k\()_hswish
.if \k == 3
        jmp     .Ldw3_next
        DW8_STRIDE 1
        DW8_STRIDE 2
.endif
.Ldw\k\()_next:
        add     r13, 64 * (1 + \k * \k)
        add     r14, 64
        cmp     r15, 16
        jbe     .Ldw\k\()_done
        sub     r15, 16
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

        DW_FUNC pg_f32_dwconv3x3_avx512f, 3
        DW_FUNC pg_f32_dwconv5x5_avx512f, 5

/* ---- 7x7 (ConvNeXt) -----------------------------------------------------
 *
 * void pg_f32_dwconv7x7_avx512f(const pg_dwconv_args *a);
 *
 * The same tiles and pixel loop, for 49 taps: 25 of them (rows 0-2 and
 * row 3's first four) stay in zmm6..zmm30 for the tile, the other 24 are
 * read from L1 into zmm31 next to their FMA (whose input is the memory
 * operand, masked like the 3x3 / 5x5 ones).  Seven row cursors need two
 * more registers than the 5x5 loop has, and the taps at 5 and 6 pixels an
 * offset register of their own: the tile's channel offset and channels
 * left, and the args pointer, live on the stack while the pixels run.
 *
 * Registers in the pixel loop:
 *   rsi  in_step bytes   rax  pix bytes   rbx  3 pix   rdi  5 pix
 *   rbp  out_step bytes  rcx  pixels left rdx  output cursor
 *   r8..r12, r14, r15  row cursors (ky = 0..6)   r13  this tile's weights
 *   zmm0 accumulator; zmm1..zmm5 the epilogue's (as above); zmm6..zmm30
 *   taps 0..24; zmm31 a tap read from L1; k1 lanes.
 * Stack: [rsp] args, [rsp + 8] channel offset, [rsp + 16] channels left. */

/* one kernel row, taps in registers \w0..\w6 */
.macro DW7_ROWR r, w0, w1, w2, w3, w4, w5, w6
        vfmadd231ps zmm0{k1}, \w0, [\r]
        vfmadd231ps zmm0{k1}, \w1, [\r + rax]
        vfmadd231ps zmm0{k1}, \w2, [\r + rax*2]
        vfmadd231ps zmm0{k1}, \w3, [\r + rbx]
        vfmadd231ps zmm0{k1}, \w4, [\r + rax*4]
        vfmadd231ps zmm0{k1}, \w5, [\r + rdi]
        vfmadd231ps zmm0{k1}, \w6, [\r + rbx*2]
.endm

/* tap \t from L1, against the input at row cursor \r + \off */
.macro DW7_M r, off, t
        vmovups zmm31, [r13 + 64 * (1 + \t)]
        vfmadd231ps zmm0{k1}, zmm31, [\r + \off]
.endm

/* one kernel row, taps \t0.. from L1 */
.macro DW7_ROWM r, t0
        DW7_M   \r, 0, \t0
        DW7_M   \r, rax, (\t0 + 1)
        DW7_M   \r, rax*2, (\t0 + 2)
        DW7_M   \r, rbx, (\t0 + 3)
        DW7_M   \r, rax*4, (\t0 + 4)
        DW7_M   \r, rdi, (\t0 + 5)
        DW7_M   \r, rbx*2, (\t0 + 6)
.endm

.macro DW7_PIXELS act, lbl
\lbl:
        vmovups zmm0, [r13]
        DW7_ROWR r8, zmm6, zmm7, zmm8, zmm9, zmm10, zmm11, zmm12
        DW7_ROWR r9, zmm13, zmm14, zmm15, zmm16, zmm17, zmm18, zmm19
        DW7_ROWR r10, zmm20, zmm21, zmm22, zmm23, zmm24, zmm25, zmm26
        vfmadd231ps zmm0{k1}, zmm27, [r11]
        vfmadd231ps zmm0{k1}, zmm28, [r11 + rax]
        vfmadd231ps zmm0{k1}, zmm29, [r11 + rax*2]
        vfmadd231ps zmm0{k1}, zmm30, [r11 + rbx]
        DW7_M   r11, rax*4, 25
        DW7_M   r11, rdi, 26
        DW7_M   r11, rbx*2, 27
        DW7_ROWM r12, 28
        DW7_ROWM r14, 35
        DW7_ROWM r15, 42
        DW_ACT  \act
        vmovups [rdx]{k1}, zmm0
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

PG_FUNC(pg_f32_dwconv7x7_avx512f)
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
        mov     r15, [rsp + 16]
        test    r15, r15
        jz      .Ldw7_done
        /* k1: min(16, channels left) lanes */
        mov     ecx, 16
        cmp     r15, 16
        cmovb   ecx, r15d
        mov     edx, 1
        shl     edx, cl
        dec     edx
        kmovw   k1, edx
        /* the tile's register taps (0..24: the 5x5 set) */
        DW_LOAD_TAPS 5
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
        cmp     dword ptr [rdi + 72], 1
        lea     rdi, [rax + rax*4]      /* 5 pix: rdi is the args again at the next tile */
        je      .Ldw7_clamp
        ja      .Ldw7_hswish
        DW7_PIXELS 0, .Ldw7_none
        jmp     .Ldw7_next
        DW7_PIXELS 1, .Ldw7_clamp
        jmp     .Ldw7_next
        DW7_PIXELS 2, .Ldw7_hswish
.Ldw7_next:
        add     r13, 64 * 50
        add     qword ptr [rsp + 8], 64
        mov     rcx, [rsp + 16]
        cmp     rcx, 16
        jbe     .Ldw7_done
        sub     rcx, 16
        mov     [rsp + 16], rcx
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
PG_ENDFUNC(pg_f32_dwconv7x7_avx512f)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

/* q8_gemm_4x6_avx512vnni.S - the q8_0 GEMM C[m, n] = dot(W row n, X row m)
 * (qgemm.h) in the arithmetic of the q8_0 GEMV q_gemv_4row_avx512vnni.S,
 * so a prompt evaluated as one batch gives the same bits as the same
 * tokens one at a time.
 *
 * Per pair of W rows and row of X, exactly as the GEMV does it for its one
 * row of x: a zmm holds one block of each row of the pair (row a in the low
 * 256 bits, row b in the high), xor 0x80 (w + 128 unsigned); x's block is
 * broadcast to both halves; each 4-byte lane's int32 sum starts from
 * -128 (sum of x over the lane) and gets one vpdpbusd - the exact w . x of
 * its four bytes; converted to fp32 and multiplied by [d_a d_x x 8 | d_b
 * d_x x 8] (the scales' product rounded to fp32: here the pair's scales
 * spread once per block times x's in every lane, the same products) into
 * the pair's 16-lane
 * sum by an FMA, block after block from zero; at the end the lanes fold
 * as the GEMV's vhaddps tree does: ((l0 + l1) + (l2 + l3)) + ((l4 + l5) +
 * (l6 + l7)).  Each output is therefore the GEMV's value bit for bit.
 *
 * The tile: four rows of W (two pairs, unpacked once per block) against up
 * to six rows of X (twelve sums); W's four rows (4 x 34 K / 32 bytes) stay
 * in L1 while every group of six X rows passes.  The last N % 4 rows of W
 * are aimed at the group's first row and not stored (opmask k1).
 *
 * Measured (Sapphire Rapids, 1 thread): 82-86 GOP/s at M = 128, N = 1024
 * and 2816, K = 1024 against the 4x1 AVX-VNNI kernel's 51-53 (the form
 * q8_0 prefill ran on before); bench_llm's q8_0 prefill 0.72-0.88x -> 1.14x
 * llama.cpp.  The loop is bound by the two vector ports: per block and row
 * of X, x's correction and scale (5 ops) and per pair the dot, the scale
 * product, the conversion and the FMA (4); the panel GEMM (16x8, 3x this)
 * rounds differently, which is why it is not the one used.
 *
 * void pg_q8_0_q8_0_gemm_4x6_avx512vnni(size_t M, size_t N, size_t K,
 *                                        rdi       rsi       rdx
 *         const void *W, size_t ldw, const void *X, size_t ldx, float *C, size_t ldc)
 *         rcx            r8          r9             [rsp+8]     [rsp+16]  [rsp+24]
 *
 * Registers: rsi W rows left, rdx blocks per row, rcx W group's row 0,
 * r8 ldw, r9 X; rax / r10 / r11 / rbx the four W row walks, r15 / r12 the
 * X walks (rows 0-2 at r15 + t ldx, rows 3-5 at r12 + (t - 3) ldx), r13
 * blocks left, r14 X rows left, rbp ldx, rdi scratch.  Locals: [rsp] ldx,
 * [rsp+8] ldc bytes, [rsp+16] C at (X group, n), [rsp+24] the X group,
 * [rsp+32] M, [rsp+40] C at (0, n) of the W group.
 * zmm0-11 the sums (row t of X: zmm 2t pair 0, 2t + 1 pair 1), zmm12 0x80
 * bytes, zmm13 the vpermps index, zmm14-15 fold scratch, zmm16-17 the W
 * pairs, zmm18-19 their scales spread, zmm20 x, zmm21 d_x, zmm22 x's correction,
 * zmm23-24 scratch.
 */
#include "pg_asm.h"

#define LDX [rsp]
#define LDC [rsp + 8]
#define CG  [rsp + 16]
#define XG  [rsp + 24]
#define MM  [rsp + 32]
#define CW  [rsp + 40]

/* zmm20 = X row \t's block (both halves), zmm21 its scale (16 lanes), zmm22
 * its correction */
.macro XLOAD t
.if \t == 0
        vbroadcasti64x4 zmm20, [r15 + 2]
        vpbroadcastw ymm21, word ptr [r15]
.elseif \t == 1
        vbroadcasti64x4 zmm20, [r15 + rbp + 2]
        vpbroadcastw ymm21, word ptr [r15 + rbp]
.elseif \t == 2
        vbroadcasti64x4 zmm20, [r15 + rbp*2 + 2]
        vpbroadcastw ymm21, word ptr [r15 + rbp*2]
.elseif \t == 3
        vbroadcasti64x4 zmm20, [r12 + 2]
        vpbroadcastw ymm21, word ptr [r12]
.elseif \t == 4
        vbroadcasti64x4 zmm20, [r12 + rbp + 2]
        vpbroadcastw ymm21, word ptr [r12 + rbp]
.else
        vbroadcasti64x4 zmm20, [r12 + rbp*2 + 2]
        vpbroadcastw ymm21, word ptr [r12 + rbp*2]
.endif
        vcvtph2ps zmm21, ymm21
        vpxord  zmm22, zmm22, zmm22
        vpdpbusd zmm22, zmm12, zmm20
        vpxord  zmm23, zmm23, zmm23
        vpsubd  zmm22, zmm23, zmm22
.endm

/* pair \p (zmm16 + p, its scales xmm18 + p) into sum zmm\acc */
.macro XPAIR p, acc
        vmovdqa64 zmm23, zmm22
.if \p == 0
        vpdpbusd zmm23, zmm16, zmm20
        vmulps  zmm24, zmm18, zmm21
.else
        vpdpbusd zmm23, zmm17, zmm20
        vmulps  zmm24, zmm19, zmm21
.endif
        vcvtdq2ps zmm23, zmm23
        vfmadd231ps zmm\acc, zmm23, zmm24
.endm

/* sums of X row \t -> [y0 y1 y2 y3] stored at rdi (k1 the rows) */
.macro XFOLD a, b
        vextractf64x4 ymm14, zmm\a, 1
        vextractf64x4 ymm15, zmm\b, 1
        vhaddps ymm\a, ymm\a, ymm14
        vhaddps ymm\b, ymm\b, ymm15
        vhaddps ymm\a, ymm\a, ymm\b
        vextractf128 xmm\b, ymm\a, 1
        vaddps  xmm\a, xmm\a, xmm\b
        vmovups [rdi]{k1}, xmm\a
        add     rdi, LDC
.endm

/* one group of T rows of X against the four W rows */
.macro XGROUP T
        mov     rax, rcx
        lea     r10, [rcx + r8]
        lea     r11, [rcx + r8*2]
        lea     rbx, [r10 + r8*2]
        cmp     rsi, 4
        jae     1f
        mov     rbx, rcx
        cmp     rsi, 3
        cmovb   r11, rcx
        cmp     rsi, 2
        cmovb   r10, rcx
1:      mov     r15, XG
        lea     r12, [r15 + rbp*2]
        add     r12, rbp
        .irp a, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
        .if \a < 2 * \T
        vpxord  zmm\a, zmm\a, zmm\a
        .endif
        .endr
        mov     r13, rdx
        test    r13, r13
        jz      4f                      /* K = 0: zeros, as the GEMV writes */
2:      vmovdqu8 ymm16, [rax + 2]
        vinserti64x4 zmm16, zmm16, [r10 + 2], 1
        vpxord  zmm16, zmm16, zmm12
        vmovdqu8 ymm17, [r11 + 2]
        vinserti64x4 zmm17, zmm17, [rbx + 2], 1
        vpxord  zmm17, zmm17, zmm12
        vpbroadcastw xmm18, word ptr [rax]
        vpinsrw xmm18, xmm18, word ptr [r10], 1
        vcvtph2ps xmm18, xmm18
        vpermps zmm18, zmm13, zmm18
        vpbroadcastw xmm19, word ptr [r11]
        vpinsrw xmm19, xmm19, word ptr [rbx], 1
        vcvtph2ps xmm19, xmm19
        vpermps zmm19, zmm13, zmm19
        .irp t, 0, 1, 2, 3, 4, 5
        .if \t < \T
        XLOAD   \t
        XPAIR   0, %(2 * \t)
        XPAIR   1, %(2 * \t + 1)
        .endif
        .endr
        add     rax, 34
        add     r10, 34
        add     r11, 34
        add     rbx, 34
        add     r15, 34
        add     r12, 34
        dec     r13
        jnz     2b
4:      mov     rdi, CG
        .irp t, 0, 1, 2, 3, 4, 5
        .if \t < \T
        XFOLD   %(2 * \t), %(2 * \t + 1)
        .endif
        .endr
.endm

        .text
        .altmacro
PG_FUNC(pg_q8_0_q8_0_gemm_4x6_avx512vnni)
        push    rbx
        push    rbp
        push    r12
        push    r13
        push    r14
        push    r15
        sub     rsp, 56
        mov     rbp, [rsp + 112]        /* ldx: rbp from here */
        mov     LDX, rbp
        mov     rax, [rsp + 128]
        shl     rax, 2
        mov     LDC, rax
        mov     MM, rdi
        mov     rax, [rsp + 120]
        mov     CW, rax                 /* C at (0, n) of the W group */
        shr     rdx, 5                  /* blocks per row */
        mov     eax, 0x80808080
        vpbroadcastd zmm12, eax
        vmovdqu64 zmm13, [rip + q8g_idx01]
.Lq8g_wgroup:
        test    rsi, rsi
        jz      .Lq8g_done
        /* k1: the rows of this W group that exist */
        mov     eax, 15
        cmp     rsi, 4
        jae     3f
        mov     eax, 1
        mov     rdi, rcx
        mov     ecx, esi
        shl     eax, cl
        dec     eax
        mov     rcx, rdi
3:      kmovw   k1, eax
        mov     r14, MM
        mov     XG, r9
        mov     rax, CW
        mov     CG, rax
.Lq8g_xgroup:
        cmp     r14, 6
        jb      .Lq8g_xtail
        XGROUP  6
        lea     rax, [rbp + rbp*2]
        add     rax, rax
        add     XG, rax
        mov     rax, LDC
        imul    rax, rax, 6
        add     CG, rax
        sub     r14, 6
        jmp     .Lq8g_xgroup
.Lq8g_xtail:
        cmp     r14, 1
        je      .Lq8g_t1
        cmp     r14, 2
        je      .Lq8g_t2
        cmp     r14, 3
        je      .Lq8g_t3
        cmp     r14, 4
        je      .Lq8g_t4
        cmp     r14, 5
        je      .Lq8g_t5
        jmp     .Lq8g_wnext
.Lq8g_t1:
        XGROUP  1
        jmp     .Lq8g_wnext
.Lq8g_t2:
        XGROUP  2
        jmp     .Lq8g_wnext
.Lq8g_t3:
        XGROUP  3
        jmp     .Lq8g_wnext
.Lq8g_t4:
        XGROUP  4
        jmp     .Lq8g_wnext
.Lq8g_t5:
        XGROUP  5
.Lq8g_wnext:
        /* the next four W rows, C four columns on */
        add     qword ptr CW, 16
        lea     rcx, [rcx + r8*4]
        cmp     rsi, 4
        jbe     .Lq8g_done
        sub     rsi, 4
        jmp     .Lq8g_wgroup
.Lq8g_done:
        vzeroupper
        add     rsp, 56
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbp
        pop     rbx
        ret
PG_ENDFUNC(pg_q8_0_q8_0_gemm_4x6_avx512vnni)

        PG_RODATA
        .p2align 6
q8g_idx01:
        .rept 8
        .long 0
        .endr
        .rept 8
        .long 1
        .endr

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

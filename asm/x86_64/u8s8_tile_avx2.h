/* u8s8_tile_avx2.h - the frame, the row pointers and the epilogue of the
 * 6x32 u8s8 kernels of the AVX2 class (u8s8_gemm_6x32_avxvnni.S,
 * u8s8_gemm_6x32_avx2.S, u8s8_gemm_6x32_avx2_maddubs.S), which differ only in
 * their products.
 *
 * U8S8_ENTER frame: the frame below (rbp, rbx, r12-r15 pushed, rsp
 * 32-aligned under \frame bytes) and the six A rows in rcx, r10, r11,
 * r12, r13, r14 (rows past mr alias row 0; lda in r8).  U8S8_LEAVE: back.
 *
 * U8S8_HALF: the products of the kernels that take the packed groups as
 * they are (below).
 *
 * U8S8_EPILOGUE_6x32, from the tile's int32 products (gemm_u8s8.h's
 * epilogue, bit exact with the C reference):
 *   - the F32 mode over a whole panel (nr = 32, the driver's every tile but
 *     a product's last) in vectors: q = acc - a_zero[i] col_sum
 *     (- row_corr[i] b_zero) by vpmulld, y = cvt(q) * (a_scale[i] * b_scale)
 *     (+ bias);
 *   - the other modes and edge tiles (no opmasks in AVX2) one element at a
 *     time in scalar code: zero points, then I32, or F32 (+ bias), or
 *     rounded to nearest even (vroundss, MXCSR's mode), clamped, stored as
 *     U8 / S8.
 *
 * It reads U8S8_ENTER's frame: the stack arguments c, ldc, ep at ARG_C,
 * ARG_LDC, ARG_EP, the 6 x 32 int32 products at [rsp] (row stride 128
 * bytes) and 32 bytes of slots at [rsp + 768] (so \frame >= 800).  On
 * entry rdi = mr, rsi = nr; every general register but rbp and rsp is
 * clobbered, and the macro ends by jumping to (or falling through to)
 * \done. */
#ifndef PG_U8S8_TILE_AVX2_H
#define PG_U8S8_TILE_AVX2_H

/* The products of the kernels that read the packed groups as they are
 * (4 k x 8 columns a dword lane: avxvnni, avx2_maddubs): U8S8_HALF off, rows
 * runs one half of the tile, 16 columns, over the whole k (r15 groups of 4 k,
 * the panel at r9 + off) into the products buffer, on the kernel's own
 * ROW ra, a0, a1, t, u macro: row ra's 4 bytes at ra + rax + 4 u against
 * B's two vectors ymm12, ymm13, added into a0 / a1 (t: ymm14 or ymm15 in
 * turn, free for it).  12 accumulators ymm0-ymm11 (row r in ymm[2r],
 * ymm[2r+1]); rax, rbx and rdx are clobbered. */
/* group u of 4 k for the first \rows rows (2, 4 or 6): B at rdx + 128 u,
 * A at row + rax + 4 u */
.macro U8S8_GROUP rows, u
        vmovdqu ymm12, [rdx + 128 * \u]
        vmovdqu ymm13, [rdx + 128 * \u + 32]
        ROW     rcx, ymm0, ymm1, ymm14, \u
        ROW     r10, ymm2, ymm3, ymm15, \u
.if \rows > 2
        ROW     r11, ymm4, ymm5, ymm14, \u
        ROW     r12, ymm6, ymm7, ymm15, \u
.endif
.if \rows > 4
        ROW     r13, ymm8, ymm9, ymm14, \u
        ROW     r14, ymm10, ymm11, ymm15, \u
.endif
.endm

/* one half: the panel from r9 + \off (r9 kept), the buffer columns at \off;
 * two groups an iteration, over the first \rows rows (the others stay 0) */
.macro U8S8_HALF off, rows
        vpxor   ymm0, ymm0, ymm0
        vpxor   ymm1, ymm1, ymm1
        vpxor   ymm2, ymm2, ymm2
        vpxor   ymm3, ymm3, ymm3
        vpxor   ymm4, ymm4, ymm4
        vpxor   ymm5, ymm5, ymm5
        vpxor   ymm6, ymm6, ymm6
        vpxor   ymm7, ymm7, ymm7
        vpxor   ymm8, ymm8, ymm8
        vpxor   ymm9, ymm9, ymm9
        vpxor   ymm10, ymm10, ymm10
        vpxor   ymm11, ymm11, ymm11
        lea     rdx, [r9 + \off]
        xor     eax, eax
        mov     rbx, r15
        shr     rbx, 1
        jz      4f
        .p2align 4
1:      U8S8_GROUP \rows, 0
        U8S8_GROUP \rows, 1
        add     rax, 8
        add     rdx, 256
        dec     rbx
        jnz     1b
4:      test    r15, 1
        jz      2f
        U8S8_GROUP \rows, 0
2:      vmovdqa [rsp + \off], ymm0
        vmovdqa [rsp + \off + 32], ymm1
        vmovdqa [rsp + \off + 128], ymm2
        vmovdqa [rsp + \off + 160], ymm3
        vmovdqa [rsp + \off + 256], ymm4
        vmovdqa [rsp + \off + 288], ymm5
        vmovdqa [rsp + \off + 384], ymm6
        vmovdqa [rsp + \off + 416], ymm7
        vmovdqa [rsp + \off + 512], ymm8
        vmovdqa [rsp + \off + 544], ymm9
        vmovdqa [rsp + \off + 640], ymm10
        vmovdqa [rsp + \off + 672], ymm11
.endm


/* both halves (the second only for nr > 16) over the first \rows rows */
.macro U8S8_HALVES rows
        U8S8_HALF 0, \rows
        cmp     rsi, 16
        jbe     3f
        U8S8_HALF 64, \rows
3:
.endm

/* The whole tile of such a kernel, between its PG_FUNC and PG_ENDFUNC
 * (the products, the epilogue, the return; \done a label of its own).
 * A tile of at most 4 (2) rows runs the products without rows 4-5 (2-5),
 * which the epilogue would not store: M = 128 ends in a 2-row tile. */
.macro U8S8_HALVES_TILE done
        U8S8_ENTER 832
        mov     r15, rdx
        shr     r15, 2                          /* groups of 4 k */
        cmp     rdi, 4
        ja      6f
        cmp     rdi, 2
        ja      5f
        U8S8_HALVES 2
        jmp     7f
5:      U8S8_HALVES 4
        jmp     7f
6:      U8S8_HALVES 6
7:
        U8S8_EPILOGUE_6x32 \done
\done:  U8S8_LEAVE
.endm


#define ARG_C   [rbp + 16]
#define ARG_LDC [rbp + 24]
#define ARG_EP  [rbp + 32]
#define S_LDC  qword ptr [rsp + 768]
#define S_MODE dword ptr [rsp + 776]
#define S_OZ   dword ptr [rsp + 780]
#define S_LO   dword ptr [rsp + 784]
#define S_HI   dword ptr [rsp + 788]

.macro U8S8_ENTER frame
        push    rbp
        mov     rbp, rsp
        push    rbx
        push    r12
        push    r13
        push    r14
        push    r15
        sub     rsp, \frame
        and     rsp, -32
        /* the rows: rcx, r10, r11, r12, r13, r14 (past mr: row 0) */
        PG_NEXT_ROW r10, rcx, rcx, 2
        PG_NEXT_ROW r11, r10, rcx, 3
        PG_NEXT_ROW r12, r11, rcx, 4
        PG_NEXT_ROW r13, r12, rcx, 5
        PG_NEXT_ROW r14, r13, rcx, 6
.endm

.macro U8S8_LEAVE
        vzeroupper
        lea     rsp, [rbp - 40]
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbx
        pop     rbp
        ret
.endm

/* the vector F32 epilogue of 8 columns c of the buffer row rax (ymm15 the
 * row's broadcast value; ymm0-ymm3 q / y, ymm4-ymm7 temporaries) */
.macro VQ c
        vmovdqa ymm\c, [rax + 32 * \c]
        vpmulld ymm4, ymm15, [r11 + 32 * \c]
        vpsubd  ymm\c, ymm\c, ymm4              /* - a_zero col_sum */
.endm
.macro VBZ c
        vpmulld ymm4, ymm15, [r14 + 32 * \c]
        vpsubd  ymm\c, ymm\c, ymm4              /* - row_corr b_zero */
.endm
.macro VDEQ c
        vmulps  ymm4, ymm15, [r12 + 32 * \c]    /* a_scale b_scale */
        vcvtdq2ps ymm\c, ymm\c
        vmulps  ymm\c, ymm\c, ymm4
        test    r13, r13
        jz      8f
        vaddps  ymm\c, ymm\c, [r13 + 32 * \c]
8:      vmovups [rbx + 32 * \c], ymm\c
.endm

.macro U8S8_EPILOGUE_6x32 done
        /* rsi nr, rdi rows left; r8 a_zero, r9 a_scale, r10 row_corr (each
         * walks a row); r11 col_sum, r12 b_scale, r13 bias, r14 b_zero; rbx
         * the C row, rdx the column, rax the buffer row; r15, rcx
         * temporaries; xmm6 out_inv_scale, xmm7 / xmm8 +-1e9 (scalar: xmm0
         * xmm1; vectors: ymm0-ymm4, ymm15); in memory: ldc in bytes, the
         * mode, out_zero, the clamp bounds */
        mov     r15, ARG_EP
        mov     r8, [r15]
        mov     r9, [r15 + 8]
        mov     r11, [r15 + 16]
        mov     r12, [r15 + 24]
        mov     r13, [r15 + 32]
        mov     r14, [r15 + 40]
        mov     r10, [r15 + 48]
        vmovss  xmm6, dword ptr [r15 + 56]
        vmovss  xmm7, dword ptr [rip + .Lu8s8_big]
        vmovss  xmm8, dword ptr [rip + .Lu8s8_nbig]
        mov     eax, dword ptr [r15 + 60]
        mov     S_OZ, eax
        mov     eax, dword ptr [r15 + 64]
        mov     S_MODE, eax
        mov     S_LO, 0
        mov     S_HI, 255
        cmp     eax, 3
        jne     1f
        mov     S_LO, -128
        mov     S_HI, 127
1:      mov     rcx, ARG_LDC
        cmp     eax, 2
        jae     2f
        shl     rcx, 2
2:      mov     S_LDC, rcx
        mov     rbx, ARG_C
        mov     rax, rsp
        cmp     S_MODE, 0                       /* F32 over whole panels: vectors */
        jne     .Lrow
        cmp     rsi, 32
        jne     .Lrow
.Lvrow: vpbroadcastd ymm15, dword ptr [r8]
        VQ      0
        VQ      1
        VQ      2
        VQ      3
        test    r14, r14
        jz      7f
        vpbroadcastd ymm15, dword ptr [r10]
        VBZ     0
        VBZ     1
        VBZ     2
        VBZ     3
7:      vbroadcastss ymm15, dword ptr [r9]
        VDEQ    0
        VDEQ    1
        VDEQ    2
        VDEQ    3
        add     rax, 128
        add     rbx, S_LDC
        add     r8, 4
        add     r9, 4
        add     r10, 4
        dec     rdi
        jnz     .Lvrow
        jmp     \done
.Lrow:  xor     edx, edx
.Lcol:  mov     r15d, dword ptr [rax + rdx * 4]
        mov     ecx, dword ptr [r11 + rdx * 4]
        imul    ecx, dword ptr [r8]
        sub     r15d, ecx                       /* - a_zero col_sum */
        test    r14, r14
        jz      3f
        mov     ecx, dword ptr [r14 + rdx * 4]
        imul    ecx, dword ptr [r10]
        sub     r15d, ecx                       /* - b_zero row_corr */
3:      cmp     S_MODE, 1
        jne     4f
        mov     dword ptr [rbx + rdx * 4], r15d
        jmp     .Lnext
4:      vmovss  xmm1, dword ptr [r9]
        vmulss  xmm1, xmm1, dword ptr [r12 + rdx * 4]
        vcvtsi2ss xmm0, xmm0, r15d
        vmulss  xmm0, xmm0, xmm1
        test    r13, r13
        jz      5f
        vaddss  xmm0, xmm0, dword ptr [r13 + rdx * 4]
5:      cmp     S_MODE, 0
        jne     6f
        vmovss  dword ptr [rbx + rdx * 4], xmm0
        jmp     .Lnext
6:      vmulss  xmm0, xmm0, xmm6
        vroundss xmm0, xmm0, xmm0, 4
        vminss  xmm0, xmm0, xmm7
        vmaxss  xmm0, xmm0, xmm8
        vcvttss2si r15d, xmm0
        add     r15d, S_OZ
        cmp     r15d, S_LO
        cmovl   r15d, S_LO
        cmp     r15d, S_HI
        cmovg   r15d, S_HI
        mov     byte ptr [rbx + rdx], r15b
.Lnext: inc     rdx
        cmp     rdx, rsi
        jb      .Lcol
        add     rax, 128
        add     rbx, S_LDC
        add     r8, 4
        add     r9, 4
        add     r10, 4
        dec     rdi
        jnz     .Lrow
.endm

/* its constants, inside PG_RODATA */
.macro U8S8_EPILOGUE_CONSTS
        .p2align 2
.Lu8s8_big:  .float 1.0e9
.Lu8s8_nbig: .float -1.0e9
.endm

#endif

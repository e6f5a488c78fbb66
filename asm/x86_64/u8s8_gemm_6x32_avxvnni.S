/* u8s8_gemm_6x32_avxvnni.S - one 6x32 tile of C = epilogue(A_u8 . B_s8)
 * with AVX-VNNI (vpdpbusd ymm, VEX encoded): the avxvnni level (CPUs with
 * AVX-VNNI and no AVX-512).
 *
 * The tile runs as two halves of 16 columns (the second only when
 * nr > 16), each over the whole k: 12 accumulators ymm0-ymm11 (row r in
 * ymm[2r], ymm[2r+1]: 8 columns each), per group of 4 k the half's 64
 * bytes of the packed panel's 128-byte group (ymm12, ymm13) and 4 bytes
 * of each A row broadcast (ymm14 / ymm15 in turn): 12 vpdpbusd on 8 loads
 * (12 chains cover the instruction's latency at two a cycle; the 2x32
 * tile this replaces had 8 and a scalar epilogue everywhere: 40% of the
 * ymm peak).  A row past mr aliases row 0.  The halves go to a 6 x 32
 * int32 buffer on the stack.
 *
 * Epilogue (gemm_u8s8.h), from the buffer: the F32 mode over a whole
 * panel (nr = 32, the driver's every tile but a product's last) in
 * vectors - q = acc - a_zero[i] col_sum (- row_corr[i] b_zero) by vpmulld,
 * y = cvt(q) * (a_scale[i] * b_scale) (+ bias); the other modes and edge
 * tiles (no opmasks in AVX2) one element at a time in scalar code.  Both
 * are the C reference's operations in its order, so the result is bit
 * exact: zero points, then I32, or F32 (+ bias), or rounded to nearest
 * even (vroundss, MXCSR's mode), clamped, stored as U8 / S8.
 *
 * void pg_u8s8_gemm_6x32_avxvnni(size_t mr, size_t nr, size_t k,
 *          rdi       rsi        rdx
 *          const uint8_t *a, size_t lda, const int8_t *b, void *c,
 *          rcx               r8          r9              [rbp+16]
 *          size_t ldc, const pg_u8s8_epilogue *ep);
 *          [rbp+24]    [rbp+32]                                          */
#include "pg_asm.h"

#define ARG_C   [rbp + 16]
#define ARG_LDC [rbp + 24]
#define ARG_EP  [rbp + 32]

/* one A row (at \ra + rax + 4 u) against the half's 16 columns */
.macro ROW ra, a0, a1, t, u
        vpbroadcastd \t, dword ptr [\ra + rax + 4 * \u]
        {vex} vpdpbusd \a0, \t, ymm12
        {vex} vpdpbusd \a1, \t, ymm13
.endm

/* group u of 4 k: B at rdx + 128 u, A at row + rax + 4 u */
.macro GROUP u
        vmovdqu ymm12, [rdx + 128 * \u]
        vmovdqu ymm13, [rdx + 128 * \u + 32]
        ROW     rcx, ymm0, ymm1, ymm14, \u
        ROW     r10, ymm2, ymm3, ymm15, \u
        ROW     r11, ymm4, ymm5, ymm14, \u
        ROW     r12, ymm6, ymm7, ymm15, \u
        ROW     r13, ymm8, ymm9, ymm14, \u
        ROW     r14, ymm10, ymm11, ymm15, \u
.endm

/* one half: the panel from r9 + \off (r9 kept), the buffer columns at \off;
 * two groups an iteration */
.macro HALF off
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
1:      GROUP   0
        GROUP   1
        add     rax, 8
        add     rdx, 256
        dec     rbx
        jnz     1b
4:      test    r15, 1
        jz      2f
        GROUP   0
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

        .text
PG_FUNC(pg_u8s8_gemm_6x32_avxvnni)
        push    rbp
        mov     rbp, rsp
        push    rbx
        push    r12
        push    r13
        push    r14
        push    r15
        sub     rsp, 832
        and     rsp, -32

        /* the rows: rcx, r10, r11, r12, r13, r14 (past mr: row 0) */
        lea     r10, [rcx + r8]
        cmp     rdi, 2
        cmovb   r10, rcx
        lea     r11, [r10 + r8]
        cmp     rdi, 3
        cmovb   r11, rcx
        lea     r12, [r11 + r8]
        cmp     rdi, 4
        cmovb   r12, rcx
        lea     r13, [r12 + r8]
        cmp     rdi, 5
        cmovb   r13, rcx
        lea     r14, [r13 + r8]
        cmp     rdi, 6
        cmovb   r14, rcx
        mov     r15, rdx
        shr     r15, 2                          /* groups of 4 k */
        HALF    0
        cmp     rsi, 16
        jbe     3f
        HALF    64
3:
        /* rsi nr, rdi rows left; r8 a_zero, r9 a_scale, r10 row_corr (each
         * walks a row); r11 col_sum, r12 b_scale, r13 bias, r14 b_zero; rbx
         * the C row, rdx the column, rax the buffer row; r15, rcx
         * temporaries; xmm6 out_inv_scale, xmm7 / xmm8 +-1e9 (scalar: xmm0
         * xmm1; vectors: ymm0-ymm4, ymm15); in memory: ldc in bytes, the
         * mode, out_zero, the clamp bounds */
#define S_LDC  qword ptr [rsp + 768]
#define S_MODE dword ptr [rsp + 776]
#define S_OZ   dword ptr [rsp + 780]
#define S_LO   dword ptr [rsp + 784]
#define S_HI   dword ptr [rsp + 788]
        mov     r15, ARG_EP
        mov     r8, [r15]
        mov     r9, [r15 + 8]
        mov     r11, [r15 + 16]
        mov     r12, [r15 + 24]
        mov     r13, [r15 + 32]
        mov     r14, [r15 + 40]
        mov     r10, [r15 + 48]
        vmovss  xmm6, dword ptr [r15 + 56]
        vmovss  xmm7, dword ptr [rip + big]
        vmovss  xmm8, dword ptr [rip + nbig]
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
        jmp     .Lout
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
.Lout:  vzeroupper
        lea     rsp, [rbp - 40]
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbx
        pop     rbp
        ret
PG_ENDFUNC(pg_u8s8_gemm_6x32_avxvnni)

        PG_RODATA
        .p2align 2
big:    .float 1.0e9
nbig:   .float -1.0e9

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

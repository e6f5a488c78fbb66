/* u8s8_gemm_2x32_avxvnni.S - one 2x32 tile of C = epilogue(A_u8 . B_s8)
 * with AVX-VNNI (vpdpbusd ymm, VEX encoded): the avxvnni level (CPUs with
 * AVX-VNNI and no AVX-512).
 *
 * The accumulators ymm0-ymm3 / ymm4-ymm7 hold rows 0 / 1 (32 int32
 * lanes each); each group of 4 k loads the 128-byte group of the packed
 * panel (ymm8-ymm11: 32 columns x 4 bytes) and broadcasts 4 bytes of each
 * A row (ymm12, ymm13): 8 vpdpbusd.  A row past mr aliases row 0.  Without
 * opmasks the epilogue runs from a buffer on the stack, one element at a
 * time in scalar code - the C reference's operations in its order, so the
 * result is bit exact: zero points, then I32, or F32 (+ bias), or rounded
 * to nearest even (vroundss, MXCSR's mode), clamped, stored as U8 / S8.
 *
 * void pg_u8s8_gemm_2x32_avxvnni(size_t mr, size_t nr, size_t k,
 *          rdi       rsi        rdx
 *          const uint8_t *a, size_t lda, const int8_t *b, void *c,
 *          rcx               r8          r9              [rbp+16]
 *          size_t ldc, const pg_u8s8_epilogue *ep);
 *          [rbp+24]    [rbp+32]                                          */
#include "pg_asm.h"

#define ARG_C   [rbp + 16]
#define ARG_LDC [rbp + 24]
#define ARG_EP  [rbp + 32]

        .text
PG_FUNC(pg_u8s8_gemm_2x32_avxvnni)
        push    rbp
        mov     rbp, rsp
        push    rbx
        push    r12
        push    r13
        push    r14
        push    r15
        sub     rsp, 320
        and     rsp, -32

        lea     r10, [rcx + r8]                 /* row 1 */
        cmp     rdi, 2
        cmovb   r10, rcx
        vpxor   ymm0, ymm0, ymm0
        vpxor   ymm1, ymm1, ymm1
        vpxor   ymm2, ymm2, ymm2
        vpxor   ymm3, ymm3, ymm3
        vpxor   ymm4, ymm4, ymm4
        vpxor   ymm5, ymm5, ymm5
        vpxor   ymm6, ymm6, ymm6
        vpxor   ymm7, ymm7, ymm7
        shr     rdx, 2
        jz      2f
        .p2align 4
1:      vmovdqu ymm8, [r9]
        vmovdqu ymm9, [r9 + 32]
        vmovdqu ymm10, [r9 + 64]
        vmovdqu ymm11, [r9 + 96]
        vpbroadcastd ymm12, dword ptr [rcx]
        vpbroadcastd ymm13, dword ptr [r10]
        {vex} vpdpbusd ymm0, ymm12, ymm8
        {vex} vpdpbusd ymm1, ymm12, ymm9
        {vex} vpdpbusd ymm2, ymm12, ymm10
        {vex} vpdpbusd ymm3, ymm12, ymm11
        {vex} vpdpbusd ymm4, ymm13, ymm8
        {vex} vpdpbusd ymm5, ymm13, ymm9
        {vex} vpdpbusd ymm6, ymm13, ymm10
        {vex} vpdpbusd ymm7, ymm13, ymm11
        add     rcx, 4
        add     r10, 4
        add     r9, 128
        dec     rdx
        jnz     1b
2:      vmovdqa [rsp], ymm0
        vmovdqa [rsp + 32], ymm1
        vmovdqa [rsp + 64], ymm2
        vmovdqa [rsp + 96], ymm3
        vmovdqa [rsp + 128], ymm4
        vmovdqa [rsp + 160], ymm5
        vmovdqa [rsp + 192], ymm6
        vmovdqa [rsp + 224], ymm7
        vzeroupper

        /* rsi nr, rdi rows left; r8 a_zero, r9 a_scale, r10 row_corr (each
         * walks a row); r11 col_sum, r12 b_scale, r13 bias, r14 b_zero; rbx
         * the C row, rdx the column, rax the buffer row; r15, rcx
         * temporaries; xmm6 out_inv_scale, xmm7 / xmm8 +-1e9; in memory:
         * ldc in bytes, the mode, out_zero, the clamp bounds */
#define S_LDC  qword ptr [rsp + 256]
#define S_MODE dword ptr [rsp + 264]
#define S_OZ   dword ptr [rsp + 268]
#define S_LO   dword ptr [rsp + 272]
#define S_HI   dword ptr [rsp + 276]
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
        lea     rsp, [rbp - 40]
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbx
        pop     rbp
        ret
PG_ENDFUNC(pg_u8s8_gemm_2x32_avxvnni)

        PG_RODATA
        .p2align 2
big:    .float 1.0e9
nbig:   .float -1.0e9

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

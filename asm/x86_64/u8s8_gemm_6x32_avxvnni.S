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
 * Epilogue: u8s8_tile_avx2.h, from the buffer (shared with the avx2
 * kernel).
 *
 * void pg_u8s8_gemm_6x32_avxvnni(size_t mr, size_t nr, size_t k,
 *          rdi       rsi        rdx
 *          const uint8_t *a, size_t lda, const int8_t *b, void *c,
 *          rcx               r8          r9              [rbp+16]
 *          size_t ldc, const pg_u8s8_epilogue *ep);
 *          [rbp+24]    [rbp+32]                                          */
#include "pg_asm.h"
#include "u8s8_tile_avx2.h"

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

        .text
PG_FUNC(pg_u8s8_gemm_6x32_avxvnni)
        U8S8_ENTER 832

        mov     r15, rdx
        shr     r15, 2                          /* groups of 4 k */
        HALF    0
        cmp     rsi, 16
        jbe     3f
        HALF    64
3:
        U8S8_EPILOGUE_6x32 .Lout
.Lout:  U8S8_LEAVE
PG_ENDFUNC(pg_u8s8_gemm_6x32_avxvnni)

        PG_RODATA
        U8S8_EPILOGUE_CONSTS

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

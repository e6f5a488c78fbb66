/* k_gemm_16x8_avx512vnni.S - the prefill microkernel of the quantised
 * weight types over a packed weight panel (kquant_panel.c): sixteen rows of
 * W (lanes) by eight rows of X (registers),
 *
 *     C[t * ldc + n] (+)= sum_b dx[t][b] scf[b][n] idot_b(n, t) - off[b][n] sx[t][b]
 *
 * for blocks b of S elements (S = 32: q4_K, q5_K, q4_0, q8_0; S = 16:
 * q6_K).  idot_b is the exact int32 dot of the panel's unsigned quants
 * with X's signed q8 quants over the block: one vpdpbusd per four
 * elements and sixteen rows, the four bytes of X broadcast from memory
 * (X is read in place, q8_K or q8_0 rows at stride ldx; xoff[b] is the
 * byte offset of block b's quants in a row).  Each weight load serves the
 * eight rows of X.  The per-block scales are applied in fp32 after the
 * block: (float)idot * (scf * dx) with one FMA, then the block's offset
 * term (q4_K / q5_K minima, q6_K's -32) as a second FMA ("f" kernels), or
 * an int32 subtraction first (q4_0's -8, q8_0's +128 bias: "i" kernels,
 * the table holding the offset times the block's sum of X).
 *
 * Panel block b: S / 4 zmm of quants (zmm k = elements 4k .. 4k + 3 of the
 * sixteen rows, row r at bytes 4r), then scf[16] f32, then off[16] f32
 * ("f" only).  Table block b (tab, 64 bytes): dx[8] f32, then sx[8] (f32
 * for "f", int32 for "i").
 *
 * void pg_kq_ukr_16x8_<s32f|s16f|s32i>_avx512vnni(size_t nb,
 *         rdi
 *         const uint8_t *panel, const uint8_t *X, size_t ldx, const uint32_t *xoff,
 *         rsi                   rdx               rcx          r8
 *         const void *tab, float *C, size_t ldc, uint64_t ctl)
 *         r9               [rsp+8]   [rsp+16]    [rsp+24]
 *
 * ctl: bits 0-15 the rows of the panel to store (a k-mask), bits 16-19
 * t0: rows t < t0 of X are computed but not stored, bit 20: add to C
 * instead of storing.  nb >= 1.
 *
 * Registers: zmm0-7 the eight fp32 sums, zmm8-15 the block's int32 dots,
 * zmm16 the panel's quants, zmm17 scf, zmm18 off, zmm19 scratch; rbx
 * 7 ldx, r10 3 ldx, r11 5 ldx, r15 X + xoff[b], rax scratch.
 */
#include "pg_asm.h"

#define XT0 r15
#define XT1 r15 + rcx
#define XT2 r15 + rcx*2
#define XT3 r15 + r10
#define XT4 r15 + rcx*4
#define XT5 r15 + r11
#define XT6 r15 + r10*2
#define XT7 r15 + rbx

.macro DOT4 k
        vmovdqa64 zmm16, [rsi + 64*\k]
        vpdpbusd zmm8, zmm16, dword ptr [XT0 + 4*\k]{1to16}
        vpdpbusd zmm9, zmm16, dword ptr [XT1 + 4*\k]{1to16}
        vpdpbusd zmm10, zmm16, dword ptr [XT2 + 4*\k]{1to16}
        vpdpbusd zmm11, zmm16, dword ptr [XT3 + 4*\k]{1to16}
        vpdpbusd zmm12, zmm16, dword ptr [XT4 + 4*\k]{1to16}
        vpdpbusd zmm13, zmm16, dword ptr [XT5 + 4*\k]{1to16}
        vpdpbusd zmm14, zmm16, dword ptr [XT6 + 4*\k]{1to16}
        vpdpbusd zmm15, zmm16, dword ptr [XT7 + 4*\k]{1to16}
.endm

/* fold block dots zmm(8+t) into the sums zmm(t) */
.macro FOLD t, i, mode
.if \mode == 1
        vpsubd  zmm\i, zmm\i, dword ptr [r9 + 32 + 4*\t]{1to16}
.endif
        vcvtdq2ps zmm\i, zmm\i
        vmulps  zmm19, zmm17, dword ptr [r9 + 4*\t]{1to16}
        vfmadd231ps zmm\t, zmm\i, zmm19
.if \mode == 0
        vfnmadd231ps zmm\t, zmm18, dword ptr [r9 + 32 + 4*\t]{1to16}
.endif
.endm

.macro STORE t
        cmp     r14, \t
        ja      7f
        test    r13d, 0x100000
        jz      6f
        vaddps  zmm\t {k1}{z}, zmm\t, [rax]
6:      vmovups [rax] {k1}, zmm\t
7:      add     rax, r12
.endm

/* mode 0: float offsets, 1: int32 offsets */
.macro KUKR name, S, mode
PG_FUNC(\name)
        push    rbx
        push    r12
        push    r13
        push    r14
        push    r15
        lea     r10, [rcx + rcx*2]
        lea     r11, [rcx + rcx*4]
        lea     rbx, [r10 + rcx*4]
        .irp r, 0, 1, 2, 3, 4, 5, 6, 7
        vpxord  zmm\r, zmm\r, zmm\r
        .endr
1:      mov     eax, [r8]
        lea     r15, [rdx + rax]
        add     r8, 4
        .irp r, 8, 9, 10, 11, 12, 13, 14, 15
        vpxord  zmm\r, zmm\r, zmm\r
        .endr
.if \S == 32
        .irp k, 0, 1, 2, 3, 4, 5, 6, 7
        DOT4    \k
        .endr
.else
        .irp k, 0, 1, 2, 3
        DOT4    \k
        .endr
.endif
        vmovaps zmm17, [rsi + 16*\S]
.if \mode == 0
        vmovaps zmm18, [rsi + 16*\S + 64]
.endif
        FOLD    0, 8, \mode
        FOLD    1, 9, \mode
        FOLD    2, 10, \mode
        FOLD    3, 11, \mode
        FOLD    4, 12, \mode
        FOLD    5, 13, \mode
        FOLD    6, 14, \mode
        FOLD    7, 15, \mode
.if \mode == 0
        add     rsi, 16*\S + 128
.else
        add     rsi, 16*\S + 64
.endif
        add     r9, 64
        dec     rdi
        jnz     1b

        mov     rax, [rsp + 48]
        mov     r12, [rsp + 56]
        shl     r12, 2
        mov     r13, [rsp + 64]
        kmovw   k1, r13d
        mov     r14, r13
        shr     r14, 16
        and     r14, 15
        STORE   0
        STORE   1
        STORE   2
        STORE   3
        STORE   4
        STORE   5
        STORE   6
        STORE   7
        vzeroupper
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbx
        ret
PG_ENDFUNC(\name)
.endm

        .text
KUKR pg_kq_ukr_16x8_s32f_avx512vnni, 32, 0
KUKR pg_kq_ukr_16x8_s16f_avx512vnni, 16, 0
KUKR pg_kq_ukr_16x8_s32i_avx512vnni, 32, 1

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

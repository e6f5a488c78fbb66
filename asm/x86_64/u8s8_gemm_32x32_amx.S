/* u8s8_gemm_32x32_amx.S - one 32x32 tile of C = epilogue(A_u8 . B_s8) on
 * the AMX tile unit (TDPBUSD: u8 x s8 products summed into int32).
 *
 * bf16_gemm_32x32_amx.S's tiling with bytes for bf16 pairs: tmm0..tmm3 the
 * four 16x16 int32 quarters of C, tmm4 / tmm5 A's rows 0-15 / 16-31 (16
 * rows x 64 bytes of k), tmm6 / tmm7 the two 16-column halves of 16
 * 4-byte rows of the packed panel (gemm_u8s8's layout read in place: a
 * panel's groups are 128 bytes, so a B tile is 16 rows of 64 bytes at
 * stride 128; configured by amx_tiles.h, and left so on return).  Each
 * step takes 64 k.  The products go to a 32 x 32 int32
 * buffer on the stack; the k % 64 left (a multiple of 4: the packed K is
 * padded to 4 only, the layout every gemm_u8s8 variant shares) are added
 * row by row with vpdpbusd from that buffer, then each row gets the
 * epilogue of u8s8_gemm_12x32_avx512vnni.S (zero points, dequantise,
 * requantise; the same operations in the same order as the C reference,
 * so the result is bit exact) and a masked store of its nr columns.
 *
 * void pg_u8s8_gemm_32x32_amx(size_t mr, size_t nr, size_t k,
 *          rdi       rsi        rdx
 *          const uint8_t *a, size_t lda, const int8_t *b, void *c,
 *          rcx               r8          r9              [rbp+16]
 *          size_t ldc, const pg_u8s8_epilogue *ep);
 *          [rbp+24]    [rbp+32]                                          */
#include "pg_asm.h"
#include "amx_tiles.h"

#define ARG_C   [rbp + 16]
#define ARG_LDC [rbp + 24]
#define ARG_EP  [rbp + 32]
#define BUF     64
#define SLOT_T  [rsp + 4160]            /* tail bytes of k */
#define SLOT_B  [rsp + 4168]            /* B at the tail */
#define SLOT_L  [rsp + 4176]            /* lda */

/* Epilogue registers: rsi a_zero, r10 a_scale, rdx row_corr (each walks a
 * row at a time), r12 col_sum, r13 b_scale, rbx bias, rcx b_zero, r14 C
 * row, r15 ldc bytes, rax buffer row, rdi rows left, r8 A row at the tail;
 * zmm27 out_inv_scale, zmm28 out_zero, zmm29 / zmm30 clamp, zmm31 1e9. */

.macro ZP lo, hi
        vpbroadcastd zmm24, dword ptr [rsi]
        vpmulld zmm25{k1}{z}, zmm24, [r12]
        vpmulld zmm26{k2}{z}, zmm24, [r12 + 64]
        vpsubd  \lo, \lo, zmm25
        vpsubd  \hi, \hi, zmm26
        test    rcx, rcx
        jz      1f
        vpbroadcastd zmm24, dword ptr [rdx]
        vpmulld zmm25{k1}{z}, zmm24, [rcx]
        vpmulld zmm26{k2}{z}, zmm24, [rcx + 64]
        vpsubd  \lo, \lo, zmm25
        vpsubd  \hi, \hi, zmm26
1:
.endm

.macro DEQ lo, hi
        vcvtdq2ps \lo, \lo
        vcvtdq2ps \hi, \hi
        vbroadcastss zmm24, dword ptr [r10]
        vmulps  zmm25{k1}{z}, zmm24, [r13]
        vmulps  zmm26{k2}{z}, zmm24, [r13 + 64]
        vmulps  \lo, \lo, zmm25
        vmulps  \hi, \hi, zmm26
        test    rbx, rbx
        jz      1f
        vaddps  \lo{k1}{z}, \lo, [rbx]
        vaddps  \hi{k2}{z}, \hi, [rbx + 64]
1:
.endm

/* the row from the buffer plus the k tail: zmm0, zmm1 */
.macro LOADROW
        vmovdqu32 zmm0, [rax]
        vmovdqu32 zmm1, [rax + 64]
        mov     r9, SLOT_B
        xor     r11, r11
        cmp     qword ptr SLOT_T, 0
        je      2f
1:      vpbroadcastd zmm2, dword ptr [r8 + r11]
        vpdpbusd zmm0, zmm2, [r9]
        vpdpbusd zmm1, zmm2, [r9 + 64]
        add     r9, 128
        add     r11, 4
        cmp     r11, SLOT_T
        jb      1b
2:
.endm

.macro NEXTROW
        add     rax, 128
        add     r14, r15
        add     r8, SLOT_L
        add     rsi, 4
        add     r10, 4
        add     rdx, 4
        dec     rdi
.endm

        .text
PG_FUNC(pg_u8s8_gemm_32x32_amx)
        push    rbp
        mov     rbp, rsp
        push    rbx
        push    r12
        push    r13
        push    r14
        push    r15
        sub     rsp, 4224 + 64
        and     rsp, -64
        mov     SLOT_L, r8

        AMX_CFG_32x32                           /* rbx: rows past 16 */

        mov     rax, rdx
        and     rax, 63
        mov     SLOT_T, rax                     /* tail bytes */
        mov     r10, r8                         /* A row stride */
        mov     r11, 128
        mov     r12, r8
        shl     r12, 4
        add     r12, rcx                        /* A row 16 */
        mov     r13, rcx                        /* A row 0, for the tail */
        shr     rdx, 6
        tilezero tmm0
        tilezero tmm1
        test    rbx, rbx
        jz      .Lone
        tilezero tmm2
        tilezero tmm3
        AMX_STEPS_2x2 tdpbusd
.Lstore2:
        lea     rax, [rsp + BUF + 2048]
        tilestored [rax + r11 * 1], tmm2
        tilestored [rax + r11 * 1 + 64], tmm3
        jmp     .Lstore1
.Lone:  AMX_STEPS_1x2 tdpbusd
.Lstore1:
        lea     rax, [rsp + BUF]
        tilestored [rax + r11 * 1], tmm0
        tilestored [rax + r11 * 1 + 64], tmm1
        mov     SLOT_B, r9
        mov     r8, rcx                         /* row 0 of A at the tail */

        /* column masks */
        mov     ecx, esi
        mov     eax, 1
        shl     rax, cl
        dec     rax
        kmovd   k1, eax
        kshiftrd k2, k1, 16

        mov     r11, ARG_EP
        mov     r14, ARG_C
        mov     rsi, [r11]              /* a_zero */
        mov     r10, [r11 + 8]          /* a_scale */
        mov     r12, [r11 + 16]         /* col_sum */
        mov     r13, [r11 + 24]         /* b_scale */
        mov     rbx, [r11 + 32]         /* bias */
        mov     rcx, [r11 + 40]         /* b_zero */
        mov     rdx, [r11 + 48]         /* row_corr */
        mov     r15, ARG_LDC
        lea     rax, [rsp + BUF]
        mov     r9d, dword ptr [r11 + 64]
        cmp     r9d, 2
        jae     .Lq8
        shl     r15, 2
        cmp     r9d, 1
        je      .Li32
.Lf32:  LOADROW
        ZP      zmm0, zmm1
        DEQ     zmm0, zmm1
        vmovups [r14]{k1}, zmm0
        vmovups [r14 + 64]{k2}, zmm1
        NEXTROW
        jnz     .Lf32
        jmp     .Ldone
.Li32:  LOADROW
        ZP      zmm0, zmm1
        vmovdqu32 [r14]{k1}, zmm0
        vmovdqu32 [r14 + 64]{k2}, zmm1
        NEXTROW
        jnz     .Li32
        jmp     .Ldone
.Lq8:   vbroadcastss zmm27, dword ptr [r11 + 56]
        vpbroadcastd zmm28, dword ptr [r11 + 60]
        vbroadcastss zmm31, dword ptr [rip + big]
        vxorps  zmm3, zmm31, dword ptr [rip + sign_bit]{1to16}
        cmp     r9d, 2
        jne     .Ls8
        vpxord  zmm29, zmm29, zmm29
        vpbroadcastd zmm30, dword ptr [rip + c255]
        jmp     .Lq8row
.Ls8:   vpbroadcastd zmm29, dword ptr [rip + cm128]
        vpbroadcastd zmm30, dword ptr [rip + c127]
.Lq8row:
        LOADROW
        ZP      zmm0, zmm1
        DEQ     zmm0, zmm1
        vmulps  zmm0, zmm0, zmm27
        vmulps  zmm1, zmm1, zmm27
        vrndscaleps zmm0, zmm0, 0
        vrndscaleps zmm1, zmm1, 0
        vminps  zmm0, zmm0, zmm31
        vminps  zmm1, zmm1, zmm31
        vmaxps  zmm0, zmm0, zmm3
        vmaxps  zmm1, zmm1, zmm3
        vcvtps2dq zmm0, zmm0
        vcvtps2dq zmm1, zmm1
        vpaddd  zmm0, zmm0, zmm28
        vpaddd  zmm1, zmm1, zmm28
        vpmaxsd zmm0, zmm0, zmm29
        vpmaxsd zmm1, zmm1, zmm29
        vpminsd zmm0, zmm0, zmm30
        vpminsd zmm1, zmm1, zmm30
        vpmovdb xmm24, zmm0
        vpmovdb xmm25, zmm1
        vmovdqu8 [r14]{k1}, xmm24
        vmovdqu8 [r14 + 16]{k2}, xmm25
        NEXTROW
        jnz     .Lq8row
.Ldone:
        vzeroupper
        lea     rsp, [rbp - 40]
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbx
        pop     rbp
        ret
PG_ENDFUNC(pg_u8s8_gemm_32x32_amx)

        PG_RODATA
        AMX_CFG_TABLE
        .p2align 2
big:     .float 1.0e9
sign_bit: .long 0x80000000
c255:    .long 255
c127:    .long 127
cm128:   .long -128

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

/* bf16_gemm_32x32_amx.S - one 32x32 tile of C = A * B (+C) (+bias) (act),
 * A and B in bf16, fp32 accumulation, on the AMX tile unit (TDPBF16PS).
 *
 * Eight tiles: tmm0..tmm3 the four 16x16 fp32 quarters of C (rows 0-15 /
 * 16-31 x columns 0-15 / 16-31), tmm4 / tmm5 A's rows 0-15 / 16-31 (16
 * rows x 32 bf16 = 64 bytes of k), tmm6 / tmm7 the two 16-column halves
 * of 16 pair rows of the packed panel: the panel's pair rows are 128 bytes
 * (32 columns x 2 bf16), so a B tile is 16 rows of 64 bytes at stride 128
 * - gemm_bf16's packed layout as it is.  Each step takes 32 k: four
 * tile loads, four TDPBF16PS (16 x 16 x 32 products each).  k is a
 * multiple of 32 (the packed K and the converted A rows are padded to it).
 *
 * The tile shape is set for the call (amx_tiles.h: loaded only where it
 * differs from the last call's, and left configured on return): A's and
 * C's tiles have min(mr, 16) and mr - 16 rows, so no row past mr is
 * loaded; a tile of at most 16 rows runs a loop without tmm2, tmm3, tmm5
 * (left unconfigured).
 *
 * A whole-width tile (nr = 32) with no activation, and not both a bias and
 * the accumulate flag, goes straight between the tiles and C: C's tiles
 * start as the bias (its 16 floats loaded at row stride 0) or as C itself
 * (accumulate) or zero, and are stored into C's rows.  Any other tile's
 * products land in a 32 x 32 fp32 buffer on the stack (tilestored), then
 * the epilogue of the AVX-512 kernels runs row by row: + C (accumulate
 * flag), + bias, ReLU or GELU (the erf rational of
 * f32_gemm_12x32_avx512f.S), a masked store of the nr columns (opmasks k1,
 * k2 from nr).  The two orders of the additions differ only as the sums'
 * order may (gemm_bf16.h).  The direct path saves the buffer's round trip,
 * about a fifth of a 32 x 32 x 256 tile's time.
 *
 * The OS must have granted this process the tile state (cpu_x86.c asks
 * Linux with arch_prctl; PG_CPU_AMXBF16 is only set when it did).
 *
 * void pg_bf16_gemm_32x32_amx(size_t mr, size_t nr, size_t k,
 *          rdi       rsi        rdx
 *          const uint16_t *a, size_t lda, const uint16_t *b, float *c,
 *          rcx                r8          r9               [rbp+16]
 *          size_t ldc, const pg_sgemm_epilogue *ep);
 *          [rbp+24]    [rbp+32]                                          */
#include "pg_asm.h"
#include "amx_tiles.h"

#define ARG_C   [rbp + 16]
#define ARG_LDC [rbp + 24]
#define ARG_EP  [rbp + 32]

#define BC(name) dword ptr [rip + name]{1to16}
.macro GELU x
        vmulps  zmm24, \x, BC(gelu_rsqrt2)
        vminps  zmm24, zmm24, BC(gelu_clamp)
        vmaxps  zmm24, zmm24, BC(gelu_nclamp)
        vmulps  zmm25, zmm24, zmm24
        vbroadcastss zmm26, dword ptr [rip + gelu_p6]
        vfmadd213ps zmm26, zmm25, BC(gelu_p5)
        vfmadd213ps zmm26, zmm25, BC(gelu_p4)
        vfmadd213ps zmm26, zmm25, BC(gelu_p3)
        vfmadd213ps zmm26, zmm25, BC(gelu_p2)
        vfmadd213ps zmm26, zmm25, BC(gelu_p1)
        vfmadd213ps zmm26, zmm25, BC(gelu_p0)
        vbroadcastss zmm27, dword ptr [rip + gelu_q4]
        vfmadd213ps zmm27, zmm25, BC(gelu_q3)
        vfmadd213ps zmm27, zmm25, BC(gelu_q2)
        vfmadd213ps zmm27, zmm25, BC(gelu_q1)
        vfmadd213ps zmm27, zmm25, BC(gelu_one)
        vmulps  zmm26, zmm26, zmm24
        vdivps  zmm26, zmm26, zmm27
        vmulps  \x, \x, BC(gelu_half)
        vfmadd231ps \x, \x, zmm26
.endm

        .text
PG_FUNC(pg_bf16_gemm_32x32_amx)
        push    rbp
        mov     rbp, rsp
        push    rbx
        push    r12
        push    r13
        push    r14
        push    r15
        sub     rsp, 64 + 4096 + 64
        and     rsp, -64

        AMX_CFG_32x32                           /* rbx: rows past 16 */

        lea     r10, [r8 + r8]                  /* A row stride, bytes */
        mov     r11, 128                        /* B pair-row stride */
        mov     r12, r10
        shl     r12, 4
        add     r12, rcx                        /* A row 16 */
        shr     rdx, 5                          /* steps of 32 k */

        /* C's tiles: r13 = 1 where they go straight to C (r14 C, r15 ldc
         * bytes); they start as zero, the bias or C */
        xor     r13d, r13d
        mov     rax, ARG_EP
        cmp     rsi, 32
        jne     .Lzero
        cmp     dword ptr [rax + 8], 0          /* act */
        jne     .Lzero
        mov     r14, ARG_C
        mov     r15, ARG_LDC
        shl     r15, 2
        test    dword ptr [rax + 12], 1         /* accumulate */
        mov     rax, [rax]                      /* bias */
        jnz     .Lfrom_c
        inc     r13d
        test    rax, rax
        jz      .Lzero
        xor     esi, esi                        /* row stride 0: every row the bias */
        tileloadd tmm0, [rax + rsi * 1]
        tileloadd tmm1, [rax + rsi * 1 + 64]
        test    rbx, rbx
        jz      .Lone
        tileloadd tmm2, [rax + rsi * 1]
        tileloadd tmm3, [rax + rsi * 1 + 64]
        jmp     .Ltwo_start
.Lfrom_c:
        test    rax, rax
        jnz     .Lzero                          /* + C and + bias: the buffer's epilogue */
        inc     r13d
        tileloadd tmm0, [r14 + r15 * 1]
        tileloadd tmm1, [r14 + r15 * 1 + 64]
        test    rbx, rbx
        jz      .Lone
        mov     rax, r15
        shl     rax, 4
        add     rax, r14                        /* C row 16 */
        tileloadd tmm2, [rax + r15 * 1]
        tileloadd tmm3, [rax + r15 * 1 + 64]
        jmp     .Ltwo_start
.Lzero: tilezero tmm0
        tilezero tmm1
        test    rbx, rbx
        jz      .Lone
        tilezero tmm2
        tilezero tmm3
.Ltwo_start:
        AMX_STEPS_2x2 tdpbf16ps
.Lstore2:
        test    r13d, r13d
        jz      1f
        mov     rax, r15
        shl     rax, 4
        add     rax, r14                        /* C row 16 */
        tilestored [rax + r15 * 1], tmm2
        tilestored [rax + r15 * 1 + 64], tmm3
        jmp     .Lstore1
1:      lea     rax, [rsp + 64 + 2048]
        tilestored [rax + r11 * 1], tmm2
        tilestored [rax + r11 * 1 + 64], tmm3
        jmp     .Lstore1
.Lone:  AMX_STEPS_1x2 tdpbf16ps
.Lstore1:
        test    r13d, r13d
        jz      1f
        tilestored [r14 + r15 * 1], tmm0
        tilestored [r14 + r15 * 1 + 64], tmm1
        jmp     .Ldone
1:      lea     rax, [rsp + 64]
        tilestored [rax + r11 * 1], tmm0
        tilestored [rax + r11 * 1 + 64], tmm1

        /* the epilogue, row by row from the buffer */
        mov     ecx, esi
        mov     eax, 1
        shl     rax, cl
        dec     rax
        kmovd   k1, eax
        kshiftrd k2, k1, 16
        mov     r10, ARG_EP
        mov     r14, ARG_C
        mov     r15, ARG_LDC
        shl     r15, 2
        lea     rax, [rsp + 64]
        mov     rbx, [r10]                      /* bias */
        vpxord  zmm28, zmm28, zmm28
        vpxord  zmm29, zmm29, zmm29
        test    rbx, rbx
        jz      3f
        vmovups zmm28{k1}{z}, [rbx]
        vmovups zmm29{k2}{z}, [rbx + 64]
3:      mov     r12d, dword ptr [r10 + 8]       /* act */
        mov     r13d, dword ptr [r10 + 12]      /* flags */
        vpxord  zmm30, zmm30, zmm30
.Lrow:  vmovups zmm0, [rax]
        vmovups zmm1, [rax + 64]
        test    r13d, 1
        jz      4f
        vmovups zmm24{k1}{z}, [r14]
        vmovups zmm25{k2}{z}, [r14 + 64]
        vaddps  zmm0, zmm0, zmm24
        vaddps  zmm1, zmm1, zmm25
4:      test    rbx, rbx
        jz      5f
        vaddps  zmm0, zmm0, zmm28
        vaddps  zmm1, zmm1, zmm29
5:      cmp     r12d, 1
        jne     6f
        vmaxps  zmm0, zmm0, zmm30
        vmaxps  zmm1, zmm1, zmm30
        jmp     7f
6:      cmp     r12d, 2
        jne     7f
        GELU    zmm0
        GELU    zmm1
7:      vmovups [r14]{k1}, zmm0
        vmovups [r14 + 64]{k2}, zmm1
        add     rax, 128
        add     r14, r15
        dec     rdi
        jnz     .Lrow

.Ldone:  vzeroupper
        lea     rsp, [rbp - 40]
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbx
        pop     rbp
        ret
PG_ENDFUNC(pg_bf16_gemm_32x32_amx)

/* GELU constants, one float each (broadcast by the operands above).
 * erf(z) ~ z * P(z^2) / Q(z^2) on |z| <= 3.925 (erf(3.925) rounds to 1.0f),
 * the (6,4) rational of f32_gemm_6x16_avx2_fma3.S, fitted for least maximum
 * relative error by engine/kernels/sgemm/gelu_erf_fit.py: max relative
 * error 5.3e-8 in exact arithmetic, 4.4e-7 (7 ulp) evaluated in float32 as
 * here, against erf. */
        PG_RODATA
        AMX_CFG_TABLE
        .p2align 2
gelu_rsqrt2:    .float 0.70710678118654752
gelu_clamp:     .float 3.925
gelu_nclamp:    .float -3.925
gelu_half:      .float 0.5
gelu_one:       .float 1.0
gelu_p0:        .float 1.128379107e+00
gelu_p1:        .float 2.003775686e-01
gelu_p2:        .float 5.063291639e-02
gelu_p3:        .float 3.719719360e-03
gelu_p4:        .float 1.421845227e-04
gelu_p5:        .float -1.956643018e-06
gelu_p6:        .float 1.986926357e-08
gelu_q1:        .float 5.109116435e-01
gelu_q2:        .float 1.151851714e-01
gelu_q3:        .float 1.439111866e-02
gelu_q4:        .float 9.600991616e-04

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

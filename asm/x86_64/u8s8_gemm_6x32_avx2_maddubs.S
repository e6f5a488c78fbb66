/* u8s8_gemm_6x32_avx2_maddubs.S - one 6x32 tile of C = epilogue(A_u8 . B_s8)
 * with AVX2's vpmaddubsw, for operands where it is exact: the int8
 * kernel of compile(precision="int8-dynamic") on CPUs without VNNI (AMD
 * Zen 2 / Zen 3, Intel before Ice Lake).
 *
 * vpmaddubsw adds two u8 x s8 products in saturating int16: exact only
 * while 2 a |b| <= 32767 (pair_max), so either 8-bit activations with
 * weights in [-64, 64], or activations in [0, 127] with any s8 weights.
 * int8-dynamic gives the lost bit to whichever rounds better: pass_lowp
 * packs a weight to [-64, 64] unless that loses over 2% of it, and then
 * ops_lowp quantises the product's activations to [0, 127] instead (ORT
 * takes 7-bit weights, reduce_range, for the same reason).  Operands out
 * of range are refused by the driver (gemm_u8s8.c), never computed wrong.
 *
 * On a dword lane of the packed group (4 k of one column) vpmaddubsw
 * leaves the two pair sums, and vpmaddwd by ones adds them into the 4-k
 * sum that vpdpbusd would add: 32 products on two multiplies and an add,
 * against the exact avx2 kernel's vpmaddwd on widened int16, 16 products
 * on a multiply and an add plus the widening.  Measured on Zen 3, the
 * instruction chains alone: 98 against 82 G products a second.
 *
 * The products are the avxvnni kernel's (U8S8_HALF, u8s8_tile_avx2.h)
 * with this ROW: A's 4 bytes broadcast in ymm14, the product in ymm15,
 * the int16 ones from memory (no register is left: 12 accumulators and
 * B's two vectors).
 *
 * Epilogue: u8s8_tile_avx2.h.
 *
 * void pg_u8s8_gemm_6x32_avx2_maddubs(size_t mr, size_t nr, size_t k,
 *          rdi       rsi        rdx
 *          const uint8_t *a, size_t lda, const int8_t *b, void *c,
 *          rcx               r8          r9              [rbp+16]
 *          size_t ldc, const pg_u8s8_epilogue *ep);
 *          [rbp+24]    [rbp+32]                                          */
#include "pg_asm.h"
#include "u8s8_tile_avx2.h"

/* one A row (at \ra + rax + 4 u) against the half's 16 columns: the pair
 * sums of vpmaddubsw, added in fours by vpmaddwd with ones */
.macro ROW ra, a0, a1, t, u
        vpbroadcastd ymm14, dword ptr [\ra + rax + 4 * \u]
        vpmaddubsw ymm15, ymm14, ymm12
        vpmaddwd ymm15, ymm15, ymmword ptr [rip + ones16]
        vpaddd  \a0, \a0, ymm15
        vpmaddubsw ymm15, ymm14, ymm13
        vpmaddwd ymm15, ymm15, ymmword ptr [rip + ones16]
        vpaddd  \a1, \a1, ymm15
.endm

        .text
PG_FUNC(pg_u8s8_gemm_6x32_avx2_maddubs)
        U8S8_HALVES_TILE .Lout
PG_ENDFUNC(pg_u8s8_gemm_6x32_avx2_maddubs)

        PG_RODATA
        .p2align 5
ones16: .rept 16
        .short 1
        .endr
        U8S8_EPILOGUE_CONSTS

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

/* u8s8_gemm_6x32_avxvnni.S - one 6x32 tile of C = epilogue(A_u8 . B_s8)
 * with AVX-VNNI (vpdpbusd ymm, VEX encoded): the avxvnni level (CPUs with
 * AVX-VNNI and no AVX-512).
 *
 * The tile runs as two halves of 16 columns (the second only when
 * nr > 16), each over the whole k (U8S8_HALF, u8s8_tile_avx2.h, on this
 * file's ROW): 12 accumulators ymm0-ymm11 (row r in
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

        .text
PG_FUNC(pg_u8s8_gemm_6x32_avxvnni)
        U8S8_HALVES_TILE .Lout
PG_ENDFUNC(pg_u8s8_gemm_6x32_avxvnni)

        PG_RODATA
        U8S8_EPILOGUE_CONSTS

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

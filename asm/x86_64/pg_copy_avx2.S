/* pg_copy_avx2.S - the bandwidth yardstick: a plain streaming copy, 128
 * bytes per iteration with ordinary (write-allocating) stores, as STREAM's
 * Copy does.  Not for engine use; pg_measure_copy_gbps times it.
 *
 * void pg_copy_avx2(void *dst, const void *src, size_t bytes)
 *                   rdi        rsi              rdx
 * bytes is a multiple of 128; dst and src are 32-byte aligned. */
#include "pg_asm.h"

        .text
PG_FUNC(pg_copy_avx2)
        shr     rdx, 7
        jz      .Lcopy_done
.Lcopy_loop:
        vmovaps ymm0, [rsi]
        vmovaps ymm1, [rsi + 32]
        vmovaps ymm2, [rsi + 64]
        vmovaps ymm3, [rsi + 96]
        vmovaps [rdi], ymm0
        vmovaps [rdi + 32], ymm1
        vmovaps [rdi + 64], ymm2
        vmovaps [rdi + 96], ymm3
        add     rsi, 128
        add     rdi, 128
        sub     rdx, 1
        jnz     .Lcopy_loop
.Lcopy_done:
        vzeroupper
        ret
PG_ENDFUNC(pg_copy_avx2)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

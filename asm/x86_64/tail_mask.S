/* tail_mask.S - the table that masked loads and stores of a partial vector
 * read their mask from: 8 dwords of -1 then 8 of 0.  The 8 dwords at byte
 * offset 4 * (8 - n) have exactly their first n lanes set (0 <= n <= 8). */
#include "pg_asm.h"

        PG_RODATA
        .p2align 6
        .globl PG_SYM(pg_avx2_tail_mask)
#if !defined(__APPLE__)
        .hidden PG_SYM(pg_avx2_tail_mask)
#endif
PG_SYM(pg_avx2_tail_mask):
        .rept 8
        .long -1
        .endr
        .rept 8
        .long 0
        .endr

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

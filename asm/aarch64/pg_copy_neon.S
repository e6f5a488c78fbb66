/* pg_copy_neon.S - the bandwidth yardstick: a plain streaming copy, 128
 * bytes per iteration with ordinary stores, as STREAM's Copy does.  Not for
 * engine use; pg_measure_copy_gbps times it.
 *
 * void pg_copy_neon(void *dst, const void *src, size_t bytes)
 *                   x0         x1               x2
 * bytes is a multiple of 128. */
#include "pg_asm.h"

        .text
PG_FUNC(pg_copy_neon)
        lsr     x2, x2, #7
        cbz     x2, 2f
1:      ldp     q0, q1, [x1]
        ldp     q2, q3, [x1, #32]
        ldp     q4, q5, [x1, #64]
        ldp     q6, q7, [x1, #96]
        add     x1, x1, #128
        stp     q0, q1, [x0]
        stp     q2, q3, [x0, #32]
        stp     q4, q5, [x0, #64]
        stp     q6, q7, [x0, #96]
        add     x0, x0, #128
        subs    x2, x2, #1
        b.ne    1b
2:      ret
PG_ENDFUNC(pg_copy_neon)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

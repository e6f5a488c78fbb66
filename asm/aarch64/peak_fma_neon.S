/* peak_fma_neon.S - the FMA throughput yardstick: 22 independent chains of
 * fmla .4s, more than latency x FMA pipes (4 x 4 on the widest current
 * cores), so the loop runs at the FMA units' peak: 22 * 8 = 176 flops per
 * iteration.  v8-v15 are not touched (their low halves are callee-saved).
 *
 * void pg_peak_fma_neon(uint64_t iterations)     x0 */
#include "pg_asm.h"

        .text
PG_FUNC(pg_peak_fma_neon)
        movi    v0.4s, #0
        movi    v1.4s, #0
        movi    v2.4s, #0
        movi    v3.4s, #0
        movi    v4.4s, #0
        movi    v5.4s, #0
        movi    v6.4s, #0
        movi    v7.4s, #0
        movi    v16.4s, #0
        movi    v17.4s, #0
        movi    v18.4s, #0
        movi    v19.4s, #0
        movi    v20.4s, #0
        movi    v21.4s, #0
        movi    v22.4s, #0
        movi    v23.4s, #0
        movi    v24.4s, #0
        movi    v25.4s, #0
        movi    v26.4s, #0
        movi    v27.4s, #0
        movi    v28.4s, #0
        movi    v29.4s, #0
        movi    v30.4s, #0
        movi    v31.4s, #0
        cbz     x0, 2f
1:
        .irp    r, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29
        fmla    v\r\().4s, v30.4s, v31.4s
        .endr
        subs    x0, x0, #1
        b.ne    1b
2:      ret
PG_ENDFUNC(pg_peak_fma_neon)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

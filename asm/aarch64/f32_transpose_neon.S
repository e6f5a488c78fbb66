/* f32_transpose_neon.S - block transpose of 4-byte elements, 4 x 4 tiles
 * in q registers (transpose.h).
 *
 * void pg_f32_transpose_neon(size_t rows, size_t cols, const float *src,
 *                            size_t lds, float *dst, size_t ldd);
 *   x0 rows, x1 cols (multiples of 4), x2 src, x3 lds, x4 dst, x5 ldd
 *
 * A tile: rows into v0..v3; trn1 / trn2 .4s of the pairs (v4..v7), then
 * trn1 / trn2 .2d of those (the columns 0, 2 and 1, 3), stored as rows.
 *
 * Registers: x6 cols left, x7 src tile, x8 dst tile, x9 / x10 walking row
 * pointers, x11 the src row block, x12 the dst column, x13 / x14 scratch. */
#include "pg_asm.h"

        .text

PG_FUNC(pg_f32_transpose_neon)
        cbz     x0, 9f
        cbz     x1, 9f
        lsl     x3, x3, #2
        lsl     x5, x5, #2
        mov     x11, x2
        mov     x12, x4
1:      mov     x6, x1
        mov     x7, x11
        mov     x8, x12
2:      mov     x9, x7
        ldr     q0, [x9]
        add     x9, x9, x3
        ldr     q1, [x9]
        add     x9, x9, x3
        ldr     q2, [x9]
        add     x9, x9, x3
        ldr     q3, [x9]
        trn1    v4.4s, v0.4s, v1.4s
        trn2    v5.4s, v0.4s, v1.4s
        trn1    v6.4s, v2.4s, v3.4s
        trn2    v7.4s, v2.4s, v3.4s
        trn1    v0.2d, v4.2d, v6.2d     /* column 0 */
        trn1    v1.2d, v5.2d, v7.2d     /* column 1 */
        trn2    v2.2d, v4.2d, v6.2d     /* column 2 */
        trn2    v3.2d, v5.2d, v7.2d     /* column 3 */
        mov     x10, x8
        str     q0, [x10]
        add     x10, x10, x5
        str     q1, [x10]
        add     x10, x10, x5
        str     q2, [x10]
        add     x10, x10, x5
        str     q3, [x10]
        add     x7, x7, #16
        add     x8, x8, x5, lsl #2
        subs    x6, x6, #4
        b.ne    2b
        /* the next 4 rows of src: the next 4 columns of dst */
        add     x11, x11, x3, lsl #2
        add     x12, x12, #16
        subs    x0, x0, #4
        b.ne    1b
9:      ret
PG_ENDFUNC(pg_f32_transpose_neon)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif

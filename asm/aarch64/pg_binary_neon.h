/* pg_binary_neon.h - the body shared by the elementwise binary kernels
 * (vadd, vmul): y[i] = a[i] OP b[i], 16 floats per iteration, then one at a
 * time for the last 0..15.
 *
 *   void f(size_t n, const float *a, const float *b, float *y)
 *          x0        x1              x2              x3
 * One IEEE operation per element: bit-exact with the C reference. */
#ifndef PG_BINARY_NEON_H
#define PG_BINARY_NEON_H

        .macro  f32_binary_neon name, op
PG_FUNC(\name)
        cmp     x0, #16
        b.lo    2f
1:      ld1     {v0.4s, v1.4s, v2.4s, v3.4s}, [x1], #64
        ld1     {v4.4s, v5.4s, v6.4s, v7.4s}, [x2], #64
        \op     v0.4s, v0.4s, v4.4s
        \op     v1.4s, v1.4s, v5.4s
        \op     v2.4s, v2.4s, v6.4s
        \op     v3.4s, v3.4s, v7.4s
        st1     {v0.4s, v1.4s, v2.4s, v3.4s}, [x3], #64
        sub     x0, x0, #16
        cmp     x0, #16
        b.hs    1b
2:      cbz     x0, 4f
3:      ldr     s0, [x1], #4
        ldr     s1, [x2], #4
        \op     s0, s0, s1
        str     s0, [x3], #4
        subs    x0, x0, #1
        b.ne    3b
4:      ret
PG_ENDFUNC(\name)
        .endm

#endif

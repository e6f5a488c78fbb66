/* pg_binary_avx2.h - the body shared by the elementwise binary kernels
 * (vadd, vmul): y[i] = a[i] OP b[i], 32 floats per iteration, then 8, then
 * the last 0..7 with a masked load and store so nothing past n is touched.
 *
 *   void f(size_t n, const float *a, const float *b, float *y)
 *          rdi       rsi             rdx             rcx
 * One IEEE operation per element: bit-exact with the C reference. */
#ifndef PG_BINARY_AVX2_H
#define PG_BINARY_AVX2_H

        .macro  f32_binary_avx2 name, op
PG_FUNC(\name)
        cmp     rdi, 32
        jb      2f
1:      vmovups ymm0, [rsi]
        vmovups ymm1, [rsi + 32]
        vmovups ymm2, [rsi + 64]
        vmovups ymm3, [rsi + 96]
        \op     ymm0, ymm0, [rdx]
        \op     ymm1, ymm1, [rdx + 32]
        \op     ymm2, ymm2, [rdx + 64]
        \op     ymm3, ymm3, [rdx + 96]
        vmovups [rcx], ymm0
        vmovups [rcx + 32], ymm1
        vmovups [rcx + 64], ymm2
        vmovups [rcx + 96], ymm3
        add     rsi, 128
        add     rdx, 128
        add     rcx, 128
        sub     rdi, 32
        cmp     rdi, 32
        jae     1b
2:      cmp     rdi, 8
        jb      3f
        vmovups ymm0, [rsi]
        \op     ymm0, ymm0, [rdx]
        vmovups [rcx], ymm0
        add     rsi, 32
        add     rdx, 32
        add     rcx, 32
        sub     rdi, 8
        jmp     2b
3:      test    rdi, rdi
        jz      4f
        lea     rax, [rip + PG_SYM(pg_avx2_tail_mask)]
        neg     rdi
        vmovdqu ymm3, [rax + 4 * rdi + 32]
        vmaskmovps ymm0, ymm3, [rsi]
        vmaskmovps ymm1, ymm3, [rdx]
        \op     ymm0, ymm0, ymm1
        vmaskmovps [rcx], ymm3, ymm0
4:      vzeroupper
        ret
PG_ENDFUNC(\name)
        .endm

#endif

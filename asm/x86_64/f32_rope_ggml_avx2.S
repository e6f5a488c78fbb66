/* f32_rope_ggml_avx2.S - the GGUF decoder's RoPE in ggml's normal and NeoX
 * pair orders (rope_ggml/rope_ggml.h), ymm.
 *
 * void pg_f32_rope_ggml_avx2(size_t rows, size_t ld, size_t heads,
 *                            rdi          rsi        rdx
 *         size_t hd, size_t n_rot, int neox, const float *cos_tab,
 *         rcx        r8            r9d       [rsp + 8]
 *         const float *sin_tab, size_t ld_cs, float *x);
 *         [rsp + 16]            [rsp + 24]    [rsp + 32]
 *
 * f32_rope_ggml_avx512f.S at half the width: per row, chunks of 8 pairs
 * (NeoX) or 4 pairs (normal), each chunk's cos / sin loaded once for every
 * head (the innermost loop, hd floats a step).  Whole chunks use plain
 * loads and stores; the last partial one is a copy of the loop with
 * vmaskmovps (masks from pg_avx2_tail_mask: ymm14 its cos / sin lanes,
 * ymm15 its x lanes), so nothing past pair n_rot / 2 is read or written.
 *
 * NeoX: a' = a c - b s, b' = a s + b c, lane by lane.  Normal: ymm0 =
 * c0 c0 c1 c1 c2 c2 c3 c3 (vpermps by .Lpair_idx), ymm1 = -s0 s0 -s1 s1 ...,
 * x' = x * ymm0 + swap(x) * ymm1 (vpermilps 0xb1 swaps each pair's floats):
 * a' = a c + b (-s) = a c - b s exactly, b' = b c + a s.  No FMA: both
 * products rounded, then one add, as the reference.
 *
 * Registers: rdi rows left, rsi ld bytes, rdx heads, r10 hd bytes, r8 half,
 * r14 ld_cs bytes, rax / r11 this row's cos / sin, rbx this row's x, r9 the
 * chunk's first pair, rcx pairs left, r12 the chunk in the current head,
 * r13 heads left, ymm12 / ymm13 the pair index and the sign pattern.  rbx,
 * r12-r14 are saved. */
#include "pg_asm.h"

        PG_RODATA
        .p2align 5
.Lpair_idx:                             /* lane 2j and 2j + 1 <- lane j */
        .long   0, 0, 1, 1, 2, 2, 3, 3
.Lsign_even:                            /* the sign bit of the even lanes */
        .rept   4
        .long   0x80000000, 0
        .endr

        .text

/* LOADX / STOREX: a plain load or store, or one through the tail's mask */
.macro LOADX masked, dst, src, mask
  .if \masked
        vmaskmovps \dst, \mask, \src
  .else
        vmovups \dst, \src
  .endif
.endm
.macro STOREX masked, dst, src, mask
  .if \masked
        vmaskmovps \dst, \mask, \src
  .else
        vmovups \dst, \src
  .endif
.endm

/* one chunk of 4 pairs (fewer if masked), every head */
.macro NORM_CHUNK masked
        LOADX   \masked, xmm0, [rax + r9*4], xmm14
        LOADX   \masked, xmm1, [r11 + r9*4], xmm14
        vpermps ymm0, ymm12, ymm0       /* c0 c0 c1 c1 ... */
        vpermps ymm1, ymm12, ymm1
        vxorps  ymm1, ymm1, ymm13       /* -s0 s0 -s1 s1 ... */
        lea     r12, [rbx + r9*8]
        mov     r13, rdx
1:      LOADX   \masked, ymm2, [r12], ymm15     /* a0 b0 a1 b1 ... */
        vpermilps ymm3, ymm2, 0xb1              /* b0 a0 b1 a1 ... */
        vmulps  ymm2, ymm2, ymm0
        vmulps  ymm3, ymm3, ymm1
        vaddps  ymm2, ymm2, ymm3
        STOREX  \masked, [r12], ymm2, ymm15
        add     r12, r10
        dec     r13
        jnz     1b
.endm

/* one chunk of 8 pairs (fewer if masked), every head */
.macro NEOX_CHUNK masked
        LOADX   \masked, ymm0, [rax + r9*4], ymm14      /* c */
        LOADX   \masked, ymm1, [r11 + r9*4], ymm14      /* s */
        lea     r12, [rbx + r9*4]
        mov     r13, rdx
1:      LOADX   \masked, ymm2, [r12], ymm14             /* a */
        LOADX   \masked, ymm3, [r12 + r8*4], ymm14      /* b */
        vmulps  ymm4, ymm2, ymm0
        vmulps  ymm5, ymm3, ymm1
        vsubps  ymm4, ymm4, ymm5                        /* a c - b s */
        vmulps  ymm2, ymm2, ymm1
        vmulps  ymm3, ymm3, ymm0
        vaddps  ymm2, ymm2, ymm3                        /* a s + b c */
        STOREX  \masked, [r12], ymm4, ymm14
        STOREX  \masked, [r12 + r8*4], ymm2, ymm14
        add     r12, r10
        dec     r13
        jnz     1b
.endm

PG_FUNC(pg_f32_rope_ggml_avx2)
        push    rbx
        push    r12
        push    r13
        push    r14
        mov     rax, [rsp + 40]         /* cos_tab */
        mov     r11, [rsp + 48]         /* sin_tab */
        mov     r14, [rsp + 56]         /* ld_cs */
        mov     rbx, [rsp + 64]         /* x */
        shr     r8, 1                   /* half */
        jz      .Ldone
        test    rdi, rdi
        jz      .Ldone
        test    rdx, rdx
        jz      .Ldone
        shl     rsi, 2
        lea     r10, [rcx*4]
        shl     r14, 2
        test    r9d, r9d
        jnz     .Lneox_row

        vmovups ymm12, [rip + .Lpair_idx]
        vmovups ymm13, [rip + .Lsign_even]
.Lnorm_row:
        xor     r9d, r9d
.Lnorm_chunk:
        mov     rcx, r8
        sub     rcx, r9                 /* pairs left */
        cmp     rcx, 4
        jb      .Lnorm_tail
        NORM_CHUNK 0
        add     r9, 4
        cmp     r9, r8
        jb      .Lnorm_chunk
        jmp     .Lnorm_next
.Lnorm_tail:                            /* 1..3 pairs */
        lea     r12, [rip + PG_SYM(pg_avx2_tail_mask) + 32]
        neg     rcx
        vmovdqu ymm14, [r12 + rcx*4]    /* the first pairs-left lanes */
        vmovdqu ymm15, [r12 + rcx*8]    /* the first 2 pairs-left lanes */
        NORM_CHUNK 1
.Lnorm_next:
        add     rbx, rsi
        add     rax, r14
        add     r11, r14
        dec     rdi
        jnz     .Lnorm_row
        jmp     .Ldone

.Lneox_row:
        xor     r9d, r9d
.Lneox_chunk:
        mov     rcx, r8
        sub     rcx, r9                 /* pairs left */
        cmp     rcx, 8
        jb      .Lneox_tail
        NEOX_CHUNK 0
        add     r9, 8
        cmp     r9, r8
        jb      .Lneox_chunk
        jmp     .Lneox_next
.Lneox_tail:                            /* 1..7 pairs */
        lea     r12, [rip + PG_SYM(pg_avx2_tail_mask) + 32]
        neg     rcx
        vmovdqu ymm14, [r12 + rcx*4]
        NEOX_CHUNK 1
.Lneox_next:
        add     rbx, rsi
        add     rax, r14
        add     r11, r14
        dec     rdi
        jnz     .Lneox_row

.Ldone:
        vzeroupper
        pop     r14
        pop     r13
        pop     r12
        pop     rbx
        ret
PG_ENDFUNC(pg_f32_rope_ggml_avx2)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

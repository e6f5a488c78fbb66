/* f32_rope_ggml_avx512f.S - the GGUF decoder's RoPE in ggml's normal and
 * NeoX pair orders (rope_ggml/rope_ggml.h), zmm.
 *
 * void pg_f32_rope_ggml_avx512f(size_t rows, size_t ld, size_t heads,
 *                               rdi          rsi        rdx
 *         size_t hd, size_t n_rot, int neox, const float *cos_tab,
 *         rcx        r8            r9d       [rsp + 8]
 *         const float *sin_tab, size_t ld_cs, float *x);
 *         [rsp + 16]            [rsp + 24]    [rsp + 32]
 *
 * Per row, the pairs go in chunks (16 for NeoX, 8 for the normal order),
 * and each chunk's cos / sin are loaded once and used by every head: the
 * head loop is innermost, hd floats a step.  The last chunk is masked (k1,
 * k2: its lanes only), so nothing past pair n_rot / 2 is read or written;
 * the dims past n_rot stay as they are.
 *
 * NeoX: a = x[i..], b = x[i + half..], contiguous: a' = a c - b s,
 * b' = a s + b c, lane by lane.
 * Normal: a chunk of x is 16 floats = 8 pairs (a0 b0 a1 b1 ...); zmm0 holds
 * c0 c0 c1 c1 ... (vpermps by .Lpair_idx), zmm1 -s0 s0 -s1 s1 ... (the same,
 * its even lanes' signs flipped), and x' = x * zmm0 + swap(x) * zmm1, swap
 * exchanging the two floats of each pair (vpermilps 0xb1): a' = a c + b (-s)
 * = a c - b s exactly, b' = b c + a s.  Two products, each rounded, then one
 * add: never an FMA, so the floats are the reference's.
 *
 * Registers: rdi rows left, rsi ld bytes, rdx heads, r10 hd bytes, r8 half
 * (pairs per head), r14 ld_cs bytes, rax / r11 this row's cos / sin, rbx
 * this row's x, r9 the chunk's first pair, rcx its pair count (cl: the mask
 * shifts), r12 the chunk in the current head, r13 heads left, zmm30 / zmm31
 * the pair index and the sign pattern.  rbx, r12-r14 are saved. */
#include "pg_asm.h"

        PG_RODATA
        .p2align 6
.Lpair_idx:                             /* lane 2j and 2j + 1 <- lane j */
        .long   0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7
.Lsign_even:                            /* the sign bit of the even lanes */
        .rept   8
        .long   0x80000000, 0
        .endr

        .text
PG_FUNC(pg_f32_rope_ggml_avx512f)
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

        vmovups zmm30, [rip + .Lpair_idx]
        vmovups zmm31, [rip + .Lsign_even]
.Lnorm_row:
        xor     r9d, r9d
.Lnorm_chunk:
        mov     rcx, r8
        sub     rcx, r9                 /* pairs left */
        mov     r12d, 8
        cmp     rcx, r12
        cmova   rcx, r12                /* this chunk's pairs, 1..8 */
        mov     r12d, 1
        shl     r12d, cl
        dec     r12d
        kmovw   k1, r12d                /* its cos / sin lanes */
        add     ecx, ecx
        mov     r12d, 1
        shl     r12d, cl
        dec     r12d
        kmovw   k2, r12d                /* its x lanes */
        vmovups zmm0{k1}{z}, [rax + r9*4]
        vpermps zmm0, zmm30, zmm0       /* c0 c0 c1 c1 ... */
        vmovups zmm1{k1}{z}, [r11 + r9*4]
        vpermps zmm1, zmm30, zmm1
        vpxord  zmm1, zmm1, zmm31       /* -s0 s0 -s1 s1 ... */
        lea     r12, [rbx + r9*8]
        mov     r13, rdx
.Lnorm_head:
        vmovups zmm2{k2}{z}, [r12]      /* a0 b0 a1 b1 ... */
        vpermilps zmm3, zmm2, 0xb1      /* b0 a0 b1 a1 ... */
        vmulps  zmm2, zmm2, zmm0
        vmulps  zmm3, zmm3, zmm1
        vaddps  zmm2, zmm2, zmm3
        vmovups [r12]{k2}, zmm2
        add     r12, r10
        dec     r13
        jnz     .Lnorm_head
        add     r9, 8
        cmp     r9, r8
        jb      .Lnorm_chunk
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
        mov     r12d, 16
        cmp     rcx, r12
        cmova   rcx, r12                /* this chunk's pairs, 1..16 */
        mov     r12d, 1
        shl     r12d, cl
        dec     r12d
        kmovw   k1, r12d
        vmovups zmm0{k1}{z}, [rax + r9*4]       /* c */
        vmovups zmm1{k1}{z}, [r11 + r9*4]       /* s */
        lea     r12, [rbx + r9*4]
        mov     r13, rdx
.Lneox_head:
        vmovups zmm2{k1}{z}, [r12]              /* a */
        vmovups zmm3{k1}{z}, [r12 + r8*4]       /* b */
        vmulps  zmm4, zmm2, zmm0
        vmulps  zmm5, zmm3, zmm1
        vsubps  zmm4, zmm4, zmm5                /* a c - b s */
        vmulps  zmm2, zmm2, zmm1
        vmulps  zmm3, zmm3, zmm0
        vaddps  zmm2, zmm2, zmm3                /* a s + b c */
        vmovups [r12]{k1}, zmm4
        vmovups [r12 + r8*4]{k1}, zmm2
        add     r12, r10
        dec     r13
        jnz     .Lneox_head
        add     r9, 16
        cmp     r9, r8
        jb      .Lneox_chunk
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
PG_ENDFUNC(pg_f32_rope_ggml_avx512f)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

/* k_gemm_8x1_avx512vnni.S - the k-quants' prefill product for eight rows
 * of X at a time:
 *
 *     C[t * ldc + n] = dot(W row n, X row t)     0 <= t < 8, 0 <= n < N
 *
 * W rows of q4_K / q5_K / q6_K super-blocks, X eight rows of q8_K at
 * stride ldx bytes (kquant.h has the layouts).  AVX-512 BW + VNNI.
 *
 * Each weight super-block is widened once and used for the eight rows of
 * X, in the activations' own element order so that every x operand is one
 * 64-byte load straight from the q8_K block:
 *   q4_K / q5_K: chunk c (32 bytes of qs) broadcast to both halves, the
 *     upper half shifted right by 4 (vpsrlvq by qword), & 0x0f: elements
 *     64c .. 64c + 63 in order; q5_K adds 16 where its qh bit (2c low,
 *     2c + 1 high: vptestmb against both halves' masks) is set; the scales
 *     unpacked as in k_gemv_4row_avx512vnni.S and spread per chunk
 *     ([sc_2c x 16, sc_2c+1 x 16] int16) with vpermw; the minima doubled
 *     ([m0, m0, m1, m1, ...]) to meet x's 16 bsums in one vpmaddwd;
 *   q6_K: as in the GEMV (ql nibbles | qh bits, already in order), its
 *     16 scales spread four per zmm, the -32 folded in as 32 sc . bsums.
 * Per row of X and super-block: vpmaddubsw (u8 x s8 -> int16) and vpdpwssd
 * with the scales (exact int32, kquant.h), the offsets' int32 by vpmaddwd,
 * both to fp32, d_w * sums - dmin * offsets, then one FMA by x's d
 * (embedded broadcast) into the row's 16-lane sum.  After the row of W:
 * the eight sums fold to eight floats, stored down C's column n.
 *
 * void pg_q<4|5|6>_K_q8_K_gemm_ukr_8x1_avx512vnni(size_t N, size_t K,
 *                                               rdi       rsi
 *         const void *W, size_t ldw, const void *X, size_t ldx, float *C, size_t ldc)
 *         rdx            rcx         r8             r9          [rsp+8]   [rsp+16]
 *
 * Registers: rdi rows left, rsi super-blocks per row, rdx the row of W,
 * rcx ldw, r8 X, r9 ldx, r10 3 ldx, r11 5 ldx, rbx 7 ldx, r12 C + n, r13
 * ldc * 4, r14 the W walk, r15 the X walk, rbp super-blocks left, rax
 * scratch.  zmm0-7 the eight sums, zmm8-11 the widened quants, zmm12-15
 * their scales, zmm16 the doubled minima (q4_K / q5_K), zmm17 d_w, zmm18
 * dmin (q4_K / q5_K), zmm19 0x0f bytes, zmm20 the shift counts (q4_K /
 * q5_K) or 0x30 bytes (q6_K), zmm21-25 vpermw indices, zmm26-31 scratch.
 */
#include "pg_asm.h"

#define T_Q4_K 4
#define T_Q5_K 5
#define T_Q6_K 6

/* the eight rows of X: [r15 + this] */
#define XT0 r15
#define XT1 r15 + r9
#define XT2 r15 + r9*2
#define XT3 r15 + r10
#define XT4 r15 + r9*4
#define XT5 r15 + r11
#define XT6 r15 + r10*2
#define XT7 r15 + rbx

/* one row of X (at xt) against the widened super-block: acc += ... */
.macro TOKEN t, acc, xt
        vpmaddubsw zmm26, zmm8, [\xt + 4]
        vpmaddubsw zmm27, zmm9, [\xt + 68]
        vpmaddwd zmm28, zmm26, zmm12
        vpdpwssd zmm28, zmm27, zmm13
        vpmaddubsw zmm26, zmm10, [\xt + 132]
        vpmaddubsw zmm27, zmm11, [\xt + 196]
        vpdpwssd zmm28, zmm26, zmm14
        vpdpwssd zmm28, zmm27, zmm15
.if \t == T_Q6_K
        vpmaddwd ymm29, ymm16, [\xt + 260]
        vpslld  ymm29, ymm29, 5
        vpsubd  zmm28, zmm28, zmm29
        vcvtdq2ps zmm28, zmm28
        vmulps  zmm28, zmm28, zmm17
.else
        vpmaddwd ymm29, ymm16, [\xt + 260]
        vcvtdq2ps zmm28, zmm28
        vcvtdq2ps ymm29, ymm29
        vmulps  zmm28, zmm28, zmm17
        vfnmadd231ps zmm28, zmm29, zmm18
.endif
        vfmadd231ps \acc, zmm28, dword ptr [\xt]{1to16}
.endm

/* q4_K / q5_K chunk c of the super-block at [r14], in element order, into dst */
.macro CHUNK t, c, dst
        vbroadcasti64x4 zmm26, [r14 + QS + 32*\c]
        vpsrlvq zmm26, zmm26, zmm20
        vpandd  \dst, zmm26, zmm19
.if \t == T_Q5_K
        vptestmb k1, zmm31, [rip + g5_bits + 64*\c]
        vpaddb  \dst {k1}, \dst, [rip + g5_sixteen]
.endif
.endm

/* widen the super-block at [r14] into zmm8-18 */
.macro WIDEN t
.if \t == T_Q6_K
        vpmovsxbw ymm16, xmmword ptr [r14 + 192]
        vpermw  zmm12, zmm21, zmm16
        vpermw  zmm13, zmm22, zmm16
        vpermw  zmm14, zmm23, zmm16
        vpermw  zmm15, zmm24, zmm16
  .irp half, 0, 1
        vmovdqu8 zmm29, [r14 + 64*\half]
        vbroadcasti64x4 zmm30, [r14 + 128 + 32*\half]
        vpsllvq zmm26, zmm30, [rip + g6_shl_lo]
        vpsrlvq zmm30, zmm30, [rip + g6_shr_hi]
        vpandd  zmm26, zmm26, zmm20
        vpandd  zmm30, zmm30, zmm20
        vpternlogd zmm26, zmm29, zmm19, 0xF8
        vpsrlw  zmm29, zmm29, 4
        vpternlogd zmm30, zmm29, zmm19, 0xF8
    .if \half == 0
        vmovdqa64 zmm8, zmm26
        vmovdqa64 zmm9, zmm30
    .else
        vmovdqa64 zmm10, zmm26
        vmovdqa64 zmm11, zmm30
    .endif
  .endr
        vpbroadcastw ymm17, word ptr [r14 + 208]
        vcvtph2ps zmm17, ymm17
.else
        vmovdqu32 xmm26, [r14 + 4]
        vpshufd xmm27, xmm26, 0x98
        vpshufd xmm28, xmm26, 0x50
        vpsrlvd xmm27, xmm27, [rip + g4_shv]
        vpandd  xmm27, xmm27, [rip + g4_mask1]
        vpsrld  xmm28, xmm28, 2
        vpandd  xmm28, xmm28, [rip + g4_mask2]
        vpord   xmm27, xmm27, xmm28
        vpmovzxbw ymm27, xmm27
        vpermw  zmm12, zmm21, zmm27
        vpermw  zmm13, zmm22, zmm27
        vpermw  zmm14, zmm23, zmm27
        vpermw  zmm15, zmm24, zmm27
        vpermw  zmm16, zmm25, zmm27
  .if \t == T_Q5_K
        vbroadcasti64x4 zmm31, [r14 + 16]
    .set QS, 48
  .else
    .set QS, 16
  .endif
        CHUNK   \t, 0, zmm8
        CHUNK   \t, 1, zmm9
        CHUNK   \t, 2, zmm10
        CHUNK   \t, 3, zmm11
        vcvtph2ps xmm26, qword ptr [r14]
        vbroadcastss zmm17, xmm26
        vpermilps xmm26, xmm26, 0x55
        vbroadcastss zmm18, xmm26
.endif
.endm

.macro KGEMM name, t
PG_FUNC(\name)
.if \t == T_Q4_K
  .set WB, 144
.elseif \t == T_Q5_K
  .set WB, 176
.else
  .set WB, 210
.endif
        push    rbx
        push    rbp
        push    r12
        push    r13
        push    r14
        push    r15
        mov     r12, [rsp + 56]
        mov     r13, [rsp + 64]
        shl     r13, 2
        shr     rsi, 8
        lea     r10, [r9 + r9*2]
        lea     r11, [r9 + r9*4]
        lea     rbx, [r10 + r9*4]
        mov     eax, 0x0f0f0f0f
        vpbroadcastd zmm19, eax
.if \t == T_Q6_K
        mov     eax, 0x30303030
        vpbroadcastd zmm20, eax
        vmovdqu64 zmm21, [rip + g6_idx]
        vmovdqu64 zmm22, [rip + g6_idx + 64]
        vmovdqu64 zmm23, [rip + g6_idx + 128]
        vmovdqu64 zmm24, [rip + g6_idx + 192]
.else
        vmovdqu64 zmm20, [rip + g4_nibshift]
        vmovdqu64 zmm21, [rip + g4_idx]
        vmovdqu64 zmm22, [rip + g4_idx + 64]
        vmovdqu64 zmm23, [rip + g4_idx + 128]
        vmovdqu64 zmm24, [rip + g4_idx + 192]
        vmovdqu64 zmm25, [rip + g4_idx + 256]
.endif

1:      /* one row of W against the eight rows of X */
        test    rdi, rdi
        jz      9f
        vpxord  zmm0, zmm0, zmm0
        vpxord  zmm1, zmm1, zmm1
        vpxord  zmm2, zmm2, zmm2
        vpxord  zmm3, zmm3, zmm3
        vpxord  zmm4, zmm4, zmm4
        vpxord  zmm5, zmm5, zmm5
        vpxord  zmm6, zmm6, zmm6
        vpxord  zmm7, zmm7, zmm7
        mov     r14, rdx
        mov     r15, r8
        mov     rbp, rsi
        test    rbp, rbp
        jz      4f
3:      WIDEN   \t
        TOKEN   \t, zmm0, XT0
        TOKEN   \t, zmm1, XT1
        TOKEN   \t, zmm2, XT2
        TOKEN   \t, zmm3, XT3
        TOKEN   \t, zmm4, XT4
        TOKEN   \t, zmm5, XT5
        TOKEN   \t, zmm6, XT6
        TOKEN   \t, zmm7, XT7
        add     r14, WB
        add     r15, 292
        dec     rbp
        jnz     3b

4:      /* each sum to 8 lanes, then [s0 .. s3 | s0 .. s3] and the same for s4 .. s7 */
        .irp r, 0, 1, 2, 3, 4, 5, 6, 7
        vextractf64x4 ymm26, zmm\r, 1
        vaddps  ymm\r, ymm\r, ymm26
        .endr
        vhaddps ymm0, ymm0, ymm1
        vhaddps ymm2, ymm2, ymm3
        vhaddps ymm4, ymm4, ymm5
        vhaddps ymm6, ymm6, ymm7
        vhaddps ymm0, ymm0, ymm2
        vhaddps ymm4, ymm4, ymm6
        vextractf128 xmm1, ymm0, 1
        vaddps  xmm0, xmm0, xmm1
        vextractf128 xmm5, ymm4, 1
        vaddps  xmm4, xmm4, xmm5
        /* down column n: rows t at r12 + t * ldc * 4 */
        mov     rax, r12
        vmovss  [rax], xmm0
        add     rax, r13
        vextractps [rax], xmm0, 1
        add     rax, r13
        vextractps [rax], xmm0, 2
        add     rax, r13
        vextractps [rax], xmm0, 3
        add     rax, r13
        vmovss  [rax], xmm4
        add     rax, r13
        vextractps [rax], xmm4, 1
        add     rax, r13
        vextractps [rax], xmm4, 2
        add     rax, r13
        vextractps [rax], xmm4, 3
        add     r12, 4
        add     rdx, rcx
        dec     rdi
        jmp     1b

9:      vzeroupper
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbp
        pop     rbx
        ret
PG_ENDFUNC(\name)
.endm

        .text
KGEMM pg_q4_K_q8_K_gemm_ukr_8x1_avx512vnni, T_Q4_K
KGEMM pg_q5_K_q8_K_gemm_ukr_8x1_avx512vnni, T_Q5_K
KGEMM pg_q6_K_q8_K_gemm_ukr_8x1_avx512vnni, T_Q6_K

        PG_RODATA
        .p2align 6
/* q4_K / q5_K: chunk c's int16 lanes -> [sc_2c x 16, sc_2c+1 x 16]; then
 * the minima doubled: word i -> 8 + i / 2 */
g4_idx:
        .irp s, 0, 1, 2, 3, 4, 5, 6, 7
        .rept 16
        .short \s
        .endr
        .endr
        .irp s, 8, 9, 10, 11, 12, 13, 14, 15
        .rept 2
        .short \s
        .endr
        .endr
        .rept 16
        .short 0
        .endr
/* q6_K: int16 lane i of part t -> scale 4t + i / 8 */
g6_idx:
        .irp s, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
        .rept 8
        .short \s
        .endr
        .endr
/* q5_K: chunk c's qh bits, 2c for the low half and 2c + 1 for the high */
g5_bits:
        .irp c, 0, 1, 2, 3
        .rept 32
        .byte 1 << (2*\c)
        .endr
        .rept 32
        .byte 2 << (2*\c)
        .endr
        .endr
g5_sixteen:
        .rept 64
        .byte 16
        .endr
g4_nibshift:
        .quad 0, 0, 0, 0, 4, 4, 4, 4
g6_shl_lo:
        .quad 4, 4, 4, 4, 2, 2, 2, 2
g6_shr_hi:
        .quad 0, 0, 0, 0, 2, 2, 2, 2
g4_shv:
        .long 0, 0, 0, 4
g4_mask1:
        .long 0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f
g4_mask2:
        .long 0, 0x30303030, 0, 0x30303030

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

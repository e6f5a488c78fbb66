/* u8s8_gemm_6x32_avx2.S - one 6x32 tile of C = epilogue(A_u8 . B_s8)
 * with plain AVX2 (vpmaddwd): the avx2 level, for CPUs without VNNI (AMD
 * Zen 2 / Zen 3, Intel before Ice Lake), where the int8 products would
 * otherwise fall back to fp32.
 *
 * Exact, unlike the vpmaddubsw route other engines take on these CPUs:
 * vpmaddubsw adds two u8 x s8 products in saturating int16, and 255 x 127
 * x 2 does not fit (a silent wrong answer); vpmaddwd multiplies int16
 * pairs into int32, where nothing overflows.  Both run two a cycle here
 * and each does 16 products per ymm (vpmaddubsw 32, but it needs a second
 * vpmaddwd to widen), so the exact route costs the vpmovsx widening of B
 * and no products.
 *
 * Both operands are widened to int16 on the way in:
 *   - B: one 16-byte piece of a packed group (4 columns x 4 k, gemm_u8s8.h)
 *     by vpmovsxbw is 16 int16 where dword 2j holds column j's k pair
 *     (0, 1) and dword 2j + 1 its pair (2, 3);
 *   - A: rows of int16, so that the 4 k of a group are one qword and
 *     vpbroadcastq puts them against every column's two pairs.  The driver
 *     widens a row tile once for a group of panels and passes it in
 *     ep->a_wide (pg_u8s8_params.wide_a); without it each row's bytes are
 *     widened (vpmovzxbw) into a stack buffer a chunk of KC k at a time.
 *     Widening in every call cost ~5% of the tile (6 x 32 x 768: 2.05
 *     against 1.95 us).  The k loop reads a chunk's rows through rcx,
 *     r10-r14 either way.
 * vpmaddwd then leaves in dword 2j and 2j + 1 the two halves of column
 * j's 4-k sum; they add up (vphaddd, vpermq back in column order) once,
 * after the last chunk.
 *
 * The tile runs as four passes of 8 columns (those past nr skipped), each
 * over the chunk: 12 accumulators ymm0-ymm11 (row r in ymm[2r] for
 * columns 0-3 and ymm[2r+1] for 4-7 of the pass, unreduced), B in ymm12 /
 * ymm13, A in ymm14, the products in ymm15.  A group of 4 k is 12
 * vpmaddwd + 12 vpaddd on 2 widening loads and 6 broadcasts.  The
 * accumulators live in a stack buffer between chunks.  A row past mr
 * aliases row 0; a tile of at most 4 (2) rows runs passes without the
 * products of rows 4-5 (2-5), which the epilogue would not store (M = 128
 * ends in a 2-row tile that cost a 6-row one: ~2% of such a product).
 *
 * Epilogue: u8s8_tile_avx2.h, from the 6 x 32 int32 buffer (shared
 * with the avxvnni kernel).
 *
 * void pg_u8s8_gemm_6x32_avx2(size_t mr, size_t nr, size_t k,
 *          rdi       rsi        rdx
 *          const uint8_t *a, size_t lda, const int8_t *b, void *c,
 *          rcx               r8          r9              [rbp+16]
 *          size_t ldc, const pg_u8s8_epilogue *ep);
 *          [rbp+24]    [rbp+32]                                          */
#include "pg_asm.h"
#include "u8s8_tile_avx2.h"

/* the frame above rsp (32-aligned): the epilogue's products [0, 768) and
 * slots [768, 800), mr and nr, the accumulators between chunks (4 passes
 * x 6 rows x 2 ymm), the widened A chunk (6 rows x KC int16), and the
 * rows' pointers: A's bytes and the driver's widened ones (0: none) */
#define S_MR    qword ptr [rsp + 800]
#define S_NR    qword ptr [rsp + 808]
#define ACC     832
#define AW      2368
#define KC      512
#define ROWS    (AW + 6 * 2 * KC)
#define S_ROW(r)  qword ptr [rsp + ROWS + 8 * (r)]
#define S_WROW(r) qword ptr [rsp + ROWS + 48 + 8 * (r)]
#define FRAME   (ROWS + 96)

/* row \r (pointer \row) of A, bytes rbx .. rbx + r8 of the chunk, widened
 * into AW + 2 KC \r: 16 bytes a step while 16 remain, then 4 (r8 is a
 * multiple of 4; no byte past the row's k is read) */
.macro WIDEN row, r
        xor     eax, eax
        lea     rdx, [\row + rbx]
        cmp     r8, 16
        jb      2f
        lea     rsi, [r8 - 16]                  /* the last 16-byte step's start */
1:      vpmovzxbw ymm15, xmmword ptr [rdx + rax]
        vmovdqa [rsp + 2 * rax + AW + 2 * KC * \r], ymm15
        add     rax, 16
        cmp     rax, rsi
        jbe     1b
2:      cmp     rax, r8
        jae     3f
        vmovd   xmm15, dword ptr [rdx + rax]
        vpmovzxbw xmm15, xmm15
        vmovq   qword ptr [rsp + 2 * rax + AW + 2 * KC * \r], xmm15
        add     rax, 4
        jmp     2b
3:
.endm

/* \m r, reg for each row r and the register that holds its pointer in the
 * k loop */
.macro FOR_ROWS m
        \m     0, rcx
        \m     1, r10
        \m     2, r11
        \m     3, r12
        \m     4, r13
        \m     5, r14
.endm
.macro SAVE_ROW r, reg
        mov     S_ROW(\r), \reg
.endm
.macro SAVE_WROW r, reg
        mov     S_WROW(\r), \reg
.endm
/* the driver's row r at the chunk (rax: its first k's byte offset) */
.macro AT_WROW r, reg
        mov     \reg, S_WROW(\r)
        add     \reg, rax
.endm
.macro WIDEN_ROW r, reg
        mov     rdi, S_ROW(\r)
        WIDEN   rdi, \r
.endm
.macro AT_AW r, reg
        lea     \reg, [rsp + AW + 2 * KC * \r]
.endm

/* a row's 4 k of group \u (qword at \row + rax + 8 u: its widened chunk)
 * against the pass's 8 columns */
.macro ROW row, a0, a1, u
        vpbroadcastq ymm14, qword ptr [\row + rax + 8 * \u]
        vpmaddwd ymm15, ymm14, ymm12
        vpaddd  \a0, \a0, ymm15
        vpmaddwd ymm15, ymm14, ymm13
        vpaddd  \a1, \a1, ymm15
.endm

/* group u of 4 k for the first \rows rows (2, 4 or 6): the pass's 32
 * bytes of B at rdx + 128 u */
.macro GROUP rows, u
        vpmovsxbw ymm12, xmmword ptr [rdx + 128 * \u]
        vpmovsxbw ymm13, xmmword ptr [rdx + 128 * \u + 16]
        ROW     rcx, ymm0, ymm1, \u
        ROW     r10, ymm2, ymm3, \u
.if \rows > 2
        ROW     r11, ymm4, ymm5, \u
        ROW     r12, ymm6, ymm7, \u
.endif
.if \rows > 4
        ROW     r13, ymm8, ymm9, \u
        ROW     r14, ymm10, ymm11, \u
.endif
.endm

/* the 12 accumulators of pass \q from / to the buffer between chunks */
.macro ACCS_LOAD q
        .irp i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
        vmovdqa ymm\i, [rsp + ACC + 384 * \q + 32 * \i]
        .endr
.endm
.macro ACCS_STORE q
        .irp i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
        vmovdqa [rsp + ACC + 384 * \q + 32 * \i], ymm\i
        .endr
.endm

/* the sums of pass q, row r (in \a0, \a1): pairs added, back in column
 * order, into the products buffer's row r, columns 8q .. 8q + 7 */
.macro REDUCE q, r, a0, a1
        vphaddd \a0, \a0, \a1
        vpermq  \a0, \a0, 0xd8
        vmovdqa [rsp + 128 * \r + 32 * \q], \a0
.endm

/* pass q (columns 8q .. 8q + 7) of the first \rows rows over the chunk:
 * rbx its first k, r8 its widened bytes (8 per group), r15 k; the
 * accumulators start at zero in the first chunk and go to the products
 * buffer after the last (a K of at most KC never touches the buffer
 * between); two groups an iteration */
.macro PASS q, rows
        cmp     S_NR, 8 * \q
        jbe     9f
        test    rbx, rbx
        jnz     4f
        .irp i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
        vpxor   ymm\i, ymm\i, ymm\i
        .endr
        jmp     5f
4:      ACCS_LOAD \q
5:      mov     rdx, rbx
        shl     rdx, 5                          /* group rbx / 4 at 128 bytes each */
        lea     rdx, [r9 + rdx + 32 * \q]
        xor     eax, eax
        mov     rsi, r8
        shr     rsi, 4                          /* pairs of groups */
        jz      2f
        .p2align 4
1:      GROUP   \rows, 0
        GROUP   \rows, 1
        add     rdx, 256
        add     rax, 16
        dec     rsi
        jnz     1b
2:      test    r8, 8                           /* a group left */
        jz      3f
        GROUP   \rows, 0
3:      lea     rax, [rbx + KC]
        cmp     rax, r15                        /* the last chunk? */
        jae     6f
        ACCS_STORE \q
        jmp     9f
6:      REDUCE  \q, 0, ymm0, ymm1
        REDUCE  \q, 1, ymm2, ymm3
        REDUCE  \q, 2, ymm4, ymm5
        REDUCE  \q, 3, ymm6, ymm7
        REDUCE  \q, 4, ymm8, ymm9
        REDUCE  \q, 5, ymm10, ymm11
9:
.endm

/* the four passes of the chunk over the first \rows rows */
.macro PASSES rows
        PASS    0, \rows
        PASS    1, \rows
        PASS    2, \rows
        PASS    3, \rows
.endm

        .text
PG_FUNC(pg_u8s8_gemm_6x32_avx2)
        U8S8_ENTER FRAME
        mov     S_MR, rdi
        mov     S_NR, rsi
        mov     r15, rdx                        /* k */
        FOR_ROWS SAVE_ROW
        mov     rax, ARG_EP                     /* the widened rows, if given */
        mov     rcx, [rax + 72]
        mov     S_WROW(0), rcx
        test    rcx, rcx
        jz      1f
        mov     r8, [rax + 80]
        add     r8, r8                          /* their stride in bytes */
        PG_NEXT_ROW r10, rcx, rcx, 2
        PG_NEXT_ROW r11, r10, rcx, 3
        PG_NEXT_ROW r12, r11, rcx, 4
        PG_NEXT_ROW r13, r12, rcx, 5
        PG_NEXT_ROW r14, r13, rcx, 6
        FOR_ROWS SAVE_WROW
1:
        xor     ebx, ebx                        /* the chunk's first k */
.Lchunk:
        mov     r8, r15
        sub     r8, rbx
        mov     eax, KC
        cmp     r8, rax
        cmova   r8, rax                         /* its length */
        cmp     S_WROW(0), 0
        je      .Lwiden
        lea     rax, [rbx + rbx]                /* the driver's rows at the chunk */
        FOR_ROWS AT_WROW
        jmp     .Lpasses
.Lwiden:
        FOR_ROWS WIDEN_ROW
        FOR_ROWS AT_AW
.Lpasses:
        add     r8, r8                          /* widened bytes */
        cmp     S_MR, 4                         /* a short tile skips rows 4-5 (2-5) */
        ja      .Lpasses6
        cmp     S_MR, 2
        ja      .Lpasses4
        PASSES  2
        jmp     .Lchunk_done
.Lpasses4:
        PASSES  4
        jmp     .Lchunk_done
.Lpasses6:
        PASSES  6
.Lchunk_done:
        shr     r8, 1
        add     rbx, r8
        cmp     rbx, r15
        jb      .Lchunk

        mov     rdi, S_MR
        mov     rsi, S_NR
        U8S8_EPILOGUE_6x32 .Lout
.Lout:  U8S8_LEAVE
PG_ENDFUNC(pg_u8s8_gemm_6x32_avx2)

        PG_RODATA
        U8S8_EPILOGUE_CONSTS

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif

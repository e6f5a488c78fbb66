/* amx_tiles.h - the tile set-up and the k loops shared by the 32 x 32 AMX kernels
 * (bf16_gemm_32x32_amx.S, u8s8_gemm_32x32_amx.S); included after pg_asm.h.
 *
 * The configuration of a tile of mr (1..32) rows: tmm0 / tmm1 C rows 0-15,
 * tmm2 / tmm3 C rows 16-31 (left unconfigured when mr <= 16), tmm4 / tmm5
 * A rows 0-15 / 16-31, tmm6 / tmm7 B; every tile row is 64 bytes.  The 32
 * configurations are a table in the kernel's read-only data
 * (AMX_CFG_TABLE), 64 bytes each.
 *
 * AMX_CFG_32x32 (mr in rdi) loads mr's configuration only when the tiles
 * do not already hold it: ldtilecfg costs about 50 ns (it zeroes every
 * tile; Sapphire Rapids), as long as a whole 32 x 32 x 256 tile's products
 * take, while sttilecfg and a compare with the table's entry cost 3.  So
 * the kernels leave the tiles configured when they return, and the drivers
 * release them (pg_amx_tile_release) once a thread has made its run of
 * calls.  (The configuration used to be written byte by byte on the stack
 * each call; loading those 64 bytes back as one stalled on the stores, 40
 * ns a call.)  Sets rbx = the rows of the second half (mr - 16, or 0);
 * [rsp + 64] is 64 bytes of scratch (64-aligned) for the stored
 * configuration.  Clobbers rax, zmm0, k1. */
#ifndef PG_AMX_TILES_H
#define PG_AMX_TILES_H

.macro AMX_CFG_32x32
        lea     rbx, [rip + amx_cfg_32x32 - 64]
        mov     rax, rdi
        shl     rax, 6
        add     rax, rbx                        /* mr's entry */
        sttilecfg [rsp + 64]
        vmovdqu64 zmm0, [rsp + 64]
        vpcmpeqq k1, zmm0, [rax]
        kortestb k1, k1
        jc      93f                             /* all eight quadwords equal */
        ldtilecfg [rax]
93:     mov     rbx, rdi
        sub     rbx, 16
        jae     94f
        xor     ebx, ebx
94:
.endm

/* one configuration: palette 1, colsb (u16) at 16 + 2 i, rows at 48 + i */
.macro AMX_CFG_ENTRY mr
        .byte   1
        .fill   15, 1, 0
.if \mr > 16
        .short  64, 64, 64, 64, 64, 64, 64, 64
.else
        .short  64, 64, 0, 0, 64, 0, 64, 64
.endif
        .fill   16, 1, 0
.if \mr > 16
        .byte   16, 16, \mr - 16, \mr - 16, 16, \mr - 16, 16, 16
.else
        .byte   \mr, \mr, 0, 0, \mr, 0, 16, 16
.endif
        .fill   8, 1, 0
.endm

/* the table AMX_CFG_32x32 reads: entry mr - 1 for mr rows */
.macro AMX_CFG_TABLE
        .p2align 6
amx_cfg_32x32:
        .irp mr, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, \
                 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32
        AMX_CFG_ENTRY \mr
        .endr
.endm

/* The products of rdx steps of 32 bf16 pairs / 64 bytes of k, for both
 * kernels (tdp: tdpbf16ps or tdpbusd): tmm0..tmm3 += A rows 0-15 / 16-31
 * (rcx / r12, row stride r10) times the panel's two 16-column halves (r9,
 * pair-row stride r11 = 128).  AMX_STEPS_2x2 for mr > 16, AMX_STEPS_1x2
 * (tmm0, tmm1 from rcx) otherwise.  On exit the pointers have moved past
 * the rdx steps and rdx is 0.
 *
 * Software-pipelined: a tile of the next step loads right after this
 * step's last product that reads it, so the loads overlap the products
 * still running instead of waiting for all four (0.6-1.3 points of the
 * peak on a 32 x 32 x 384 tile).  B's tiles load with the T1 hint: in the
 * driver B streams past once per A tile (gemm_bf16.c, gemm_u8s8.c), and
 * the hint keeps its lines from pushing A's rows out of L1 (a 128 x 384 x
 * 384 product 57% -> 62% of the TDPBF16PS peak, 512 x 512 x 512 47% ->
 * 56%).  Uses local labels 95-97. */
.macro AMX_STEPS_2x2 tdp
        test    rdx, rdx
        jz      97f
        tileloadd   tmm4, [rcx + r10 * 1]
        tileloaddt1 tmm6, [r9 + r11 * 1]
        tileloaddt1 tmm7, [r9 + r11 * 1 + 64]
        tileloadd   tmm5, [r12 + r10 * 1]
        dec     rdx
        jz      96f
        .p2align 4
95:     add     rcx, 64
        add     r12, 64
        add     r9, 2048
        \tdp    tmm0, tmm4, tmm6
        \tdp    tmm1, tmm4, tmm7
        tileloadd   tmm4, [rcx + r10 * 1]
        \tdp    tmm2, tmm5, tmm6
        tileloaddt1 tmm6, [r9 + r11 * 1]
        \tdp    tmm3, tmm5, tmm7
        tileloaddt1 tmm7, [r9 + r11 * 1 + 64]
        tileloadd   tmm5, [r12 + r10 * 1]
        dec     rdx
        jnz     95b
96:     \tdp    tmm0, tmm4, tmm6
        \tdp    tmm1, tmm4, tmm7
        \tdp    tmm2, tmm5, tmm6
        \tdp    tmm3, tmm5, tmm7
        add     rcx, 64
        add     r12, 64
        add     r9, 2048
97:
.endm

.macro AMX_STEPS_1x2 tdp
        test    rdx, rdx
        jz      97f
        tileloadd   tmm4, [rcx + r10 * 1]
        tileloaddt1 tmm6, [r9 + r11 * 1]
        tileloaddt1 tmm7, [r9 + r11 * 1 + 64]
        dec     rdx
        jz      96f
        .p2align 4
95:     add     rcx, 64
        add     r9, 2048
        \tdp    tmm0, tmm4, tmm6
        tileloaddt1 tmm6, [r9 + r11 * 1]
        \tdp    tmm1, tmm4, tmm7
        tileloadd   tmm4, [rcx + r10 * 1]
        tileloaddt1 tmm7, [r9 + r11 * 1 + 64]
        dec     rdx
        jnz     95b
96:     \tdp    tmm0, tmm4, tmm6
        \tdp    tmm1, tmm4, tmm7
        add     rcx, 64
        add     r9, 2048
97:
.endm

#endif

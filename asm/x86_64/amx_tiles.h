/* amx_tiles.h - the tile set-up shared by the 32 x 32 AMX kernels
 * (bf16_gemm_32x32_amx.S, u8s8_gemm_32x32_amx.S); included after pg_asm.h.
 *
 * AMX_CFG_32x32 writes at [rsp] (64 bytes, 64-aligned) the configuration
 * of a tile of mr (rdi, 1..32) rows: tmm0 / tmm1 C rows 0-15, tmm2 / tmm3
 * C rows 16-31 (left unconfigured when mr <= 16), tmm4 / tmm5 A rows 0-15 /
 * 16-31, tmm6 / tmm7 B; every tile row is 64 bytes.  rbx = the rows of the
 * second half (mr - 16, or 0).
 *
 * The configuration is loaded only when the tiles do not already hold it:
 * ldtilecfg costs about 50 ns (it zeroes every tile; Sapphire Rapids), as
 * long as a whole 32 x 32 x 256 tile's products take, while sttilecfg and a
 * compare cost 5.  So the kernels leave the tiles configured when they
 * return, and the drivers release them (pg_amx_tile_release) once a thread
 * has made its run of calls.  [rsp + 64] is 64 bytes of scratch for the
 * stored configuration.  Clobbers rax, zmm0, k1. */
#ifndef PG_AMX_TILES_H
#define PG_AMX_TILES_H

.macro AMX_CFG_32x32
        vpxord  zmm0, zmm0, zmm0
        vmovdqu64 [rsp], zmm0
        mov     byte ptr [rsp], 1               /* palette 1 */
        mov     rax, rdi                        /* rows of the first half: min(mr, 16) */
        cmp     rax, 16
        jbe     91f
        mov     eax, 16
91:     mov     rbx, rdi
        sub     rbx, rax
        /* colsb (u16) at 16 + 2 i, rows at 48 + i */
        mov     word ptr [rsp + 16], 64
        mov     word ptr [rsp + 18], 64
        mov     word ptr [rsp + 24], 64
        mov     word ptr [rsp + 28], 64
        mov     word ptr [rsp + 30], 64
        mov     byte ptr [rsp + 48], al
        mov     byte ptr [rsp + 49], al
        mov     byte ptr [rsp + 52], al
        mov     byte ptr [rsp + 54], 16
        mov     byte ptr [rsp + 55], 16
        test    rbx, rbx
        jz      92f
        mov     word ptr [rsp + 20], 64
        mov     word ptr [rsp + 22], 64
        mov     word ptr [rsp + 26], 64
        mov     byte ptr [rsp + 50], bl
        mov     byte ptr [rsp + 51], bl
        mov     byte ptr [rsp + 53], bl
92:     sttilecfg [rsp + 64]
        vmovdqu64 zmm0, [rsp]
        vpcmpeqq k1, zmm0, [rsp + 64]
        kortestb k1, k1
        jc      93f                             /* all eight quadwords equal */
        ldtilecfg [rsp]
93:
.endm

#endif

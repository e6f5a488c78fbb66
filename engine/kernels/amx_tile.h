/* amx_tile.h - releasing the AMX tiles after a run of kernel calls.
 *
 * The AMX kernels (bf16_gemm_32x32_amx, u8s8_gemm_32x32_amx) leave the
 * tiles configured when they return, so that the next call on the thread
 * skips ldtilecfg (asm/x86_64/amx_tiles.h: about 50 ns a call).  A driver
 * calls its variant's params.finish - this function for those kernels -
 * once a thread has made its calls. */
#ifndef PG_KERNELS_AMX_TILE_H
#define PG_KERNELS_AMX_TILE_H

#if defined(__x86_64__)
void pg_amx_tile_release(void);
#endif

#endif

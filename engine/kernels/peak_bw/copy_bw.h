/* copy_bw.h - the memory-bandwidth yardstick that bandwidth-bound kernels
 * (GEMV) are measured against: an assembly streaming copy, timed. */
#ifndef PG_KERNELS_PEAK_BW_COPY_BW_H
#define PG_KERNELS_PEAK_BW_COPY_BW_H

#include <stddef.h>

/* dst <- src, bytes a multiple of 128, both 64-byte aligned. */
void pg_copy_avx2(void *dst, const void *src, size_t bytes);
void pg_copy_neon(void *dst, const void *src, size_t bytes);

#endif

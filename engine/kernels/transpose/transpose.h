/* transpose.h - fp32 (any 4-byte element) block transpose: the Transpose
 * executor's planes (exec/ops_data.c), whole tiles at a time.
 *
 *     dst[c * ldd + r] = src[r * lds + c]    r < rows, c < cols
 *
 * rows and cols are multiples of the variant's tile (params: 16 for
 * AVX-512, 8 for AVX2, 4 for NEON, 1 for the C reference); the executor
 * copies the edges past the last whole tile itself.  Strides count
 * elements; src and dst must not overlap.  Each tile is loaded as tile rows
 * of vectors, transposed in registers (unpack / shuffle networks) and
 * stored as tile rows: every load and store is a whole vector, where the C
 * loop moved one element at a time (8x slower than a copy of the same
 * bytes). */
#ifndef PG_KERNELS_TRANSPOSE_H
#define PG_KERNELS_TRANSPOSE_H

#include <stddef.h>

#include "../variant.h"

/* params of every variant: the tile its rows and cols must be multiples of */
typedef struct pg_transpose_params {
    int tile;
} pg_transpose_params;

void pg_f32_transpose_c(size_t rows, size_t cols, const float *src, size_t lds, float *dst, size_t ldd);
void pg_f32_transpose_avx2(size_t rows, size_t cols, const float *src, size_t lds, float *dst, size_t ldd);
void pg_f32_transpose_avx512f(size_t rows, size_t cols, const float *src, size_t lds, float *dst, size_t ldd);
void pg_f32_transpose_neon(size_t rows, size_t cols, const float *src, size_t lds, float *dst, size_t ldd);

extern const pg_kernel_family pg_kernels_transpose;

#endif

/* vadd.h - elementwise y = a + b over n floats. */
#ifndef PG_KERNELS_VADD_H
#define PG_KERNELS_VADD_H

#include <stddef.h>

#include "../variant.h"

/* the binary member of pg_kernel_fn (kernel_fn.h), shared with vmul */
typedef pg_f32_binary_fn pg_f32_vadd_fn;

void pg_f32_vadd_c(size_t n, const float *a, const float *b, float *y);
void pg_f32_vadd_avx2(size_t n, const float *a, const float *b, float *y);
void pg_f32_vadd_neon(size_t n, const float *a, const float *b, float *y);

extern const pg_kernel_family pg_kernels_vadd;

#endif

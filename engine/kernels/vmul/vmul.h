/* vmul.h - elementwise y = a * b over n floats.
 *
 * One-dimensional on purpose: a row broadcast (b one row, a many) is the
 * caller invoking the kernel once per row with the same b.  y may equal a
 * or b; otherwise no overlap.  Exact (one IEEE multiply per element), so
 * every variant must match the C reference bit for bit. */
#ifndef PG_KERNELS_VMUL_H
#define PG_KERNELS_VMUL_H

#include <stddef.h>

#include "../variant.h"

/* the binary member of pg_kernel_fn (kernel_fn.h), shared with vadd */
typedef pg_f32_binary_fn pg_f32_vmul_fn;

void pg_f32_vmul_c(size_t n, const float *a, const float *b, float *y);
void pg_f32_vmul_avx2(size_t n, const float *a, const float *b, float *y);
void pg_f32_vmul_neon(size_t n, const float *a, const float *b, float *y);

extern const pg_kernel_family pg_kernels_vmul;

#endif

/* unary_fn.h - the one signature every elementwise unary kernel shares
 * (vexp, sigmoid, tanh, silu, gelu_erf, gelu_tanh), so the public
 * pg_kernel_unary() and the checks can call any of them the same way.
 *
 * y[i] = f(x[i]) for 0 <= i < n.  y may equal x (in place); otherwise the
 * two must not overlap.  Nothing outside x[0..n) / y[0..n) is touched. */
#ifndef PG_KERNELS_UNARY_FN_H
#define PG_KERNELS_UNARY_FN_H

#include <stddef.h>

/* typedef void (*pg_f32_unary_fn)(size_t n, const float *x, float *y):
 * the unary member of pg_kernel_fn, defined with the others there. */
#include "kernel_fn.h"

#endif

/* parallel.h - splitting an executor's independent items (rows, element
 * runs) over the model's threads.
 *
 * pg_exec_parallel(k, n, cost, fn, ctx) calls fn(ctx, begin, end) over
 * disjoint ranges covering [0, n), on up to k->threads threads - but only
 * as many as the work pays for: each extra thread needs about
 * PG_EXEC_MIN_WORK units (cost per item x items, cost in elements touched),
 * since waking a worker costs microseconds and a 50 K-element Add takes
 * about ten.  Small tensors (and k->threads <= 1) run fn(ctx, 0, n) on the
 * calling thread.  `align` rounds the range boundaries to a multiple of it
 * (elementwise kernels: whole vectors, so the split never changes which
 * elements go through a kernel's tail code - results are bit-identical for
 * any thread count). */
#ifndef PG_EXEC_PARALLEL_H
#define PG_EXEC_PARALLEL_H

#include <stdint.h>

#include "ops.h"

#define PG_EXEC_MIN_WORK (48 * 1024)

typedef void (*pg_range_fn)(void *ctx, int64_t begin, int64_t end);

void pg_exec_parallel(const pg_kctx *k, int64_t n, int64_t cost, int64_t align,
                      pg_range_fn fn, void *ctx);

#endif

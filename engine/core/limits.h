/* limits.h - size limits of the compiler (limits.c). */
#ifndef PG_CORE_LIMITS_H
#define PG_CORE_LIMITS_H

#include <stddef.h>
#include <stdint.h>

#include "peregrine.h"

/* Bytes one tensor or the arena may take at most (pg_set_memory_limit). */
uint64_t pg_memory_limit(void);
/* elem * prod(shape) in *bytes; -1 when a dim is negative or it overflows. */
int pg_shape_bytes(int rank, const int64_t *shape, size_t elem, uint64_t *bytes);

#endif

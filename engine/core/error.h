/* error.h - how engine code reports a failure.
 *
 * pg_fail() records a message in the calling thread's last-error slot and
 * returns the status, so a failing path reads `return pg_fail(...)`. */
#ifndef PG_CORE_ERROR_H
#define PG_CORE_ERROR_H

#include "peregrine.h"

#if defined(__GNUC__)
#define PG_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PG_PRINTF(a, b)
#endif

pg_status pg_fail(pg_status status, const char *fmt, ...) PG_PRINTF(2, 3);
/* Forget the last error (called at the top of API entry points that can
 * succeed after an earlier failure, so a stale message is never read). */
void pg_clear_error(void);

#endif

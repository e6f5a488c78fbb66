/* error.c - the thread-local last error behind pg_last_error(). */
#include <stdarg.h>
#include <stdio.h>

#include "error.h"

static _Thread_local char last_message[1024];
static _Thread_local pg_status last_status = PG_OK;

pg_status pg_fail(pg_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    last_status = status;
    return status;
}

void pg_clear_error(void)
{
    last_message[0] = '\0';
    last_status = PG_OK;
}

const char *pg_last_error(void) { return last_message; }
pg_status pg_last_status(void) { return last_status; }

const char *pg_status_name(pg_status s)
{
    switch (s) {
    case PG_OK: return "PG_OK";
    case PG_ERR_INVALID_ARG: return "PG_ERR_INVALID_ARG";
    case PG_ERR_NOMEM: return "PG_ERR_NOMEM";
    case PG_ERR_UNSUPPORTED: return "PG_ERR_UNSUPPORTED";
    case PG_ERR_SHAPE: return "PG_ERR_SHAPE";
    case PG_ERR_DTYPE: return "PG_ERR_DTYPE";
    case PG_ERR_GRAPH: return "PG_ERR_GRAPH";
    case PG_ERR_IO: return "PG_ERR_IO";
    case PG_ERR_FORMAT: return "PG_ERR_FORMAT";
    case PG_ERR_INTERNAL: return "PG_ERR_INTERNAL";
    }
    return "PG_ERR_UNKNOWN";
}

const char *pg_version(void) { return PG_VERSION_STRING; }

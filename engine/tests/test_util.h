/* test_util.h - the checks every C test uses: CHECK records a failure and
 * goes on (so one run reports them all), OK stops at a failed API call with
 * its status and message.  A test's main returns `failures ? 1 : 0`. */
#ifndef PG_TEST_UTIL_H
#define PG_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#include "peregrine.h"

static int failures;

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond)) {                                                        \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);            \
            printf(__VA_ARGS__);                                              \
            printf("\n");                                                     \
            failures++;                                                       \
        }                                                                     \
    } while (0)

#define OK(call)                                                              \
    do {                                                                      \
        pg_status st_ = (call);                                               \
        if (st_ != PG_OK) {                                                   \
            printf("FAIL %s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call,   \
                   pg_status_name(st_), pg_last_error());                     \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

#endif

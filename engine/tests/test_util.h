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

/* Runs m on its one input "x" [rows, cols], filled with a fixed pattern
 * in [-0.5, 0.5) (x: rows * cols floats, written). */
static inline void run_on_pattern(pg_model *m, float *x, int rows, int cols)
{
    for (int i = 0; i < rows * cols; i++)
        x[i] = (float)((i * 37) % 11) / 11.0f - 0.5f;
    const char *names[1] = { "x" };
    const void *data[1] = { x };
    int ranks[1] = { 2 };
    int64_t xd[2] = { rows, cols };
    const int64_t *shapes[1] = { xd };
    OK(pg_model_run(m, 1, names, data, ranks, shapes));
}

#endif

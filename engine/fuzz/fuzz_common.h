/* fuzz_common.h - what the libFuzzer targets share: a byte reader that
 * never runs past the input (zeros after the end), a sink that reads every
 * byte of a buffer (so AddressSanitizer sees a bad pointer the engine hands
 * out), and a check that aborts with a message (a broken invariant is a
 * crash to libFuzzer, saved like any other).
 *
 * The targets are built by engine/fuzz/meson.build (-Dfuzz=true, clang)
 * and run by tests/run_fuzz.sh; tests/test_fuzz_regressions.py replays
 * their corpora and every crash ever found through the Python API. */
#ifndef PG_FUZZ_COMMON_H
#define PG_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "peregrine.h"

typedef struct fz_reader {
    const uint8_t *p;
    size_t n, i;
} fz_reader;

static inline uint8_t fz_u8(fz_reader *r) { return r->i < r->n ? r->p[r->i++] : 0; }
static inline int fz_more(const fz_reader *r) { return r->i < r->n; }

static inline uint64_t fz_u64(fz_reader *r)
{
    uint64_t v = 0;
    for (int k = 0; k < 8; k++)
        v |= (uint64_t)fz_u8(r) << (8 * k);
    return v;
}

/* Reads every byte: an out-of-bounds or dangling buffer is reported here. */
static volatile uint8_t fz_sink_byte;
static inline void fz_touch(const void *p, size_t n)
{
    const volatile uint8_t *b = p;
    uint8_t x = 0;
    for (size_t k = 0; k < n; k++)
        x ^= b[k];
    fz_sink_byte ^= x;
}

static inline void fz_touch_str(const char *s)
{
    if (!s)
        return;
    size_t n = 0;
    while (s[n])
        n++;
    fz_touch(s, n);
}

/* A status the engine may return; anything else is a bug. */
static inline void fz_check_status(pg_status st, const char *what)
{
    if (st < PG_OK || st > PG_ERR_INTERNAL) {
        fprintf(stderr, "fuzz: %s returned status %d, which is no pg_status\n", what, (int)st);
        abort();
    }
    if (st == PG_ERR_INTERNAL) {
        fprintf(stderr, "fuzz: %s returned PG_ERR_INTERNAL (a bug by its own account): %s\n",
                what, pg_last_error());
        abort();
    }
    if (st != PG_OK)
        fz_touch_str(pg_last_error());   /* the message is a valid string */
}

#define FZ_ASSERT(cond, ...)                                                  \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "fuzz: %s:%d: check failed: %s: ", __FILE__,      \
                    __LINE__, #cond);                                         \
            fprintf(stderr, __VA_ARGS__);                                     \
            fputc('\n', stderr);                                              \
            abort();                                                          \
        }                                                                     \
    } while (0)

#endif

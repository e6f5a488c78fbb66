/* check_round_f16.c - round_f16 against its C reference: the bits of every
 * result, and for a NaN result only that it is a NaN (round_f16.h: the
 * payload may differ).  checkasm_check_f32 would pass -0 for +0, so the
 * comparison here is its own.
 *
 * Every n from 0 to 70 and some long rows (the vector steps and every
 * tail), the rows ending where their buffers do (the guards catch a write
 * past n) and so at every alignment; values over the f16 normal range, its
 * subnormals, float denormals, past 65504 (65520 and up overflow), exact
 * ties between two halves (nearest even), signed zeros, infinities, NaNs
 * of any payload, any bit pattern, and a fixed list of the boundaries; no
 * scale (+0, -0), the decoder's q_scale values, a scale that overflows,
 * and NaN / inf scales; then in place. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../kernels/round_f16/round_f16.h"
#include "checkasm.h"

#define MAXN 4099

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static float rand_value(void)
{
    float sign = (checkasm_rand() & 1) ? -1.0f : 1.0f;
    switch (checkasm_rand() % 11) {
    case 0: return sign * ldexpf(checkasm_randf(1, 2), -14 + (int)(checkasm_rand() % 30));  /* normal */
    case 1: return sign * ldexpf(checkasm_randf(1, 2), -25 - (int)(checkasm_rand() % 11));  /* subnormal */
    case 2: return sign * (65504.0f + checkasm_randf(0, 48));                    /* around overflow */
    case 3: {                                       /* an exact tie between two halves */
        float m = (float)(1024 + checkasm_rand() % 1024) + 0.5f;
        return sign * ldexpf(m, -34 + (int)(checkasm_rand() % 40));
    }
    case 4: return sign * 0.0f;
    case 5: return sign * INFINITY;
    case 6: return from_bits(0x7f800001u | checkasm_rand() | (checkasm_rand() & 1u) << 31);  /* NaN */
    case 7: return sign * ldexpf(checkasm_randf(1, 2), -26 - (int)(checkasm_rand() % 124)); /* tiny */
    case 8: return from_bits(checkasm_rand());                                  /* any bits */
    default: return checkasm_randf(-100, 100);
    }
}

/* the boundaries: overflow, the normal / subnormal edge, the ties */
static const float fixed[] = {
    65504.0f, 65519.996f, 65520.0f, 65535.0f, 65536.0f, -65520.0f, FLT_MAX, -FLT_MAX,
    0x1p-14f, 0x1p-14f - 0x1p-25f, 0x1p-14f - 0x1p-26f, 0x1.ffcp-15f, 0x1p-24f, 0x1p-25f,
    0x1.000002p-25f, 0x1.8p-24f, 0x1.4p-23f, -0x1p-25f, FLT_MIN, FLT_TRUE_MIN, -FLT_TRUE_MIN,
    1.0f + 0x1p-11f, 1.0f + 0x3p-11f, 1.0f + 0x1p-11f + 0x1p-23f, 2047.5f, 2048.0f + 1.0f,
    -0.0f, 0.0f, INFINITY, -INFINITY, NAN, -NAN,
};

/* the first index where got is not ref (bits; NaN-ness for a NaN), n if none */
static size_t first_diff(const float *ref, const float *got, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (isnan(ref[i]) || isnan(got[i])) {
            if (!(isnan(ref[i]) && isnan(got[i])))
                return i;
        } else if (memcmp(&ref[i], &got[i], sizeof(float))) {
            return i;
        }
    }
    return n;
}

static int check_one(const char *what, const float *x, const float *ref, const float *got, size_t n,
                     float scale, const void *buf)
{
    size_t d = first_diff(ref, got, n);
    if (d < n) {
        uint32_t u;
        memcpy(&u, &x[d], sizeof u);
        return checkasm_fail("  %s n=%zu scale=%g: y[%zu] of x=%.9g (0x%08x): expected %.9g, got %.9g",
                             what, n, (double)scale, d, (double)x[d], u, (double)ref[d], (double)got[d]);
    }
    return checkasm_guards_ok(buf, what);
}

void checkasm_check_round_f16(void)
{
    declare_func(round_f16);
    const pg_kernel_family *op = &pg_kernels_round_f16;
    static const size_t big[] = { 257, 1000, MAXN };
    static const float scales[] = { 0.0f, -0.0f, 1.0f, 0.0625f, 0.088388346f, 0.125f, -3.0f, 1e5f,
                                    NAN, INFINITY };
    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        checkasm_set_funcs(op, v);
        /* a variant's own buffers: one that overran cannot fail the next */
        float *x = checkasm_alloc_f32(MAXN), *yr = checkasm_alloc_f32(MAXN);
        float *yn = checkasm_alloc_f32(MAXN), *xi = checkasm_alloc_f32(MAXN);
        for (size_t i = 0; i <= 70 + PG_COUNTOF(big); i++) {
            size_t n = i <= 70 ? i : big[i - 71], at = MAXN - n;
            for (size_t k = 0; k < n; k++)
                x[at + k] = rand_value();
            if (n == MAXN)
                memcpy(x, fixed, sizeof fixed);
            for (int si = 0; si < PG_COUNTOF(scales); si++) {
                float scale = scales[si];
                if (checkasm_small() && n > 70 && si > 1)
                    continue;
                memset(yn, 0x5a, MAXN * sizeof(float));
                call_ref(n, x + at, scale, yr + at);
                call_new(n, x + at, scale, yn + at);
                if (!check_one("y", x + at, yr + at, yn + at, n, scale, yn))
                    goto next;
                for (size_t b = 0; b < at * sizeof(float); b++)
                    if (((const uint8_t *)yn)[b] != 0x5a) {
                        checkasm_fail("  y: wrote before y (n=%zu)", n);
                        goto next;
                    }
                memcpy(xi, x, MAXN * sizeof(float));
                call_new(n, xi + at, scale, xi + at);                           /* in place */
                if (!check_one("in place", x + at, yr + at, xi + at, n, scale, xi))
                    goto next;
            }
        }
        {
            size_t n = 4096;
            checkasm_fill_f32(x, n, -8, 8);
            checkasm_bench_label("n=%zu", n);
            checkasm_bench_work(0, 8.0 * n);
            bench_new(n, x, 0.0f, yn);
            checkasm_bench_label("n=%zu scaled", n);
            checkasm_bench_work(n, 8.0 * n);
            bench_new(n, x, 0.125f, yn);
        }
    next:;
    }
    checkasm_report("round_f16");
}

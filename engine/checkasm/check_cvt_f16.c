/* check_cvt_f16.c - fp32 <-> f16 rows (cvt_f16.h) against the C
 * reference, bit for bit: every n from 0 to 40 and some long rows (the
 * vector steps and every tail), values over the whole f16 range and past
 * it (overflow to inf), subnormals, exact ties (round to nearest even),
 * signed zeros, infinities; and every finite f16 bit pattern widened. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../kernels/cvt_f16/cvt_f16.h"
#include "checkasm.h"

static float rand_value(void)
{
    uint32_t r = checkasm_rand() % 8;
    float sign = (checkasm_rand() & 1) ? -1.0f : 1.0f;
    switch (r) {
    case 0: return sign * ldexpf(checkasm_randf(1, 2), -(int)(checkasm_rand() % 30));  /* to subnormal */
    case 1: return sign * ldexpf(checkasm_randf(1, 2), 14 + (int)(checkasm_rand() % 3));  /* near 65504 */
    case 2: {                                       /* an exact tie between two halves */
        float b = ldexpf((float)(1024 + checkasm_rand() % 1024) + 0.5f, -(int)(checkasm_rand() % 20));
        return sign * b;
    }
    case 3: return sign * 0.0f;
    case 4: return sign * INFINITY;
    default: return checkasm_randf(-100, 100);
    }
}

void checkasm_check_cvt_f16(void)
{
    static const size_t ns[] = { 0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 23, 31, 32, 33, 40, 257, 1000 };
    {
        const pg_kernel_family *op = &pg_kernels_cvt_f32_f16;
        declare_func(quantize);
        for (int v = 0; v < op->count; v++) {
            if (!checkasm_check_variant(op, v))
                continue;
            checkasm_set_funcs(op, v);
            for (int i = 0; i < PG_COUNTOF(ns); i++) {
                size_t n = ns[i];
                float *x = checkasm_alloc_f32(n ? n : 1);
                uint8_t *a = checkasm_alloc(2 * n + 1), *b = checkasm_alloc(2 * n + 1);
                for (size_t k = 0; k < n; k++)
                    x[k] = rand_value();
                memset(a, 0xa5, 2 * n);
                memset(b, 0x5a, 2 * n);
                call_ref(n, x, a);
                call_new(n, x, b);
                if (!checkasm_guards_ok(b, "y") || memcmp(a, b, 2 * n)) {
                    checkasm_fail("  cvt_f32_f16 n=%zu differs", n);
                    break;
                }
            }
            if (checkasm_bench_enabled()) {
                size_t n = 16384;
                float *x = checkasm_alloc_f32(n);
                uint8_t *y = checkasm_alloc(2 * n);
                checkasm_fill_f32(x, n, -1, 1);
                checkasm_bench_label("n=%zu", n);
                checkasm_bench_work(0, 6.0 * n);
                bench_new(n, x, y);
            }
        }
    }
    {
        const pg_kernel_family *op = &pg_kernels_cvt_f16_f32;
        declare_func(widen);
        size_t all = 0x7c00 * 2;   /* every finite pattern of both signs, and the infinities */
        uint16_t *h = checkasm_alloc(2 * (all + 2));
        float *a = checkasm_alloc_f32(all + 2), *b = checkasm_alloc_f32(all + 2);
        for (size_t k = 0; k < all; k++)
            h[k] = (uint16_t)((k % 0x7c00) | (k >= 0x7c00 ? 0x8000 : 0));
        h[all] = 0x7c00, h[all + 1] = 0xfc00;
        for (int v = 0; v < op->count; v++) {
            if (!checkasm_check_variant(op, v))
                continue;
            checkasm_set_funcs(op, v);
            for (int i = 0; i < PG_COUNTOF(ns); i++) {
                size_t n = ns[i], off = checkasm_rand() % (all + 2 - n);
                call_ref(n, h + off, a);
                call_new(n, h + off, b);
                if (memcmp(a, b, n * sizeof(float))) {
                    checkasm_fail("  cvt_f16_f32 n=%zu differs", n);
                    goto next;
                }
            }
            call_ref(all + 2, h, a);
            call_new(all + 2, h, b);
            if (!checkasm_guards_ok(b, "y") || memcmp(a, b, (all + 2) * sizeof(float)))
                checkasm_fail("  cvt_f16_f32: not every f16 pattern widens as the reference");
        next:;
        }
    }
    checkasm_report("cvt_f16");
}

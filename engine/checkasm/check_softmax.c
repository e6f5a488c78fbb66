/* check_softmax.c - every softmax variant against a double-precision
 * evaluation, with and without a mask (0, -inf and large negative
 * entries), for scales 1, 1/8 and -1/2.
 *
 * Tolerance per element, relative to y: v = scale x + mask is rounded once
 * or twice in float (by the variant as by the C reference), an error of up
 * to |v| 2^-24 that exp turns into a relative one, and so does the max it
 * subtracts; then exp's own error, the float sum (n terms in 16 lanes) and
 * the final scale: y (4 + |v| + |max| + n / 16) 2^-23. */
#include <math.h>
#include <stdio.h>

#include "../kernels/softmax/softmax.h"
#include "checkasm.h"

static void truth_of(size_t n, const float *x, float scale, const float *mask, float *t,
                     float *tol)
{
    double m = -INFINITY, sum = 0;
    for (size_t i = 0; i < n; i++) {
        double v = (double)scale * x[i] + (mask ? mask[i] : 0.0);
        m = v > m ? v : m;
    }
    for (size_t i = 0; i < n; i++)
        sum += exp((double)scale * x[i] + (mask ? mask[i] : 0.0) - m);
    for (size_t i = 0; i < n; i++) {
        double v = (double)scale * x[i] + (mask ? mask[i] : 0.0);
        double y = exp(v - m) / sum;
        t[i] = (float)y;
        tol[i] = isinf(v) ? 0.0f : (float)(y * ldexp(4.0 + fabs(v) + fabs(m) + n / 16.0, -23));
    }
}

void checkasm_check_softmax(void)
{
    declare_func(softmax);
    const pg_kernel_family *op = &pg_kernels_softmax;
    static const float scales[] = { 1.0f, 0.125f, -0.5f };
    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        checkasm_set_funcs(op, v);
        double worst = 0; /* largest |y - truth| / (y 2^-24) */
        for (int i = 0; i < checkasm_n_sizes; i++) {
            size_t n = checkasm_sizes[i];
            float *x = checkasm_alloc_f32(n), *mask_buf = checkasm_alloc_f32(n);
            float *y_ref = checkasm_alloc_f32(n), *y_new = checkasm_alloc_f32(n);
            float *t = checkasm_alloc_f32(n), *tol = checkasm_alloc_f32(n);
            for (int k = 0; k < 6; k++) {
                float scale = scales[k % 3], *mask = NULL;
                checkasm_fill_f32(x, n, -12, 12);
                if (k >= 3) {
                    mask = mask_buf;
                    for (size_t j = 0; j < n; j++) {
                        uint32_t r = checkasm_rand() % 4;
                        mask[j] = r == 0 ? -INFINITY : r == 1 ? -1e9f : r == 2 ? 0.0f
                                                                 : checkasm_randf(-3, 0);
                    }
                    if (n)
                        mask[checkasm_rand() % n] = 0.0f; /* at least one kept */
                }
                truth_of(n, x, scale, mask, t, tol);
                call_ref(n, x, scale, mask, y_ref);
                call_new(n, x, scale, mask, y_new);
                checkasm_check_f32_tol("y", t, y_new, n, tol);
                for (size_t j = 0; j < n; j++)
                    if (t[j] > 0) {
                        double e = fabs((double)y_new[j] - t[j]) / (t[j] * ldexp(1.0, -24));
                        worst = e > worst ? e : worst;
                    }
                call_new(n, x, scale, mask, x); /* in place */
                checkasm_check_f32("in place", y_new, x, n, 0, 0);
            }
        }
        printf("      %-24s max error %.1f * 2^-24 y (x in [-12, 12])\n", op->variants[v].name,
               worst);
        size_t n = 4096;
        float *x = checkasm_alloc_f32(n), *y = checkasm_alloc_f32(n);
        checkasm_fill_f32(x, n, -12, 12);
        checkasm_bench_label("n=%zu", n);
        checkasm_bench_work(0, 8.0 * n);
        bench_new(n, x, 0.125f, NULL, y);
    }
    checkasm_report("softmax");
}

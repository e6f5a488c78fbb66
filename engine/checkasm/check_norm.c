/* check_norm.c - layernorm and rmsnorm: every variant against the C
 * reference (which sums in double, so it is the exact result rounded
 * once), on rows with a zero, small and large common offset, with and
 * without beta, in place too.
 *
 * Tolerance: the variants sum n floats in 16 lanes, an error of about
 * (n/16 + 8) 2^-24 of the sum of |terms|; it moves the mean (layernorm) and
 * the scale r, so element i may be off by
 *     |gamma_i| r (|x_i - mean| + mean|x|) (n/16 + 8) 2^-23 + 2^-22 |y_i| + 2^-23 |beta_i|. */
#include <math.h>
#include <stdio.h>

#include "../kernels/layernorm/layernorm.h"
#include "../kernels/rmsnorm/rmsnorm.h"
#include "checkasm.h"

static void row_fill(float *x, size_t n, int k)
{
    static const float offsets[] = { 0.0f, 3.0f, 100.0f, -20.0f };
    static const float spreads[] = { 1.0f, 0.01f, 5.0f, 1e-3f };
    checkasm_fill_f32(x, n, -spreads[k % 4], spreads[k % 4]);
    for (size_t i = 0; i < n; i++)
        x[i] += offsets[k % 4];
}

static double sum_err_factor(size_t n)
{
    return ldexp((double)n / 16.0 + 8.0, -23);
}

void checkasm_check_layernorm(void)
{
    declare_func(layernorm);
    const pg_kernel_family *op = &pg_kernels_layernorm;
    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        checkasm_set_funcs(op, v);
        for (int i = 0; i < checkasm_n_sizes; i++) {
            size_t n = checkasm_sizes[i];
            float *x = checkasm_alloc_f32(n), *g = checkasm_alloc_f32(n);
            float *b_buf = checkasm_alloc_f32(n);
            float *y_ref = checkasm_alloc_f32(n), *y_new = checkasm_alloc_f32(n);
            float *tol = checkasm_alloc_f32(n);
            for (int k = 0; k < 8; k++) {
                float *b = k >= 4 ? b_buf : NULL;
                float eps = 1e-5f;
                row_fill(x, n, k);
                checkasm_fill_f32(g, n, -2, 2);
                if (b)
                    checkasm_fill_f32(b, n, -1, 1);
                call_ref(n, x, g, b, eps, y_ref);
                call_new(n, x, g, b, eps, y_new);
                double mean = 0, mabs = 0, var = 0;
                for (size_t j = 0; j < n; j++) {
                    mean += x[j];
                    mabs += fabs(x[j]);
                }
                mean = n ? mean / n : 0;
                mabs = n ? mabs / n : 0;
                for (size_t j = 0; j < n; j++)
                    var += (x[j] - mean) * (x[j] - mean);
                double r = n ? 1.0 / sqrt(var / n + eps) : 0;
                for (size_t j = 0; j < n; j++)
                    tol[j] = (float)(fabs(g[j]) * r * (fabs(x[j] - mean) + mabs) * sum_err_factor(n) +
                                     ldexp(fabs(y_ref[j]), -22) + (b ? ldexp(fabs(b[j]), -23) : 0));
                checkasm_check_f32_tol("y", y_ref, y_new, n, tol);
                call_new(n, x, g, b, eps, x); /* in place */
                checkasm_check_f32("in place", y_new, x, n, 0, 0);
            }
        }
        size_t n = 4096;
        float *x = checkasm_alloc_f32(n), *g = checkasm_alloc_f32(n), *b = checkasm_alloc_f32(n);
        float *y = checkasm_alloc_f32(n);
        row_fill(x, n, 0);
        checkasm_fill_f32(g, n, -2, 2);
        checkasm_fill_f32(b, n, -1, 1);
        checkasm_bench_label("n=%zu", n);
        checkasm_bench_work(0, 16.0 * n); /* x, gamma, beta in, y out */
        bench_new(n, x, g, b, 1e-5f, y);
    }
    checkasm_report("layernorm");
}

void checkasm_check_rmsnorm(void)
{
    declare_func(rmsnorm);
    const pg_kernel_family *op = &pg_kernels_rmsnorm;
    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        checkasm_set_funcs(op, v);
        for (int i = 0; i < checkasm_n_sizes; i++) {
            size_t n = checkasm_sizes[i];
            float *x = checkasm_alloc_f32(n), *g = checkasm_alloc_f32(n);
            float *y_ref = checkasm_alloc_f32(n), *y_new = checkasm_alloc_f32(n);
            float *tol = checkasm_alloc_f32(n);
            for (int k = 0; k < 4; k++) {
                row_fill(x, n, k);
                checkasm_fill_f32(g, n, -2, 2);
                call_ref(n, x, g, 1e-6f, y_ref);
                call_new(n, x, g, 1e-6f, y_new);
                double ss = 0;
                for (size_t j = 0; j < n; j++)
                    ss += (double)x[j] * x[j];
                double r = n ? 1.0 / sqrt(ss / n + 1e-6) : 0;
                for (size_t j = 0; j < n; j++)
                    tol[j] = (float)(fabs(g[j]) * r * fabs(x[j]) * sum_err_factor(n) +
                                     ldexp(fabs(y_ref[j]), -22));
                checkasm_check_f32_tol("y", y_ref, y_new, n, tol);
                call_new(n, x, g, 1e-6f, x); /* in place */
                checkasm_check_f32("in place", y_new, x, n, 0, 0);
            }
        }
        size_t n = 4096;
        float *x = checkasm_alloc_f32(n), *g = checkasm_alloc_f32(n), *y = checkasm_alloc_f32(n);
        row_fill(x, n, 0);
        checkasm_fill_f32(g, n, -2, 2);
        checkasm_bench_label("n=%zu", n);
        checkasm_bench_work(0, 12.0 * n); /* x, gamma in, y out */
        bench_new(n, x, g, 1e-6f, y);
    }
    checkasm_report("rmsnorm");
}

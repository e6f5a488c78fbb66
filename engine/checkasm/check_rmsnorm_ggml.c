/* check_rmsnorm_ggml.c - rmsnorm_ggml (the GGUF decoder's norm, in ggml's
 * rounding order): every variant against the C reference on rows with a
 * zero, small and large common offset, in place too.
 *
 * Tolerance: the variants sum the same double squares in lanes, which can
 * move the double sum by a few of its ulps; the float scale rounded from it
 * is then one float ulp off at most (a sum that close to a rounding
 * boundary), so y may differ by 2^-22 |y| (two roundings of a scale one ulp
 * apart); in every other case the results are bit-identical. */
#include <math.h>

#include "../kernels/rmsnorm_ggml/rmsnorm_ggml.h"
#include "checkasm.h"

static void row_fill(float *x, size_t n, int k)
{
    static const float offsets[] = { 0.0f, 3.0f, 100.0f, -20.0f };
    static const float spreads[] = { 1.0f, 0.01f, 5.0f, 1e-3f };
    checkasm_fill_f32(x, n, -spreads[k % 4], spreads[k % 4]);
    for (size_t i = 0; i < n; i++)
        x[i] += offsets[k % 4];
}

void checkasm_check_rmsnorm_ggml(void)
{
    declare_func(rmsnorm);
    const pg_kernel_family *op = &pg_kernels_rmsnorm_ggml;
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
                call_ref(n, x, g, 1e-5f, y_ref);
                call_new(n, x, g, 1e-5f, y_new);
                for (size_t j = 0; j < n; j++)
                    tol[j] = (float)ldexp(fabs(y_ref[j]), -22);
                checkasm_check_f32_tol("y", y_ref, y_new, n, tol);
                call_new(n, x, g, 1e-5f, x); /* in place */
                checkasm_check_f32("in place", y_new, x, n, 0, 0);
            }
        }
        size_t n = 4096;
        float *x = checkasm_alloc_f32(n), *g = checkasm_alloc_f32(n), *y = checkasm_alloc_f32(n);
        row_fill(x, n, 0);
        checkasm_fill_f32(g, n, -2, 2);
        checkasm_bench_label("n=%zu", n);
        checkasm_bench_work(0, 12.0 * n); /* x, gamma in, y out */
        bench_new(n, x, g, 1e-5f, y);
    }
    checkasm_report("rmsnorm_ggml");
}

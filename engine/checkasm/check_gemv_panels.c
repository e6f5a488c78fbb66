/* check_gemv_panels.c - every gemv_panels variant against the C reference.
 *
 * B is packed by SGEMM's own pack (pg_sgemm_pack_panels) in the variant's
 * panel width (32, 16 or 12; 16 for the C reference).  N walks the edge
 * sizes of each width (whole groups of four panels, the one-panel path, a
 * last panel shorter than a half, exactly a half, longer), K 0 (y = bias),
 * 1, a few and some hundreds, with and without bias.  y is exactly N
 * floats between guards, filled with NaN first (a kernel must overwrite it,
 * and write nothing past N).  Tolerance as gemv's: 2 eps (1 + sqrt K)
 * (|bias_j| + sum_k |x_k B_kj|). */
#include <float.h>
#include <math.h>
#include <stdio.h>

#include "../kernels/gemv_panels/gemv_panels.h"
#include "../kernels/sgemm/sgemm.h"
#include "checkasm.h"

static const size_t extra_n[] = { 11, 12, 13, 15, 16, 17, 31, 32, 33, 47, 48, 49, 59, 63, 64,
                                   65, 79, 127, 128, 129, 143, 176, 200, 1000 };
static const size_t ks[] = { 0, 1, 2, 5, 64, 300 };

void checkasm_check_gemv_panels(void)
{
    declare_func(gemv_panels);
    const pg_kernel_family *op = &pg_kernels_gemv_panels;
    size_t max_n = 1000, max_k = 300;
    for (int i = 0; i < checkasm_n_sizes; i++)
        max_n = checkasm_sizes[i] > max_n ? checkasm_sizes[i] : max_n;
    size_t max_p = max_n + 31;   /* columns of any packing (nr <= 32) */
    float *x = checkasm_alloc_f32(max_k), *B = checkasm_alloc_f32(max_k * max_n);
    float *packed = checkasm_alloc_f32(max_k * max_p), *bias_buf = checkasm_alloc_f32(max_n);
    float *y_ref = checkasm_alloc_f32(max_n), *tol = checkasm_alloc_f32(max_n);
    int n_sizes = checkasm_n_sizes + PG_COUNTOF(extra_n);

    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        checkasm_set_funcs(op, v);
        const pg_gemv_panels_params *prm = op->variants[v].params;
        size_t nr = prm->nr > 0 ? (size_t)prm->nr : 16;
        for (int i = 0; i < n_sizes; i++) {
            size_t N = i < checkasm_n_sizes ? checkasm_sizes[i] : extra_n[i - checkasm_n_sizes];
            if (checkasm_small() && N > 200)
                continue;
            float *y_new = checkasm_alloc_f32(N);
            for (int ki = 0; ki < PG_COUNTOF(ks); ki++) {
                size_t K = ks[ki];
                for (int with_bias = 0; with_bias < 2; with_bias++) {
                    const float *bias = with_bias ? bias_buf : NULL;
                    checkasm_fill_f32(x, K, -1, 1);
                    checkasm_fill_f32(B, K * N, -1, 1);
                    checkasm_fill_f32(bias_buf, N, -1, 1);
                    pg_sgemm_pack_panels(K, N, B, N, nr, packed);
                    for (size_t j = 0; j < N; j++)
                        y_ref[j] = y_new[j] = NAN;
                    call_ref(N, K, x, packed, bias, y_ref, nr);
                    call_new(N, K, x, packed, bias, y_new, nr);
                    double scale = 2.0 * FLT_EPSILON * (1.0 + sqrt((double)K));
                    for (size_t j = 0; j < N; j++) {
                        double s = bias ? fabs(bias[j]) : 0.0;
                        for (size_t k = 0; k < K; k++)
                            s += fabs((double)x[k] * B[k * N + j]);
                        tol[j] = (float)(scale * s) + FLT_MIN;
                    }
                    if (!checkasm_check_f32_tol("y", y_ref, y_new, N, tol) ||
                        !checkasm_guards_ok(y_new, "y")) {
                        checkasm_fail("  at N=%zu K=%zu %s", N, K, bias ? "bias" : "no bias");
                        goto next_variant;
                    }
                }
            }
        }
        if (checkasm_bench_enabled()) {
            /* the decode case: 64 MiB of weights, far beyond the caches */
            size_t N = 4096, K = 4096;
            float *bx = checkasm_alloc_f32(K), *bb = checkasm_alloc_f32(K * N);
            float *bp = checkasm_alloc_f32(K * N), *by = checkasm_alloc_f32(N);
            checkasm_fill_f32(bx, K, -1, 1);
            checkasm_fill_f32(bb, K * N, -1, 1);
            pg_sgemm_pack_panels(K, N, bb, N, nr, bp);
            checkasm_bench_label("%zux%zu nr=%zu", K, N, nr);
            checkasm_bench_work(2.0 * N * K, 4.0 * N * K);
            bench_new(N, K, bx, bp, NULL, by, nr);
            double copy = pg_measure_copy_gbps((size_t)4 * N * K, 1);
            printf("   yardstick: asm copy of %zu MiB, 1 thread: %.2f GB/s (read + write)\n",
                   (size_t)4 * N * K >> 20, copy);
        }
    next_variant:;
    }
    checkasm_report("gemv_panels");
}

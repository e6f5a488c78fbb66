/* gemv_panels_ref.c - the C reference (the oracle: plain, never tuned),
 * any panel width, summing in k order as the kernels do. */
#include "gemv_panels.h"

void pg_f32_gemv_panels_c(size_t N, size_t K, const float *x, const float *b, const float *bias,
                          float *y, size_t nr)
{
    for (size_t j = 0; j < N; j++) {
        const float *col = b + (j / nr) * K * nr + j % nr;
        float acc = bias ? bias[j] : 0.0f;
        for (size_t k = 0; k < K; k++)
            acc += x[k] * col[k * nr];
        y[j] = acc;
    }
}

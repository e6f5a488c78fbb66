/* gemv_ref.c - the C reference (the oracle: plain, never tuned).  It sums in
 * k order, as the kernels do, so only rounding (fused or not) differs. */
#include "gemv.h"

void pg_f32_gemv_c(size_t N, size_t K, const float *x, const float *B, size_t ldb,
                   const float *bias, float *y)
{
    for (size_t j = 0; j < N; j++) {
        float acc = bias ? bias[j] : 0.0f;
        for (size_t k = 0; k < K; k++)
            acc += x[k] * B[k * ldb + j];
        y[j] = acc;
    }
}

/* gemv_nk_ref.c - the C reference (the oracle: plain, never tuned). */
#include "gemv_nk.h"

void pg_f32_gemv_nk_c(size_t N, size_t K, const float *x, const float *W, size_t ldw,
                      const float *bias, float *y)
{
    for (size_t n = 0; n < N; n++) {
        float acc = 0.0f;
        for (size_t k = 0; k < K; k++)
            acc += W[n * ldw + k] * x[k];
        y[n] = acc + (bias ? bias[n] : 0.0f);
    }
}

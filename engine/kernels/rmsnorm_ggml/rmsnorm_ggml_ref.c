/* rmsnorm_ggml_ref.c - the C reference (the oracle: ggml's order, plain loops). */
#include <math.h>

#include "rmsnorm_ggml.h"

void pg_f32_rmsnorm_ggml_c(size_t n, const float *x, const float *gamma, float eps, float *y)
{
    if (n == 0)
        return;
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += (double)(x[i] * x[i]);
    float scale = 1.0f / sqrtf((float)(sum / (double)n) + eps);
    for (size_t i = 0; i < n; i++)
        y[i] = (x[i] * scale) * gamma[i];
}

/* rmsnorm_ref.c - the C reference (the oracle: plain, double sums). */
#include <math.h>

#include "rmsnorm.h"

void pg_f32_rmsnorm_c(size_t n, const float *x, const float *gamma, float eps, float *y)
{
    if (n == 0)
        return;
    double ss = 0.0;
    for (size_t i = 0; i < n; i++)
        ss += (double)x[i] * x[i];
    double rms = 1.0 / sqrt(ss / (double)n + eps);
    for (size_t i = 0; i < n; i++)
        y[i] = (float)(x[i] * rms * gamma[i]);
}

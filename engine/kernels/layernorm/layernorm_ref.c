/* layernorm_ref.c - the C reference (the oracle: plain, double sums). */
#include <math.h>

#include "layernorm.h"

void pg_f32_layernorm_c(size_t n, const float *x, const float *gamma, const float *beta,
                        float eps, float *y)
{
    if (n == 0)
        return;
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += x[i];
    double mean = sum / (double)n;
    double ss = 0.0;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - mean) * (x[i] - mean);
    double rstd = 1.0 / sqrt(ss / (double)n + eps);
    for (size_t i = 0; i < n; i++)
        y[i] = (float)((x[i] - mean) * rstd * gamma[i] + (beta ? beta[i] : 0.0f));
}

/* gelu_erf_ref.c - the C reference: the defining formula, literally. */
#include <math.h>

#include "gelu_erf.h"

void pg_f32_gelu_erf_c(size_t n, const float *x, float *y)
{
    const float r = 0.7071067811865476f; /* 1 / sqrt 2 */
    for (size_t i = 0; i < n; i++)
        y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * r));
}

/* sigmoid_ref.c - the C reference (the oracle: libm, plain, never tuned). */
#include <math.h>

#include "sigmoid.h"

void pg_f32_sigmoid_c(size_t n, const float *x, float *y)
{
    for (size_t i = 0; i < n; i++)
        y[i] = 1.0f / (1.0f + expf(-x[i]));
}

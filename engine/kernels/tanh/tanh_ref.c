/* tanh_ref.c - the C reference (the oracle: libm, plain, never tuned). */
#include <math.h>

#include "tanh.h"

void pg_f32_tanh_c(size_t n, const float *x, float *y)
{
    for (size_t i = 0; i < n; i++)
        y[i] = tanhf(x[i]);
}

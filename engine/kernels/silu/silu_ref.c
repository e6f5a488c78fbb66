/* silu_ref.c - the C reference (the oracle: libm, plain, never tuned). */
#include <math.h>

#include "silu.h"

void pg_f32_silu_c(size_t n, const float *x, float *y)
{
    for (size_t i = 0; i < n; i++)
        y[i] = x[i] / (1.0f + expf(-x[i]));
}

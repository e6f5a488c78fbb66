/* vexp_ref.c - the C reference (the oracle: libm, plain, never tuned). */
#include <math.h>

#include "vexp.h"

void pg_f32_vexp_c(size_t n, const float *x, float *y)
{
    for (size_t i = 0; i < n; i++)
        y[i] = expf(x[i]);
}

/* vadd_ref.c - the C reference (the oracle: plain, never tuned). */
#include "vadd.h"

void pg_f32_vadd_c(size_t n, const float *a, const float *b, float *y)
{
    for (size_t i = 0; i < n; i++)
        y[i] = a[i] + b[i];
}

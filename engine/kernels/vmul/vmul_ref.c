/* vmul_ref.c - the C reference (the oracle: plain, never tuned). */
#include "vmul.h"

void pg_f32_vmul_c(size_t n, const float *a, const float *b, float *y)
{
    for (size_t i = 0; i < n; i++)
        y[i] = a[i] * b[i];
}

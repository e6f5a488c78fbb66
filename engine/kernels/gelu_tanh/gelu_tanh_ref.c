/* gelu_tanh_ref.c - the C reference: the defining formula, literally. */
#include <math.h>

#include "gelu_tanh.h"

void pg_f32_gelu_tanh_c(size_t n, const float *x, float *y)
{
    const float k = 0.7978845608028654f; /* sqrt(2 / pi) */
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        y[i] = 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
    }
}

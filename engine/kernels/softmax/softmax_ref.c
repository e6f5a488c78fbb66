/* softmax_ref.c - the C reference (the oracle: libm, plain, never tuned).
 * The sum is kept in double so the oracle's own rounding stays negligible. */
#include <math.h>

#include "softmax.h"

void pg_f32_softmax_c(size_t n, const float *x, float scale, const float *mask, float *y)
{
    if (n == 0)
        return;
    float m = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        float v = scale * x[i] + (mask ? mask[i] : 0.0f);
        if (v > m)
            m = v;
    }
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        float v = scale * x[i] + (mask ? mask[i] : 0.0f);
        y[i] = expf(v - m);
        sum += y[i];
    }
    float inv = (float)(1.0 / sum);
    for (size_t i = 0; i < n; i++)
        y[i] *= inv;
}

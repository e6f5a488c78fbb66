/* round_f16_ref.c - the C reference of round_f16 (round_f16.h): the
 * decoder's round_f16_1, which reaches the nearest half without the format
 * change (checked against pg_f16_to_f32(pg_f32_to_f16(x)) over all 2^32
 * bit patterns). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "round_f16.h"

static float round_f16_1(float x)
{
    float a = fabsf(x);
    if (!(a < 65520.0f))                      /* NaN stays, the rest overflows */
        return a != a ? x : copysignf(INFINITY, x);
    if (a < 6.103515625e-05f)                 /* f16 subnormals: multiples of 2^-24 */
        return copysignf((x + 0.75f) - 0.75f, x);
    uint32_t u;                               /* normal: 10 mantissa bits, to nearest even */
    memcpy(&u, &x, sizeof u);
    u = (u + 0x0FFFu + ((u >> 13) & 1u)) & ~0x1FFFu;
    memcpy(&x, &u, sizeof x);
    return x;
}

void pg_f32_round_f16_c(size_t n, const float *x, float scale, float *y)
{
    for (size_t i = 0; i < n; i++)
        y[i] = round_f16_1(scale != 0.0f ? x[i] * scale : x[i]);
}

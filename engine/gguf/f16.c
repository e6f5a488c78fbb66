/* f16.c - IEEE half and bfloat16 conversions, bit by bit (no F16C or
 * FP16 instructions: these are the reference the kernels are checked by). */
#include <string.h>

#include "ggml_types.h"

float pg_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t man = h & 0x3ff;
    uint32_t bits;
    if (exp == 0x1f) {                 /* inf / nan */
        bits = sign | 0x7f800000u | (man << 13);
    } else if (exp != 0) {             /* normal: rebias 15 -> 127 */
        bits = sign | ((exp + 112) << 23) | (man << 13);
    } else if (man == 0) {             /* signed zero */
        bits = sign;
    } else {                           /* subnormal: normalise the mantissa */
        int e = -1;
        do {
            man <<= 1;
            e++;
        } while (!(man & 0x400));
        bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ff) << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

float pg_bf16_to_f32(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t pg_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t a = x & 0x7fffffff;
    if (a > 0x7f800000)                      /* nan: stays a (quiet) nan */
        return (uint16_t)(sign | 0x7e00 | ((a >> 13) & 0x3ff));
    if (a >= 0x47800000)                     /* 65536 and up, inf: inf */
        return (uint16_t)(sign | 0x7c00);
    uint32_t e = a >> 23, m = a & 0x7fffff;
    uint32_t h, rem, half;
    if (e >= 113) {                          /* a normal half */
        h = ((e - 112) << 10) | (m >> 13);
        rem = m & 0x1fff;
        half = 0x1000;
    } else {                                 /* a subnormal half, or zero */
        if (e < 102)
            return sign;
        m |= 0x800000;
        uint32_t shift = 126 - e;            /* 14..24 */
        h = m >> shift;
        rem = m & ((1u << shift) - 1);
        half = 1u << (shift - 1);
    }
    if (rem > half || (rem == half && (h & 1)))
        h++;                                 /* may carry into the exponent: right */
    return (uint16_t)(sign | h);
}

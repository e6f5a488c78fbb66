/* qdot_ref.c - C references of the activation quantisers and the
 * quantised dot products (plain, never tuned: the oracle).
 *
 * They follow ggml's reference code bit for bit where it matters: the
 * scale d = max|x| / 127 is stored as f16 (rounded to nearest even), the
 * values are rounded with roundf(x / d) using the f32 scale, and the dot
 * products sum int32 per block, then scale in f32. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../../gguf/ggml_types.h"
#include "qdot.h"

static void put_f16(uint8_t *p, float f)
{
    uint16_t h = pg_f32_to_f16(f);
    p[0] = (uint8_t)h;
    p[1] = (uint8_t)(h >> 8);
}

static float get_f16(const uint8_t *p) { return pg_f16_to_f32((uint16_t)(p[0] | p[1] << 8)); }

/* Scale of a block: d = max|x| / 127 and its inverse (0 for a zero block). */
static float block_scale(const float *x, float *id)
{
    float amax = 0.0f;
    for (int j = 0; j < 32; j++)
        amax = fmaxf(amax, fabsf(x[j]));
    float d = amax / 127.0f;
    *id = d != 0.0f ? 1.0f / d : 0.0f;
    return d;
}

void pg_quantize_row_q8_0_c(size_t n, const float *x, void *y)
{
    uint8_t *out = y;
    for (size_t b = 0; b < n / 32; b++, x += 32, out += 34) {
        float id, d = block_scale(x, &id);
        put_f16(out, d);
        for (int j = 0; j < 32; j++)
            out[2 + j] = (uint8_t)(int8_t)roundf(x[j] * id);
    }
}

void pg_quantize_row_q8_1_c(size_t n, const float *x, void *y)
{
    uint8_t *out = y;
    for (size_t b = 0; b < n / 32; b++, x += 32, out += 36) {
        float id, d = block_scale(x, &id);
        int sum = 0;
        put_f16(out, d);
        for (int j = 0; j < 32; j++) {
            int q = (int)roundf(x[j] * id);
            out[4 + j] = (uint8_t)(int8_t)q;
            sum += q;
        }
        put_f16(out + 2, (float)sum * d);
    }
}

void pg_vec_dot_q8_0_q8_0_c(size_t n, const void *w, const void *a, float *s)
{
    const uint8_t *x = w, *y = a;
    float sum = 0.0f;
    for (size_t b = 0; b < n / 32; b++, x += 34, y += 34) {
        int32_t si = 0;
        for (int j = 0; j < 32; j++)
            si += (int8_t)x[2 + j] * (int8_t)y[2 + j];
        sum += (float)si * (get_f16(x) * get_f16(y));
    }
    *s = sum;
}

void pg_vec_dot_q4_0_q8_0_c(size_t n, const void *w, const void *a, float *s)
{
    const uint8_t *x = w, *y = a;
    float sum = 0.0f;
    for (size_t b = 0; b < n / 32; b++, x += 18, y += 34) {
        int32_t si = 0;
        for (int j = 0; j < 16; j++) {
            si += ((x[2 + j] & 0x0f) - 8) * (int8_t)y[2 + j];
            si += ((x[2 + j] >> 4) - 8) * (int8_t)y[2 + 16 + j];
        }
        sum += (float)si * (get_f16(x) * get_f16(y));
    }
    *s = sum;
}

void pg_vec_dot_q4_1_q8_1_c(size_t n, const void *w, const void *a, float *s)
{
    const uint8_t *x = w, *y = a;
    float sum = 0.0f;
    for (size_t b = 0; b < n / 32; b++, x += 20, y += 36) {
        int32_t si = 0;
        for (int j = 0; j < 16; j++) {
            si += (x[4 + j] & 0x0f) * (int8_t)y[4 + j];
            si += (x[4 + j] >> 4) * (int8_t)y[4 + 16 + j];
        }
        sum += (get_f16(x) * get_f16(y)) * (float)si + get_f16(x + 2) * get_f16(y + 2);
    }
    *s = sum;
}

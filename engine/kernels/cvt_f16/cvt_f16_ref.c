/* cvt_f16_ref.c - the C references (bit by bit, gguf/f16.c) and tables. */
#include <stdint.h>

#include "../../gguf/ggml_types.h"
#include "cvt_f16.h"

void pg_cvt_f32_f16_c(size_t n, const float *x, void *y)
{
    uint8_t *p = y;
    for (size_t i = 0; i < n; i++) {
        uint16_t h = pg_f32_to_f16(x[i]);
        p[2 * i] = (uint8_t)h;
        p[2 * i + 1] = (uint8_t)(h >> 8);
    }
}

void pg_cvt_f16_f32_c(size_t n, const void *x, float *y)
{
    const uint8_t *p = x;
    for (size_t i = 0; i < n; i++)
        y[i] = pg_f16_to_f32((uint16_t)(p[2 * i] | p[2 * i + 1] << 8));
}

static const pg_variant narrow[] = {
#if defined(__x86_64__)
    { "cvt_f32_f16_f16c", "avx", PG_CPU_AVX | PG_CPU_F16C,
      .fn = { .quantize = pg_cvt_f32_f16_f16c }, NULL },
#elif defined(__aarch64__)
    { "cvt_f32_f16_neon", "neon", PG_CPU_NEON, .fn = { .quantize = pg_cvt_f32_f16_neon }, NULL },
#endif
    { "cvt_f32_f16_c", "c", 0, .fn = { .quantize = pg_cvt_f32_f16_c }, NULL },
};
static const pg_variant widen[] = {
#if defined(__x86_64__)
    { "cvt_f16_f32_f16c", "avx", PG_CPU_AVX | PG_CPU_F16C,
      .fn = { .widen = pg_cvt_f16_f32_f16c }, NULL },
#elif defined(__aarch64__)
    { "cvt_f16_f32_neon", "neon", PG_CPU_NEON, .fn = { .widen = pg_cvt_f16_f32_neon }, NULL },
#endif
    { "cvt_f16_f32_c", "c", 0, .fn = { .widen = pg_cvt_f16_f32_c }, NULL },
};

const pg_kernel_family pg_kernels_cvt_f32_f16 = { "cvt_f32_f16", "fp32 -> f16 row (round to nearest even)",
                                                  narrow, PG_COUNTOF(narrow), PG_KERNEL_FN_quantize };
const pg_kernel_family pg_kernels_cvt_f16_f32 = { "cvt_f16_f32", "f16 -> fp32 row",
                                                  widen, PG_COUNTOF(widen), PG_KERNEL_FN_widen };

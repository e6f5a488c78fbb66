/* dwconv_table.c - the variant tables of dwconv3x3, dwconv5x5 and
 * dwconv7x7, best first, C reference last. */
#include "dwconv.h"

static const pg_dwconv_params p3 = { 3, 3 }, p5 = { 5, 5 }, p7 = { 7, 7 };

#define AVX512_FLAGS                                                                         \
    (PG_CPU_AVX512F | PG_CPU_AVX512BW | PG_CPU_AVX512VL | PG_CPU_AVX512DQ | PG_CPU_AVX2 |    \
     PG_CPU_FMA)

static const pg_variant variants3[] = {
#if defined(__x86_64__)
    { "f32_dwconv3x3_avx512f", "avx512", AVX512_FLAGS,
      .fn = { .dwconv = pg_f32_dwconv3x3_avx512f }, &p3 },
    { "f32_dwconv3x3_avx2_fma3", "avx2", PG_CPU_AVX2 | PG_CPU_FMA,
      .fn = { .dwconv = pg_f32_dwconv3x3_avx2_fma3 }, &p3 },
#endif
#if defined(__aarch64__)
    { "f32_dwconv3x3_neon", "neon", PG_CPU_NEON, .fn = { .dwconv = pg_f32_dwconv3x3_neon }, &p3 },
#endif
    { "f32_dwconv3x3_c", "c", 0, .fn = { .dwconv = pg_f32_dwconv3x3_c }, &p3 },
};

static const pg_variant variants5[] = {
#if defined(__x86_64__)
    { "f32_dwconv5x5_avx512f", "avx512", AVX512_FLAGS,
      .fn = { .dwconv = pg_f32_dwconv5x5_avx512f }, &p5 },
    { "f32_dwconv5x5_avx2_fma3", "avx2", PG_CPU_AVX2 | PG_CPU_FMA,
      .fn = { .dwconv = pg_f32_dwconv5x5_avx2_fma3 }, &p5 },
#endif
#if defined(__aarch64__)
    { "f32_dwconv5x5_neon", "neon", PG_CPU_NEON, .fn = { .dwconv = pg_f32_dwconv5x5_neon }, &p5 },
#endif
    { "f32_dwconv5x5_c", "c", 0, .fn = { .dwconv = pg_f32_dwconv5x5_c }, &p5 },
};

static const pg_variant variants7[] = {
#if defined(__x86_64__)
    { "f32_dwconv7x7_avx512f", "avx512", AVX512_FLAGS,
      .fn = { .dwconv = pg_f32_dwconv7x7_avx512f }, &p7 },
    { "f32_dwconv7x7_avx2_fma3", "avx2", PG_CPU_AVX2 | PG_CPU_FMA,
      .fn = { .dwconv = pg_f32_dwconv7x7_avx2_fma3 }, &p7 },
#endif
#if defined(__aarch64__)
    { "f32_dwconv7x7_neon", "neon", PG_CPU_NEON, .fn = { .dwconv = pg_f32_dwconv7x7_neon }, &p7 },
#endif
    { "f32_dwconv7x7_c", "c", 0, .fn = { .dwconv = pg_f32_dwconv7x7_c }, &p7 },
};

const pg_kernel_family pg_kernels_dwconv3x3 = {
    "dwconv3x3", "depthwise 3x3 conv row, NHWC, fp32, bias + clamp/hardswish epilogue",
    variants3, PG_COUNTOF(variants3), PG_KERNEL_FN_dwconv };
const pg_kernel_family pg_kernels_dwconv5x5 = {
    "dwconv5x5", "depthwise 5x5 conv row, NHWC, fp32, bias + clamp/hardswish epilogue",
    variants5, PG_COUNTOF(variants5), PG_KERNEL_FN_dwconv };
const pg_kernel_family pg_kernels_dwconv7x7 = {
    "dwconv7x7", "depthwise 7x7 conv row, NHWC, fp32, bias + clamp/hardswish epilogue",
    variants7, PG_COUNTOF(variants7), PG_KERNEL_FN_dwconv };

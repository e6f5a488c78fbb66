/* gemm_u8s8_table.c - the variant tables of gemm_u8s8, quantize_u8,
 * quantize_u8_span and minmax_keys, best first, C last.  A gemm_u8s8
 * variant with a pair_max under 2 x 255 x 128 runs only where its caller
 * chose it for operands in range (pg_u8s8_select). */
#include <limits.h>

#include "gemm_u8s8.h"

#if defined(__x86_64__)
static const pg_u8s8_params p_32x32 = { .mr = 32, .nr = 32, .finish = pg_amx_tile_release,
                                        .thread_work = 4e7, .pair_max = INT_MAX };
static const pg_u8s8_params p_12x32 = { .mr = 12, .nr = 32,
                                        .thread_work = 2e6, .pair_max = INT_MAX };
static const pg_u8s8_params p_6x32 = { .mr = 6, .nr = 32, .thread_work = 2e6, .pair_max = INT_MAX };
static const pg_u8s8_params p_6x32_maddubs = { .mr = 6, .nr = 32,
                                               .thread_work = 2e6, .pair_max = 32767 };
static const pg_u8s8_params p_6x32_wide = { .mr = 6, .nr = 32,
                                            .thread_work = 2e6, .pair_max = INT_MAX, .wide_a = 1 };
#endif
#if defined(__aarch64__)
static const pg_u8s8_params p_2x32 = { .mr = 2, .nr = 32, .thread_work = 2e6, .pair_max = INT_MAX };
#endif
static const pg_u8s8_params p_4x32 = { .mr = 4, .nr = 32, .thread_work = 2e6, .pair_max = INT_MAX };

#define X86_AVX512 (PG_CPU_AVX512F | PG_CPU_AVX512BW | PG_CPU_AVX512VL | PG_CPU_AVX512DQ | \
                    PG_CPU_AVX2 | PG_CPU_FMA)

static const pg_variant gemm_variants[] = {
#if defined(__x86_64__)
    { "u8s8_gemm_32x32_amx", "amx", X86_AVX512 | PG_CPU_AVX512VNNI | PG_CPU_AMXINT8,
      .fn = { .gemm_u8s8 = pg_u8s8_gemm_32x32_amx }, &p_32x32 },
    { "u8s8_gemm_12x32_avx512vnni", "avx512vnni", X86_AVX512 | PG_CPU_AVX512VNNI,
      .fn = { .gemm_u8s8 = pg_u8s8_gemm_12x32_avx512vnni }, &p_12x32 },
    { "u8s8_gemm_6x32_avxvnni", "avxvnni", PG_CPU_AVX2 | PG_CPU_AVXVNNI,
      .fn = { .gemm_u8s8 = pg_u8s8_gemm_6x32_avxvnni }, &p_6x32 },
    /* exact while 2 a |b| fits int16 (pg_u8s8_select): int8-dynamic's on AVX2 */
    { "u8s8_gemm_6x32_avx2_maddubs", "avx2", PG_CPU_AVX2,
      .fn = { .gemm_u8s8 = pg_u8s8_gemm_6x32_avx2_maddubs }, &p_6x32_maddubs },
    { "u8s8_gemm_6x32_avx2", "avx2", PG_CPU_AVX2,
      .fn = { .gemm_u8s8 = pg_u8s8_gemm_6x32_avx2 }, &p_6x32_wide },
#endif
#if defined(__aarch64__)
    { "u8s8_gemm_4x32_i8mm", "i8mm", PG_CPU_NEON | PG_CPU_I8MM,
      .fn = { .gemm_u8s8 = pg_u8s8_gemm_4x32_i8mm }, &p_4x32 },
    { "u8s8_gemm_2x32_dotprod", "dotprod", PG_CPU_NEON | PG_CPU_DOTPROD,
      .fn = { .gemm_u8s8 = pg_u8s8_gemm_2x32_dotprod }, &p_2x32 },
#endif
    { "u8s8_gemm_4x32_c", "c", 0, .fn = { .gemm_u8s8 = pg_u8s8_gemm_4x32_c }, &p_4x32 },
};

const pg_kernel_family pg_kernels_gemm_u8s8 = {
    "gemm_u8s8", "C = dequant/requant(A_u8 . B_s8), int32 accumulate, B packed once",
    gemm_variants, PG_COUNTOF(gemm_variants), PG_KERNEL_FN_gemm_u8s8 };

static const pg_variant quant_variants[] = {
#if defined(__x86_64__)
    { "quant_u8_row_avx512", "avx512", X86_AVX512,
      .fn = { .quant_u8 = pg_quant_u8_row_avx512 }, NULL },
    { "quant_u8_row_avx2", "avx2", PG_CPU_AVX2,
      .fn = { .quant_u8 = pg_quant_u8_row_avx2 }, NULL },
#endif
    { "quant_u8_row_c", "c", 0, .fn = { .quant_u8 = pg_quant_u8_row_c }, NULL },
};

const pg_kernel_family pg_kernels_quantize_u8 = {
    "quantize_u8", "fp32 row -> u8 with its own scale and zero point (dynamic quantisation)",
    quant_variants, PG_COUNTOF(quant_variants), PG_KERNEL_FN_quant_u8 };

static const pg_variant span_variants[] = {
#if defined(__x86_64__)
    { "quant_u8_span_avx512", "avx512", X86_AVX512,
      .fn = { .quant_u8_span = pg_quant_u8_span_avx512 }, NULL },
    { "quant_u8_span_avx2", "avx2", PG_CPU_AVX2,
      .fn = { .quant_u8_span = pg_quant_u8_span_avx2 }, NULL },
#endif
    { "quant_u8_span_c", "c", 0, .fn = { .quant_u8_span = pg_quant_u8_span_c }, NULL },
};

const pg_kernel_family pg_kernels_quantize_u8_span = {
    "quantize_u8_span", "fp32 -> u8 with a given scale and zero point (per-tensor quantisation)",
    span_variants, PG_COUNTOF(span_variants), PG_KERNEL_FN_quant_u8_span };

static const pg_variant minmax_variants[] = {
#if defined(__x86_64__)
    { "minmax_keys_avx512", "avx512", X86_AVX512,
      .fn = { .minmax_keys = pg_minmax_keys_avx512 }, NULL },
    { "minmax_keys_avx2", "avx2", PG_CPU_AVX2,
      .fn = { .minmax_keys = pg_minmax_keys_avx2 }, NULL },
#endif
    { "minmax_keys_c", "c", 0, .fn = { .minmax_keys = pg_minmax_keys_c }, NULL },
};

const pg_kernel_family pg_kernels_minmax_keys = {
    "minmax_keys", "a float tensor's range as ordered int32 keys, and whether it is finite",
    minmax_variants, PG_COUNTOF(minmax_variants), PG_KERNEL_FN_minmax_keys };

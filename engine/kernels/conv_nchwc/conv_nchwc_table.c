/* conv_nchwc_table.c - the variant table of conv_nchwc, best first, C
 * reference last.  The block width B is part of the data layout the graph
 * is re-laid into, so each row says its B and filter group FB.  One B for
 * now, 16 (a zmm): the C row is the oracle at that width and serves a
 * saved NCHW16c model on any CPU.  AVX2 and AArch64 have no asm row yet:
 * there the re-lay pass (passes/relayout_nchwc.c) leaves the network in
 * NCHW on the SGEMM path, which has asm for both. */
#include "conv_nchwc.h"

static const pg_conv_nchwc_params p16x4 = { 16, 4 };

#define AVX512_FLAGS (PG_CPU_AVX512F | PG_CPU_AVX2 | PG_CPU_FMA)

static const pg_variant variants[] = {
#if defined(__x86_64__)
    { "f32_conv_nchwc_4x16_avx512f", "avx512", AVX512_FLAGS,
      .fn = { .conv_nchwc = pg_f32_conv_nchwc_4x16_avx512f }, &p16x4 },
#endif
    { "f32_conv_nchwc16_c", "c", 0, .fn = { .conv_nchwc = pg_f32_conv_nchwc16_c }, &p16x4 },
};

const pg_kernel_family pg_kernels_conv_nchwc = {
    "conv_nchwc", "direct conv, NCHWc blocked fp32: filter blocks x a pixel run, bias + clamp epilogue",
    variants, PG_COUNTOF(variants), PG_KERNEL_FN_conv_nchwc };

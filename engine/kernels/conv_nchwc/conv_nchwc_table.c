/* conv_nchwc_table.c - the variant table of conv_nchwc, best first, C
 * reference last.  The block width B is part of the data layout the graph
 * is re-laid into, so each row says its B and filter group FB.  One B,
 * 16 (a zmm, two ymm), on every x86-64 level, so a network re-laid on one
 * CPU runs on another; FB, the packing of the weights, follows the
 * registers (4 blocks on AVX-512, 1 on AVX2: see the .S files).  The C
 * rows are the oracle at that width and serve a saved NCHW16c model on any
 * CPU, one per FB so either packing binds.  AArch64 has no asm row yet:
 * there the re-lay pass (passes/fuse_conv.c, run_nchwc) leaves the network
 * in NCHW on the SGEMM path. */
#include "conv_nchwc.h"

static const pg_conv_nchwc_params p16x4 = { 16, 4 }, p16x1 = { 16, 1 };

#define AVX512_FLAGS (PG_CPU_AVX512F | PG_CPU_AVX2 | PG_CPU_FMA)

static const pg_variant variants[] = {
#if defined(__x86_64__)
    { "f32_conv_nchwc_4x16_avx512f", "avx512", AVX512_FLAGS,
      .fn = { .conv_nchwc = pg_f32_conv_nchwc_4x16_avx512f }, &p16x4 },
    { "f32_conv_nchwc_1x16_avx2_fma3", "avx2", PG_CPU_AVX2 | PG_CPU_FMA,
      .fn = { .conv_nchwc = pg_f32_conv_nchwc_1x16_avx2_fma3 }, &p16x1 },
#endif
    { "f32_conv_nchwc16_c", "c", 0, .fn = { .conv_nchwc = pg_f32_conv_nchwc16_c }, &p16x4 },
    { "f32_conv_nchwc16x1_c", "c", 0, .fn = { .conv_nchwc = pg_f32_conv_nchwc16_c }, &p16x1 },
};

const pg_kernel_family pg_kernels_conv_nchwc = {
    "conv_nchwc", "direct conv, NCHWc blocked fp32: filter blocks x a pixel run, bias + clamp epilogue",
    variants, PG_COUNTOF(variants), PG_KERNEL_FN_conv_nchwc };

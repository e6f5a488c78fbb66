/* conv_nchwc.h - fp32 direct convolution on channel-blocked (NCHWc)
 * activations: a group of up to FB blocks of B output channels times a run
 * of output pixels accumulated in registers, the input read in place (no
 * im2col), bias and a clamp (ReLU, ReLU6, Clip) or HardSwish applied
 * before the store.
 *
 * Layout NCHWc: [N, ceil(C / B), H, W, B], channel c of pixel (h, w) at
 * ((c / B) H + h) W B + w B + c % B; the channels past C of the last block
 * are zero when a tensor enters the layout (ReorderInput) and stay finite
 * (every weight that reads them is zero).  B = 16 on every x86-64 level
 * (one zmm, two ymm).  Why: see the header of engine/exec/conv_nchwc.c
 * (the measurement).
 *
 * One call computes, for output pixels p < pixels and filter blocks
 * f < fb:
 *
 *     y[f y_fb + p B .. + B) = act(bias[f B .. + B) (+ y, flag ACCUMULATE)
 *         (+ res[f res_fb + p B .. + B), flag RESIDUAL: a skip tensor added
 *            while the tile is in registers - the residual Add (+ Relu))
 *         + sum_{cb < cin_blocks, ky < kh, kx < kw, ic < cin_blk}
 *             x[cb x_cb + ky x_ky + kx x_kx + p x_pix + ic]      (a scalar)
 *           * w[(((cb KH + ky) KW + kx) cin_blk + ic) fb + f][0 .. B))
 *
 * (x_* and w_* in bytes; x_kx etc. are the caller's strides, so the same
 * loop reads a blocked input - cin_blk = B, ic 4 bytes apart - or a plain
 * NCHW one - cin_blk = 1, x_cb = H W 4: the network's first conv reads
 * its 3-channel image in place.)  The driver resolves padding: rows
 * outside the input are left out of kh (x and w start at the first row
 * inside), and pixels whose window crosses the left or right edge are
 * called one at a time with their kx range (w_ky keeps the full row of
 * taps, so a part of it is a pointer offset).
 *
 * Packed weights (pg_conv_nchwc_pack): output channels in groups of FB
 * blocks; within a group, for each input block cb, tap (ky, kx) and input
 * channel ic, fb vectors of B floats (fb = the group's block count, the
 * last group's may be less than FB).  Output channels past M and input
 * channels past C are zero. */
#ifndef PG_KERNELS_CONV_NCHWC_H
#define PG_KERNELS_CONV_NCHWC_H

#include <stddef.h>
#include <stdint.h>

#include "../variant.h"

/* act: HARDSWISH is x min(max(x + 3, 0), 6) / 6, in that order (the
 * dwconv kernels' form), so every variant agrees with the reference */
enum { PG_CONV_NCHWC_ACT_NONE = 0, PG_CONV_NCHWC_ACT_CLAMP = 1, PG_CONV_NCHWC_ACT_HARDSWISH = 2 };
enum { PG_CONV_NCHWC_ACCUMULATE = 1, PG_CONV_NCHWC_RESIDUAL = 2 };

/* The one argument of a conv_nchwc kernel (offsets read by the asm). */
struct pg_conv_nchwc_args {
    const float *x;      /* @0   input of pixel 0, first tap, channel 0 */
    const float *w;      /* @8   packed weights at that tap (the group's) */
    float *y;            /* @16  output pixel 0, filter block 0 */
    const float *bias;   /* @24  fb * B floats */
    size_t pixels;       /* @32  output pixels (0 allowed) */
    size_t fb;           /* @40  filter blocks, 1..FB */
    size_t cin_blocks;   /* @48  input channel blocks, >= 1 */
    size_t cin_blk;      /* @56  channels per input block, 1..B */
    size_t kh, kw;       /* @64, @72  taps summed (0 allowed) */
    size_t x_pix;        /* @80  bytes between successive output pixels' inputs */
    size_t x_kx;         /* @88  bytes between kx taps */
    size_t x_ky;         /* @96  bytes between ky taps */
    size_t x_cb;         /* @104 bytes between input blocks */
    size_t w_ky;         /* @112 bytes between ky taps of the weights (a full row: KW cin_blk fb B 4) */
    size_t w_cb;         /* @120 bytes between input blocks of the weights (KH w_ky) */
    size_t y_fb;         /* @128 bytes between output blocks */
    float lo, hi;        /* @136, @140  PG_CONV_NCHWC_ACT_CLAMP bounds */
    int32_t act;         /* @144 PG_CONV_NCHWC_ACT_* */
    int32_t flags;       /* @148 PG_CONV_NCHWC_ACCUMULATE | PG_CONV_NCHWC_RESIDUAL */
    const float *res;    /* @152 flag RESIDUAL: the skip tensor at pixel 0, block 0 (y's layout) */
    size_t res_fb;       /* @160 bytes between its blocks */
};

/* params of every variant: the block width and the filter group */
typedef struct pg_conv_nchwc_params {
    int block;  /* B */
    int fb;     /* FB: filter blocks per call at most */
} pg_conv_nchwc_params;

/* Floats of packed weights for M output and C input channels (cin_blk
 * channels per input block: B, or 1 for a plain NCHW input), kh x kw. */
size_t pg_conv_nchwc_packed_floats(size_t M, size_t C, size_t cin_blk, int kh, int kw, int B, int FB);
/* Packs w (ONNX's [M, C, kh, kw]) into dst (pg_conv_nchwc_packed_floats). */
void pg_conv_nchwc_pack(size_t M, size_t C, size_t cin_blk, int kh, int kw, int B, int FB,
                        const float *w, float *dst);

/* The reference (any B; the C row calls it at 16). */
void pg_f32_conv_nchwc_ref(int B, const pg_conv_nchwc_args *a);
void pg_f32_conv_nchwc16_c(const pg_conv_nchwc_args *a);
void pg_f32_conv_nchwc_4x16_avx512f(const pg_conv_nchwc_args *a);
void pg_f32_conv_nchwc_1x16_avx2_fma3(const pg_conv_nchwc_args *a);

extern const pg_kernel_family pg_kernels_conv_nchwc;

#endif

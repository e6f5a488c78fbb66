/* dwconv.h - fp32 depthwise convolution, 3x3, 5x5 and 7x7, NHWC: one output row
 * (or part of one) per call, bias and the activation applied while the
 * accumulators are in registers.
 *
 * Layout: NHWC (channels innermost), chosen by measurement - see the
 * header of engine/exec/conv_fast.c.  For output pixel x and channel c:
 *
 *     out[x * out_step + c] = act(bias[c] + sum_{ky,kx} w[ky][kx][c] *
 *                                 rows[ky][x * in_step + kx * pix + c])
 *
 * rows[ky] points at the first input pixel of output pixel 0's window in
 * kernel row ky (the driver hands a zero row for the padding above and
 * below, and a zero-padded copy of the window for the pixels at the left
 * and right edges, so a kernel never tests a bound).  in_step is the
 * stride times pix; pix is the distance between neighbouring input pixels
 * (the channel count of the tensor, or of the padded copy).
 *
 * Packed weights (pg_dwconv_pack): the channels in groups of 16, each group
 * 1 + kh*kw rows of 16 floats: the bias, then the taps ky-major; the
 * channels past C are zero.  The group of 16 is the same for every variant
 * (one zmm, two ymm, four NEON q registers), so one packing serves all.
 *
 * The kernels hold a channel tile's taps in vector registers (3x3
 * everywhere, 5x5 on AVX-512 and NEON) and walk the pixels with one memory
 * operand per FMA; out-of-order execution overlaps successive pixels, so a
 * single accumulator per pixel does not serialise them.
 *
 * act: PG_DWACT_NONE, PG_DWACT_CLAMP (min(max(x, lo), hi): ReLU is lo = 0,
 * hi = +inf; ReLU6 / Clip lo, hi), PG_DWACT_HARDSWISH (x * clamp(x + 3,
 * 0, 6) / 6).  SiLU needs an exp: the driver runs the silu family on the
 * row just written. */
#ifndef PG_KERNELS_DWCONV_H
#define PG_KERNELS_DWCONV_H

#include <stddef.h>
#include <stdint.h>

#include "../variant.h"

enum { PG_DWACT_NONE = 0, PG_DWACT_CLAMP = 1, PG_DWACT_HARDSWISH = 2 };

#define PG_DWCONV_GROUP 16

/* The one argument of a dwconv kernel (offsets read by the asm). */
struct pg_dwconv_args {
    const float *const *rows;  /* @0:  kh row pointers */
    const float *w;            /* @8:  packed weights (bias first) */
    float *out;                /* @16: output pixel 0 */
    size_t channels;           /* @24: C >= 1 */
    size_t width;              /* @32: output pixels >= 0 */
    size_t in_step;            /* @40: floats between successive windows */
    size_t pix;                /* @48: floats between neighbouring input pixels */
    size_t out_step;           /* @56: floats between successive output pixels */
    float lo, hi;              /* @64, @68: PG_DWACT_CLAMP bounds */
    int32_t act;               /* @72 */
    int32_t pad_;              /* @76 */
};

/* params of every variant: the kernel size */
typedef struct pg_dwconv_params {
    int kh, kw;
} pg_dwconv_params;

/* Floats of packed weights for C channels and kh x kw taps. */
size_t pg_dwconv_packed_floats(size_t C, int kh, int kw);
/* Packs w (C x kh x kw, ONNX's [C, 1, kh, kw]) and bias (C floats or NULL
 * for zero) into dst (pg_dwconv_packed_floats). */
void pg_dwconv_pack(size_t C, int kh, int kw, const float *w, const float *bias, float *dst);

/* The reference (any kh x kw; the families' C rows call it). */
void pg_f32_dwconv_ref(int kh, int kw, const pg_dwconv_args *a);
void pg_f32_dwconv3x3_c(const pg_dwconv_args *a);
void pg_f32_dwconv5x5_c(const pg_dwconv_args *a);
void pg_f32_dwconv7x7_c(const pg_dwconv_args *a);
void pg_f32_dwconv3x3_avx2_fma3(const pg_dwconv_args *a);
void pg_f32_dwconv5x5_avx2_fma3(const pg_dwconv_args *a);
void pg_f32_dwconv3x3_avx512f(const pg_dwconv_args *a);
void pg_f32_dwconv5x5_avx512f(const pg_dwconv_args *a);
void pg_f32_dwconv7x7_avx2_fma3(const pg_dwconv_args *a);
void pg_f32_dwconv7x7_avx512f(const pg_dwconv_args *a);
void pg_f32_dwconv3x3_neon(const pg_dwconv_args *a);
void pg_f32_dwconv5x5_neon(const pg_dwconv_args *a);
void pg_f32_dwconv7x7_neon(const pg_dwconv_args *a);

extern const pg_kernel_family pg_kernels_dwconv3x3;
extern const pg_kernel_family pg_kernels_dwconv5x5;
extern const pg_kernel_family pg_kernels_dwconv7x7;

#endif

/* winograd.h - the transforms of Winograd's F(2x2, 3x3) on NCHW16c blocks:
 * a 3x3 stride-1 conv as 16 independent products (one per point xi of the
 * 4x4 transformed tile) instead of 9 taps per output pixel - 2.25x fewer
 * multiply-adds, the products running on the conv_nchwc kernels as 1x1
 * convs over a run of tiles (exec/conv_winograd.c has the driver and the
 * measurement).
 *
 * For a 4x4 input tile d (16 channels a vector) and the 3x3 filter g:
 *
 *     U = B^T d B      B^T = [ 1  0 -1  0 ]      V = G g G^T   G = [ 1    0    0  ]
 *                            [ 0  1  1  0 ]                        [ 1/2  1/2  1/2]
 *                            [ 0 -1  1  0 ]                        [ 1/2 -1/2  1/2]
 *                            [ 0  1  0 -1 ]                        [ 0    0    1  ]
 *
 *     M[xi] = sum over input channels of U[xi] V[xi]    (the products)
 *     Y = A^T M A      A^T = [ 1  1  1  0 ]   the 2x2 output tile
 *                            [ 0  1 -1 -1 ]
 *
 * wino_in_f23: one tile row of one input block - rows[r] is input row r of
 * the 4 the tiles read (the driver's zero-padded copies), tile t reads its
 * pixels 2t .. 2t+3; U[xi] of tile t to u + xi u_xi + t 16 floats, xi =
 * 4 i + j for row i and column j of U.  In order: e = B^T d by rows (e0 =
 * d0 - d2, e1 = d1 + d2, e2 = d2 - d1, e3 = d1 - d3), then U = e B by
 * columns, the same formulas; one add or subtract per element, so every
 * variant computes the reference's values exactly.
 *
 * wino_out_f23: one tile row of one output block - M[xi] of tile t at
 * m + xi m_xi + t 16 floats; output pixels 2t, 2t+1 of rows y[0], y[1]:
 * f = A^T M by rows (f0 = (m0 + m1) + m2, f1 = (m1 - m2) - m3), Y = f A
 * by columns alike, then (Y + bias) (+ res, flag PG_WINO_RESIDUAL: the
 * skip tensor's rows in y's layout) and min(max(lo, .), hi) (lo = -inf,
 * hi = inf for none; NaN passes through) - in this order in every
 * variant, so they agree exactly too. */
#ifndef PG_KERNELS_WINOGRAD_H
#define PG_KERNELS_WINOGRAD_H

#include <stddef.h>
#include <stdint.h>

#include "../variant.h"

#define PG_WINO_BLOCK 16   /* channels per vector: the NCHW16c block */
#define PG_WINO_POINTS 16  /* xi: the 4 x 4 transformed tile */

enum { PG_WINO_RESIDUAL = 2 };

/* wino_in_f23's argument (offsets read by the asm) */
struct pg_wino_in_args {
    const float *const *rows;   /* @0  4 input rows, 2 tiles + 2 pixels each at least */
    float *u;                   /* @8  U[0] of tile 0 */
    size_t tiles;               /* @16 tiles (0 allowed) */
    size_t u_xi;                /* @24 bytes between the 16 planes of U */
};

/* wino_out_f23's argument (offsets read by the asm) */
struct pg_wino_out_args {
    const float *m;             /* @0  M[0] of tile 0 */
    size_t m_xi;                /* @8  bytes between the 16 planes of M */
    float *y[2];                /* @16 the two output rows, pixel 0 */
    const float *res[2];        /* @32 flag RESIDUAL: the skip rows, pixel 0 */
    const float *bias;          /* @48 16 floats */
    size_t tiles;               /* @56 tiles (0 allowed) */
    float lo, hi;               /* @64, @68 the clamp */
    int32_t flags;              /* @72 PG_WINO_RESIDUAL */
    int32_t pad_;               /* @76 */
};

/* V = G g G^T of M x C filters g (ONNX's [M, C, 3, 3]), each point xi as
 * the [M, C, 1, 1] weights of a 1x1 conv, packed for conv_nchwc blocks of
 * B with filter groups FB: plane xi at dst + xi pg_wino_plane_floats. */
size_t pg_wino_plane_floats(size_t M, size_t C, int B);
void pg_wino_f23_pack(size_t M, size_t C, int B, int FB, const float *w, float *dst);

void pg_f32_wino_in_f23_c(const pg_wino_in_args *a);
void pg_f32_wino_out_f23_c(const pg_wino_out_args *a);
void pg_f32_wino_in_f23_avx512f(const pg_wino_in_args *a);
void pg_f32_wino_out_f23_avx512f(const pg_wino_out_args *a);
void pg_f32_wino_in_f23_avx2(const pg_wino_in_args *a);
void pg_f32_wino_out_f23_avx2(const pg_wino_out_args *a);

extern const pg_kernel_family pg_kernels_wino_in_f23;
extern const pg_kernel_family pg_kernels_wino_out_f23;

#endif

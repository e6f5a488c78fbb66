/* cnn.h - the window geometry shared by the CNN ops' shape rules
 * (graph/infer_conv.c) and their executors (ops_conv.c, ops_pool.c), and the
 * Conv reference loop that a bound fast path sits in front of.
 *
 * Layout: NCHW at the graph level, as ONNX has it: X [N, C, D1, .., Dk]
 * with k = 1..3 spatial dims.  The geometry below is normalised to three
 * spatial dims (missing leading ones have size 1, kernel 1, stride 1, no
 * pads), so every executor has one loop nest for 1D, 2D and 3D.
 *
 * One function computes the geometry from the node's attributes for both
 * the shape rule and the executor, so the two cannot disagree on a pad.
 * Attribute values the ops do not implement are PG_ERR_UNSUPPORTED naming
 * the node and the attribute; inconsistent ones PG_ERR_SHAPE / PG_ERR_GRAPH. */
#ifndef PG_EXEC_CNN_H
#define PG_EXEC_CNN_H

#include <stdint.h>

#include "ops.h"

#define PG_CNN_MAX_SPATIAL 3

typedef struct pg_win {
    int     nsp;             /* spatial dims of the node (1..3) */
    /* normalised to 3 spatial dims, index 0 = depth, 2 = width */
    int64_t in[3], k[3], out[3], stride[3], dil[3], lo[3], hi[3];
} pg_win;

/* What the window is for: the output-size rule differs. */
enum { PG_WIN_CONV, PG_WIN_POOL, PG_WIN_CONV_TRANSPOSE };

/* The geometry of node n over spatial input dims in[0..nsp) and kernel
 * dims k[0..nsp): strides, dilations, pads, auto_pad (and for pools
 * ceil_mode; for ConvTranspose output_padding and output_shape).  Fails
 * naming the node (pg_fail) on a bad or unsupported attribute or an empty
 * output. */
pg_status pg_win_geometry(const pg_node *n, int kind, int nsp, const int64_t *in, const int64_t *k,
                          pg_win *w);

/* Conv's plain C loop (float32, any groups / strides / dilations / pads,
 * 1D to 3D; the bias optional): the oracle the fast paths are checked
 * against.  Geometry from pg_win_geometry. */
pg_status pg_conv_reference(pg_kctx *k, const pg_win *w);

/* Resize (and Upsample, as asymmetric Resize): the output size and the
 * per-axis coordinate mapping, from the attributes and the compile-time
 * values of roi / scales / sizes (val[i]: input i's data, NULL if absent;
 * an empty tensor counts as absent).  Shared by the shape rule
 * (graph/infer_conv.c) and the executor (ops_resize.c). */
enum { PG_RS_NEAREST, PG_RS_LINEAR, PG_RS_CUBIC };
enum { PG_RS_HALF_PIXEL, PG_RS_HALF_PIXEL_SYMMETRIC, PG_RS_PYTORCH_HALF_PIXEL, PG_RS_ALIGN_CORNERS,
       PG_RS_ASYMMETRIC, PG_RS_TF_CROP_AND_RESIZE, PG_RS_TF_HALF_PIXEL_FOR_NN };
enum { PG_RS_ROUND_PREFER_FLOOR, PG_RS_ROUND_PREFER_CEIL, PG_RS_FLOOR, PG_RS_CEIL };

typedef struct pg_resize_geom {
    int     rank, mode, ctm, nearest, exclude_outside, antialias;
    double  cubic_a, extrapolation;
    int64_t in[PG_MAX_RANK], out[PG_MAX_RANK];
    double  scale[PG_MAX_RANK];    /* output / input along each axis */
    double  length[PG_MAX_RANK];   /* scale * input: the resized length the
                                    * coordinate transforms use */
    double  roi_lo[PG_MAX_RANK], roi_hi[PG_MAX_RANK];
    int     identity[PG_MAX_RANK]; /* this axis is copied as it is */
} pg_resize_geom;

/* Taps per axis at most (antialiased downscaling widens the filter by
 * 1 / scale: linear to 1/32, cubic to 1/16). */
#define PG_RS_MAX_TAPS 64

pg_status pg_resize_geometry(const pg_node *n, int n_in, const pg_tensor *const *in,
                             const void *const *val, pg_resize_geom *g);

#endif /* PG_EXEC_CNN_H */

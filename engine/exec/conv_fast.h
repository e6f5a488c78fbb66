/* conv_fast.h - Conv's bound fast path (conv_fast.c): what ops_conv.c's
 * pg_exec_conv calls when the step was bound to kernels, and FusedConv
 * (Conv + bias + activation, made by the conv_act_fusion pass). */
#ifndef PG_EXEC_CONV_FAST_H
#define PG_EXEC_CONV_FAST_H

#include "cnn.h"

/* The fused activations (FusedConv's "activation" attribute). */
typedef enum pg_conv_act {
    PG_CONVACT_NONE = 0, PG_CONVACT_RELU, PG_CONVACT_CLIP, PG_CONVACT_HARDSWISH,
    PG_CONVACT_SILU, PG_CONVACT_INVALID
} pg_conv_act;

pg_conv_act pg_conv_act_from_name(const char *s);

/* A FusedConv's activation as its attributes give it (act_min / act_max
 * for Clip), SiLU on the silu kernel given (NULL: the C loop).  Applied
 * after a kernel wrote a tile by pg_conv_epi_apply - the forms a kernel
 * does not do in registers (y[0..n) in place; NONE and RELU: nothing). */
typedef struct pg_conv_epi {
    pg_conv_act act;
    float lo, hi;
    const pg_variant *silu;
} pg_conv_epi;

pg_status pg_conv_epi_of(const pg_kctx *k, const pg_variant *silu, pg_conv_epi *e);
void      pg_conv_epi_apply(const pg_conv_epi *e, float *y, size_t n);

/* Conv / FusedConv on the bound kernels (k->bind->kern[0] set); w from
 * pg_win_geometry. */
pg_status pg_conv_fast(pg_kctx *k, const pg_win *w);

/* The GEMM form with its bias as A's last column: K + 1 (the columns of
 * that A), or 0 when the conv does not run that way (conv_prepack makes
 * the A at compile time). */
size_t pg_conv_gemm_bias_cols(const pg_node *n, const pg_tensor *x, const pg_tensor *wt);

/* ---- the blocked layout (conv_nchwc.c) --------------------------------------
 * A node with attribute nchwc = PG_NCHWC_BLOCK works on NCHW16c tensors
 * [N, ceil(C / 16), H, W, 16]: FusedConv (out_channels, kernel_shape,
 * nchwc_fb, nchwc_group; the weights packed by the nchwc_layout pass in groups
 * of nchwc_group filter blocks, the bias padded;
 * the input blocked, or plain NCHW for a group-1 conv), MaxPool, and
 * GlobalAveragePool (channels; writes the plain [N, C, 1, 1]);
 * ReorderInput and ReorderOutput (channels) convert at the region's edges. */
#define PG_NCHWC_BLOCK 16

struct pg_infer_ctx;
pg_status pg_infer_nchwc(struct pg_infer_ctx *c);   /* every op above */
int       pg_nchwc_depthwise(const pg_node *n);
pg_status pg_bind_conv_nchwc(const pg_node *n, pg_binding *b);
/* filter blocks per group of n's packed weights for kernel v (its
 * nchwc_group: the blocks split evenly, at most v's FB) */
size_t    pg_nchwc_group_blocks(const pg_node *n, const pg_variant *v);
size_t    pg_scratch_conv_nchwc(const pg_node *n, const pg_tensor *x, int threads);
pg_status pg_conv_nchwc(pg_kctx *k);
pg_status pg_exec_pool_nchwc(pg_kctx *k);           /* MaxPool, GlobalAveragePool */

/* A blocked 3x3 conv as Winograd F(2x2, 3x3) (conv_winograd.c; FusedConv
 * winograd = 1, its weights packed by pg_wino_f23_pack): 1 if the window
 * is one it takes (3x3, stride 1, dilation 1, pads 0 or 1); the scratch
 * for N images of CB input and KB output blocks, FB filter blocks a
 * kernel call, on up to `threads`; the run (k->bind: conv_nchwc,
 * wino_in_f23, wino_out_f23; lo, hi the clamp, post what follows it). */
int       pg_conv_winograd_fits(const pg_win *w);
size_t    pg_scratch_conv_winograd(const pg_win *w, size_t N, size_t CB, size_t KB, size_t FB, int threads);
pg_status pg_conv_winograd(pg_kctx *k, const pg_win *w, float lo, float hi, const pg_conv_epi *post);

#endif

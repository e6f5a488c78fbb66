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

/* Conv / FusedConv on the bound kernels (k->bind->kern[0] set); w from
 * pg_win_geometry. */
pg_status pg_conv_fast(pg_kctx *k, const pg_win *w);

#endif

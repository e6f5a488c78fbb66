/* profile.c - where a run's time goes: each step's wall time summed over
 * the runs while profiling is on (pg_model_profile, pg_model_step_time;
 * the timing itself is two clock reads around each step in model.c's run
 * loop), and the floating-point operations of the steps whose work is
 * products (convs and matrix products), so a profile can give GFLOP/s
 * per layer as the network runs it: fed by the step before it, in the
 * cache state the network leaves, which a layer timed alone is not.
 *
 * FLOPs are 2 x the multiply-adds the op defines, not what a kernel ran: a
 * Winograd conv counts as its direct form, a blocked (NCHW16c) conv's
 * input channels are counted as stored, padded to whole blocks of 16. */
#include <time.h>

#include "../core/error.h"
#include "model.h"

uint64_t pg_profile_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Conv / FusedConv: N x M x output pixels x (C / group) x kernel taps. */
static double conv_flops(const pg_step *st)
{
    const pg_node *n = st->node;
    const pg_tensor *x = st->in[0], *y = st->out[0], *w = st->n_in > 1 ? st->in[1] : NULL;
    int nsp = 0;
    const int64_t *ks = pg_ir_attr_ints(n, "kernel_shape", &nsp);
    if (!ks && w && w->rank == y->rank && w->rank >= 3) {   /* unpacked [M, C / g, k...] */
        ks = w->shape + 2;
        nsp = w->rank - 2;
    }
    int blocked = x->rank == y->rank && pg_ir_attr_int(n, "nchwc", 0) > 0;
    if (!ks || nsp < 1 || y->rank < 2 + nsp || x->rank < 2)
        return 0;
    double taps = 1, pixels = 1;
    for (int d = 0; d < nsp; d++) {
        taps *= (double)ks[d];
        pixels *= (double)y->shape[2 + d];
    }
    double M = (double)pg_ir_attr_int(n, "out_channels", y->shape[1]);
    double C = (double)x->shape[1] * (blocked ? (double)x->shape[x->rank - 1] : 1.0);
    double group = (double)pg_ir_attr_int(n, "group", 1);
    double per_group = C / group < 1 ? 1 : (double)(int64_t)(C / group);
    return 2.0 * (double)y->shape[0] * M * pixels * per_group * taps;
}

/* The matrix products: every output element is a K-long dot product. */
static double matmul_flops(const pg_step *st)
{
    const pg_tensor *a = st->in[0];
    if (!a || a->rank < 1)
        return 0;
    int64_t K = a->shape[a->rank - 1];
    if (st->node->op == PG_OP_GEMM && pg_ir_attr_int(st->node, "transA", 0) && a->rank == 2)
        K = a->shape[0];
    int outs = st->node->op == PG_OP_QKV_MATMUL ? st->n_out : 1;
    double elems = 0;
    for (int o = 0; o < outs; o++) {
        int64_t e = pg_tensor_numel(st->out[o]);
        elems += e > 0 ? (double)e : 0;
    }
    return 2.0 * elems * (double)K;
}

double pg_step_flops(const pg_step *st)
{
    if (!st->n_in || !st->n_out || !st->in[0] || !st->out[0])
        return 0;
    switch (st->node->op) {
    case PG_OP_CONV:
    case PG_OP_FUSED_CONV:
        return conv_flops(st);
    case PG_OP_MATMUL:
    case PG_OP_GEMM:
    case PG_OP_FUSED_MATMUL:
    case PG_OP_QKV_MATMUL:
    case PG_OP_QUANT_MATMUL:
        return matmul_flops(st);
    default:
        return 0;
    }
}

pg_status pg_model_profile(pg_model *m, int on)
{
    pg_clear_error();
    if (!m)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_model_profile: NULL model");
    if (atomic_exchange(&m->busy, 1))
        return pg_fail(PG_ERR_INVALID_ARG, "pg_model_profile: the model is running on another thread");
    if (on) {
        for (int s = 0; s < m->n_steps; s++)
            m->steps[s].prof_ns = 0;
        m->prof_runs = 0;
    }
    m->profiling = on != 0;
    atomic_store(&m->busy, 0);
    return PG_OK;
}

pg_status pg_model_step_time(const pg_model *m, int i, pg_step_time *out)
{
    if (!m || !out || i < 0 || i >= m->n_steps)
        return pg_fail(PG_ERR_INVALID_ARG, "no step %d", i);
    out->ns = m->steps[i].prof_ns;
    out->runs = m->prof_runs;
    out->flops = m->steps[i].flops;
    return PG_OK;
}

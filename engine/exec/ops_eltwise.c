/* ops_eltwise.c - elementwise ops with numpy broadcasting: binary
 * arithmetic and comparisons, Where, unary math, Cast.
 *
 * fp32 Add and Mul with equal shapes, or with the second operand a
 * trailing row repeated over the first, go through the vadd / vmul variant
 * tables; unary GELU / Tanh / Sigmoid / SiLU through theirs.  Everything
 * else is a plain loop over the broadcast index space (innermost dimension
 * contiguous in the output).  Every op here reads element i of each input
 * before writing element i of the output, so running in place is safe.
 * The kernel paths split big tensors over the model's threads in whole
 * 64-element runs or rows (parallel.h): the same results on any count. */
#include <math.h>
#include <string.h>

#include "../core/error.h"
#include "../kernels/unary_fn.h"
#include "../kernels/vadd/vadd.h"
#include "../kernels/vmul/vmul.h"
#include "elem.h"
#include "ops.h"
#include "parallel.h"

int pg_norm_axis(int64_t axis, int rank)
{
    if (axis < 0)
        axis += rank;
    return (axis < 0 || axis >= (rank > 0 ? rank : 1)) ? -1 : (int)axis;
}

void pg_broadcast_strides(int r, const int64_t *s, int orank, const int64_t *oshape,
                          int64_t *strides)
{
    int64_t st = 1;
    for (int d = orank - 1; d >= 0; d--) {
        int sd = d - (orank - r);
        if (sd < 0) {
            strides[d] = 0;
            continue;
        }
        strides[d] = (s[sd] == 1 && oshape[d] != 1) ? 0 : st;
        st *= s[sd];
    }
}

/* Odometer over the output's index space.  body(o, i0, i1, i2) is called per
 * contiguous innermost run: n elements, input offsets advancing by the
 * innermost strides. */
typedef struct bcast {
    int rank;
    int64_t shape[PG_MAX_RANK];
    int64_t st[3][PG_MAX_RANK];
    int nin;
} bcast;

static void bcast_init(bcast *b, const pg_tensor *out, const pg_tensor *const *in, int nin)
{
    b->rank = out->rank;
    b->nin = nin;
    memcpy(b->shape, out->shape, sizeof b->shape);
    memset(b->st, 0, sizeof b->st);   /* BCAST_LOOP walks all three stride rows */
    for (int i = 0; i < nin; i++)
        pg_broadcast_strides(in[i]->rank, in[i]->shape, out->rank, out->shape, b->st[i]);
}

#define BCAST_LOOP(b, BODY)                                                     \
    do {                                                                        \
        int64_t idx_[PG_MAX_RANK] = { 0 };                                      \
        int r_ = (b)->rank;                                                     \
        int64_t inner_ = r_ ? (b)->shape[r_ - 1] : 1;                           \
        int64_t s0_ = r_ ? (b)->st[0][r_ - 1] : 0, s1_ = r_ ? (b)->st[1][r_ - 1] : 0, \
                s2_ = r_ ? (b)->st[2][r_ - 1] : 0;                              \
        int64_t total_ = 1;                                                     \
        for (int d_ = 0; d_ < r_; d_++) total_ *= (b)->shape[d_];               \
        int64_t o_ = 0;                                                         \
        while (o_ < total_ && inner_ > 0) {                                     \
            int64_t p0_ = 0, p1_ = 0, p2_ = 0;                                  \
            for (int d_ = 0; d_ < r_ - 1; d_++) {                               \
                p0_ += idx_[d_] * (b)->st[0][d_];                               \
                p1_ += idx_[d_] * (b)->st[1][d_];                               \
                p2_ += idx_[d_] * (b)->st[2][d_];                               \
            }                                                                   \
            for (int64_t j = 0; j < inner_; j++) {                              \
                int64_t o = o_ + j, i0 = p0_ + j * s0_, i1 = p1_ + j * s1_,     \
                        i2 = p2_ + j * s2_;                                     \
                (void)i1; (void)i2;                                             \
                BODY;                                                           \
            }                                                                   \
            o_ += inner_;                                                       \
            for (int d_ = r_ - 2; d_ >= 0; d_--) {                              \
                if (++idx_[d_] < (b)->shape[d_]) break;                         \
                idx_[d_] = 0;                                                   \
            }                                                                   \
        }                                                                       \
    } while (0)

/* The vadd/vmul kernel over rows [r0, r1) of a (b repeated per row), or
 * over elements [r0, r1) of equal-shaped a and b. */
typedef struct vrow_job {
    pg_f32_vadd_fn fn;
    const float *a, *b;
    float *y;
    int64_t nb;
} vrow_job;

static void vrows(void *ctx, int64_t r0, int64_t r1)
{
    const vrow_job *j = ctx;
    for (int64_t r = r0; r < r1; r++)
        j->fn((size_t)j->nb, j->a + r * j->nb, j->b, j->y + r * j->nb);
}

static void vrun(void *ctx, int64_t e0, int64_t e1)
{
    const vrow_job *j = ctx;
    j->fn((size_t)(e1 - e0), j->a + e0, j->b + e0, j->y + e0);
}

/* fp32 fast path through the kernels: equal shapes, or b a trailing row. */
static int binary_kernel(pg_kctx *k, pg_opcode op)
{
    if (op != PG_OP_ADD && op != PG_OP_MUL)
        return 0;
    const pg_tensor *a = k->in[0], *b = k->in[1], *y = k->out[0];
    int64_t na = pg_tensor_numel(a), nb = pg_tensor_numel(b), ny = pg_tensor_numel(y);
    const float *pa = k->x[0], *pb = k->x[1];
    if (na != ny) {   /* commutative: put the full operand first */
        const pg_tensor *t = a; a = b; b = t;
        const float *p = pa; pa = pb; pb = p;
        int64_t n = na; na = nb; nb = n;
    }
    if (na != ny || nb == 0 || ny % nb)
        return 0;
    /* b must equal the trailing dims of y (after dropping its leading 1s) */
    int rb = b->rank;
    while (rb > 0 && b->shape[b->rank - rb] == 1 && nb != 1)
        rb--;
    for (int d = 0; d < rb; d++)
        if (b->shape[b->rank - rb + d] != y->shape[y->rank - rb + d])
            return 0;
    if (nb == 1 && ny != 1)
        return 0;   /* scalar: the generic loop is as fast */
    const pg_variant *v = k->bind->kern[0];
    if (!v)
        return 0;
    vrow_job j = { v->fn.binary, pa, pb, k->y[0], nb };   /* vmul: same signature */
    if (nb == ny)   /* equal shapes: split the one run in whole vectors */
        pg_exec_parallel(k, ny, 1, 64, vrun, &j);
    else
        pg_exec_parallel(k, ny / nb, nb, 1, vrows, &j);
    return 1;
}

pg_status pg_exec_binary(pg_kctx *k)
{
    pg_opcode op = k->node->op;
    pg_dtype dt = k->in[0]->dtype;
    if (dt == PG_DTYPE_FLOAT32 && k->in[1]->dtype == PG_DTYPE_FLOAT32 && binary_kernel(k, op))
        return PG_OK;
    bcast b;
    bcast_init(&b, k->out[0], k->in, 2);
    void *y = k->y[0];
    if (dt == PG_DTYPE_FLOAT32) {
        const float *A = k->x[0];
        float *Y = y;
        if (op == PG_OP_POW && k->in[1]->dtype != PG_DTYPE_FLOAT32) {
            const void *B = k->x[1];
            int is64 = k->in[1]->dtype == PG_DTYPE_INT64;
            BCAST_LOOP(&b, Y[o] = powf(A[i0], is64 ? (float)((const int64_t *)B)[i1]
                                                   : (float)((const int32_t *)B)[i1]));
            return PG_OK;
        }
        const float *B = k->x[1];
        uint8_t *Q = y;
        switch (op) {
        case PG_OP_ADD: BCAST_LOOP(&b, Y[o] = A[i0] + B[i1]); break;
        case PG_OP_SUB: BCAST_LOOP(&b, Y[o] = A[i0] - B[i1]); break;
        case PG_OP_MUL: BCAST_LOOP(&b, Y[o] = A[i0] * B[i1]); break;
        case PG_OP_DIV: BCAST_LOOP(&b, Y[o] = A[i0] / B[i1]); break;
        case PG_OP_POW: BCAST_LOOP(&b, Y[o] = B[i1] == 2.0f ? A[i0] * A[i0] : powf(A[i0], B[i1])); break;
        case PG_OP_EQUAL: BCAST_LOOP(&b, Q[o] = A[i0] == B[i1]); break;
        case PG_OP_LESS: BCAST_LOOP(&b, Q[o] = A[i0] < B[i1]); break;
        case PG_OP_GREATER: BCAST_LOOP(&b, Q[o] = A[i0] > B[i1]); break;
        case PG_OP_LESS_OR_EQUAL: BCAST_LOOP(&b, Q[o] = A[i0] <= B[i1]); break;
        case PG_OP_GREATER_OR_EQUAL: BCAST_LOOP(&b, Q[o] = A[i0] >= B[i1]); break;
        default: return pg_fail(PG_ERR_DTYPE, "node '%s': %s on float32", k->node->name, k->node->op_type);
        }
        return PG_OK;
    }
/* Integers wrap as two's complement (numpy's behaviour): the sum, difference
 * and product are taken in uint64_t, where overflow is defined, and cut to
 * T; x / 0 gives 0 and a signed x / -1 the wrapped negation (INT64_MIN / -1
 * traps in hardware).  ONNX leaves all three undefined. */
#define WRAP(v) ((uint64_t)(int64_t)(v))
#define INT_BINARY(T, SIGNED)                                                    \
    do {                                                                         \
        const T *A = k->x[0], *B = k->x[1];                                      \
        T *Y = y;                                                                \
        uint8_t *Q = y;                                                          \
        switch (op) {                                                            \
        case PG_OP_ADD: BCAST_LOOP(&b, Y[o] = (T)(WRAP(A[i0]) + WRAP(B[i1]))); break; \
        case PG_OP_SUB: BCAST_LOOP(&b, Y[o] = (T)(WRAP(A[i0]) - WRAP(B[i1]))); break; \
        case PG_OP_MUL: BCAST_LOOP(&b, Y[o] = (T)(WRAP(A[i0]) * WRAP(B[i1]))); break; \
        case PG_OP_DIV:                                                          \
            BCAST_LOOP(&b, Y[o] = !B[i1] ? 0 : SIGNED && B[i1] == (T)-1          \
                                               ? (T)(0 - WRAP(A[i0])) : (T)(A[i0] / B[i1])); \
            break;                                                               \
        case PG_OP_EQUAL: BCAST_LOOP(&b, Q[o] = A[i0] == B[i1]); break;          \
        case PG_OP_LESS: BCAST_LOOP(&b, Q[o] = A[i0] < B[i1]); break;            \
        case PG_OP_GREATER: BCAST_LOOP(&b, Q[o] = A[i0] > B[i1]); break;         \
        case PG_OP_LESS_OR_EQUAL: BCAST_LOOP(&b, Q[o] = A[i0] <= B[i1]); break;  \
        case PG_OP_GREATER_OR_EQUAL: BCAST_LOOP(&b, Q[o] = A[i0] >= B[i1]); break; \
        case PG_OP_AND: BCAST_LOOP(&b, Q[o] = A[i0] && B[i1]); break;            \
        case PG_OP_OR: BCAST_LOOP(&b, Q[o] = A[i0] || B[i1]); break;             \
        default:                                                                 \
            return pg_fail(PG_ERR_DTYPE, "node '%s': %s on %s", k->node->name,   \
                           k->node->op_type, pg_dtype_name(dt));                 \
        }                                                                        \
    } while (0)
    switch (dt) {
    case PG_DTYPE_INT64: INT_BINARY(int64_t, 1); break;
    case PG_DTYPE_INT32: INT_BINARY(int32_t, 1); break;
    case PG_DTYPE_BOOL: case PG_DTYPE_UINT8: INT_BINARY(uint8_t, 0); break;
    case PG_DTYPE_INT8: INT_BINARY(int8_t, 1); break;
    default:
        return pg_fail(PG_ERR_DTYPE, "node '%s': %s on %s", k->node->name, k->node->op_type,
                       pg_dtype_name(dt));
    }
    return PG_OK;
}

pg_status pg_exec_where(pg_kctx *k)
{
    bcast b;
    bcast_init(&b, k->out[0], k->in, 3);
    const uint8_t *C = k->x[0];
    size_t es = pg_dtype_size(k->out[0]->dtype);
    const char *X = k->x[1], *Y = k->x[2];
    char *O = k->y[0];
    if (es == 4) {
        const uint32_t *x = (const uint32_t *)X, *yv = (const uint32_t *)Y;
        uint32_t *o4 = (uint32_t *)O;
        BCAST_LOOP(&b, o4[o] = C[i0] ? x[i1] : yv[i2]);
    } else {
        BCAST_LOOP(&b, memcpy(O + o * es, C[i0] ? X + i1 * es : Y + i2 * es, es));
    }
    return PG_OK;
}

/* ---- unary ---------------------------------------------------------------- */

static pg_status cast(pg_kctx *k, int64_t n)
{
    pg_dtype from = k->in[0]->dtype, to = k->out[0]->dtype;
    const void *x = k->x[0];
    void *y = k->y[0];
    if (from == to) {
        if (x != y)
            memmove(y, x, (size_t)n * pg_dtype_size(to));
        return PG_OK;
    }
    /* To an integer through int64, wrapping as a C cast to a narrower type
     * does; a float on the way truncates to int64 saturating, NaN to 0 (ONNX
     * leaves out-of-range values undefined, in C they are undefined
     * behaviour, so pg_ld_i defines them). */
    for (int64_t i = 0; i < n; i++) {
        if (to == PG_DTYPE_BOOL)
            ((uint8_t *)y)[i] = pg_ld_f(from, x, i) != 0;
        else if (pg_dt_is_float(to))
            pg_st_f(to, y, i, pg_ld_f(from, x, i));
        else if (pg_dt_is_int(to))
            pg_st_i(to, y, i, pg_ld_i(from, x, i));
        else
            return pg_fail(PG_ERR_DTYPE, "node '%s': cannot cast to %s", k->node->name, pg_dtype_name(to));
    }
    return PG_OK;
}

typedef struct unary_job {
    pg_f32_unary_fn fn;
    const float *x;
    float *y;
} unary_job;

static void unary_run(void *ctx, int64_t e0, int64_t e1)
{
    const unary_job *j = ctx;
    j->fn((size_t)(e1 - e0), j->x + e0, j->y + e0);
}

pg_status pg_bind_binary(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                         pg_binding *b)
{
    (void)in; (void)out;
    b->kern[0] = pg_kernel_select(n->op == PG_OP_ADD ? &pg_kernels_vadd : &pg_kernels_vmul);
    return PG_OK;
}

/* The elementwise kernels are found by registry name, so an op whose table
 * is not built (yet) falls back to the loops below. */
pg_status pg_bind_unary(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                        pg_binding *b)
{
    (void)in; (void)out;
    const char *name = NULL;
    switch (n->op) {
    case PG_OP_TANH: name = "tanh"; break;
    case PG_OP_SIGMOID: name = "sigmoid"; break;
    case PG_OP_SILU: name = "silu"; break;
    case PG_OP_EXP: name = "vexp"; break;
    case PG_OP_GELU:
        name = strcmp(pg_ir_attr_string(n, "approximate", "none"), "tanh") ? "gelu_erf" : "gelu_tanh";
        break;
    default: return PG_OK;
    }
    const pg_kernel_family *f = pg_kernel_family_by_name(name);
    b->kern[0] = f ? pg_kernel_select(f) : NULL;
    return PG_OK;
}

/* The float unary ops no kernel covers, in plain C over a range of
 * elements, split over the threads like the kernels (Erf alone was 11% of
 * an ORT-quantised BERT at 2 threads, run on one). */
typedef struct unary_c_job {
    pg_opcode op;
    int gelu_tanh;
    const float *x;
    float *y;
} unary_c_job;

/* elements' worth of work per element, 0 for an op not handled here */
static int unary_c_cost(pg_opcode op)
{
    switch (op) {
    case PG_OP_RELU: case PG_OP_NEG: case PG_OP_ABS: return 1;
    case PG_OP_SQRT: case PG_OP_RECIPROCAL: return 2;
    case PG_OP_ERF: case PG_OP_EXP: case PG_OP_LOG: case PG_OP_TANH: case PG_OP_SIGMOID:
    case PG_OP_SILU: case PG_OP_GELU: return 8;
    default: return 0;
    }
}

static void unary_c_run(void *ctx, int64_t e0, int64_t e1)
{
    const unary_c_job *j = ctx;
    const float *x = j->x;
    float *y = j->y;
    switch (j->op) {
    case PG_OP_SQRT: for (int64_t i = e0; i < e1; i++) y[i] = sqrtf(x[i]); break;
    case PG_OP_RECIPROCAL: for (int64_t i = e0; i < e1; i++) y[i] = 1.0f / x[i]; break;
    case PG_OP_ERF: for (int64_t i = e0; i < e1; i++) y[i] = erff(x[i]); break;
    case PG_OP_RELU: for (int64_t i = e0; i < e1; i++) y[i] = x[i] > 0 ? x[i] : 0.0f; break;
    case PG_OP_NEG: for (int64_t i = e0; i < e1; i++) y[i] = -x[i]; break;
    case PG_OP_EXP: for (int64_t i = e0; i < e1; i++) y[i] = expf(x[i]); break;
    case PG_OP_LOG: for (int64_t i = e0; i < e1; i++) y[i] = logf(x[i]); break;
    case PG_OP_ABS: for (int64_t i = e0; i < e1; i++) y[i] = fabsf(x[i]); break;
    case PG_OP_TANH: for (int64_t i = e0; i < e1; i++) y[i] = tanhf(x[i]); break;
    case PG_OP_SIGMOID: for (int64_t i = e0; i < e1; i++) y[i] = 1.0f / (1.0f + expf(-x[i])); break;
    case PG_OP_SILU: for (int64_t i = e0; i < e1; i++) y[i] = x[i] / (1.0f + expf(-x[i])); break;
    case PG_OP_GELU:
        if (!j->gelu_tanh)
            for (int64_t i = e0; i < e1; i++) y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678118654752f));
        else
            for (int64_t i = e0; i < e1; i++)
                y[i] = 0.5f * x[i] * (1.0f + tanhf(0.7978845608028654f * (x[i] + 0.044715f * x[i] * x[i] * x[i])));
        break;
    default: break;
    }
}

pg_status pg_exec_unary(pg_kctx *k)
{
    int64_t n = pg_tensor_numel(k->out[0]);
    pg_opcode op = k->node->op;
    if (op == PG_OP_CAST)
        return cast(k, n);
    if (op == PG_OP_IDENTITY)
        return pg_exec_copy(k);
    pg_dtype dt = k->in[0]->dtype;
    if (op == PG_OP_NOT) {
        const uint8_t *x = k->x[0];
        uint8_t *y = k->y[0];
        for (int64_t i = 0; i < n; i++) y[i] = !x[i];
        return PG_OK;
    }
    if (dt == PG_DTYPE_INT64 || dt == PG_DTYPE_INT32) {
        for (int64_t i = 0; i < n; i++) {
            int64_t v = dt == PG_DTYPE_INT64 ? ((const int64_t *)k->x[0])[i] : ((const int32_t *)k->x[0])[i];
            /* negated as unsigned: -INT64_MIN wraps to itself, as in numpy */
            int64_t neg = (int64_t)(0 - (uint64_t)v);
            v = op == PG_OP_NEG ? neg : op == PG_OP_ABS ? (v < 0 ? neg : v) : (v < 0 ? 0 : v);
            if (dt == PG_DTYPE_INT64) ((int64_t *)k->y[0])[i] = v;
            else ((int32_t *)k->y[0])[i] = (int32_t)v;
        }
        return PG_OK;
    }
    const float *x = k->x[0];
    float *y = k->y[0];
    pg_f32_unary_fn fn = k->bind->kern[0] ? k->bind->kern[0]->fn.unary : NULL;
    if (fn) {
        /* cost 8: these kernels are an exp or erf per element */
        unary_job j = { fn, x, y };
        pg_exec_parallel(k, n, 8, 64, unary_run, &j);
        return PG_OK;
    }
    int cost = unary_c_cost(op);
    if (!cost)
        return pg_fail(PG_ERR_INTERNAL, "node '%s': no executor for %s", k->node->name, k->node->op_type);
    int gelu_tanh = op == PG_OP_GELU && !strcmp(pg_ir_attr_string(k->node, "approximate", "none"), "tanh");
    unary_c_job j = { op, gelu_tanh, x, y };
    pg_exec_parallel(k, n, cost, 64, unary_c_run, &j);
    return PG_OK;
}

/* ops_quant.c - the quantisation ops in plain C (infer_quant.c checks their
 * inputs): QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
 * MatMulInteger, QLinearMatMul, and QuantMatMul, the int8 product the
 * quant_fusion pass builds (engine/passes/fuse_quant.c documents its inputs).
 *
 * Arithmetic follows the ONNX reference: x / scale in float32, rounding half
 * to even (nearbyintf under the default rounding mode), saturation to the
 * type's range; products accumulate exactly in int32 (K * 255 * 255 fits
 * for any K below 33,000, and for larger K the sums wrap as int32 does in
 * every implementation).  NaN quantises to the zero point. */
#include <math.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "elem.h"
#include "ops.h"
#include "parallel.h"

/* ---- scales and zero points ------------------------------------------------ */

/* Which scale element element i of x uses: per tensor (D = 0), per axis
 * (block 0) or blocked. */
typedef struct qgeom {
    int64_t D, inner, block, nblk;
} qgeom;

static qgeom geom_of(const pg_kctx *k)
{
    qgeom q = { 0, 1, 0, 0 };
    const pg_tensor *x = k->in[0], *s = k->in[1];
    int64_t bs = pg_ir_attr_int(k->node, "block_size", 0);
    if (bs == 0 && s->rank <= 1 && pg_tensor_numel(s) == 1)
        return q;
    int axis = pg_norm_axis(pg_ir_attr_int(k->node, "axis", 1), x->rank);
    q.D = x->shape[axis];
    for (int d = axis + 1; d < x->rank; d++)
        q.inner *= x->shape[d];
    if (bs > 0) {
        q.block = bs;
        q.nblk = (q.D + bs - 1) / bs;
    }
    return q;
}

static inline int64_t scale_index(const qgeom *q, int64_t i)
{
    if (!q->D)
        return 0;
    int64_t a = (i / q->inner) % q->D;
    if (!q->block)
        return a;
    int64_t o = i / (q->inner * q->D), in = i % q->inner;
    return (o * q->nblk + a / q->block) * q->inner + in;
}

static inline int32_t q_lo(pg_dtype dt) { return dt == PG_DTYPE_INT8 ? -128 : 0; }
static inline int32_t q_hi(pg_dtype dt) { return dt == PG_DTYPE_INT8 ? 127 : 255; }

/* rint(v) + zp saturated to [lo, hi]; NaN counts as 0. */
static inline int32_t q_round(double v, int32_t zp, int32_t lo, int32_t hi)
{
    if (v != v)
        v = 0;
    double r = nearbyint(v) + zp;
    return r < lo ? lo : r > hi ? hi : (int32_t)r;
}

static inline void st_q8(pg_dtype dt, void *p, int64_t i, int32_t v)
{
    if (dt == PG_DTYPE_INT8)
        ((int8_t *)p)[i] = (int8_t)v;
    else
        ((uint8_t *)p)[i] = (uint8_t)v;
}

pg_status pg_exec_quantize_linear(pg_kctx *k)
{
    const pg_tensor *x = k->in[0];
    pg_dtype odt = k->out[0]->dtype;
    int64_t n = pg_tensor_numel(x);
    qgeom q = geom_of(k);
    const float *S = k->x[1];
    const void *Z = k->n_in > 2 ? k->x[2] : NULL;
    pg_dtype zdt = Z ? k->in[2]->dtype : odt;
    int32_t lo = q_lo(odt), hi = q_hi(odt);
    for (int64_t i = 0; i < n; i++) {
        int64_t si = scale_index(&q, i);
        int32_t zp = Z ? (int32_t)pg_ld_i(zdt, Z, si) : 0;
        double v = x->dtype == PG_DTYPE_FLOAT32 ? (double)(((const float *)k->x[0])[i] / S[si])
                                                : (double)((const int32_t *)k->x[0])[i] / S[si];
        st_q8(odt, k->y[0], i, q_round(v, zp, lo, hi));
    }
    return PG_OK;
}

pg_status pg_exec_dequantize_linear(pg_kctx *k)
{
    const pg_tensor *x = k->in[0];
    int64_t n = pg_tensor_numel(x);
    qgeom q = geom_of(k);
    const float *S = k->x[1];
    const void *Z = k->n_in > 2 ? k->x[2] : NULL;
    float *Y = k->y[0];
    for (int64_t i = 0; i < n; i++) {
        int64_t si = scale_index(&q, i);
        int64_t zp = Z ? pg_ld_i(x->dtype, Z, si) : 0;
        Y[i] = (float)(pg_ld_i(x->dtype, k->x[0], i) - zp) * S[si];
    }
    return PG_OK;
}

/* ---- DynamicQuantizeLinear --------------------------------------------------- */

/* The uint8 scale and zero point DynamicQuantizeLinear picks for the range
 * [min(0, lo), max(0, hi)]. */
static void dyn_params(float lo, float hi, float *scale, int32_t *zp)
{
    float mn = lo < 0 ? lo : 0, mx = hi > 0 ? hi : 0;
    float s = (mx == mn ? 1.0f : mx - mn) / 255.0f;
    float z = 0.0f - mn / s;
    z = z < 0 ? 0 : z > 255 ? 255 : z;
    *scale = s;
    *zp = (int32_t)nearbyintf(z);
}

static void minmax_f32(const float *x, int64_t n, float *lo, float *hi)
{
    float a = 0, b = 0;   /* the range always includes 0 */
    for (int64_t i = 0; i < n; i++) {
        float v = x[i];
        a = v < a ? v : a;
        b = v > b ? v : b;
    }
    *lo = a;
    *hi = b;
}

static void quantize_u8(const float *x, int64_t n, float s, int32_t zp, uint8_t *y)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = (uint8_t)q_round((double)(x[i] / s), zp, 0, 255);
}

pg_status pg_exec_dynamic_quantize_linear(pg_kctx *k)
{
    int64_t n = pg_tensor_numel(k->in[0]);
    float lo, hi, s;
    int32_t zp;
    minmax_f32(k->x[0], n, &lo, &hi);
    dyn_params(lo, hi, &s, &zp);
    quantize_u8(k->x[0], n, s, zp, k->y[0]);
    *(float *)k->y[1] = s;
    *(uint8_t *)k->y[2] = (uint8_t)zp;
    return PG_OK;
}

/* ---- integer matrix products ------------------------------------------------- */

/* numpy batch broadcasting of A [..., M, K] . B [..., K, N]: element
 * offsets of each batch of A and B, in batch order. */
typedef struct mm_walk {
    int64_t M, K, N, nbatch;
    int brank;
    int64_t bshape[PG_MAX_RANK], sa[PG_MAX_RANK], sb[PG_MAX_RANK], idx[PG_MAX_RANK];
} mm_walk;

static void mm_init(mm_walk *w, const pg_tensor *a, const pg_tensor *b, const pg_tensor *y)
{
    int ar = a->rank, br = b->rank;
    w->K = a->shape[ar - 1];
    w->M = ar >= 2 ? a->shape[ar - 2] : 1;
    w->N = br >= 2 ? b->shape[br - 1] : 1;
    int mat = (ar >= 2) + (br >= 2);
    w->brank = y->rank - mat;
    w->nbatch = 1;
    int64_t ast = w->M * w->K, bst = w->K * w->N;
    for (int d = w->brank - 1; d >= 0; d--) {
        w->bshape[d] = y->shape[d];
        w->nbatch *= y->shape[d];
        int da = d - (w->brank - (ar - 2)), db = d - (w->brank - (br - 2));
        int64_t sa_d = (ar >= 2 && da >= 0) ? a->shape[da] : 1;
        int64_t sb_d = (br >= 2 && db >= 0) ? b->shape[db] : 1;
        w->sa[d] = sa_d == 1 ? 0 : ast;
        w->sb[d] = sb_d == 1 ? 0 : bst;
        ast *= sa_d;
        bst *= sb_d;
        w->idx[d] = 0;
    }
}

static void mm_offsets(const mm_walk *w, int64_t *oa, int64_t *ob)
{
    *oa = *ob = 0;
    for (int d = 0; d < w->brank; d++) {
        *oa += w->idx[d] * w->sa[d];
        *ob += w->idx[d] * w->sb[d];
    }
}

static void mm_next(mm_walk *w)
{
    for (int d = w->brank - 1; d >= 0; d--) {
        if (++w->idx[d] < w->bshape[d])
            return;
        w->idx[d] = 0;
    }
}

/* acc[M x N] = (A - za) . (B - zb) for one batch; za per row or one
 * value (za_n 1), zb per column or one value. */
static void int_gemm(const mm_walk *w, pg_dtype adt, const void *A, int64_t oa, pg_dtype bdt,
                     const void *B, int64_t ob, const void *ZA, int64_t za_n, const void *ZB,
                     int64_t zb_n, int32_t *acc)
{
    for (int64_t m = 0; m < w->M; m++) {
        int32_t za = ZA ? (int32_t)pg_ld_i(adt, ZA, za_n == 1 ? 0 : m) : 0;
        int32_t *row = acc + m * w->N;
        for (int64_t j = 0; j < w->N; j++)
            row[j] = 0;
        for (int64_t kk = 0; kk < w->K; kk++) {
            int32_t av = (int32_t)pg_ld_i(adt, A, oa + m * w->K + kk) - za;
            if (!av)
                continue;
            for (int64_t j = 0; j < w->N; j++) {
                int32_t zb = ZB ? (int32_t)pg_ld_i(bdt, ZB, zb_n == 1 ? 0 : j) : 0;
                /* unsigned arithmetic: a sum past int32 wraps instead of
                 * being undefined */
                row[j] = (int32_t)((uint32_t)row[j] +
                                   (uint32_t)(av * ((int32_t)pg_ld_i(bdt, B, ob + kk * w->N + j) - zb)));
            }
        }
    }
}

pg_status pg_exec_matmul_integer(pg_kctx *k)
{
    const pg_tensor *a = k->in[0], *b = k->in[1];
    mm_walk w;
    mm_init(&w, a, b, k->out[0]);
    const void *ZA = k->n_in > 2 ? k->x[2] : NULL, *ZB = k->n_in > 3 ? k->x[3] : NULL;
    int64_t za_n = ZA ? pg_tensor_numel(k->in[2]) : 1, zb_n = ZB ? pg_tensor_numel(k->in[3]) : 1;
    int32_t *Y = k->y[0];
    for (int64_t bi = 0; bi < w.nbatch; bi++, mm_next(&w)) {
        int64_t oa, ob;
        mm_offsets(&w, &oa, &ob);
        int_gemm(&w, a->dtype, k->x[0], oa, b->dtype, k->x[1], ob, ZA, za_n, ZB, zb_n,
                 Y + bi * w.M * w.N);
    }
    return PG_OK;
}

/* a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp.  y = saturate(rint(acc
 * * (a_scale * b_scale / y_scale)) + y_zp), the multiplier in float32 and
 * the product in double, as the ONNX reference computes it; a's scale and
 * zero point per tensor or per row, b's per tensor or per column.  The
 * int32 sums go through a small stack buffer (the output is 8-bit). */
pg_status pg_exec_qlinear_matmul(pg_kctx *k)
{
    const pg_tensor *a = k->in[0], *b = k->in[3], *y = k->out[0];
    mm_walk w;
    mm_init(&w, a, b, y);
    const void *ZA = k->x[2], *ZB = k->x[5], *ZY = k->x[7];
    int64_t za_n = ZA ? pg_tensor_numel(k->in[2]) : 1, zb_n = ZB ? pg_tensor_numel(k->in[5]) : 1;
    int64_t sa_n = pg_tensor_numel(k->in[1]), sb_n = pg_tensor_numel(k->in[4]);
    const float *SA = k->x[1], *SB = k->x[4];
    float sy = *(const float *)k->x[6];
    int32_t zy = ZY ? (int32_t)pg_ld_i(k->in[7]->dtype, ZY, 0) : 0;
    int32_t lo = q_lo(y->dtype), hi = q_hi(y->dtype);
    for (int64_t bi = 0; bi < w.nbatch; bi++, mm_next(&w)) {
        int64_t oa, ob;
        mm_offsets(&w, &oa, &ob);
        for (int64_t m = 0; m < w.M; m++) {
            const void *za = ZA ? (const char *)ZA + (za_n == 1 ? 0 : m) : NULL;
            for (int64_t j0 = 0; j0 < w.N; j0 += 256) {
                int32_t acc[256];
                int64_t nj = w.N - j0 < 256 ? w.N - j0 : 256;
                for (int64_t j = 0; j < nj; j++) {
                    int32_t s = 0;
                    int32_t zav = za ? (int32_t)pg_ld_i(a->dtype, za, 0) : 0;
                    for (int64_t kk = 0; kk < w.K; kk++) {
                        int32_t zb = ZB ? (int32_t)pg_ld_i(b->dtype, ZB, zb_n == 1 ? 0 : j0 + j) : 0;
                        s = (int32_t)((uint32_t)s +
                                      (uint32_t)(((int32_t)pg_ld_i(a->dtype, k->x[0], oa + m * w.K + kk) - zav) *
                                                 ((int32_t)pg_ld_i(b->dtype, k->x[3], ob + kk * w.N + j0 + j) - zb)));
                    }
                    acc[j] = s;
                }
                for (int64_t j = 0; j < nj; j++) {
                    float mult = SA[sa_n == 1 ? 0 : m] * SB[sb_n == 1 ? 0 : j0 + j] / sy;
                    double v = (double)acc[j] * (double)mult;
                    st_q8(y->dtype, k->y[0], bi * w.M * w.N + m * w.N + j0 + j, q_round(v, zy, lo, hi));
                }
            }
        }
    }
    return PG_OK;
}

/* ---- QuantMatMul ------------------------------------------------------------------
 * A [..., M, K] (float32: quantised here, per tensor, to uint8 exactly as
 * DynamicQuantizeLinear does; or uint8 / int8 with a_scale, a_zp), W [K, N]
 * int8 constant, w_scale [1] or [N], w_zp int8 [1] or [N] (absent: 0),
 * w_colsum int32 [N] (sum over k of W[k, n]), bias [N] (optional):
 *   Y[m, n] = float(acc) * (a_scale * w_scale[n]) + bias[n]
 *   acc = sum_k (A[m,k] - a_zp) (W[k,n] - w_zp[n])
 *       = sum_k Au[m,k] W[k,n] - az colsum[n] - w_zp[n] rowsum[m] + K az w_zp[n]
 * with Au the activations as uint8 (int8 ones shifted by +128, az likewise),
 * so that the products are the u8 x s8 that VNNI computes.  float(acc) times
 * the scale product, then the bias: the same float32 operations, in the
 * same order, as the Cast -> Mul -> Add chain the fused graph had. */

pg_status pg_bind_quant_matmul(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                               pg_binding *b)
{
    (void)n; (void)in; (void)out; (void)b;
    return PG_OK;   /* the C reference loop below */
}

/* Scratch: the uint8 activations and their row sums. */
size_t pg_scratch_quant_matmul(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                               int threads, const pg_binding *b)
{
    (void)n; (void)out; (void)threads; (void)b;
    int64_t ne = pg_tensor_numel(in[0]), K = in[0]->shape[in[0]->rank - 1];
    int64_t M = K ? ne / K : 0;
    return pg_align_up((size_t)ne + 64) + (size_t)M * sizeof(int32_t) + 64;
}

typedef struct qmm_ctx {
    const uint8_t *au;
    const int32_t *rowsum, *colsum;
    const int8_t *w, *wz;
    const float *ws, *bias;
    float as;
    int32_t az;
    int64_t K, N, ws_n, wz_n;
    float *y;
} qmm_ctx;

static void qmm_rows(void *vc, int64_t m0, int64_t m1)
{
    const qmm_ctx *c = vc;
    for (int64_t m = m0; m < m1; m++) {
        const uint8_t *a = c->au + m * c->K;
        float *yr = c->y + m * c->N;
        int32_t *acc = (int32_t *)(void *)yr;   /* int32 and float32 share the row */
        for (int64_t j = 0; j < c->N; j++)
            acc[j] = 0;
        for (int64_t kk = 0; kk < c->K; kk++) {
            int32_t av = a[kk];
            const int8_t *wr = c->w + kk * c->N;
            for (int64_t j = 0; j < c->N; j++)
                acc[j] = (int32_t)((uint32_t)acc[j] + (uint32_t)(av * wr[j]));
        }
        for (int64_t j = 0; j < c->N; j++) {
            int32_t wz = c->wz ? c->wz[c->wz_n == 1 ? 0 : j] : 0;
            uint32_t t = (uint32_t)acc[j] - (uint32_t)c->az * (uint32_t)c->colsum[j] -
                         (uint32_t)wz * (uint32_t)c->rowsum[m] +
                         (uint32_t)c->K * (uint32_t)c->az * (uint32_t)wz;
            float mult = c->as * c->ws[c->ws_n == 1 ? 0 : j];
            float v = (float)(int32_t)t * mult;
            yr[j] = c->bias ? v + c->bias[j] : v;
        }
    }
}

pg_status pg_exec_quant_matmul(pg_kctx *k)
{
    const pg_tensor *a = k->in[0], *w = k->in[3];
    int64_t K = w->shape[0], N = w->shape[1], ne = pg_tensor_numel(a), M = K ? ne / K : 0;
    uint8_t *au = k->scratch;
    int32_t *rowsum = (int32_t *)(void *)((char *)k->scratch + pg_align_up((size_t)ne + 64));
    qmm_ctx c;
    memset(&c, 0, sizeof c);
    if (a->dtype == PG_DTYPE_FLOAT32) {
        float lo, hi;
        minmax_f32(k->x[0], ne, &lo, &hi);
        dyn_params(lo, hi, &c.as, &c.az);
        quantize_u8(k->x[0], ne, c.as, c.az, au);
        c.au = au;
    } else {
        c.as = *(const float *)k->x[1];
        c.az = (int32_t)pg_ld_i(a->dtype, k->x[2], 0);
        if (a->dtype == PG_DTYPE_INT8) {
            const uint8_t *src = k->x[0];
            for (int64_t i = 0; i < ne; i++)
                au[i] = (uint8_t)(src[i] ^ 0x80);   /* int8 v -> uint8 v + 128 */
            c.az += 128;
            c.au = au;
        } else {
            c.au = k->x[0];
        }
    }
    for (int64_t m = 0; m < M; m++) {
        int32_t s = 0;
        for (int64_t kk = 0; kk < K; kk++)
            s += c.au[m * K + kk];
        rowsum[m] = s;
    }
    c.rowsum = rowsum;
    c.colsum = k->x[6];
    c.w = k->x[3];
    c.wz = k->n_in > 5 ? k->x[5] : NULL;
    c.wz_n = c.wz ? pg_tensor_numel(k->in[5]) : 1;
    c.ws = k->x[4];
    c.ws_n = pg_tensor_numel(k->in[4]);
    c.bias = k->n_in > 7 ? k->x[7] : NULL;
    c.K = K;
    c.N = N;
    c.y = k->y[0];
    pg_exec_parallel(k, M, K * N, 1, qmm_rows, &c);
    return PG_OK;
}

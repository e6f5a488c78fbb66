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
#include "../kernels/gemm_u8s8/gemm_u8s8.h"
#include "cnn.h"
#include "elem.h"
#include "gemm.h"
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

/* min(0, min x) and max(0, max x) as integer keys: a float's bits with the
 * low 31 flipped when it is negative order as int32 the way the floats do.
 * *bad: some x is NaN or infinite.  v: the bound minmax_keys variant
 * (kern[3] of the quantising ops, gemm_u8s8.h). */
static void minmax_keys(const pg_variant *v, const float *x, int64_t n, int32_t *mn_, int32_t *mx_,
                        int32_t *bad_)
{
    int32_t o[3];
    v->fn.minmax_keys(n > 0 ? (size_t)n : 0, x, o);
    *mn_ = o[0];
    *mx_ = o[1];
    *bad_ = o[2];
}

static float unkey(int32_t k)
{
    int32_t u = k ^ ((k >> 31) & 0x7fffffff);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* rint(x / s) + zp saturated to [lo, hi] for n floats, in a loop the
 * compiler vectorises: x / s in float32 (NaN made 0), clamped to +-2^22
 * through the order-preserving int32 keys of the floats (integer
 * selects), rounded half to even by the 1.5 * 2^23 trick, exact in that
 * range. */
#define QSPAN_BODY(T)                                                            \
    for (int64_t i = 0; i < n; i++) {                                            \
        float v = x[i] / s;                                                      \
        int32_t u;                                                               \
        memcpy(&u, &v, sizeof u);                                                \
        u &= -(int32_t)((u & 0x7fffffff) <= 0x7f800000);   /* NaN: 0 */          \
        int32_t kk = u ^ ((u >> 31) & 0x7fffffff);                               \
        kk = kk < KLO ? KLO : kk;                                                \
        kk = kk > KHI ? KHI : kk;                                                \
        u = kk ^ ((kk >> 31) & 0x7fffffff);                                      \
        memcpy(&v, &u, sizeof v);                                                \
        int32_t q = (int32_t)((v + magic) - magic) + zp;                         \
        q = q < lo ? lo : q;                                                     \
        q = q > hi ? hi : q;                                                     \
        ((T *)y)[i] = (T)q;                                                      \
    }

static void quantize_span_sat(const float *x, int64_t n, float s, int32_t zp, pg_dtype dt, void *y)
{
    const float magic = 12582912.0f;
    const int32_t KHI = 0x4a800000, KLO = -0x4a800001;   /* the keys of 2^22 and -2^22 */
    int32_t lo = q_lo(dt), hi = q_hi(dt);
    if (dt == PG_DTYPE_INT8) {
        QSPAN_BODY(int8_t)
    } else {
        QSPAN_BODY(uint8_t)
    }
}

/* The per-tensor spans split over the threads: in an ORT QDQ graph every
 * activation passes a QuantizeLinear and a DequantizeLinear (at 128 x 3072
 * floats each, 0.3 ms on one Zen 4 core) */
typedef struct qspan_job {
    const void *x;
    void *y;
    float s;
    int32_t zp;
    pg_dtype dt;   /* the 8-bit type: the output of Quantize, the input of Dequantize */
    const pg_variant *span;   /* quantize_u8_span for a Quantize with s > 0, else NULL */
    const pg_variant *minmax; /* minmax_keys, with span */
} qspan_job;

/* A range whose x are finite and |x / s| < 2^22 (one minmax_keys pass
 * tells) goes through the quantize_u8_span kernel, the same bytes as the C
 * loop at a fifth of its time.  int8 through the uint8 kernel:
 * clamp(r + zp, -128, 127) = clamp(r + zp + 128, 0, 255) - 128, and
 * subtracting 128 from a byte flips its top bit. */
static void quantize_run(void *ctx, int64_t e0, int64_t e1)
{
    const qspan_job *j = ctx;
    const float *x = (const float *)j->x + e0;
    if (j->span) {
        int32_t mn, mx, bad;
        minmax_keys(j->minmax, x, e1 - e0, &mn, &mx, &bad);
        if (!bad && -unkey(mn) / j->s < 0x1p22f && unkey(mx) / j->s < 0x1p22f) {
            uint8_t *y = (uint8_t *)j->y + e0;
            int s8 = j->dt == PG_DTYPE_INT8;
            j->span->fn.quant_u8_span((size_t)(e1 - e0), x, j->s, j->zp + (s8 ? 128 : 0), y);
            if (s8)
                for (int64_t i = 0; i < e1 - e0; i++)
                    y[i] ^= 0x80;
            return;
        }
    }
    void *y = j->dt == PG_DTYPE_INT8 ? (void *)((int8_t *)j->y + e0) : (void *)((uint8_t *)j->y + e0);
    quantize_span_sat(x, e1 - e0, j->s, j->zp, j->dt, y);
}

static void dequantize_run(void *ctx, int64_t e0, int64_t e1)
{
    const qspan_job *j = ctx;
    float *Y = j->y, s = j->s;
    int32_t zp = j->zp;
    if (j->dt == PG_DTYPE_UINT8) {
        const uint8_t *X = j->x;
        for (int64_t i = e0; i < e1; i++)
            Y[i] = (float)((int32_t)X[i] - zp) * s;
    } else {
        const int8_t *X = j->x;
        for (int64_t i = e0; i < e1; i++)
            Y[i] = (float)((int32_t)X[i] - zp) * s;
    }
}

/* QuantizeLinear, DynamicQuantizeLinear and QuantMatMul's float A: kern[2]
 * quantize_u8_span, kern[3] minmax_keys (every variant of each gives the
 * same bytes; bound here so the mask, rebind and the profile see them). */
pg_status pg_bind_quantize(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                           pg_binding *b)
{
    (void)n; (void)in; (void)out;
    b->kern[2] = pg_kernel_select(&pg_kernels_quantize_u8_span);
    b->kern[3] = pg_kernel_select(&pg_kernels_minmax_keys);
    return PG_OK;
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
    if (!q.D && x->dtype == PG_DTYPE_FLOAT32) {
        /* per tensor (every activation of a QDQ graph) */
        qspan_job j = { k->x[0], k->y[0], S[0], Z ? (int32_t)pg_ld_i(zdt, Z, 0) : 0, odt,
                        S[0] > 0 ? k->bind->kern[2] : NULL, k->bind->kern[3] };
        pg_exec_parallel(k, n, 2, 64, quantize_run, &j);
        return PG_OK;
    }
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
    if (!q.D && (x->dtype == PG_DTYPE_UINT8 || x->dtype == PG_DTYPE_INT8)) {
        /* per tensor, 8-bit (a QDQ graph's activations, quantised
         * embeddings gathered each run): a loop the compiler vectorises,
         * the same arithmetic */
        qspan_job j = { k->x[0], Y, S[0], Z ? (int32_t)pg_ld_i(x->dtype, Z, 0) : 0, x->dtype, NULL, NULL };
        pg_exec_parallel(k, n, 2, 64, dequantize_run, &j);
        return PG_OK;
    }
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
    z = z > 0 ? (z < 255 ? z : 255) : 0;   /* NaN (an infinite range) to 0 too */
    *scale = s;
    *zp = (int32_t)nearbyintf(z);
}

/* DynamicQuantizeLinear's uint8 of len floats: x / s in float32, rounded
 * half to even, + zp, saturated.  finite: every x is finite and within the
 * range s was made for (|x / s| <= 256), so a loop the compiler vectorises
 * rounds by the 1.5 * 2^23 trick (exact below 2^22) and converts in range;
 * otherwise the plain loop (NaN as 0, saturation in double). */
static void quantize_exact(const float *x, size_t len, float s, int32_t zp, uint8_t *y)
{
    const float magic = 12582912.0f;
    for (size_t i = 0; i < len; i++) {
        float v = x[i] / s;
        int32_t q = (int32_t)((v + magic) - magic) + zp;
        q = q < 0 ? 0 : q;
        q = q > 255 ? 255 : q;
        y[i] = (uint8_t)q;
    }
}

/* The same values by multiplication: x * (1 / s) is within 2 ulps of x / s
 * (|x / s| <= 256: ulp <= 2^-16), so the two round alike unless x * (1 / s)
 * lies within 2^-12 of a half-integer; a block of 64 where one does is
 * redone by division (about 3% of blocks), so the result is x / s's. */
#define QBLK 64
static void quantize_span(const pg_variant *span, const float *x, size_t len, float s, int32_t zp,
                          int finite, uint8_t *y)
{
    const float magic = 12582912.0f, inv = 1.0f / s;
    const int32_t near = 0x3effe000;   /* the bits of 0.5 - 2^-12 */
    if (finite && span) {   /* the bound quantize_u8_span kernel: x / s, the same bytes */
        span->fn.quant_u8_span(len, x, s, zp, y);
    } else if (finite) {
        for (size_t b = 0; b < len; b += QBLK) {
            size_t e = len - b < QBLK ? len - b : QBLK;
            int32_t risky = 0;
            for (size_t i = 0; i < e; i++) {
                float v = x[b + i] * inv;
                float r = (v + magic) - magic;
                float d = v - r;   /* in [-0.5, 0.5] */
                int32_t db;
                memcpy(&db, &d, sizeof db);
                risky |= (db & 0x7fffffff) > near;
                int32_t q = (int32_t)r + zp;
                q = q < 0 ? 0 : q;
                q = q > 255 ? 255 : q;
                y[b + i] = (uint8_t)q;
            }
            if (risky)
                quantize_exact(x + b, e, s, zp, y + b);
        }
    } else {
        for (size_t i = 0; i < len; i++)
            y[i] = (uint8_t)q_round((double)(x[i] / s), zp, 0, 255);
    }
}

/* Per-tensor dynamic quantisation of rows x len floats into rows of ld
 * bytes (padding zero), over the model's threads: min / max in NCHUNK
 * fixed chunks (exact, so the result is the same for any thread count),
 * then the rows. */
#define NCHUNK 16
typedef struct dynq_ctx {
    const float *x;
    int64_t n, chunk;
    int32_t mn[NCHUNK], mx[NCHUNK], bad[NCHUNK];
    size_t len, ld;
    float s;
    int32_t zp;
    int finite;
    uint8_t *y;
    const pg_variant *span;   /* quantize_u8_span (kern[2]), or NULL: C */
    const pg_variant *minmax; /* minmax_keys (kern[3]) */
} dynq_ctx;

static void dynq_minmax(void *vc, int64_t b, int64_t e)
{
    dynq_ctx *c = vc;
    for (int64_t i = b; i < e; i++) {
        int64_t lo = i * c->chunk, hi = lo + c->chunk < c->n ? lo + c->chunk : c->n;
        minmax_keys(c->minmax, c->x + lo, hi > lo ? hi - lo : 0, &c->mn[i], &c->mx[i], &c->bad[i]);
    }
}

static void dynq_rows(void *vc, int64_t b, int64_t e)
{
    const dynq_ctx *c = vc;
    for (int64_t r = b; r < e; r++) {
        uint8_t *yr = c->y + (size_t)r * c->ld;
        quantize_span(c->span, c->x + (size_t)r * c->len, c->len, c->s, c->zp, c->finite, yr);
        for (size_t i = c->len; i < c->ld; i++)
            yr[i] = 0;
    }
}

/* stats: the min / max keys and the non-finite flag of x when its
 * producer computed them (QuantMatMul's second output), else NULL. */
static void dyn_quantize(const pg_kctx *k, const float *x, size_t rows, size_t len, size_t ld, uint8_t *y,
                         const int32_t *stats, float *scale, int32_t *zp)
{
    dynq_ctx c;
    c.x = x;
    c.minmax = k->bind->kern[3];
    c.n = (int64_t)(rows * len);
    c.chunk = (c.n + NCHUNK - 1) / NCHUNK;
    int32_t mn = 0, mx = 0, bad = 0;
    if (stats) {
        mn = stats[0];
        mx = stats[1];
        bad = stats[2];
    } else {
        pg_exec_parallel(k, NCHUNK, c.chunk, 1, dynq_minmax, &c);
        for (int i = 0; i < NCHUNK; i++) {
            mn = c.mn[i] < mn ? c.mn[i] : mn;
            mx = c.mx[i] > mx ? c.mx[i] : mx;
            bad |= c.bad[i];
        }
    }
    dyn_params(unkey(mn), unkey(mx), &c.s, &c.zp);
    c.finite = !bad;
    c.span = k->bind->kern[2];
    c.len = len;
    c.ld = ld;
    c.y = y;
    /* a single row (DynamicQuantizeLinear's whole tensor) splits as rows of
     * 4096 elements would: the same bits either way */
    if (rows == 1 && ld == len && len > 8192) {
        c.len = c.ld = 4096;
        size_t full = len / 4096, tail = len % 4096;
        pg_exec_parallel(k, (int64_t)full, 4096, 1, dynq_rows, &c);
        quantize_span(c.span, x + full * 4096, tail, c.s, c.zp, c.finite, y + full * 4096);
    } else {
        pg_exec_parallel(k, (int64_t)rows, (int64_t)len, 1, dynq_rows, &c);
    }
    *scale = c.s;
    *zp = c.zp;
}

pg_status pg_exec_dynamic_quantize_linear(pg_kctx *k)
{
    int64_t n = pg_tensor_numel(k->in[0]);
    float s;
    int32_t zp;
    dyn_quantize(k, k->x[0], 1, (size_t)n, (size_t)n, k->y[0], NULL, &s, &zp);
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

/* ---- ConvInteger, QLinearConv ------------------------------------------------------
 * The int32 sum of (x - x_zp) (w - w_zp[m]) over one output element's window
 * (padding contributes nothing: the zero point is subtracted first, as the
 * ONNX reference does), geometry from pg_win_geometry (exec/cnn.h).  Plain
 * loops: the oracle, one output element at a time. */
typedef struct qconv {
    pg_win w;
    int64_t N, C, M, G, Cg, Mg, isz, osz, ksz;
    pg_dtype xdt, wdt;
    const void *X, *W, *XZ, *WZ;
    int64_t wz_n;
} qconv;

static pg_status qconv_init(const pg_kctx *k, int iw, int ixz, int iwz, qconv *q)
{
    const pg_tensor *x = k->in[0], *wt = k->in[iw];
    pg_status st = pg_win_geometry(k->node, PG_WIN_CONV, x->rank - 2, x->shape + 2, wt->shape + 2, &q->w);
    if (st)
        return st;
    q->N = x->shape[0];
    q->C = x->shape[1];
    q->M = wt->shape[0];
    q->G = pg_ir_attr_int(k->node, "group", 1);
    q->Cg = q->C / q->G;
    q->Mg = q->M / q->G;
    q->isz = q->w.in[0] * q->w.in[1] * q->w.in[2];
    q->osz = q->w.out[0] * q->w.out[1] * q->w.out[2];
    q->ksz = q->w.k[0] * q->w.k[1] * q->w.k[2];
    q->xdt = x->dtype;
    q->wdt = wt->dtype;
    q->X = k->x[0];
    q->W = k->x[iw];
    q->XZ = k->n_in > ixz ? k->x[ixz] : NULL;
    q->WZ = k->n_in > iwz ? k->x[iwz] : NULL;
    q->wz_n = q->WZ ? pg_tensor_numel(k->in[iwz]) : 1;
    return PG_OK;
}

static int32_t qconv_acc(const qconv *q, int64_t n, int64_t m, int64_t od, int64_t oh, int64_t ow)
{
    const pg_win *w = &q->w;
    int64_t g = m / q->Mg;
    int32_t xz = q->XZ ? (int32_t)pg_ld_i(q->xdt, q->XZ, 0) : 0;
    int32_t wz = q->WZ ? (int32_t)pg_ld_i(q->wdt, q->WZ, q->wz_n == 1 ? 0 : m) : 0;
    uint32_t acc = 0;   /* wraps as int32 would, without undefined overflow */
    for (int64_t c = 0; c < q->Cg; c++) {
        int64_t xb = (n * q->C + g * q->Cg + c) * q->isz, wb = (m * q->Cg + c) * q->ksz;
        for (int64_t kd = 0; kd < w->k[0]; kd++) {
            int64_t id = od * w->stride[0] - w->lo[0] + kd * w->dil[0];
            if (id < 0 || id >= w->in[0])
                continue;
            for (int64_t kh = 0; kh < w->k[1]; kh++) {
                int64_t ih = oh * w->stride[1] - w->lo[1] + kh * w->dil[1];
                if (ih < 0 || ih >= w->in[1])
                    continue;
                for (int64_t kw = 0; kw < w->k[2]; kw++) {
                    int64_t iw = ow * w->stride[2] - w->lo[2] + kw * w->dil[2];
                    if (iw < 0 || iw >= w->in[2])
                        continue;
                    int32_t xv = (int32_t)pg_ld_i(q->xdt, q->X, xb + (id * w->in[1] + ih) * w->in[2] + iw) - xz;
                    int32_t wv = (int32_t)pg_ld_i(q->wdt, q->W, wb + (kd * w->k[1] + kh) * w->k[2] + kw) - wz;
                    acc += (uint32_t)(xv * wv);
                }
            }
        }
    }
    return (int32_t)acc;
}

#define QCONV_FOR_EACH(q, BODY)                                                        \
    for (int64_t n_ = 0, o_ = 0; n_ < (q).N; n_++)                                    \
        for (int64_t m_ = 0; m_ < (q).M; m_++)                                        \
            for (int64_t od_ = 0; od_ < (q).w.out[0]; od_++)                          \
                for (int64_t oh_ = 0; oh_ < (q).w.out[1]; oh_++)                      \
                    for (int64_t ow_ = 0; ow_ < (q).w.out[2]; ow_++, o_++) {          \
                        int32_t acc_ = qconv_acc(&(q), n_, m_, od_, oh_, ow_);        \
                        BODY;                                                          \
                    }

pg_status pg_exec_conv_integer(pg_kctx *k)
{
    qconv q;
    pg_status st = qconv_init(k, 1, 2, 3, &q);
    if (st)
        return st;
    int32_t *Y = k->y[0];
    QCONV_FOR_EACH(q, Y[o_] = acc_)
    return PG_OK;
}

/* y = saturate(rint((acc + B[m]) * (x_scale * w_scale[m] / y_scale)) + y_zp),
 * the multiplier in float32 and the product in double (the ONNX reference). */
pg_status pg_exec_qlinear_conv(pg_kctx *k)
{
    qconv q;
    pg_status st = qconv_init(k, 3, 2, 5, &q);
    if (st)
        return st;
    const pg_tensor *y = k->out[0];
    const float *SX = k->x[1], *SW = k->x[4];
    float sy = *(const float *)k->x[6];
    int64_t sw_n = pg_tensor_numel(k->in[4]);
    const int32_t *B = k->n_in > 8 ? k->x[8] : NULL;
    const void *ZY = k->n_in > 7 ? k->x[7] : NULL;
    int32_t zy = ZY ? (int32_t)pg_ld_i(k->in[7]->dtype, ZY, 0) : 0;
    int32_t lo = q_lo(y->dtype), hi = q_hi(y->dtype);
    QCONV_FOR_EACH(q, {
        float mult = SX[0] * SW[sw_n == 1 ? 0 : m_] / sy;
        int32_t a = (int32_t)((uint32_t)acc_ + (uint32_t)(B ? B[m_] : 0));
        st_q8(y->dtype, k->y[0], o_, q_round((double)a * (double)mult, zy, lo, hi));
    })
    return PG_OK;
}

/* ---- QuantMatMul ------------------------------------------------------------------
 * in:  A [..., M, K]: uint8 / int8 activations with a_scale, a_zp (one value
 *      each, possibly computed at run time), or float32 (a_scale, a_zp
 *      absent: quantised here per tensor to uint8 exactly as
 *      DynamicQuantizeLinear does);
 *      Wp: int8 [bytes], a constant holding the [K, N] weight packed by
 *      pg_u8s8_pack_s8 (gemm_u8s8's panels, with its column sums, scales and
 *      - attribute zero = 1 - zero points); bias [N] float32 (optional);
 *      a_stats int32 [3] (optional, float A only): A's min / max as
 *      order-preserving keys and a non-finite flag, computed by the
 *      QuantMatMul that produced A (its output 1), so that A is read once.
 * attrs: k, n, zero, activation ("none" | "gelu": erf GELU applied to the
 *      rows after the product, while they are in cache).
 * out: Y [..., M, N] float32; stats int32 [3] (optional): Y's min / max keys
 *      and non-finite flag (for the next product's dynamic quantisation),
 *   Y[m, n] = float(q) * (a_scale * w_scale[n]) + bias[n]
 *   q = sum_k (A[m,k] - a_zp) (W[k,n] - w_zp[n])
 * on the bound gemm_u8s8 kernel (kern[0]).  int8 activations are shifted to
 * uint8 (+128, zero point too: the same differences), the kernel's u8 x s8.
 * float(q) times the scale product, then the bias: the same float32
 * operations in the same order as the Cast -> Mul -> Add chain quant_fusion
 * replaced. */

static size_t qmm_kp(size_t K) { return (K + PG_U8S8_KG - 1) / PG_U8S8_KG * PG_U8S8_KG; }

pg_status pg_bind_quant_matmul(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                               pg_binding *b)
{
    (void)in; (void)out;
    b->kern[0] = pg_u8s8_select(255, 128);   /* the model's own u8 / s8: any values */
    if (!b->kern[0])
        return pg_fail(PG_ERR_UNSUPPORTED, "node '%s': the CPU mask allows no gemm_u8s8 kernel", n->name);
    pg_bind_quantize(n, in, out, b);   /* fp32 A's two passes, kern[2] and [3] */
    if (!strcmp(pg_ir_attr_string(n, "activation", "none"), "gelu")) {
        const pg_kernel_family *f = pg_kernel_family_by_name("gelu_erf");
        b->kern[1] = f ? pg_kernel_select(f) : NULL;
    }
    return PG_OK;
}

/* Rows of A: their quantised copy (when A is not uint8 rows of kp bytes
 * already), per-row zero points, scales and row corrections. */
size_t pg_scratch_quant_matmul(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                               int threads, const pg_binding *b)
{
    (void)out; (void)threads; (void)b;
    size_t K = (size_t)pg_ir_attr_int(n, "k", 0), kp = qmm_kp(K);
    int64_t ne = pg_tensor_numel(in[0]);
    size_t M = K && ne > 0 ? (size_t)ne / K : 0;
    return pg_align_up(M * kp + 64) + 3 * pg_align_up(M * 4 + 64);
}

/* The post-product work on a block of rows, split in QMM_CHUNKS fixed
 * pieces of whole rows (the same bits for any thread count). */
#define QMM_RB 64
#define QMM_CHUNKS 8
typedef struct qmm_post {
    const pg_variant *kern, *minmax;
    int gelu, stats;
    size_t N, rows;
    float *y;
    int32_t mn[QMM_CHUNKS], mx[QMM_CHUNKS], bad[QMM_CHUNKS];
} qmm_post;

static void qmm_post_rows(void *vc, int64_t b, int64_t e)
{
    qmm_post *c = vc;
    for (int64_t i = b; i < e; i++) {
        size_t r0 = c->rows * (size_t)i / QMM_CHUNKS, r1 = c->rows * (size_t)(i + 1) / QMM_CHUNKS;
        for (size_t r = r0; r < r1 && c->gelu; r++)
            pg_apply_act(c->kern, PG_ACTK_GELU, c->y + r * c->N, c->N);
        c->mn[i] = c->mx[i] = c->bad[i] = 0;
        if (c->stats && r1 > r0)
            minmax_keys(c->minmax, c->y + r0 * c->N, (int64_t)((r1 - r0) * c->N), &c->mn[i], &c->mx[i], &c->bad[i]);
    }
}

pg_status pg_exec_quant_matmul(pg_kctx *k)
{
    const pg_tensor *a = k->in[0];
    size_t K = (size_t)pg_ir_attr_int(k->node, "k", 0), N = (size_t)pg_ir_attr_int(k->node, "n", 0);
    int with_zero = (int)pg_ir_attr_int(k->node, "zero", 0);
    size_t kp = qmm_kp(K);
    int64_t ne = pg_tensor_numel(a);
    size_t M = K && ne > 0 ? (size_t)ne / K : 0;
    if (k->scratch_bytes < pg_scratch_quant_matmul(k->node, k->in, k->out, 1, k->bind))
        return pg_fail(PG_ERR_INTERNAL, "node '%s': scratch of %zu bytes is too small", k->node->name,
                       k->scratch_bytes);
    if (M == 0 || N == 0)
        return PG_OK;
    char *sp = k->scratch;
    uint8_t *aq = (uint8_t *)sp;
    sp += pg_align_up(M * kp + 64);
    int32_t *a_zero = (int32_t *)(void *)sp;
    sp += pg_align_up(M * 4 + 64);
    float *a_scale = (float *)(void *)sp;
    sp += pg_align_up(M * 4 + 64);
    int32_t *row_corr = (int32_t *)(void *)sp;
    float as;
    int32_t az;
    const uint8_t *rows = aq;
    if (a->dtype == PG_DTYPE_FLOAT32) {
        dyn_quantize(k, k->x[0], M, K, kp, aq, k->n_in > 5 ? k->x[5] : NULL, &as, &az);
    } else {
        as = *(const float *)k->x[1];
        az = (int32_t)pg_ld_i(a->dtype, k->x[2], 0);
        const uint8_t *src = k->x[0];
        if (a->dtype == PG_DTYPE_INT8) {
            az += 128;   /* int8 v -> uint8 v + 128 */
            for (size_t r = 0; r < M; r++) {
                for (size_t i = 0; i < K; i++)
                    aq[r * kp + i] = (uint8_t)(src[r * K + i] ^ 0x80);
                for (size_t i = K; i < kp; i++)
                    aq[r * kp + i] = 0;
            }
        } else if (kp == K) {
            rows = src;   /* uint8 rows of kp bytes: read in place */
        } else {
            for (size_t r = 0; r < M; r++) {
                memcpy(aq + r * kp, src + r * K, K);
                memset(aq + r * kp + K, 0, kp - K);
            }
        }
    }
    for (size_t r = 0; r < M; r++) {
        a_zero[r] = az;
        a_scale[r] = as;
    }
    if (with_zero)
        for (size_t r = 0; r < M; r++) {
            uint32_t s = 0;
            for (size_t i = 0; i < K; i++)
                s += rows[r * kp + i];
            row_corr[r] = (int32_t)(s - (uint32_t)K * (uint32_t)az);
        }
    pg_u8s8_packed pk;
    pg_u8s8_view(k->x[3], K, N, with_zero, &pk);
    const float *bias = k->n_in > 4 ? k->x[4] : NULL;
    pg_u8s8_epilogue ep = { .a_zero = a_zero, .a_scale = a_scale, .bias = bias,
                            .row_corr = with_zero ? row_corr : NULL, .out_inv_scale = 1.0f,
                            .out_mode = PG_U8S8_OUT_F32 };
    int gelu = !strcmp(pg_ir_attr_string(k->node, "activation", "none"), "gelu");
    int32_t *stats = k->n_out > 1 ? k->y[1] : NULL;
    if (!gelu && !stats)
        return pg_u8s8_gemm_packed(k->bind->kern[0], M, N, rows, kp, &pk, 0, &ep, k->y[0], N, k->threads);
    /* GELU and the min / max of the result (for the next product's dynamic
     * quantisation) on blocks of rows while they are in cache */
    qmm_post c;
    c.kern = k->bind->kern[1];
    c.minmax = k->bind->kern[3];
    c.gelu = gelu;
    c.stats = stats != NULL;
    c.N = N;
    int32_t mn = 0, mx = 0, bad = 0;
    for (size_t r0 = 0; r0 < M; r0 += QMM_RB) {
        size_t rb = M - r0 < QMM_RB ? M - r0 : QMM_RB;
        pg_u8s8_epilogue e2 = ep;
        e2.a_zero += r0;
        e2.a_scale += r0;
        if (e2.row_corr)
            e2.row_corr += r0;
        c.y = (float *)k->y[0] + r0 * N;
        pg_status st = pg_u8s8_gemm_packed(k->bind->kern[0], rb, N, rows + r0 * kp, kp, &pk, 0, &e2, c.y, N,
                                           k->threads);
        if (st)
            return st;
        c.rows = rb;
        pg_exec_parallel(k, QMM_CHUNKS, (int64_t)(rb * N / QMM_CHUNKS + 1), 1, qmm_post_rows, &c);
        for (int i = 0; i < QMM_CHUNKS && stats; i++) {
            mn = c.mn[i] < mn ? c.mn[i] : mn;
            mx = c.mx[i] > mx ? c.mx[i] : mx;
            bad |= c.bad[i];
        }
    }
    if (stats) {
        stats[0] = mn;
        stats[1] = mx;
        stats[2] = bad;
    }
    return PG_OK;
}

/* gemm_u8s8.c - packing int8 weights, quantising activation rows, and the
 * driver over the microkernel: tasks of MR-row tiles x 32-column panels
 * for the thread pool.  Not hot itself: the products are in the
 * microkernel.  The whole K runs in one call of the kernel (int32
 * accumulators need no K blocking, and a panel slice of K <= 1536 is at
 * most 48 KiB, streamed from L2 with prefetch). */
#include <math.h>
#include <string.h>

#include "../../core/cpu.h"
#include "../../core/error.h"
#include "../../core/threadpool.h"
#include "gemm_u8s8.h"

static size_t div_up(size_t a, size_t b) { return (a + b - 1) / b; }

size_t pg_u8s8_packed_bytes(size_t K, size_t N, int with_zero)
{
    size_t kp = div_up(K ? K : 1, PG_U8S8_KG) * PG_U8S8_KG, panels = div_up(N, PG_U8S8_NR);
    size_t cols = panels * PG_U8S8_NR;
    size_t bytes = panels * kp * PG_U8S8_NR + cols * (with_zero ? 12 : 8) + 4;
    return (bytes + 63) & ~(size_t)63;
}

void pg_u8s8_view(const void *blob, size_t K, size_t N, int with_zero, pg_u8s8_packed *out)
{
    size_t kp = div_up(K ? K : 1, PG_U8S8_KG) * PG_U8S8_KG, panels = div_up(N, PG_U8S8_NR);
    size_t cols = panels * PG_U8S8_NR;
    const char *p = blob;
    out->K = K;
    out->N = N;
    out->kp = kp;
    out->panels = panels;
    out->data = (const int8_t *)p;
    p += panels * kp * PG_U8S8_NR;
    out->col_sum = (const int32_t *)p;
    out->scale = (const float *)(p + cols * 4);
    out->zero = with_zero ? (const int32_t *)(p + cols * 8) : NULL;
    out->w_max = *(const int32_t *)(p + cols * (with_zero ? 12 : 8));
}

int pg_u8s8_weights_max(const void *blob, size_t K, size_t N, int with_zero)
{
    pg_u8s8_packed v;
    pg_u8s8_view(blob, K, N, with_zero, &v);
    int m = 0;
    for (size_t i = 0; i < v.panels * v.kp * PG_U8S8_NR; i++) {
        int b = v.data[i] < 0 ? -v.data[i] : v.data[i];
        m = b > m ? b : m;
    }
    return m;
}

/* the weights' max |b| into the blob's last word (pg_u8s8_view) */
static void set_w_max(void *blob, size_t K, size_t N, int with_zero)
{
    pg_u8s8_packed v;
    pg_u8s8_view(blob, K, N, with_zero, &v);
    *(int32_t *)((char *)v.col_sum + v.panels * PG_U8S8_NR * (with_zero ? 12 : 8)) =
        pg_u8s8_weights_max(blob, K, N, with_zero);
}

/* the byte of (k, j) in the packed panels */
static size_t at(size_t kp, size_t k, size_t j)
{
    size_t p = j / PG_U8S8_NR, jj = j % PG_U8S8_NR;
    return p * kp * PG_U8S8_NR + (k / PG_U8S8_KG) * PG_U8S8_NR * PG_U8S8_KG + jj * PG_U8S8_KG +
           k % PG_U8S8_KG;
}

void pg_u8s8_pack_s8(size_t K, size_t N, const int8_t *B, size_t ldb, const float *scale,
                     int scale_per_col, const int32_t *zero, int zero_per_col, void *dst)
{
    size_t bytes = pg_u8s8_packed_bytes(K, N, zero != NULL);
    memset(dst, 0, bytes);
    pg_u8s8_packed v;
    pg_u8s8_view(dst, K, N, zero != NULL, &v);
    int8_t *d = (int8_t *)v.data;
    int32_t *cs = (int32_t *)v.col_sum, *zp = (int32_t *)v.zero;
    float *sc = (float *)v.scale;
    for (size_t j = 0; j < v.panels * PG_U8S8_NR; j++) {
        sc[j] = j < N ? scale[scale_per_col ? j : 0] : 0.0f;
        if (zp)
            zp[j] = j < N ? zero[zero_per_col ? j : 0] : 0;
    }
    for (size_t k = 0; k < K; k++)
        for (size_t j = 0; j < N; j++) {
            int8_t b = B[k * ldb + j];
            d[at(v.kp, k, j)] = b;
            cs[j] += b;
        }
    set_w_max(dst, K, N, zero != NULL);
}

/* Symmetric per-column quantisation to [-q, q] (pg_u8s8_pack_f32): the
 * clamped range and column j's scale (max |B[k][j]| / q, 1 for a zero
 * column), and one weight's level. */
static float clamp_q(int qmax) { return (float)(qmax < 1 ? 1 : qmax > 127 ? 127 : qmax); }

static float col_scale(size_t K, const float *B, size_t ldb, size_t j, float q)
{
    float mx = 0.0f;
    for (size_t k = 0; k < K; k++) {
        float a = fabsf(B[k * ldb + j]);
        mx = a > mx ? a : mx;
    }
    return mx > 0.0f ? mx / q : 1.0f;
}

static float level(float w, float s, float q)
{
    float t = rintf(w / s);
    return t > q ? q : t < -q ? -q : t;
}

void pg_u8s8_pack_f32(size_t K, size_t N, const float *B, size_t ldb, int qmax, void *dst)
{
    size_t bytes = pg_u8s8_packed_bytes(K, N, 0);
    memset(dst, 0, bytes);
    pg_u8s8_packed v;
    pg_u8s8_view(dst, K, N, 0, &v);
    int8_t *d = (int8_t *)v.data;
    int32_t *cs = (int32_t *)v.col_sum;
    float *sc = (float *)v.scale, q = clamp_q(qmax);
    for (size_t j = 0; j < N; j++) {
        float s = col_scale(K, B, ldb, j, q);
        sc[j] = s;
        for (size_t k = 0; k < K; k++) {
            int8_t b = (int8_t)level(B[k * ldb + j], s, q);
            d[at(v.kp, k, j)] = b;
            cs[j] += b;
        }
    }
    set_w_max(dst, K, N, 0);
}

double pg_u8s8_rounding_error(size_t K, size_t N, const float *B, size_t ldb, int qmax)
{
    float q = clamp_q(qmax);
    double err = 0.0, norm = 0.0;
    for (size_t j = 0; j < N; j++) {
        float s = col_scale(K, B, ldb, j, q);
        for (size_t k = 0; k < K; k++) {
            float w = B[k * ldb + j];
            double e = (double)w - (double)(level(w, s, q) * s);
            err += e * e;
            norm += (double)w * (double)w;
        }
    }
    return norm > 0.0 ? sqrt(err / norm) : 0.0;
}

static int exact_for(const pg_variant *v, int a_max, int w_max)
{
    return 2.0 * a_max * w_max <= (double)((const pg_u8s8_params *)v->params)->pair_max;
}

static int fits(const pg_variant *v, const void *ctx)
{
    const int *aw = ctx;
    return exact_for(v, aw[0], aw[1]);
}

const pg_variant *pg_u8s8_select(int a_max, int w_max)
{
    int aw[2] = { a_max, w_max };
    return pg_kernel_select_fitting(&pg_kernels_gemm_u8s8, fits, aw);
}

int pg_u8s8_weight_qmax_for(const pg_variant *v)
{
    int w = ((const pg_u8s8_params *)v->params)->pair_max / (2 * 255);
    return w < 127 ? w : 127;
}

int pg_u8s8_weight_qmax(void)
{
    return pg_u8s8_weight_qmax_for(pg_kernel_select(&pg_kernels_gemm_u8s8));
}

int pg_u8s8_act_qmax(const pg_variant *v, int w_max)
{
    return exact_for(v, 255, w_max) || !exact_for(v, 127, w_max) ? 255 : 127;
}

void pg_u8s8_quantize_rows(const pg_variant *quant, size_t M, size_t K, const float *A,
                           size_t lda, uint8_t *Aq, size_t ldq, float *scale, int32_t *zero,
                           int32_t *row_corr, int qmax)
{
    for (size_t i = 0; i < M; i++) {
        uint8_t *q = Aq + i * ldq;
        quant->fn.quant_u8(K, A + i * lda, q, &scale[i], &zero[i], qmax);
        if (ldq > K)
            memset(q + K, 0, ldq - K);
        if (row_corr) {
            int32_t s = 0;
            for (size_t k = 0; k < K; k++)
                s += q[k];
            row_corr[i] = s - (int32_t)K * zero[i];
        }
    }
}

typedef struct u8_job {
    pg_gemm_u8s8_ukernel_fn kernel;
    void (*finish)(void);
    size_t mr, M, N, kp, lda, ldc, es, col0;
    int wide_a;
    const uint8_t *A;
    const pg_u8s8_packed *B;
    const pg_u8s8_epilogue *ep;
    char *C;
    pg_f32_unary_fn act;      /* applied to the F32 rows once written (act_rows), or NULL */
    size_t m_tiles, panels, tm, tn;
} u8_job;

/* Rows [i0, i1) of A zero-extended to 16 bits into aw (kp each), for a
 * kernel that multiplies them so (wide_a): once per row tile and group of
 * panels, not in every call.  NULL when the kernel widens nothing or the
 * rows do not fit (it then widens them itself). */
#define A_WIDE_ELEMS (24 * 1024)

static const uint16_t *widen_rows(const u8_job *j, size_t i0, size_t i1, uint16_t *aw)
{
    if (!j->wide_a || (i1 - i0) * j->kp > A_WIDE_ELEMS)
        return NULL;
    for (size_t i = i0; i < i1; i++) {
        const uint8_t *a = j->A + i * j->lda;
        uint16_t *w = aw + (i - i0) * j->kp;
        for (size_t k = 0; k < j->kp; k++)
            w[k] = a[k];
    }
    return aw;
}

/* one kernel call: panel p (of this product), rows i .. i+h (aw: them
 * widened, or NULL) */
static void tile(const u8_job *j, size_t p, size_t i, size_t h, const uint16_t *aw)
{
    size_t col = p * PG_U8S8_NR, w = j->N - col < PG_U8S8_NR ? j->N - col : PG_U8S8_NR;
    size_t pbase = j->col0 / PG_U8S8_NR, gc = j->col0 + col;
    pg_u8s8_epilogue ep = *j->ep;
    ep.a_zero += i;
    if (ep.a_scale)
        ep.a_scale += i;
    if (ep.row_corr)
        ep.row_corr += i;
    ep.col_sum = j->B->col_sum + gc;
    ep.b_scale = j->B->scale + gc;
    ep.b_zero = j->B->zero ? j->B->zero + gc : NULL;
    if (ep.bias)
        ep.bias += col;
    ep.a_wide = aw;
    ep.a_wide_ld = j->kp;
    char *c = j->C + (i * j->ldc + col) * j->es;
    j->kernel(h, w, j->kp, j->A + i * j->lda, j->lda, j->B->data + (pbase + p) * j->kp * PG_U8S8_NR,
              c, j->ldc, &ep);
}

/* The activation over rows [i0, i1) of panels [p0, p1), one call a row,
 * once the kernel has written them (and while they are in cache): a call
 * per tile row of 32 floats cost more than the activation (MiniLM's
 * 1024 x 1536 GELU: 49K calls, about 5 ms of a 14 ms product on Zen 3). */
static void act_rows(const u8_job *j, size_t i0, size_t i1, size_t p0, size_t p1)
{
    if (!j->act)
        return;
    size_t c0 = p0 * PG_U8S8_NR, c1 = p1 * PG_U8S8_NR < j->N ? p1 * PG_U8S8_NR : j->N;
    for (size_t r = i0; r < i1; r++) {
        float *row = (float *)j->C + r * j->ldc + c0;
        j->act(c1 - c0, row, row);
    }
}

/* A task's rows that fit in half of L1 stay there while its panels pass
 * (panels outer); taller ones go tile row by tile row, the MR rows of A in
 * L1 across the panels, each panel slice read in order (rows outer):
 * about 1.5x faster for the AMX kernel at M = 1024.  The panels of a tall
 * task go in groups that fit half of L2, so that the rows pass over panels
 * read from L2, not from L3: MiniLM's 1024 x 384 x 1536 (576 KiB of B)
 * on a 512 KiB L2 (AMD Zen 3) ran the avx2 kernel at the fp32 GEMM's
 * speed, a third below its own on L2-resident panels. */
static void run_task(void *ctx, size_t task)
{
    const u8_job *j = ctx;
    size_t ti = task / j->tn, tj = task % j->tn;
    size_t m0 = ti * j->m_tiles / j->tm * j->mr, m1 = (ti + 1) * j->m_tiles / j->tm * j->mr;
    size_t p0 = tj * j->panels / j->tn, p1 = (tj + 1) * j->panels / j->tn;
    if (m1 > j->M)
        m1 = j->M;
    _Alignas(64) uint16_t aw[A_WIDE_ELEMS];
    if ((m1 - m0) * j->kp <= 24 * 1024) {
        const uint16_t *w = widen_rows(j, m0, m1, aw);
        for (size_t p = p0; p < p1; p++)
            for (size_t i = m0; i < m1; i += j->mr)
                tile(j, p, i, m1 - i < j->mr ? m1 - i : j->mr, w ? w + (i - m0) * j->kp : NULL);
        act_rows(j, m0, m1, p0, p1);
    } else {
        int l2 = pg_cpu_caps_get()->l2_bytes;
        size_t group = (l2 > 0 ? (size_t)l2 : 512 * 1024) / 2 / (j->kp * PG_U8S8_NR + 1);
        group = group ? group : 1;
        for (size_t pg = p0; pg < p1; pg += group) {
            size_t pe = pg + group < p1 ? pg + group : p1;
            for (size_t i = m0; i < m1; i += j->mr) {
                size_t h = m1 - i < j->mr ? m1 - i : j->mr;
                const uint16_t *w = widen_rows(j, i, i + h, aw);
                for (size_t p = pg; p < pe; p++)
                    tile(j, p, i, h, w);
                act_rows(j, i, i + h, pg, pe);
            }
        }
    }
    if (j->finish)
        j->finish();
}

pg_status pg_u8s8_gemm_packed(const pg_variant *v, size_t M, size_t N, const uint8_t *Aq,
                              size_t lda, const pg_u8s8_packed *B, size_t col0,
                              const pg_u8s8_epilogue *ep, void *C, size_t ldc, int threads)
{
    return pg_u8s8_gemm_packed_act(v, M, N, Aq, lda, B, col0, ep, C, ldc, NULL, threads);
}

pg_status pg_u8s8_gemm_packed_act(const pg_variant *v, size_t M, size_t N, const uint8_t *Aq,
                                  size_t lda, const pg_u8s8_packed *B, size_t col0,
                                  const pg_u8s8_epilogue *ep, void *C, size_t ldc,
                                  const pg_variant *act, int threads)
{
    if (act && ep && ep->out_mode != PG_U8S8_OUT_F32)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_u8s8_gemm_packed: an activation needs fp32 output");
    if (!v || !B || !ep)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_u8s8_gemm_packed: NULL kernel, weights or epilogue");
    if (col0 % PG_U8S8_NR || col0 + N > B->N)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_u8s8_gemm_packed: columns %zu..%zu of %zu "
                       "(the first must be a multiple of %d)", col0, col0 + N, B->N, PG_U8S8_NR);
    if (ep->out_mode < PG_U8S8_OUT_F32 || ep->out_mode > PG_U8S8_OUT_S8)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_u8s8_gemm_packed: output mode %d", ep->out_mode);
    if (M == 0 || N == 0)
        return PG_OK;
    if (!Aq || !C || lda < B->kp || ldc < N || !ep->a_zero ||
        (ep->out_mode != PG_U8S8_OUT_I32 && !ep->a_scale) || (B->zero && !ep->row_corr))
        return pg_fail(PG_ERR_INVALID_ARG, "pg_u8s8_gemm_packed: missing buffer or short stride "
                       "(lda %zu, kp %zu, ldc %zu, N %zu)", lda, B->kp, ldc, N);
    const pg_u8s8_params *prm = v->params;
    int a_max = ep->a_max ? ep->a_max : 255;
    if (!exact_for(v, a_max, B->w_max))
        return pg_fail(PG_ERR_INVALID_ARG, "pg_u8s8_gemm_packed: activations up to %d and weights "
                       "up to |%d|, where %s is exact only while 2 a w <= %d", a_max, B->w_max,
                       v->name, prm->pair_max);
    u8_job j = {
        .kernel = v->fn.gemm_u8s8, .finish = prm->finish, .mr = (size_t)prm->mr, .M = M, .N = N,
        .kp = B->kp, .wide_a = prm->wide_a,
        .lda = lda, .ldc = ldc, .col0 = col0, .A = Aq, .B = B, .ep = ep, .C = C,
        .es = ep->out_mode == PG_U8S8_OUT_U8 || ep->out_mode == PG_U8S8_OUT_S8 ? 1 : 4,
        .act = act ? act->fn.unary : NULL,
    };
    double ops = 2.0 * (double)M * (double)N * (double)B->kp;
    int t = pg_threads_for_work(pg_threads_resolve(threads), ops, prm->thread_work);
    j.m_tiles = div_up(M, j.mr);
    j.panels = div_up(N, PG_U8S8_NR);
    size_t target = t > 1 ? (size_t)t * 4 : 1;
    if (M >= N) {
        j.tm = j.m_tiles < target ? j.m_tiles : target;
        size_t rest = div_up(target, j.tm);
        j.tn = j.panels < rest ? j.panels : rest;
    } else {
        j.tn = j.panels < target ? j.panels : target;
        size_t rest = div_up(target, j.tn);
        j.tm = j.m_tiles < rest ? j.m_tiles : rest;
    }
    pg_parallel_for(j.tm * j.tn, run_task, &j, t);
    return PG_OK;
}

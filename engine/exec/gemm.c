/* gemm.c - the matrix-product driver of the executors (see gemm.h). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../kernels/sgemm/sgemm.h"
#include "../core/alloc.h"
#include "../core/error.h"
#include "../kernels/unary_fn.h"
#include "../kernels/gemv_panels/gemv_panels.h"
#include "gemm.h"
#include "parallel.h"

/* Bytes of B packed into the kernel's panels (0 without a kernel). */
static size_t b_pack_bytes(const pg_sgemm_params *p, size_t K, size_t N)
{
    size_t nr = (size_t)p->nr;
    return pg_align_up(((N + nr - 1) / nr) * nr * K * sizeof(float));
}

/* Bytes of the copy pg_gemm2d makes of an M x K A at row stride lda, at
 * an unaliased stride (its scratch allowing), or 0 for none: only where
 * lda aliases and there are enough rows and columns for the copy to pay. */
static size_t a_copy_bytes(const pg_sgemm_params *p, size_t M, size_t N, size_t K, size_t lda)
{
    if (M < 2 * (size_t)p->mr || N < 2 * (size_t)p->nr || !pg_sgemm_a_aliases((size_t)p->mr, lda))
        return 0;
    size_t la = pg_sgemm_unaliased_lda((size_t)p->mr, K);
    return M > (SIZE_MAX - 64) / sizeof(float) / la ? 0 : pg_align_up(M * la * sizeof(float));
}

/* Rows of A copied to another row stride (pg_exec_parallel's ranges). */
typedef struct row_copy {
    const float *src;
    float *dst;
    size_t lds, ldd, cols;
} row_copy;

static void copy_rows(void *ctx, int64_t begin, int64_t end)
{
    const row_copy *c = ctx;
    for (size_t r = (size_t)begin; r < (size_t)end; r++)
        memcpy(c->dst + r * c->ldd, c->src + r * c->lds, c->cols * sizeof(float));
}

size_t pg_gemm_scratch_bytes(const pg_variant *sgemm, size_t M, size_t K, size_t N, int b_packed)
{
    const pg_sgemm_params *p = sgemm ? sgemm->params : NULL;
    if (!p || p->nr <= 0)
        return 0;
    return (b_packed ? 0 : b_pack_bytes(p, K, N)) + a_copy_bytes(p, M, N, K, K);
}

void pg_apply_act(const pg_variant *kern, pg_act_kind act, float *y, size_t n)
{
    if (kern) {
        kern->fn.unary(n, y, y);
        return;
    }
    /* the switch outside the loops, so each loop is one formula the
     * compiler can vectorise (a switch per element ran ReLU at about 18
     * cycles an element: 65% of an int8 MLP's time, whose ReLU has no
     * kernel family) */
#define ACT_LOOP(expr)                 \
    for (size_t i = 0; i < n; i++) {   \
        float x = y[i];                \
        y[i] = (expr);                 \
    }                                  \
    break
    switch (act) {
    case PG_ACTK_RELU: ACT_LOOP(x > 0 ? x : 0.0f);
    case PG_ACTK_GELU: ACT_LOOP(0.5f * x * (1.0f + erff(x * 0.70710678118654752f)));
    case PG_ACTK_GELU_TANH: ACT_LOOP(0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x))));
    case PG_ACTK_SIGMOID: ACT_LOOP(1.0f / (1.0f + expf(-x)));
    case PG_ACTK_TANH: ACT_LOOP(tanhf(x));
    case PG_ACTK_SILU: ACT_LOOP(x / (1.0f + expf(-x)));
    default: break;
    }
#undef ACT_LOOP
}

void pg_gemm_pack_bt(size_t K, size_t N, const float *Bt, size_t ldb, size_t nr, float *dst)
{
    /* 8 stored rows (= panel columns) at a time: 8 sequential read streams,
     * and each panel row gets 8 adjacent floats per visit */
    for (size_t p = 0; p * nr < N; p++) {
        size_t j0 = p * nr, w = N - j0 < nr ? N - j0 : nr;
        float *panel = dst + p * K * nr;
        size_t jb = 0;
        for (; jb + 8 <= w; jb += 8) {
            const float *r0 = Bt + (j0 + jb) * ldb;
            for (size_t kk = 0; kk < K; kk++) {
                float *o = panel + kk * nr + jb;
                for (size_t t = 0; t < 8; t++)
                    o[t] = r0[t * ldb + kk];
            }
        }
        for (; jb < w; jb++) {
            const float *row = Bt + (j0 + jb) * ldb;
            for (size_t kk = 0; kk < K; kk++)
                panel[kk * nr + jb] = row[kk];
        }
        if (w < nr)
            for (size_t kk = 0; kk < K; kk++)
                for (size_t jj = w; jj < nr; jj++)
                    panel[kk * nr + jj] = 0.0f;
    }
}

/* Plain loops: row i of C accumulates alpha*A[i,k] * B[k,:]. */
static void gemm_loop(size_t M, size_t N, size_t K, const float *A, size_t lda,
                      const pg_gemm_b *B, size_t col0, float *C, size_t ldc)
{
    for (size_t i = 0; i < M; i++) {
        float *c = C + i * ldc;
        const float *a = A + i * lda;
        if (B->trans) {
            for (size_t j = 0; j < N; j++) {
                const float *b = B->data + (col0 + j) * B->ldb;
                float s = 0;
                for (size_t kk = 0; kk < K; kk++)
                    s += a[kk] * b[kk];
                c[j] = s;
            }
            continue;
        }
        for (size_t j = 0; j < N; j++)
            c[j] = 0;
        for (size_t kk = 0; kk < K; kk++) {
            float av = a[kk];
            const float *b = B->data + kk * B->ldb + col0;
            for (size_t j = 0; j < N; j++)
                c[j] += av * b[j];
        }
    }
}

pg_status pg_gemm2d(pg_kctx *k, size_t M, size_t N, size_t K, const float *A, size_t lda,
                    const pg_gemm_b *B, size_t col0, float *C, size_t ldc,
                    const float *bias, pg_act_kind act, float alpha)
{
    if (M == 0 || N == 0)
        return PG_OK;
    const pg_variant *v = k->bind->kern[0];
    const pg_sgemm_params *prm = v ? v->params : NULL;
    size_t nr = prm ? (size_t)prm->nr : 0;
    int threads = k->threads;   /* the model's count; 0 (outside a model) = the default */
    /* a packed weight runs on the kernel it was packed for, or not at all */
    if (B->packed && (B->nr != nr || col0 % nr))
        return pg_fail(PG_ERR_INTERNAL, "node '%s': weight packed in %zu-column panels, bound to %s "
                       "(%zu columns)", k->node->name, B->nr, v ? v->name : "no SGEMM kernel", nr);
    if (M == 1 && B->packed && alpha == 1.0f && k->bind->kern[3]) {
        /* one row against packed panels: GEMV reads several panels at once */
        pg_gemv_panels_run(k->bind->kern[3], N, K, A, B->data + (col0 / nr) * K * nr, nr, bias, C,
                           threads);
        if (act != PG_ACTK_NONE)
            pg_apply_act(k->bind->kern[1], act, C, N);
        return PG_OK;
    }
    pg_packed_b pb = { v, K, N, nr, nr ? (N + nr - 1) / nr : 0, NULL };
    char *free_at = k->scratch;   /* the scratch not yet used */
    size_t free_bytes = k->scratch ? k->scratch_bytes : 0;
    if (B->packed) {
        pb.data = (float *)B->data + (col0 / nr) * K * nr;
    } else if (nr && alpha == 1.0f && free_bytes >= b_pack_bytes(prm, K, N)) {
        if (B->trans)
            pg_gemm_pack_bt(K, N, B->data + col0 * B->ldb, B->ldb, nr, (float *)free_at);
        else
            pg_sgemm_pack_panels(K, N, B->data + col0, B->ldb, nr, (float *)free_at);
        pb.data = (float *)free_at;
        free_at += b_pack_bytes(prm, K, N);
        free_bytes -= b_pack_bytes(prm, K, N);
    }
    size_t a_bytes = pb.data ? a_copy_bytes(prm, M, N, K, lda) : 0;
    if (a_bytes && free_bytes >= a_bytes) {
        /* rows of A that would share an L1 set: a dense copy at a stride
         * that spreads them (read once, against N / 8 flops per byte) */
        size_t la = pg_sgemm_unaliased_lda((size_t)prm->mr, K);
        /* on the model's threads: a 1024 x 3072 A (BERT at batch 8) is
         * 12 MiB to copy */
        row_copy c = { A, (float *)free_at, lda, la, K };
        pg_exec_parallel(k, (int64_t)M, (int64_t)K, 1, copy_rows, &c);
        A = c.dst;
        lda = la;
    }
    /* the kernel's epilogue takes bias and relu/gelu when alpha is 1; the
     * rest follows the product in these loops */
    int fused = alpha == 1.0f;
    if (pb.data) {
        int kact = !fused ? PG_ACT_NONE : act == PG_ACTK_RELU ? PG_ACT_RELU
                 : act == PG_ACTK_GELU ? PG_ACT_GELU : PG_ACT_NONE;
        pg_status st = pg_sgemm_packed(M, A, lda, &pb, fused ? bias : NULL, kact, C, ldc, threads);
        if (st)
            return st;
        if (kact != PG_ACT_NONE || (fused && act == PG_ACTK_NONE))
            return PG_OK;
    } else {
        gemm_loop(M, N, K, A, lda, B, col0, C, ldc);
        fused = 0;
    }
    if (!fused)
        for (size_t i = 0; i < M; i++) {
            float *c = C + i * ldc;
            if (alpha != 1.0f)
                for (size_t j = 0; j < N; j++) c[j] *= alpha;
            if (bias)
                for (size_t j = 0; j < N; j++) c[j] += bias[j];
        }
    if (act != PG_ACTK_NONE)
        for (size_t i = 0; i < M; i++)
            pg_apply_act(k->bind->kern[1], act, C + i * ldc, N);
    return PG_OK;
}

/* qgemv.c - the public entries pg_quantize_row_q8 and pg_qgemv: argument
 * checks, then the variant the table picks (or the one named), on several
 * threads when W is large.  Threads take blocks of rows (multiples of the
 * kernels' four): each block is one contiguous stretch of W and owns its
 * outputs, so the result does not depend on the thread count. */
#include <stdint.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/threadpool.h"
#include "../../gguf/ggml_types.h"
#include "../kquant/kquant.h"
#include "../qdot/qdot.h"
#include "qgemv.h"

/* Below this much of W one thread streams it faster than waking others. */
#define QGEMV_MT_MIN_BYTES ((size_t)128 << 10)
#define QGEMV_MIN_ROWS 16

static const pg_variant *pick(const pg_kernel_family *op, int variant)
{
    return variant < 0 ? pg_kernel_select(op) : pg_kernel_variant_checked(op, variant);
}

pg_status pg_quantize_row_q8(int variant, int type, size_t n, const float *x, void *out)
{
    pg_clear_error();
    const pg_kernel_family *op = type == PG_GGML_Q8_0 ? &pg_kernels_quantize_q8_0
                    : type == PG_GGML_Q8_1 ? &pg_kernels_quantize_q8_1
                    : type == PG_GGML_Q8_K ? &pg_kernels_quantize_q8_K : NULL;
    if (!op)
        return pg_fail(PG_ERR_DTYPE, "pg_quantize_row_q8: type %d is not q8_0 (%d), q8_1 (%d) "
                       "or q8_K (%d)", type, PG_GGML_Q8_0, PG_GGML_Q8_1, PG_GGML_Q8_K);
    size_t blk = type == PG_GGML_Q8_K ? 256 : 32;
    if (n % blk)
        return pg_fail(PG_ERR_SHAPE, "pg_quantize_row_q8: n = %zu is not a multiple of %zu "
                       "(the quantisation block)", n, blk);
    const pg_variant *v = pick(op, variant);
    if (!v)
        return pg_last_status();
    if (n == 0)
        return PG_OK;
    if (!x || !out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_quantize_row_q8: %s is NULL", !x ? "x" : "out");
    v->fn.quantize(n, x, out);
    return PG_OK;
}

/* Shared by pg_qgemv and pg_qgemm: the weight type's op and the checks on
 * K and the row stride.  *row_bytes gets the bytes of one packed row. */
pg_status pg_qweights_check(const char *fn, int wtype, size_t N, size_t K, const void *W,
                            size_t ldw, size_t *row_bytes)
{
    const pg_ggml_type_traits *t = pg_ggml_traits(wtype);
    if (!pg_qgemv_family(wtype))
        return pg_fail(PG_ERR_DTYPE, "%s: weight type %d (%s) is not q4_0, q4_1, q8_0, q4_K, "
                       "q5_K, q6_K, f16, bf16 or f32", fn, wtype, t ? t->name : "unknown");
    size_t blk = pg_qweights_k_multiple(wtype);
    if (K % blk)
        return pg_fail(PG_ERR_SHAPE, "%s: K = %zu is not a multiple of %zu (the %s quantisation "
                       "block)", fn, K, blk, t->name);
    size_t rb = K / (size_t)t->block * (size_t)t->bytes;
    if (ldw < rb)
        return pg_fail(PG_ERR_SHAPE, "%s: ldw = %zu bytes is less than one %s row of K = %zu (%zu bytes)",
                       fn, ldw, t->name, K, rb);
    if (N > 0 && (N - 1) > (SIZE_MAX - rb) / (ldw ? ldw : 1))
        return pg_fail(PG_ERR_SHAPE, "%s: W of %zu rows x %zu bytes does not fit in memory", fn, N, ldw);
    if (N > 0 && K > 0 && !W)
        return pg_fail(PG_ERR_INVALID_ARG, "%s: W is NULL", fn);
    *row_bytes = rb;
    return PG_OK;
}

typedef struct qgemv_job {
    pg_qgemv_fn fn;
    size_t N, K, ldw, rows;
    const uint8_t *W;
    const void *x;
    float *y;
} qgemv_job;

static void qgemv_task(void *ctx, size_t t)
{
    const qgemv_job *j = ctx;
    size_t n0 = t * j->rows;
    if (n0 >= j->N)
        return;
    size_t n = j->N - n0 < j->rows ? j->N - n0 : j->rows;
    j->fn(n, j->K, j->W + n0 * j->ldw, j->ldw, j->x, j->y + n0);
}

pg_status pg_qgemv(int variant, int wtype, size_t N, size_t K, const void *W, size_t ldw,
                   const void *x, float *y, int threads)
{
    pg_clear_error();
    size_t row_bytes = 0;
    pg_status st = pg_qweights_check("pg_qgemv", wtype, N, K, W, ldw, &row_bytes);
    if (st != PG_OK)
        return st;
    const pg_variant *v = pick(pg_qgemv_family(wtype), variant);
    if (!v)
        return pg_last_status();
    if (N == 0)
        return PG_OK;
    if (!y)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_qgemv: y is NULL");
    if (K == 0) {
        memset(y, 0, N * sizeof *y);
        return PG_OK;
    }
    if (!x)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_qgemv: x is NULL");

    qgemv_job job = { v->fn.qgemv, N, K, ldw, N, W, x, y };
    size_t nt = (size_t)pg_threads_resolve(threads);
    if (N / QGEMV_MIN_ROWS < nt)
        nt = N / QGEMV_MIN_ROWS;
    if (nt <= 1 || N * row_bytes < QGEMV_MT_MIN_BYTES) {
        job.fn(N, K, W, ldw, x, y);
        return PG_OK;
    }
    job.rows = ((N + nt - 1) / nt + 3) & ~(size_t)3;
    pg_parallel_for((N + job.rows - 1) / job.rows, qgemv_task, &job, (int)nt);
    return PG_OK;
}

/* llm_matmul.c - quantised weights times quantised activations.
 *
 * The weights stay in their GGUF blocks (q4_1 or q8_0, N rows of K); the
 * activations are quantised once per step to the block type the weight's
 * dot product takes (q8_1 for q4_1, q8_0 for q8_0), exactly as ggml's CPU
 * backend does, so the products match llama.cpp's to the rounding of the
 * dot kernel.  The kernels come from the qgemv (one token: decode) and
 * qgemm (a batch: prefill, each weight block widened once for four
 * tokens) variant tables.
 *
 * Work is split over blocks of weight rows, every task doing all tokens of
 * its block, so the weights are read from memory once per batch.  In the
 * GEMV form (decode) the weights come from DRAM every token; the GEMV
 * kernels prefetch their rows as one linear stream themselves, so they
 * get whole row ranges (a separate touch pass per 16 KiB, which helped the
 * kernels before they prefetched, now costs ~25% of decode speed).  The
 * kernels are the model's bound ones (llm_bind.c). */
#include "../core/threadpool.h"
#include "../kernels/qdot/qdot.h"
#include "../kernels/qgemm/qgemm.h"
#include "../kernels/qgemv/qgemv.h"
#include "llm.h"

/* Weight rows per task: a multiple of the kernels' 4 rows, large enough to
 * amortise the hand-out, small enough to balance the threads. */
#define MIN_ROWS_PER_TASK 16

size_t llm_act_row_bytes(int act_type, size_t K)
{
    return (K / 32) * (size_t)pg_ggml_type_block_bytes(act_type);
}

void llm_quantize_rows(const pg_llm *m, int act_type, size_t M, size_t K, const float *x, void *act)
{
    pg_quantize_row_fn q =
        m->kern[act_type == PG_GGML_Q8_1 ? LLM_K_QUANTIZE_Q8_1 : LLM_K_QUANTIZE_Q8_0]->fn.quantize;
    size_t rb = llm_act_row_bytes(act_type, K);
    for (size_t m = 0; m < M; m++)
        q(K, x + m * K, (uint8_t *)act + m * rb);
}

typedef struct mm_ctx {
    const llm_weight *W;
    size_t M, rows;
    const uint8_t *act;
    size_t act_rb;
    float *out;
    size_t ldo;
    pg_qgemv_fn gemv;
    pg_qgemm_fn gemm;
} mm_ctx;

static void mm_rows(const mm_ctx *c, size_t n0, size_t n1)
{
    const llm_weight *W = c->W;
    if (c->M == 1)
        c->gemv(n1 - n0, W->K, W->data + n0 * W->row_bytes, W->row_bytes, c->act, c->out + n0);
    else
        c->gemm(c->M, n1 - n0, W->K, W->data + n0 * W->row_bytes, W->row_bytes, c->act,
                c->act_rb, c->out + n0, c->ldo);
}

static void mm_task(void *p, size_t task)
{
    const mm_ctx *c = p;
    size_t n0 = task * c->rows;
    size_t n1 = n0 + c->rows < c->W->N ? n0 + c->rows : c->W->N;
    mm_rows(c, n0, n1);
}

void llm_matmul(const pg_llm *m, const llm_weight *W, size_t M, const void *act, float *out,
                size_t ldo)
{
    mm_ctx c = { W, M, 0, act, llm_act_row_bytes(W->act_type, W->K), out, ldo,
                 m->kern[llm_gemv_role(W->type)]->fn.qgemv,
                 m->kern[llm_gemm_role(W->type)]->fn.qgemm };
    size_t nt = (size_t)pg_threads_resolve(m->threads);
    if (nt <= 1 || W->N < 2 * MIN_ROWS_PER_TASK) {
        mm_rows(&c, 0, W->N);
        return;
    }
    /* four tasks per thread: the pool hands them out, so a busy core
     * takes fewer; rows a multiple of 4 (the kernels' row tile) */
    size_t rows = (W->N + 4 * nt - 1) / (4 * nt);
    rows = (rows + 3) & ~(size_t)3;
    if (rows < MIN_ROWS_PER_TASK)
        rows = MIN_ROWS_PER_TASK;
    c.rows = rows;
    pg_parallel_for((W->N + rows - 1) / rows, mm_task, &c, (int)nt);
}

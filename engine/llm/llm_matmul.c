/* llm_matmul.c - quantised weights times quantised activations.
 *
 * The weights stay in their GGUF blocks (q4_1 or q8_0, N rows of K); the
 * activations are quantised once per step to the block type the weight's
 * dot product takes (q8_1 for q4_1, q8_0 for q8_0), exactly as ggml's CPU
 * backend does, so the products match llama.cpp's to the rounding of the
 * dot kernel.  The dot products come from the qdot variant tables.
 *
 * Work is split over blocks of weight rows.  For one token (decode) a task
 * streams its rows once; for a batch (prefill) a task keeps its block of
 * rows (a few KiB) in L1 while it walks every token, so the weights are
 * read from memory once per batch, not once per token. */
#include "../core/threadpool.h"
#include "../kernels/qdot/qdot.h"
#include "llm.h"

/* Rows of W per task: enough work to amortise the hand-out, small enough
 * to balance 2-16 threads on a 576-row matrix. */
#define ROWS_PER_TASK 32
/* Tokens walked per pass over a block of rows in the batch form. */
#define TOKENS_PER_PASS 64

size_t llm_act_row_bytes(int act_type, size_t K)
{
    return (K / 32) * (size_t)pg_ggml_type_block_bytes(act_type);
}

void llm_quantize_rows(int act_type, size_t M, size_t K, const float *x, void *act)
{
    const pg_op *op = act_type == PG_GGML_Q8_1 ? &pg_op_quantize_q8_1 : &pg_op_quantize_q8_0;
    pg_quantize_row_fn q = (pg_quantize_row_fn)pg_op_select(op)->fn;
    size_t rb = llm_act_row_bytes(act_type, K);
    for (size_t m = 0; m < M; m++)
        q(K, x + m * K, (uint8_t *)act + m * rb);
}

typedef struct mm_ctx {
    const llm_weight *W;
    size_t M;
    const uint8_t *act;
    size_t act_rb;
    float *out;
    size_t ldo;
    pg_vec_dot_fn dot;
} mm_ctx;

static void mm_task(void *p, size_t task)
{
    const mm_ctx *c = p;
    const llm_weight *W = c->W;
    size_t n0 = task * ROWS_PER_TASK;
    size_t n1 = n0 + ROWS_PER_TASK < W->N ? n0 + ROWS_PER_TASK : W->N;
    for (size_t m0 = 0; m0 < c->M; m0 += TOKENS_PER_PASS) {
        size_t m1 = m0 + TOKENS_PER_PASS < c->M ? m0 + TOKENS_PER_PASS : c->M;
        for (size_t n = n0; n < n1; n++) {
            const uint8_t *w = W->data + n * W->row_bytes;
            for (size_t m = m0; m < m1; m++)
                c->dot(W->K, w, c->act + m * c->act_rb, &c->out[m * c->ldo + n]);
        }
    }
}

void llm_matmul(const llm_weight *W, size_t M, const void *act, float *out, size_t ldo,
                int threads)
{
    const pg_op *op = W->type == PG_GGML_Q4_1 ? &pg_op_qdot_q4_1_q8_1 : &pg_op_qdot_q8_0_q8_0;
    mm_ctx c = { W, M, act, llm_act_row_bytes(W->act_type, W->K), out, ldo,
                 (pg_vec_dot_fn)pg_op_select(op)->fn };
    size_t tasks = (W->N + ROWS_PER_TASK - 1) / ROWS_PER_TASK;
    pg_parallel_for(tasks, mm_task, &c, threads);
}

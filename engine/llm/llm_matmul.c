/* llm_matmul.c - the decoder's weights times its activations.
 *
 * The weights stay in their GGUF blocks, N rows of K, each tensor in its
 * own type (a Q4_K_M file mixes q4_K and q6_K): q4_0, q4_1, q8_0, q4_K,
 * q5_K, q6_K, f16, bf16 or f32.  The activations are quantised once per step
 * to the block type the weight's dot product takes, as ggml's CPU backend
 * does (q8_1 for q4_1, q8_0 for q4_0 / q8_0, q8_K for the k-quants), so
 * the products match llama.cpp's to the rounding of the dot kernel; f16 /
 * bf16 weights take the fp32 activations as they are.  The kernels come
 * from the qgemv (one token: decode) and qgemm (a batch: prefill) variant
 * tables of each type, bound at compile (the graph's GGUFQuantize and
 * GGUFMatMul, exec/ops_llm.c).
 *
 * Work is split over blocks of weight rows, every task doing all tokens of
 * its block, so the weights are read from memory once per batch.  In the
 * GEMV form (decode) the weights come from DRAM every token; the GEMV
 * kernels prefetch their rows as one linear stream themselves, so they
 * get whole row ranges (a separate touch pass per 16 KiB, which helped the
 * kernels before they prefetched, now costs ~25% of decode speed). */
#include <string.h>

#include "../core/error.h"
#include "../core/threadpool.h"
#include "../gguf/ggml_types.h"
#include "../kernels/kquant/kquant.h"
#include "../kernels/qdot/qdot.h"
#include "../kernels/qgemm/qgemm.h"
#include "../kernels/qgemv/qgemv.h"
#include "llm.h"

/* Weight rows per task: a multiple of the kernels' 4 rows, large enough to
 * amortise the hand-out, small enough to balance the threads. */
#define MIN_ROWS_PER_TASK 16

size_t llm_act_row_bytes(int act_type, size_t K)
{
    return K / (size_t)pg_ggml_type_block_size(act_type) * (size_t)pg_ggml_type_block_bytes(act_type);
}

/* GGUF has no checksums; what a load can still catch of a damaged file:
 * a block scale (f16: q4_0 / q8_0's d, q4_1's d and min, q4_K / q5_K's d
 * and dmin, q6_K's d) or an f16 / bf16 weight that is NaN or Inf, which
 * would only show up later as NaN logits or nonsense text. */
static pg_status check_finite(const char *name, int type, const uint8_t *data, size_t K, size_t N)
{
    const pg_ggml_type_traits *t = pg_ggml_traits(type);
    size_t blocks = N * (K / (size_t)t->block), bb = (size_t)t->bytes;
    if (type == PG_GGML_F32) {
        for (size_t i = 0; i < blocks; i++) {
            const uint8_t *p = data + 4 * i;
            if ((p[3] & 0x7F) == 0x7F && (p[2] & 0x80))
                return pg_fail(PG_ERR_FORMAT, "llm: %s: element %zu (row %zu) is NaN or "
                               "infinite (the file is damaged)", name, i % K, i / K);
        }
        return PG_OK;
    }
    size_t off = type == PG_GGML_Q6_K ? 208 : 0;
    int halves = type == PG_GGML_Q4_1 || type == PG_GGML_Q4_K || type == PG_GGML_Q5_K ? 2 : 1;
    uint16_t mask = type == PG_GGML_BF16 ? 0x7F80 : 0x7C00;
    for (size_t b = 0; b < blocks; b++)
        for (int h = 0; h < halves; h++) {
            const uint8_t *p = data + b * bb + off + 2 * (size_t)h;
            uint16_t v = (uint16_t)(p[0] | p[1] << 8);
            if ((v & mask) == mask) {
                if (t->block == 1)
                    return pg_fail(PG_ERR_FORMAT, "llm: %s: element %zu (row %zu) is NaN or "
                                   "infinite (the file is damaged)", name, b % K, b / K);
                return pg_fail(PG_ERR_FORMAT, "llm: %s: block %zu has a NaN or infinite %s "
                               "(the file is damaged)", name, b, h ? "minimum" : "scale");
            }
        }
    return PG_OK;
}

pg_status llm_weight_accept(const char *name, int type, size_t K, size_t N, const uint8_t *data,
                            int *act_type)
{
    const char *tn = pg_ggml_type_name(type);
    if (!pg_qgemv_family(type) || !pg_qgemm_family(type))
        return pg_fail(PG_ERR_UNSUPPORTED, "llm: %s is %s; the decoder runs q4_0, q4_1, q8_0, "
                       "q4_K, q5_K, q6_K, f16, bf16 and f32 weights", name, tn ? tn : "of an unknown type");
    size_t mult = pg_qweights_k_multiple(type);
    if (K % mult)
        return pg_fail(PG_ERR_UNSUPPORTED, "llm: %s is %s with rows of %zu, not a multiple of %zu "
                       "(its quantisation block)", name, tn, K, mult);
    *act_type = pg_qgemv_act_type(type);
    return check_finite(name, type, data, K, N);
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

void llm_matmul_with(const llm_weight *W, size_t M, const void *act, float *out, size_t ldo,
                     pg_qgemv_fn gemv, pg_qgemm_fn gemm, int threads)
{
    mm_ctx c = { W, M, 0, act, llm_act_row_bytes(W->act_type, W->K), out, ldo, gemv, gemm };
    size_t nt = (size_t)pg_threads_resolve(threads);
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

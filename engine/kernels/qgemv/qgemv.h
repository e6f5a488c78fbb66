/* qgemv.h - quantised matrix-vector product, the decode step of an LLM
 * whose weights come from a GGUF file:
 *
 *     y[n] = dot(W row n, x)        0 <= n < N
 *
 * W is N rows of K / 32 blocks of the weight type (q4_0, q4_1 or q8_0, the
 * layouts in qdot/qdot.h), row n starting at W + n * ldw bytes; x is one
 * row of K activations already quantised (qgemv_act_type: q8_1 for q4_1
 * weights, q8_0 for the others).  Each output is exactly the block formula
 * of qdot.h: per block an int32 sum of products, scaled by the f16 scales.
 *
 * The kernels keep the dequantisation in registers (W is never expanded in
 * memory): a block's nibbles or bytes are widened, multiplied with x's
 * int8 and summed in int32, then scaled in fp32.  They take four rows of W
 * at a time (four forward streams) sharing each x block and its scale.
 * A kernel computes every row it is given; the driver (qgemv.c) splits N
 * into row blocks for the thread pool. */
#ifndef PG_KERNELS_QGEMV_H
#define PG_KERNELS_QGEMV_H

#include <stddef.h>

#include "../variant.h"

/* The entry point: pg_qgemv_fn, the qgemv member of pg_kernel_fn (kernel_fn.h).
 * K a multiple of 32 (the driver checks); ldw in bytes. */

#define PG_QGEMV_DECLARE(isa)                                                                  \
    void pg_q4_0_q8_0_gemv_##isa(size_t N, size_t K, const void *W, size_t ldw, const void *x, \
                                 float *y);                                                    \
    void pg_q4_1_q8_1_gemv_##isa(size_t N, size_t K, const void *W, size_t ldw, const void *x, \
                                 float *y);                                                    \
    void pg_q8_0_q8_0_gemv_##isa(size_t N, size_t K, const void *W, size_t ldw, const void *x, \
                                 float *y);

PG_QGEMV_DECLARE(c)
PG_QGEMV_DECLARE(4row_avx2)
PG_QGEMV_DECLARE(4row_avxvnni)
PG_QGEMV_DECLARE(4row_avx512vnni)
PG_QGEMV_DECLARE(4row_neon)
PG_QGEMV_DECLARE(4row_dotprod)

extern const pg_kernel_family pg_kernels_qgemv_q4_0;
extern const pg_kernel_family pg_kernels_qgemv_q4_1;
extern const pg_kernel_family pg_kernels_qgemv_q8_0;

/* The op of a weight type (PG_GGML_Q4_0 / Q4_1 / Q8_0, and the k-quants
 * and f16 / bf16 of kquant/kquant.h), NULL for others. */
const pg_kernel_family *pg_qgemv_family(int wtype);
/* The activation type a weight type pairs with (PG_GGML_Q8_1 for q4_1,
 * PG_GGML_Q8_0 for q4_0 and q8_0, PG_GGML_Q8_K for the k-quants,
 * PG_GGML_F32 for f16 / bf16), -1 for others. */
int pg_qgemv_act_type(int wtype);
/* What K must be a multiple of for a weight type: its block and its
 * activations' (32, 256 for the k-quants). */
size_t pg_qweights_k_multiple(int wtype);

/* Checks shared by pg_qgemv and pg_qgemm (fn names the caller in the
 * message): the weight type, K a multiple of 32, ldw >= one packed row,
 * W not NULL when there is work.  *row_bytes: the bytes of one row. */
pg_status pg_qweights_check(const char *fn, int wtype, size_t N, size_t K, const void *W,
                            size_t ldw, size_t *row_bytes);

#endif

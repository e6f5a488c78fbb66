/* qgemv_ref.c - the C references (the oracle: plain, never tuned): one
 * qdot reference dot product per row. */
#include <stdint.h>

#include "../qdot/qdot.h"
#include "qgemv.h"

void pg_q4_0_q8_0_gemv_c(size_t N, size_t K, const void *W, size_t ldw, const void *x, float *y)
{
    for (size_t n = 0; n < N; n++)
        pg_vec_dot_q4_0_q8_0_c(K, (const uint8_t *)W + n * ldw, x, &y[n]);
}

void pg_q4_1_q8_1_gemv_c(size_t N, size_t K, const void *W, size_t ldw, const void *x, float *y)
{
    for (size_t n = 0; n < N; n++)
        pg_vec_dot_q4_1_q8_1_c(K, (const uint8_t *)W + n * ldw, x, &y[n]);
}

void pg_q8_0_q8_0_gemv_c(size_t N, size_t K, const void *W, size_t ldw, const void *x, float *y)
{
    for (size_t n = 0; n < N; n++)
        pg_vec_dot_q8_0_q8_0_c(K, (const uint8_t *)W + n * ldw, x, &y[n]);
}

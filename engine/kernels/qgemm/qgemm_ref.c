/* qgemm_ref.c - the C references (the oracle: plain, never tuned): one
 * qdot reference dot product per output. */
#include <stdint.h>

#include "../qdot/qdot.h"
#include "qgemm.h"

#define QGEMM_REF(t, dot)                                                                   \
    void pg_q##t##_gemm_c(size_t M, size_t N, size_t K, const void *W, size_t ldw,          \
                          const void *X, size_t ldx, float *C, size_t ldc)                  \
    {                                                                                       \
        for (size_t m = 0; m < M; m++)                                                      \
            for (size_t n = 0; n < N; n++)                                                  \
                dot(K, (const uint8_t *)W + n * ldw, (const uint8_t *)X + m * ldx,          \
                    &C[m * ldc + n]);                                                       \
    }

QGEMM_REF(4_0_q8_0, pg_vec_dot_q4_0_q8_0_c)
QGEMM_REF(4_1_q8_1, pg_vec_dot_q4_1_q8_1_c)
QGEMM_REF(8_0_q8_0, pg_vec_dot_q8_0_q8_0_c)

/* sgemm_ref.c - the C reference microkernel and the naive oracle: plain
 * loops, never tuned.  GELU is the erf form with libm's erff. */
#include <math.h>

#include "sgemm.h"

#define REF_MR 4
#define REF_NR 8

float pg_sgemm_act_ref(int act, float x)
{
    if (act == PG_ACT_RELU)
        return x > 0.0f ? x : 0.0f;
    if (act == PG_ACT_GELU)
        return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    return x;
}

/* The tile kernel of the table's last entry (MR 4, NR 8). */
void pg_f32_gemm_4x8_c(size_t mr, size_t nr, size_t k, const float *a, size_t lda,
                       const float *b, float *c, size_t ldc, const pg_sgemm_epilogue *ep)
{
    for (size_t i = 0; i < mr; i++) {
        for (size_t j = 0; j < nr; j++) {
            float acc = 0.0f;
            for (size_t p = 0; p < k; p++)
                acc += a[i * lda + p] * b[p * REF_NR + j];
            if (ep->flags & PG_SGEMM_ACCUMULATE)
                acc += c[i * ldc + j];
            if (ep->bias)
                acc += ep->bias[j];
            c[i * ldc + j] = pg_sgemm_act_ref(ep->act, acc);
        }
    }
}

void pg_sgemm_naive(size_t M, size_t N, size_t K, const float *A, size_t lda,
                    const float *B, size_t ldb, const float *bias, int act, int accumulate,
                    float *C, size_t ldc)
{
    for (size_t i = 0; i < M; i++) {
        for (size_t j = 0; j < N; j++) {
            float acc = 0.0f;
            for (size_t p = 0; p < K; p++)
                acc += A[i * lda + p] * B[p * ldb + j];
            if (accumulate)
                acc += C[i * ldc + j];
            if (bias)
                acc += bias[j];
            C[i * ldc + j] = pg_sgemm_act_ref(act, acc);
        }
    }
}

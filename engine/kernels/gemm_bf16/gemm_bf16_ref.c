/* gemm_bf16_ref.c - the C references of gemm_bf16 and cvt_bf16: plain
 * loops, never tuned. */
#include <string.h>

#include "../../gguf/ggml_types.h"
#include "gemm_bf16.h"

uint16_t pg_f32_to_bf16(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) == 0)                 /* zero or denormal: a zero of its sign */
        return (uint16_t)((u >> 16) & 0x8000u);
    if ((u & 0x7fffffffu) > 0x7f800000u)        /* NaN: quiet */
        return (uint16_t)((u >> 16) | 0x0040u);
    if ((u & 0x7fffffffu) == 0x7f800000u)       /* infinity */
        return (uint16_t)(u >> 16);
    u += 0x7fffu + ((u >> 16) & 1u);            /* round to nearest even */
    return (uint16_t)(u >> 16);
}

void pg_cvt_f32_bf16_c(size_t n, const float *x, uint16_t *y)
{
    for (size_t i = 0; i < n; i++)
        y[i] = pg_f32_to_bf16(x[i]);
}

/* The tile kernel of the table's last entry (MR 4, NR 32). */
void pg_bf16_gemm_4x32_c(size_t mr, size_t nr, size_t k, const uint16_t *a, size_t lda,
                         const uint16_t *b, float *c, size_t ldc, const pg_sgemm_epilogue *ep)
{
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++) {
            float acc = 0.0f;
            for (size_t p = 0; p < k; p++)
                acc += pg_bf16_to_f32(a[i * lda + p]) *
                       pg_bf16_to_f32(b[(p / 2) * 2 * PG_BF16_NR + 2 * j + p % 2]);
            if (ep->flags & PG_SGEMM_ACCUMULATE)
                acc += c[i * ldc + j];
            if (ep->bias)
                acc += ep->bias[j];
            c[i * ldc + j] = pg_sgemm_act_ref(ep->act, acc);
        }
}

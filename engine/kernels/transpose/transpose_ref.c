/* transpose_ref.c - the C reference of transpose (transpose.h). */
#include "transpose.h"

void pg_f32_transpose_c(size_t rows, size_t cols, const float *src, size_t lds, float *dst, size_t ldd)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            dst[c * ldd + r] = src[r * lds + c];
}

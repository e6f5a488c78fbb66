/* rope_ggml_ref.c - the C reference of rope_ggml (rope_ggml.h): the
 * decoder's rope_row loop, once per row. */
#include "rope_ggml.h"

void pg_f32_rope_ggml_c(size_t rows, size_t ld, size_t heads, size_t hd, size_t n_rot, int neox,
                        const float *cos_tab, const float *sin_tab, size_t ld_cs, float *x)
{
    size_t half = n_rot / 2, step = neox ? half : 1, stride = neox ? 1 : 2;
    for (size_t r = 0; r < rows; r++) {
        const float *c = cos_tab + r * ld_cs, *s = sin_tab + r * ld_cs;
        for (size_t h = 0; h < heads; h++) {
            float *v = x + r * ld + h * hd;
            for (size_t i = 0; i < half; i++) {
                float *a = v + i * stride, *b = a + step;
                float x0 = *a, x1 = *b;
                *a = x0 * c[i] - x1 * s[i];
                *b = x0 * s[i] + x1 * c[i];
            }
        }
    }
}

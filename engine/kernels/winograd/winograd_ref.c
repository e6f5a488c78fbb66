/* winograd_ref.c - the C references of the F(2x2, 3x3) transforms and the
 * filter transform with its packing (winograd.h), written as the header
 * states them. */
#include <stdlib.h>

#include "../conv_nchwc/conv_nchwc.h"
#include "winograd.h"

#define NB PG_WINO_BLOCK

size_t pg_wino_plane_floats(size_t M, size_t C, int B)
{
    return pg_conv_nchwc_packed_floats(M, C, (size_t)B, 1, 1, B, 1);
}

void pg_wino_f23_pack(size_t M, size_t C, int B, int FB, const float *w, float *dst)
{
    static const double G[4][3] = { { 1, 0, 0 }, { 0.5, 0.5, 0.5 }, { 0.5, -0.5, 0.5 }, { 0, 0, 1 } };
    float *v = malloc(M * C * sizeof(float) * PG_WINO_POINTS);
    if (!v)
        return;
    /* v[xi][m][c] = (G g G^T)[xi], in double */
    for (size_t mc = 0; mc < M * C; mc++) {
        const float *g = w + mc * 9;
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                double s = 0.0;
                for (int a = 0; a < 3; a++)
                    for (int b = 0; b < 3; b++)
                        s += G[i][a] * (double)g[a * 3 + b] * G[j][b];
                v[(size_t)(i * 4 + j) * M * C + mc] = (float)s;
            }
    }
    size_t plane = pg_wino_plane_floats(M, C, B);
    for (size_t xi = 0; xi < PG_WINO_POINTS; xi++)
        pg_conv_nchwc_pack(M, C, (size_t)B, 1, 1, B, FB, v + xi * M * C, dst + xi * plane);
    free(v);
}

void pg_f32_wino_in_f23_c(const pg_wino_in_args *a)
{
    for (size_t t = 0; t < a->tiles; t++)
        for (size_t c = 0; c < NB; c++) {
            float d[4][4], e[4][4];
            for (int r = 0; r < 4; r++)
                for (int j = 0; j < 4; j++)
                    d[r][j] = a->rows[r][(2 * t + (size_t)j) * NB + c];
            for (int j = 0; j < 4; j++) {
                e[0][j] = d[0][j] - d[2][j];
                e[1][j] = d[1][j] + d[2][j];
                e[2][j] = d[2][j] - d[1][j];
                e[3][j] = d[1][j] - d[3][j];
            }
            for (int i = 0; i < 4; i++) {
                float u[4] = { e[i][0] - e[i][2], e[i][1] + e[i][2], e[i][2] - e[i][1], e[i][1] - e[i][3] };
                for (int j = 0; j < 4; j++)
                    *(float *)((char *)a->u + (size_t)(i * 4 + j) * a->u_xi + (t * NB + c) * sizeof(float)) = u[j];
            }
        }
}

void pg_f32_wino_out_f23_c(const pg_wino_out_args *a)
{
    for (size_t t = 0; t < a->tiles; t++)
        for (size_t c = 0; c < NB; c++) {
            float m[4][4], f[2][4];
            for (int xi = 0; xi < 16; xi++)
                m[xi / 4][xi % 4] =
                    *(const float *)((const char *)a->m + (size_t)xi * a->m_xi + (t * NB + c) * sizeof(float));
            for (int j = 0; j < 4; j++) {
                f[0][j] = (m[0][j] + m[1][j]) + m[2][j];
                f[1][j] = (m[1][j] - m[2][j]) - m[3][j];
            }
            for (int i = 0; i < 2; i++) {
                float y[2] = { (f[i][0] + f[i][1]) + f[i][2], (f[i][1] - f[i][2]) - f[i][3] };
                for (int j = 0; j < 2; j++) {
                    size_t at = (2 * t + (size_t)j) * NB + c;
                    float s = y[j] + a->bias[c];
                    if (a->flags & PG_WINO_RESIDUAL)
                        s += a->res[i][at];
                    s = s < a->lo ? a->lo : s;
                    a->y[i][at] = s > a->hi ? a->hi : s;
                }
            }
        }
}

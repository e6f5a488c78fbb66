/* check_winograd.c - every wino_in_f23 / wino_out_f23 variant against the
 * C reference, exactly (each output is a fixed sequence of adds and
 * subtracts: winograd.h).
 *
 * Tile counts 0 to 5 and 8 (the asm's input loop goes two tiles a trip,
 * so odd and even counts take different exits); the planes of U / M have
 * a gap of one tile between them, and the output rows one pixel past the
 * last tile, holding a sentinel that must survive.  The output transform
 * with and without the skip rows, under no clamp, ReLU, ReLU6 and a
 * narrow one; its inputs include -0.0 and values that cancel. */
#include <math.h>
#include <string.h>

#include "../kernels/winograd/winograd.h"
#include "checkasm.h"

#define SENTINEL 12345.0f

enum { B = PG_WINO_BLOCK, MAXT = 8, ROW = (2 * MAXT + 2) * B, PLANE = (MAXT + 1) * B, YROW = (2 * MAXT + 1) * B };

static void check_in(void)
{
    const pg_kernel_family *op = &pg_kernels_wino_in_f23;
    declare_func(wino_in);
    float *rows[4], *ref = checkasm_alloc_f32(16 * PLANE), *got = checkasm_alloc_f32(16 * PLANE);
    for (int r = 0; r < 4; r++)
        rows[r] = checkasm_alloc_f32(ROW);
    static const size_t tiles[] = { 0, 1, 2, 3, 4, 5, 8 };
    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        checkasm_set_funcs(op, v);
        for (size_t ti = 0; ti < PG_COUNTOF(tiles); ti++) {
            size_t T = tiles[ti];
            for (int r = 0; r < 4; r++) {
                checkasm_fill_f32(rows[r], ROW, -4, 4);
                rows[r][3] = -0.0f;
            }
            rows[2][B] = rows[1][B];   /* d1 - d2 = 0 */
            for (size_t i = 0; i < 16 * PLANE; i++)
                ref[i] = got[i] = SENTINEL;
            const float *rp[4] = { rows[0], rows[1], rows[2], rows[3] };
            pg_wino_in_args a = { rp, ref, T, (T + 1) * B * sizeof(float) };
            call_ref(&a);
            a.u = got;
            call_new(&a);
            if (!checkasm_check_f32("u", ref, got, 16 * PLANE, 0.0f, 0.0f)) {
                checkasm_fail("  at tiles=%zu", T);
                break;
            }
        }
        if (checkasm_bench_enabled()) {
            /* a ResNet-18 row at 56: 28 tiles */
            const float *rp[4] = { rows[0], rows[1], rows[2], rows[3] };
            float *u = checkasm_alloc_f32(16 * 28 * B);
            for (int r = 0; r < 4; r++)
                rows[r] = checkasm_alloc_f32(58 * B), checkasm_fill_f32(rows[r], 58 * B, -1, 1), rp[r] = rows[r];
            pg_wino_in_args a = { rp, u, 28, 28 * B * sizeof(float) };
            checkasm_bench_label("28 tiles");
            checkasm_bench_work(0, 4.0 * (4 * 58 + 16 * 28) * B);
            bench_new(&a);
        }
    }
}

static void check_out(void)
{
    const pg_kernel_family *op = &pg_kernels_wino_out_f23;
    declare_func(wino_out);
    float *m = checkasm_alloc_f32(16 * PLANE), *bias = checkasm_alloc_f32(B);
    float *res[2], *ref[2], *got[2];
    for (int i = 0; i < 2; i++) {
        res[i] = checkasm_alloc_f32(YROW);
        ref[i] = checkasm_alloc_f32(YROW);
        got[i] = checkasm_alloc_f32(YROW);
    }
    static const size_t tiles[] = { 0, 1, 2, 3, 5, 8 };
    static const float clamp[][2] = { { -INFINITY, INFINITY }, { 0.0f, INFINITY }, { 0.0f, 6.0f }, { -0.5f, 0.25f } };
    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        checkasm_set_funcs(op, v);
        for (size_t ti = 0; ti < PG_COUNTOF(tiles); ti++)
            for (int ci = 0; ci < 4; ci++)
                for (int skip = 0; skip < 2; skip++) {
                    size_t T = tiles[ti];
                    checkasm_fill_f32(m, 16 * PLANE, -4, 4);
                    m[5] = -0.0f;
                    checkasm_fill_f32(bias, B, -1, 1);
                    for (int i = 0; i < 2; i++) {
                        checkasm_fill_f32(res[i], YROW, -2, 2);
                        for (size_t k = 0; k < YROW; k++)
                            ref[i][k] = got[i][k] = SENTINEL;
                    }
                    pg_wino_out_args a = { m, (T + 1) * B * sizeof(float), { ref[0], ref[1] },
                                           { res[0], res[1] }, bias, T, clamp[ci][0], clamp[ci][1],
                                           skip ? PG_WINO_RESIDUAL : 0, 0 };
                    call_ref(&a);
                    a.y[0] = got[0];
                    a.y[1] = got[1];
                    call_new(&a);
                    if (!checkasm_check_f32("y0", ref[0], got[0], YROW, 0.0f, 0.0f) ||
                        !checkasm_check_f32("y1", ref[1], got[1], YROW, 0.0f, 0.0f)) {
                        checkasm_fail("  at tiles=%zu clamp=[%g, %g] skip=%d", T, clamp[ci][0], clamp[ci][1], skip);
                        goto next_variant;
                    }
                }
        if (checkasm_bench_enabled()) {
            pg_wino_out_args a = { m, (MAXT + 1) * B * sizeof(float), { got[0], got[1] }, { res[0], res[1] },
                                   bias, MAXT, 0.0f, INFINITY, PG_WINO_RESIDUAL, 0 };
            checkasm_bench_label("%d tiles + skip", MAXT);
            checkasm_bench_work(0, 4.0 * (16 + 8) * MAXT * B);
            bench_new(&a);
        }
    next_variant:;
    }
}

void checkasm_check_winograd(void)
{
    check_in();
    check_out();
    checkasm_report("winograd");
}

/* check_transpose.c - every transpose variant against the C reference:
 * bit-exact (a transpose only moves elements).
 *
 * Whole tiles of the variant (its params' tile): 1 to 5 tiles each way
 * (one tile, a long row of tiles, a tall column, squares), strides equal
 * to the block and larger ones (the gaps of src hold NaN, those of dst a
 * sentinel that must survive: a kernel that reads or writes past its
 * block shows), and every element a distinct value, so a misplaced one
 * shows.  The buffers are made once at the largest case (the harness has
 * a buffer budget): past the block src holds NaN and dst the sentinel,
 * and the whole of dst is compared. */
#include <math.h>
#include <string.h>

#include "../kernels/transpose/transpose.h"
#include "checkasm.h"

#define SENTINEL 12345.0f
#define MAXT 5

void checkasm_check_transpose(void)
{
    const pg_kernel_family *op = &pg_kernels_transpose;
    declare_func(transpose);
    enum { MAXR = MAXT * 16, MAXLD = MAXR + 8, MAXN = MAXR * MAXLD };
    float *src = checkasm_alloc_f32(MAXN), *ref = checkasm_alloc_f32(MAXN), *got = checkasm_alloc_f32(MAXN);
    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        checkasm_set_funcs(op, v);
        const pg_transpose_params *p = op->variants[v].params;
        size_t t = (size_t)p->tile;
        for (size_t tr = 1; tr <= MAXT; tr++)
            for (size_t tc = 1; tc <= MAXT; tc++) {
                if (checkasm_small() && (tr + tc) % 2)
                    continue;
                size_t rows = tr * t, cols = tc * t;
                for (int gap = 0; gap < 2; gap++) {
                    size_t lds = cols + (gap ? 1 + checkasm_rand() % 7 : 0);
                    size_t ldd = rows + (gap ? 1 + checkasm_rand() % 7 : 0);
                    size_t ns = (rows - 1) * lds + cols;
                    for (size_t i = 0; i < MAXN; i++) {
                        src[i] = i < ns && i % lds < cols ? (float)(i / lds * 1000 + i % lds) + 0.5f : NAN;
                        ref[i] = got[i] = SENTINEL;
                    }
                    call_ref(rows, cols, src, lds, ref, ldd);
                    call_new(rows, cols, src, lds, got, ldd);
                    if (!checkasm_check_f32("dst", ref, got, MAXN, 0.0f, 0.0f)) {
                        checkasm_fail("  at %zu x %zu, lds %zu, ldd %zu", rows, cols, lds, ldd);
                        goto next_variant;
                    }
                }
            }
        if (checkasm_bench_enabled()) {
            /* SegFormer's first stage: 3136 tokens x 128 channels */
            size_t rows = 3136 / t * t, cols = 128;
            float *bs = checkasm_alloc_f32(rows * cols), *bd = checkasm_alloc_f32(rows * cols);
            checkasm_fill_f32(bs, rows * cols, -1, 1);
            checkasm_bench_label("%zux%zu", rows, cols);
            checkasm_bench_work(0, 8.0 * (double)(rows * cols));
            bench_new(rows, cols, bs, cols, bd, rows);
        }
    next_variant:;
    }
    checkasm_report("transpose");
}

/* check_rope_ggml.c - rope_ggml against its C reference, bit for bit
 * (rope_ggml.h: two rounded products and one add, never an FMA, so every
 * variant gives the reference's floats exactly; an FMA shows at once).
 *
 * Both pair orders, n_rot / 2 from 1 to 128 (below a vector, a vector and
 * one more, odd counts, the decoder's 32, 40, 48, 64), 1 to 4 heads of hd =
 * n_rot plus 0, 2, 6 or 64 dims that do not turn (partial rotary), 1 to 3
 * rows.  The rows are ld floats apart with a gap after the heads and end
 * where their buffer does; the whole buffer is compared, so a write to a
 * dim past n_rot, into a gap or before the rows fails, and one past the
 * end trips the guards.  The cos / sin rows are ld_cs apart with NaN
 * past n_rot / 2: a lane that reads them and is stored turns NaN. */
#include <math.h>
#include <string.h>

#include "../kernels/rope_ggml/rope_ggml.h"
#include "checkasm.h"

#define MAX_ROWS 3
#define MAX_HEADS 4
#define GAP 5
#define MAX_LD (MAX_HEADS * PG_ROPE_MAX_HD + GAP)

static const size_t halves[] = { 1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 40, 48, 64, 128 };
static const size_t pads[] = { 0, 2, 6, 64 };

/* cos / sin of rows angles, ld_cs apart, NaN past half */
static void fill_angles(float *c, float *s, size_t rows, size_t half, size_t ld_cs)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t i = 0; i < ld_cs; i++) {
            float t = checkasm_randf(-100.0f, 100.0f);
            c[r * ld_cs + i] = i < half ? cosf(t) : NAN;
            s[r * ld_cs + i] = i < half ? sinf(t) : NAN;
        }
}

/* the first index where a and b differ bitwise, n if none */
static size_t first_diff(const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof(float)))
            return i;
    return n;
}

void checkasm_check_rope_ggml(void)
{
    declare_func(rope);
    const pg_kernel_family *op = &pg_kernels_rope_ggml;
    enum { MAX_CS = PG_ROPE_MAX_HD / 2 + 3, CAP = MAX_ROWS * MAX_LD };
    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        checkasm_set_funcs(op, v);
        /* a variant's own buffers: one that overran cannot fail the next */
        float *c = checkasm_alloc_f32(MAX_ROWS * MAX_CS), *s = checkasm_alloc_f32(MAX_ROWS * MAX_CS);
        float *xr = checkasm_alloc_f32(CAP), *xn = checkasm_alloc_f32(CAP);
        float *xb = checkasm_alloc_f32(32 * 128);
        int k = 0;
        for (int hi = 0; hi < PG_COUNTOF(halves); hi++)
            for (int neox = 0; neox < 2; neox++)
                for (size_t heads = 1; heads <= MAX_HEADS; heads++)
                    for (size_t rows = 1; rows <= MAX_ROWS; rows++, k++) {
                        size_t half = halves[hi], n_rot = 2 * half;
                        size_t hd = n_rot + pads[k % PG_COUNTOF(pads)];
                        if (hd > PG_ROPE_MAX_HD)
                            hd = n_rot;
                        size_t ld = heads * hd + (k & 1 ? GAP : 0), ld_cs = half + (k & 2 ? 3 : 0);
                        /* the rows end where the buffer does: the guards catch a write past it */
                        size_t at = CAP - ((rows - 1) * ld + heads * hd);
                        fill_angles(c, s, rows, half, ld_cs);
                        checkasm_fill_f32(xr, CAP, -4.0f, 4.0f);
                        memcpy(xn, xr, CAP * sizeof(float));
                        call_ref(rows, ld, heads, hd, n_rot, neox, c, s, ld_cs, xr + at);
                        call_new(rows, ld, heads, hd, n_rot, neox, c, s, ld_cs, xn + at);
                        size_t d = first_diff(xr, xn, CAP);
                        if (d < CAP || !checkasm_guards_ok(xn, "x")) {
                            checkasm_fail("  %s n_rot=%zu hd=%zu heads=%zu rows=%zu ld=%zu ld_cs=%zu: "
                                          "x[%td] expected %.9g, got %.9g", neox ? "neox" : "normal",
                                          n_rot, hd, heads, rows, ld, ld_cs, (ptrdiff_t)d - (ptrdiff_t)at,
                                          d < CAP ? xr[d] : 0.0, d < CAP ? xn[d] : 0.0);
                            goto next;
                        }
                    }
        for (int neox = 0; neox < 2; neox++) {   /* a decode step: 32 heads of 128, one row */
            size_t heads = 32, hd = 128, n_rot = 128;
            fill_angles(c, s, 1, n_rot / 2, n_rot / 2);
            checkasm_fill_f32(xb, heads * hd, -4.0f, 4.0f);
            checkasm_bench_label("%s 32x128", neox ? "neox" : "normal");
            checkasm_bench_work(6.0 * (double)(heads * n_rot / 2), 8.0 * (double)(heads * hd));
            bench_new(1, heads * hd, heads, hd, n_rot, neox, c, s, n_rot / 2, xb);
        }
    next:;
    }
    checkasm_report("rope_ggml");
}

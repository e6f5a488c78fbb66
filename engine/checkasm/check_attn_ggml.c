/* check_attn_ggml.c - attn_kq_ggml and attn_pv_ggml against their C
 * references, bit for bit (attn_ggml.h: f16-valued operands make every
 * product exact, so a variant that keeps ggml's order of the additions
 * gives the reference's floats exactly).
 *
 * Head widths 16 to 256 (below one step of 64: all in double; 80 and 96:
 * steps plus a double tail; 64, 128, 256: whole steps), key / value counts
 * 0, 1, 5, 63, 64, 65, 130 and 200 (no whole step, exactly one, a step and
 * a tail, several), rows ldk / ldv apart with NaN between them (a kernel
 * that reads past hd poisons its result), values and probabilities with
 * at most 11 significant bits (as f16), and a sentinel past each output. */
#include <math.h>
#include <string.h>

#include "../kernels/attn_ggml/attn_ggml.h"
#include "checkasm.h"

#define SENTINEL 4242.0f

/* a value with 11 significant bits at most (an f16 value), below lim in
 * magnitude, its scale spread over 2^-10 .. 1 of lim: the sums of such
 * products round, so a variant that adds in another order shows */
static float f16_value(float lim)
{
    int e = (int)(checkasm_rand() % 11);
    return ldexpf((float)((int)checkasm_randf(-1024.0f, 1024.0f)) * (lim / 1024.0f), -e);
}

static void fill_rows(float *x, size_t rows, size_t hd, size_t ld, float lim)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t d = 0; d < ld; d++)
            x[r * ld + d] = d < hd ? f16_value(lim) : NAN;
}

static const size_t widths[] = { 16, 48, 64, 80, 96, 128, 192, 256 };
static const size_t counts[] = { 0, 1, 5, 63, 64, 65, 130, 200 };
#define N_CASES (PG_COUNTOF(widths) * PG_COUNTOF(counts))

/* case i (every width by every count, rows 16 floats apart in every other
 * count): its head width, key / value count and row stride; 0 to skip it
 * (--small leaves out the largest) */
static int attn_case(int i, size_t *hd, size_t *n, size_t *ld)
{
    int ci = i % PG_COUNTOF(counts);
    *hd = widths[i / PG_COUNTOF(counts)];
    *n = counts[ci];
    *ld = *hd + 16 * (size_t)(ci & 1);
    return !(checkasm_small() && (*hd > 128 || *n > 65));
}

static void check_kq(void)
{
    declare_func(attn_kq);
    const pg_kernel_family *op = &pg_kernels_attn_kq_ggml;
    enum { MAXN = 200, MAXLD = PG_ATTN_MAX_HD + 16 };
    float *q = checkasm_alloc_f32(PG_ATTN_MAX_HD), *k = checkasm_alloc_f32(MAXN * MAXLD);
    float *sr = checkasm_alloc_f32(MAXN + 1), *sn = checkasm_alloc_f32(MAXN + 1);
    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        checkasm_set_funcs(op, v);
        for (int i = 0; i < (int)N_CASES; i++) {
            size_t hd, n, ld;
            if (!attn_case(i, &hd, &n, &ld))
                continue;
            fill_rows(q, 1, hd, hd, 4.0f);
            fill_rows(k, n, hd, ld, 4.0f);
            for (size_t j = 0; j <= n; j++)
                sr[j] = sn[j] = SENTINEL;
            call_ref(n, hd, q, k, ld, sr);
            call_new(n, hd, q, k, ld, sn);
            if (!checkasm_check_f32("scores", sr, sn, n + 1, 0, 0)) {
                checkasm_fail("  at hd=%zu n=%zu ldk=%zu", hd, n, ld);
                goto next;
            }
        }
        {
            size_t hd = 64, n = 200;
            fill_rows(q, 1, hd, hd, 4.0f);
            fill_rows(k, n, hd, hd, 4.0f);
            checkasm_bench_label("hd=%zu n=%zu", hd, n);
            checkasm_bench_work(2.0 * (double)(hd * n), 4.0 * (double)(hd * n));
            bench_new(n, hd, q, k, hd, sn);
        }
    next:;
    }
    checkasm_report("attn_kq_ggml");
}

static void check_pv(void)
{
    declare_func(attn_pv);
    const pg_kernel_family *op = &pg_kernels_attn_pv_ggml;
    enum { MAXN = 200, MAXLD = PG_ATTN_MAX_HD + 16 };
    float *p = checkasm_alloc_f32(MAXN), *vv = checkasm_alloc_f32(MAXN * MAXLD);
    float *acc = checkasm_alloc_f32(64 * PG_ATTN_MAX_HD);
    float *or_ = checkasm_alloc_f32(PG_ATTN_MAX_HD + 1), *on = checkasm_alloc_f32(PG_ATTN_MAX_HD + 1);
    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        checkasm_set_funcs(op, v);
        for (int i = 0; i < (int)N_CASES; i++) {
            size_t hd, n, ld;
            if (!attn_case(i, &hd, &n, &ld))
                continue;
            for (size_t j = 0; j < n; j++)
                p[j] = fabsf(f16_value(1.0f));
            fill_rows(vv, n, hd, ld, 8.0f);
            for (size_t d = 0; d <= hd; d++)
                or_[d] = on[d] = SENTINEL;
            call_ref(n, hd, p, vv, ld, acc, or_);
            call_new(n, hd, p, vv, ld, acc, on);
            if (!checkasm_check_f32("out", or_, on, hd + 1, 0, 0)) {
                checkasm_fail("  at hd=%zu n=%zu ldv=%zu", hd, n, ld);
                goto next;
            }
        }
        {
            size_t hd = 64, n = 200;
            for (size_t j = 0; j < n; j++)
                p[j] = fabsf(f16_value(1.0f));
            fill_rows(vv, n, hd, hd, 8.0f);
            checkasm_bench_label("hd=%zu n=%zu", hd, n);
            checkasm_bench_work(2.0 * (double)(hd * n), 4.0 * (double)(hd * n));
            bench_new(n, hd, p, vv, hd, acc, on);
        }
    next:;
    }
    checkasm_report("attn_pv_ggml");
}

void checkasm_check_attn_ggml(void)
{
    check_kq();
    check_pv();
}

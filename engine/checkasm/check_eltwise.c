/* check_eltwise.c - the unary elementwise ops (vexp, sigmoid, silu, tanh,
 * gelu_erf, gelu_tanh): every variant against a double-precision
 * evaluation of the function, with the error bound its header states.
 *
 * Error model per element: |got - f(x)| <= ulps * ulp(f(x)) + absx * 2^-24 |x|
 * (+ the spacing of the subnormals; + 1/2 ulp when compared with the
 * float-rounded f(x)).  ulp() is that of the float nearest
 * f(x).  absx is nonzero only for gelu_erf, whose error is absolute where
 * the result cancels (x < 0; see gelu_erf.h).  Inputs mix uniform ranges
 * (where the formulas switch, overflow, underflow) with log-uniform
 * magnitudes (tiny and huge), and a fixed list of specials (0, -0, +-inf,
 * NaN, the overflow edges) is checked value by value.  Each run prints the
 * largest error it saw, of the variant and of the C reference. */
#include <float.h>
#include <math.h>
#include <stdio.h>

#include "../kernels/gelu_erf/gelu_erf.h"
#include "../kernels/gelu_tanh/gelu_tanh.h"
#include "../kernels/sigmoid/sigmoid.h"
#include "../kernels/silu/silu.h"
#include "../kernels/tanh/tanh.h"
#include "../kernels/vexp/vexp.h"
#include "checkasm.h"

typedef struct range {
    float lo, hi;
    int log; /* 1: sign * 2^uniform(lo, hi) */
} range;

typedef struct unary_spec {
    const char *name;
    const pg_kernel_family *op;
    double (*truth)(double);
    range ranges[6];
    int n_ranges;
    double ulps;  /* stated bound, in ulp of the result */
    double absx;  /* stated absolute bound, in 2^-24 |x| */
    /* the condition of the function where its float evaluation must round
     * an intermediate that exp then amplifies (gelu_tanh: |2u|); the bound
     * is ulps (1 + cond(x)) ulp.  NULL: 0. */
    double (*cond)(double x);
} unary_spec;

static double t_exp(double x) { return exp(x); }
static double t_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double t_silu(double x) { return x / (1.0 + exp(-x)); }
static double t_tanh(double x) { return tanh(x); }
/* 0.5 x (1 + tanh(u)) written as x / (1 + exp(-2u)): the same function
 * without the cancellation that would spoil even a double evaluation. */
static double t_gelu_tanh(double x)
{
    double u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
    return x / (1.0 + exp(-2.0 * u));
}
static double c_gelu_tanh(double x)
{
    return fabs(1.5957691216057308 * (x + 0.044715 * x * x * x));
}
static double t_gelu_erf(double x) { return 0.5 * x * erfc(-x / sqrt(2.0)); }

static double ulp_of(double v)
{
    float f = (float)fabs(v);
    if (!(f >= FLT_MIN))
        return ldexp(1.0, -149);
    if (isinf(f))
        return ldexp(1.0, 104); /* ulp of FLT_MAX */
    int e;
    frexpf(f, &e);
    return ldexp(1.0, e - 24);
}

static void fill(const unary_spec *s, float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const range *r = &s->ranges[checkasm_rand() % (uint32_t)s->n_ranges];
        if (r->log) {
            float m = exp2f(checkasm_randf(r->lo, r->hi));
            x[i] = (checkasm_rand() & 1) ? -m : m;
        } else {
            x[i] = checkasm_randf(r->lo, r->hi);
        }
    }
}

typedef struct err_stat {
    double ulp, absx; /* largest err / ulp, largest err / (2^-24 |x|) where absx applies */
} err_stat;

/* The largest error allowed at x, around the double result t. */
static double bound(const unary_spec *s, double x, double t)
{
    double b = (s->ulps + 0.5) * ulp_of(t) * (1 + (s->cond ? s->cond(x) : 0)) +
               (1 + fabs(x)) * ldexp(1.0, -149);
    if (s->absx > 0 && isfinite(x))
        b += s->absx * ldexp(fabs(x), -24);
    return b;
}

static void measure(const unary_spec *s, const float *x, const float *got, size_t n, float *truth,
                    float *tol, err_stat *st)
{
    for (size_t i = 0; i < n; i++) {
        double t = s->truth(x[i]);
        float tf = (float)t;
        double err = isinf(tf) && tf == got[i] ? 0 : fabs((double)got[i] - t), u = ulp_of(t);
        truth[i] = tf;
        tol[i] = isinf(tf) ? 0 : (float)bound(s, x[i], t);
        if (fabs(t) < 0x1p-100)
            continue; /* near-subnormal results (or intermediates, silu's e^x):
                         the absolute bound applies; the figures are above */
        if (s->absx > 0 && x[i] < 0) {
            double a = err / ldexp(fabs(x[i]), -24);
            if (a > st->absx)
                st->absx = a;
        } else if (err / u / (1 + (s->cond ? s->cond(x[i]) : 0)) > st->ulp) {
            st->ulp = err / u / (1 + (s->cond ? s->cond(x[i]) : 0));
        }
    }
}

/* Values checked one by one: exact expectations, NaN included. */
static void check_specials(const unary_spec *s, pg_f32_unary_fn fn)
{
    static const float xs[] = { 0.0f, -0.0f, INFINITY, -INFINITY, NAN, 88.72f, 88.73f, -87.33f,
                                -103.9f, -104.5f, 9.1f, -9.1f, 0.625f, -0.625f, 1e-30f, -1e-30f };
    enum { N = sizeof xs / sizeof xs[0] };
    float y[N];
    fn(N, xs, y);
    for (int i = 0; i < N; i++) {
        double t = s->truth(xs[i]);
        float tf = (float)t;
        int ok;
        if (isnan(t))
            ok = isnan(y[i]);
        else if (isinf(tf))
            ok = y[i] == tf;
        else
            ok = fabs(y[i] - t) <= bound(s, xs[i], t);
        if (ok && t == 0.0 && xs[i] == 0.0f && signbit(xs[i]) && s->truth == t_tanh)
            ok = signbit(y[i]); /* tanh(-0) = -0 */
        if (!ok)
            checkasm_fail("%s(%a) = %a, expected %a", s->name, (double)xs[i], (double)y[i], t);
    }
}

static void check_unary(const unary_spec *s)
{
    declare_func(unary);
    const pg_kernel_family *op = s->op;
    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        checkasm_set_funcs(op, v);
        err_stat st_new = { 0, 0 }, st_ref = { 0, 0 };
        size_t total = 0;
        /* the edge sizes (4 draws each), then one long run for the error figures */
        for (int i = 0; i <= checkasm_n_sizes; i++) {
            size_t n = i < checkasm_n_sizes ? checkasm_sizes[i] : checkasm_small() ? 4096 : 1 << 18; /* emulated runs stay small */
            float *x = checkasm_alloc_f32(n), *y_ref = checkasm_alloc_f32(n);
            float *y_new = checkasm_alloc_f32(n), *truth = checkasm_alloc_f32(n);
            float *tol = checkasm_alloc_f32(n);
            for (int rep = 0; rep < (i < checkasm_n_sizes ? 4 : 1); rep++) {
                fill(s, x, n);
                call_ref(n, x, y_ref);
                call_new(n, x, y_new);
                measure(s, x, y_ref, n, truth, tol, &st_ref);
                measure(s, x, y_new, n, truth, tol, &st_new);
                checkasm_check_f32_tol(s->name, truth, y_new, n, tol);
                /* in place: y may equal x */
                call_new(n, x, x);
                checkasm_check_f32("in place", y_new, x, n, 0, 0);
                total += n;
            }
        }
        check_specials(s, func_new);
        if (s->absx > 0)
            printf("      %-24s max error %.2f ulp (x >= 0), %.2f * 2^-24 |x| (x < 0); "
                   "C reference %.2f ulp, %.2f * 2^-24 |x|; %zu inputs\n",
                   op->variants[v].name, st_new.ulp, st_new.absx, st_ref.ulp, st_ref.absx, total);
        else
            printf("      %-24s max error %.2f ulp; C reference %.2f ulp; %zu inputs\n",
                   op->variants[v].name, st_new.ulp, st_ref.ulp, total);
        size_t n = 4096;
        float *x = checkasm_alloc_f32(n), *y = checkasm_alloc_f32(n);
        /* the range activations live in: the test ranges reach the
         * subnormals, whose microcode assists would be all the bench saw */
        checkasm_fill_f32(x, n, -10, 10);
        checkasm_bench_label("n=%zu x in [-10,10]", n);
        checkasm_bench_work(0, 8.0 * n);
        bench_new(n, x, y);
    }
    checkasm_report(s->name);
}

/* The stated bounds (ulps, absx) are the ones in each op's header; the
 * measured maxima printed by the run sit below them. */
void checkasm_check_vexp(void)
{
    static const unary_spec s = { "vexp", &pg_kernels_vexp, t_exp,
        { { -110, 95, 0 }, { -1, 1, 0 }, { -88, -86, 0 }, { 87, 89, 0 }, { -40, 6, 1 } }, 5, 1, 0, NULL };
    check_unary(&s);
}

void checkasm_check_sigmoid(void)
{
    static const unary_spec s = { "sigmoid", &pg_kernels_sigmoid, t_sigmoid,
        { { -110, 110, 0 }, { -20, 20, 0 }, { -1, 1, 0 }, { -40, 7, 1 } }, 4, 2.5, 0, NULL };
    check_unary(&s);
}

void checkasm_check_silu(void)
{
    static const unary_spec s = { "silu", &pg_kernels_silu, t_silu,
        { { -110, 110, 0 }, { -20, 20, 0 }, { -1, 1, 0 }, { -40, 7, 1 } }, 4, 3.5, 0, NULL };
    check_unary(&s);
}

void checkasm_check_tanh(void)
{
    static const unary_spec s = { "tanh", &pg_kernels_tanh, t_tanh,
        { { -12, 12, 0 }, { -1, 1, 0 }, { -0.7f, 0.7f, 0 }, { 0.5f, 0.75f, 0 }, { -40, 7, 1 } }, 5, 1.5,
        0, NULL };
    check_unary(&s);
}

void checkasm_check_gelu_tanh(void)
{
    static const unary_spec s = { "gelu_tanh", &pg_kernels_gelu_tanh, t_gelu_tanh,
        { { -12, 12, 0 }, { -4, 4, 0 }, { -1, 1, 0 }, { -40, 14, 1 } }, 4, 2.5, 0, c_gelu_tanh };
    check_unary(&s);
}

void checkasm_check_gelu_erf(void)
{
    static const unary_spec s = { "gelu_erf", &pg_kernels_gelu_erf, t_gelu_erf,
        { { -12, 12, 0 }, { -6, 6, 0 }, { -1, 1, 0 }, { -40, 14, 1 } }, 4, 1.5, 1.25, NULL };
    check_unary(&s);
}

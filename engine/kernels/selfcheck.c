/* selfcheck.c - every variant proves itself once before dispatch uses it.
 *
 * checkasm proves the assembly on the machines the project is tested on;
 * a user's machine can still differ (a CPU erratum, a hypervisor that
 * drops vector state, a broken build).  So the first time dispatch would
 * pick a variant in a process, it runs it once on a small fixed input
 * against its family's C reference (or, for the SGEMM microkernels, plain
 * loops); a variant that disagrees is never selected, dispatch falls to
 * the next one, and stderr says so once.  A wrong kernel therefore costs
 * speed, never a silent wrong answer.  The quantised families' products
 * are checked by checkasm only (their inputs need valid block encodings).
 *
 * PEREGRINE_KERNEL_SELFCHECK_FAIL=name[,name] makes the named variants
 * fail their check: how a test sees the fallback on a healthy machine. */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sgemm/sgemm.h"
#include "variant.h"

#define N_MAX 67                 /* odd: the vector loops' tails run too */
#define MAX_FAMILIES 64
#define MAX_VARIANTS 32

/* 0 not run, 1 passed, 2 no check here (checkasm's), -1 failed */
static _Atomic signed char state[MAX_FAMILIES][MAX_VARIANTS];

static void fill(float *p, size_t n, unsigned seed)
{
    unsigned s = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        p[i] = (float)((s >> 8) & 0xFFFF) / 16384.0f - 2.0f;   /* [-2, 2) */
    }
}

static int close_all(const float *ref, const float *got, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(fabsf(ref[i] - got[i]) <= 1e-4f * (fabsf(ref[i]) + 1.0f)))   /* NaN fails */
            return 0;
    return 1;
}

static int check_sgemm(const pg_variant *v)
{
    const pg_sgemm_params *p = v->params;
    if (!p || p->mr <= 0 || p->nr <= 0 || p->mr > 16 || p->nr > 64)
        return 0;
    enum { K = 19 };
    size_t mr = (size_t)p->mr, nr = (size_t)p->nr;
    float a[16 * K], b[K * 64], c[16 * 64], want[16 * 64];
    fill(a, mr * K, 1);
    fill(b, K * nr, 2);
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++) {
            float s = 0;
            for (size_t k = 0; k < K; k++)
                s += a[i * K + k] * b[k * nr + j];
            want[i * nr + j] = s;
        }
    pg_sgemm_epilogue ep = { NULL, PG_ACT_NONE, 0 };
    v->fn.sgemm(mr, nr, K, a, K, b, c, nr, &ep);
    return close_all(want, c, mr * nr);
}

/* v against the family's reference r on the same inputs: 1 agrees, 0 does
 * not, 2 no check for this family here */
static int check_against(const pg_kernel_family *f, const pg_variant *v, const pg_variant *r)
{
    float x[N_MAX * N_MAX], y[N_MAX * N_MAX], g[N_MAX], bta[N_MAX], got[N_MAX * N_MAX], want[N_MAX * N_MAX];
    size_t n = N_MAX, N = 13, K = 29;
    fill(x, n * n, 3);
    fill(y, n * n, 4);
    fill(g, n, 5);
    fill(bta, n, 6);
    switch (f->fn_member) {
    case PG_KERNEL_FN_binary:
        r->fn.binary(n, x, y, want);
        v->fn.binary(n, x, y, got);
        return close_all(want, got, n);
    case PG_KERNEL_FN_unary:
        r->fn.unary(n, x, want);
        v->fn.unary(n, x, got);
        return close_all(want, got, n);
    case PG_KERNEL_FN_softmax:
        r->fn.softmax(n, x, 0.5f, NULL, want);
        v->fn.softmax(n, x, 0.5f, NULL, got);
        return close_all(want, got, n);
    case PG_KERNEL_FN_layernorm:
        r->fn.layernorm(n, x, g, bta, 1e-5f, want);
        v->fn.layernorm(n, x, g, bta, 1e-5f, got);
        return close_all(want, got, n);
    case PG_KERNEL_FN_rmsnorm:
        r->fn.rmsnorm(n, x, g, 1e-6f, want);
        v->fn.rmsnorm(n, x, g, 1e-6f, got);
        return close_all(want, got, n);
    case PG_KERNEL_FN_gemv:
        r->fn.gemv(N, K, x, y, N, g, want);
        v->fn.gemv(N, K, x, y, N, g, got);
        return close_all(want, got, N);
    case PG_KERNEL_FN_gemv_nk:
        r->fn.gemv_nk(N, K, x, y, K, g, want);
        v->fn.gemv_nk(N, K, x, y, K, g, got);
        return close_all(want, got, N);
    case PG_KERNEL_FN_sgemm:
        return check_sgemm(v);
    default:
        return 2;   /* quantised families: checkasm's */
    }
}

static int forced_to_fail(const pg_variant *v)
{
    const char *env = getenv("PEREGRINE_KERNEL_SELFCHECK_FAIL");
    size_t len = strlen(v->name);
    for (const char *p = env; p && *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == len && !strncmp(p, v->name, len))
            return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

static _Atomic signed char *slot(const pg_kernel_family *f, const pg_variant *v)
{
    int n;
    const pg_kernel_family *const *all = pg_kernel_families_all(&n);
    for (int i = 0; i < n && i < MAX_FAMILIES; i++)
        if (all[i] == f) {
            int vi = pg_variant_index(f, v);
            return vi >= 0 && vi < MAX_VARIANTS ? &state[i][vi] : NULL;
        }
    return NULL;
}

int pg_variant_self_check(const pg_kernel_family *f, const pg_variant *v)
{
    if (v == &f->variants[f->count - 1])
        return 1;   /* the reference is the oracle */
    _Atomic signed char *s = slot(f, v);
    signed char known = s ? atomic_load(s) : 0;
    if (known)
        return known > 0;
    int r = forced_to_fail(v) ? 0 : check_against(f, v, &f->variants[f->count - 1]);
    int ok = r != 0;
    if (s) {
        signed char was = 0;
        if (atomic_compare_exchange_strong(s, &was, (signed char)(ok ? r : -1)) && !ok)
            fprintf(stderr, "peregrine: kernel %s (%s) disagrees with its C reference on its "
                    "self-check; it will not be used\n", v->name, f->name);
    }
    return ok;
}

int pg_variant_self_check_state(const pg_kernel_family *f, const pg_variant *v)
{
    if (v == &f->variants[f->count - 1])
        return 1;
    _Atomic signed char *s = slot(f, v);
    return s ? atomic_load(s) : 0;
}

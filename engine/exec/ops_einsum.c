/* ops_einsum.c - Einsum: the equation parser (einsum.h) and a plain C
 * interpreter.
 *
 * For each output element the interpreter sums, over every value of the
 * summed variables, the product of the inputs' elements; input offsets are
 * kept incrementally (an odometer over the variables), the innermost summed
 * variable runs as a strided dot product.  Sums are kept in double (float
 * inputs) or int64.  This covers every form transformers export -
 * "bhqd,bhkd->bhqk", "bhqk,bhkd->bhqd", "...ij,...jk->...ik", transposes,
 * reductions, diagonals - at the cost of a matrix product done in scalar
 * code; nothing is allocated, and the equation is parsed again each run
 * (it is a few characters). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "einsum.h"
#include "elem.h"
#include "ops.h"

static pg_status efail(pg_status st, const char *node, const char *fmt, ...) PG_PRINTF(3, 4);
static pg_status efail(pg_status st, const char *node, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return pg_fail(st, "node '%s' (Einsum): %s", node, msg);
}
#define EFAIL efail

typedef struct term {
    char letters[PG_MAX_RANK + 1];   /* labels in order, '.' where `...` stands */
    int  n;                          /* entries in letters */
    int  ell;                        /* position of `...` in letters, -1 if none */
} term;

/* One term of the equation: [s, end) without spaces. */
static pg_status parse_term(const pg_node *nd, const char *s, const char *end, term *t)
{
    t->n = 0;
    t->ell = -1;
    while (s < end) {
        if (*s == ' ') {
            s++;
            continue;
        }
        if (*s == '.') {
            if (end - s < 3 || s[1] != '.' || s[2] != '.' || t->ell >= 0)
                return EFAIL(PG_ERR_GRAPH, nd->name, "a term has a stray '.' or two '...'");
            t->ell = t->n;
            t->letters[t->n++] = '.';
            s += 3;
            continue;
        }
        if (!isalpha((unsigned char)*s))
            return EFAIL(PG_ERR_GRAPH, nd->name, "character '%c' is not a label (letters, '...')", *s);
        if (t->n >= PG_MAX_RANK)
            return EFAIL(PG_ERR_UNSUPPORTED, nd->name, "a term has more than %d labels", PG_MAX_RANK);
        t->letters[t->n++] = *s++;
    }
    t->letters[t->n] = 0;
    return PG_OK;
}

static pg_status set_dim(const pg_node *nd, pg_einsum *e, int v, int64_t d, char label)
{
    if (e->dim[v] < 0 || e->dim[v] == 1)
        e->dim[v] = d;
    else if (d != 1 && d != e->dim[v])
        return label == '.' ? EFAIL(PG_ERR_SHAPE, nd->name, "the dims under '...' do not broadcast "
                                    "(%lld vs %lld)", (long long)d, (long long)e->dim[v])
                            : EFAIL(PG_ERR_SHAPE, nd->name, "label '%c' has sizes %lld and %lld", label,
                                    (long long)e->dim[v], (long long)d);
    return PG_OK;
}

pg_status pg_einsum_parse(const pg_node *nd, const pg_tensor *const *in, int n_in, pg_einsum *e)
{
    pg_status st;
    const char *eq = pg_ir_attr_string(nd, "equation", NULL);
    memset(e, 0, sizeof *e);
    if (!eq)
        return EFAIL(PG_ERR_GRAPH, nd->name, "attribute 'equation' is required");
    if (n_in < 1 || n_in > PG_EINSUM_MAX_IN)
        return EFAIL(PG_ERR_UNSUPPORTED, nd->name, "%d operands (at most %d)", n_in, PG_EINSUM_MAX_IN);
    const char *arrow = strstr(eq, "->"), *lhs_end = arrow ? arrow : eq + strlen(eq);
    term terms[PG_EINSUM_MAX_IN], out;
    int nt = 0;
    for (const char *s = eq; nt <= n_in;) {
        const char *comma = memchr(s, ',', (size_t)(lhs_end - s)), *te = comma ? comma : lhs_end;
        if (nt == n_in)
            return EFAIL(PG_ERR_GRAPH, nd->name, "equation '%s' has more terms than the %d inputs", eq, n_in);
        if ((st = parse_term(nd, s, te, &terms[nt++])))
            return st;
        if (!comma)
            break;
        s = comma + 1;
    }
    if (nt != n_in)
        return EFAIL(PG_ERR_GRAPH, nd->name, "equation '%s' has %d terms for %d inputs", eq, nt, n_in);
    /* the dims `...` stands for, right-aligned across operands */
    int ne = 0;
    for (int i = 0; i < n_in; i++) {
        int letters = terms[i].n - (terms[i].ell >= 0);
        int k = in[i]->rank - letters;
        if (k < 0 || (terms[i].ell < 0 && k != 0))
            return EFAIL(PG_ERR_SHAPE, nd->name, "term '%s' has %d labels for input '%s' of rank %d",
                         terms[i].letters, letters, in[i]->name, in[i]->rank);
        if (k > ne)
            ne = k;
    }
    e->n_in = n_in;
    e->n_ell = ne;
    e->n_vars = ne;
    for (int v = 0; v < PG_EINSUM_MAX_VARS; v++)
        e->dim[v] = -1;
    char label_of[PG_EINSUM_MAX_VARS] = { 0 };
    int count[PG_EINSUM_MAX_VARS] = { 0 };
    for (int i = 0; i < n_in; i++) {
        const term *t = &terms[i];
        int k = in[i]->rank - (t->n - (t->ell >= 0)), ax = 0;
        e->in_rank[i] = in[i]->rank;
        for (int p = 0; p < t->n; p++) {
            if (t->letters[p] == '.') {
                for (int j = 0; j < k; j++, ax++) {
                    int v = ne - k + j;
                    e->in_var[i][ax] = v;
                    if ((st = set_dim(nd, e, v, in[i]->shape[ax], '.')))
                        return st;
                }
                continue;
            }
            int v = -1;
            for (int q = ne; q < e->n_vars; q++)
                if (label_of[q] == t->letters[p])
                    v = q;
            if (v < 0) {
                if (e->n_vars - ne >= PG_EINSUM_MAX_LABELS)
                    return EFAIL(PG_ERR_UNSUPPORTED, nd->name, "equation '%s' has more than %d labels",
                                 eq, PG_EINSUM_MAX_LABELS);
                v = e->n_vars++;
                label_of[v] = t->letters[p];
            }
            count[v]++;
            e->in_var[i][ax] = v;
            if ((st = set_dim(nd, e, v, in[i]->shape[ax], t->letters[p])))
                return st;
            ax++;
        }
    }
    for (int v = 0; v < ne; v++)
        if (e->dim[v] < 0)
            e->dim[v] = 1;
    /* the output */
    e->out_rank = 0;
    if (arrow) {
        if ((st = parse_term(nd, arrow + 2, arrow + strlen(arrow), &out)))
            return st;
        int used[PG_EINSUM_MAX_VARS] = { 0 };
        for (int p = 0; p < out.n; p++) {
            if (out.letters[p] == '.') {
                if (e->out_rank + ne > PG_MAX_RANK)
                    return EFAIL(PG_ERR_UNSUPPORTED, nd->name, "output rank above %d", PG_MAX_RANK);
                for (int v = 0; v < ne; v++)
                    e->out_var[e->out_rank++] = v;
                continue;
            }
            int v = -1;
            for (int q = ne; q < e->n_vars; q++)
                if (label_of[q] == out.letters[p])
                    v = q;
            if (v < 0)
                return EFAIL(PG_ERR_GRAPH, nd->name, "output label '%c' is in no input term", out.letters[p]);
            if (used[v]++)
                return EFAIL(PG_ERR_GRAPH, nd->name, "output label '%c' appears twice", out.letters[p]);
            if (e->out_rank >= PG_MAX_RANK)
                return EFAIL(PG_ERR_UNSUPPORTED, nd->name, "output rank above %d", PG_MAX_RANK);
            e->out_var[e->out_rank++] = v;
        }
    } else {
        /* implicit: `...`, then the labels used once, in alphabetical (ASCII) order */
        for (int v = 0; v < ne; v++)
            e->out_var[e->out_rank++] = v;
        for (int c = 0; c < 128; c++)
            for (int v = ne; v < e->n_vars; v++)
                if (label_of[v] == c && count[v] == 1) {
                    if (e->out_rank >= PG_MAX_RANK)
                        return EFAIL(PG_ERR_UNSUPPORTED, nd->name, "output rank above %d", PG_MAX_RANK);
                    e->out_var[e->out_rank++] = v;
                }
    }
    return PG_OK;
}

/* ---- the interpreter ------------------------------------------------------------ */

pg_status pg_exec_einsum(pg_kctx *k)
{
    pg_einsum e;
    pg_status st = pg_einsum_parse(k->node, k->in, k->n_in, &e);
    if (st)
        return st;
    pg_dtype dt = k->out[0]->dtype;
    int fl = pg_dt_is_float(dt), ni = e.n_in;
    int f32x2 = ni == 2 && dt == PG_DTYPE_FLOAT32;
    /* per input, its stride along each variable (a diagonal adds its axes' strides) */
    int64_t vst[PG_EINSUM_MAX_IN][PG_EINSUM_MAX_VARS];
    memset(vst, 0, sizeof vst);
    for (int i = 0; i < ni; i++) {
        int64_t xs[PG_MAX_RANK];
        pg_row_strides(k->in[i], xs);
        for (int ax = 0; ax < e.in_rank[i]; ax++) {
            int v = e.in_var[i][ax];
            if (!(k->in[i]->shape[ax] == 1 && e.dim[v] != 1))
                vst[i][v] += xs[ax];
        }
    }
    int is_out[PG_EINSUM_MAX_VARS] = { 0 }, red[PG_EINSUM_MAX_VARS], nr = 0;
    for (int a = 0; a < e.out_rank; a++)
        is_out[e.out_var[a]] = 1;
    int64_t rtotal = 1;
    for (int v = 0; v < e.n_vars; v++)
        if (!is_out[v]) {
            red[nr++] = v;
            rtotal *= e.dim[v];
        }
    int64_t total = pg_tensor_numel(k->out[0]);
    int64_t oidx[PG_MAX_RANK] = { 0 }, base[PG_EINSUM_MAX_IN] = { 0 };
    /* innermost summed variable: a strided dot product */
    int inner = nr ? red[nr - 1] : -1;
    int64_t ilen = nr ? e.dim[inner] : 1, outer_red = ilen ? rtotal / ilen : 0;
    for (int64_t o = 0; o < total; o++) {
        double sf = 0;
        int64_t si = 0;
        int64_t ridx[PG_EINSUM_MAX_VARS] = { 0 }, off[PG_EINSUM_MAX_IN];
        for (int i = 0; i < ni; i++)
            off[i] = base[i];
        for (int64_t rr = 0; rr < outer_red; rr++) {
            if (f32x2) {   /* float32 A.B: the common case, without the dtype switch */
                const float *A = (const float *)k->x[0] + off[0], *B = (const float *)k->x[1] + off[1];
                int64_t sa = inner >= 0 ? vst[0][inner] : 0, sb = inner >= 0 ? vst[1][inner] : 0;
                for (int64_t j = 0; j < ilen; j++)
                    sf += (double)A[j * sa] * B[j * sb];
            } else for (int64_t j = 0; j < ilen; j++) {
                if (fl) {
                    double p = 1;
                    for (int i = 0; i < ni; i++)
                        p *= pg_ld_f(k->in[i]->dtype, k->x[i], off[i] + j * (inner >= 0 ? vst[i][inner] : 0));
                    sf += p;
                } else {
                    uint64_t p = 1;
                    for (int i = 0; i < ni; i++)
                        p *= (uint64_t)pg_ld_i(k->in[i]->dtype, k->x[i],
                                               off[i] + j * (inner >= 0 ? vst[i][inner] : 0));
                    si = (int64_t)((uint64_t)si + p);
                }
            }
            /* next value of the other summed variables */
            for (int q = nr - 2; q >= 0; q--) {
                int v = red[q];
                for (int i = 0; i < ni; i++)
                    off[i] += vst[i][v];
                if (++ridx[q] < e.dim[v])
                    break;
                for (int i = 0; i < ni; i++)
                    off[i] -= vst[i][v] * e.dim[v];
                ridx[q] = 0;
            }
        }
        if (fl)
            pg_st_f(dt, k->y[0], o, sf);
        else
            pg_st_i(dt, k->y[0], o, si);
        for (int a = e.out_rank - 1; a >= 0; a--) {
            int v = e.out_var[a];
            for (int i = 0; i < ni; i++)
                base[i] += vst[i][v];
            if (++oidx[a] < e.dim[v])
                break;
            for (int i = 0; i < ni; i++)
                base[i] -= vst[i][v] * e.dim[v];
            oidx[a] = 0;
        }
    }
    return PG_OK;
}

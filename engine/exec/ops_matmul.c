/* ops_matmul.c - MatMul (numpy batch broadcasting), Gemm, FusedMatMul
 * (bias + activation epilogue, B possibly pre-packed) and QKVMatMul (one
 * weight, three contiguous outputs).
 *
 * All of them reduce to one call shape, gemm2d(): C[M,N] = act(alpha A.B +
 * bias) with A row-major (lda), B row-major / transposed / packed in
 * NR-wide panels, C row-major (ldc).  gemm.c holds that driver. */
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../kernels/gemv_panels/gemv_panels.h"
#include "../kernels/sgemm/sgemm.h"
#include "gemm.h"
#include "lowp.h"
#include "ops.h"

pg_act_kind pg_act_from_name(const char *s)
{
    if (!s || !strcmp(s, "none") || !*s) return PG_ACTK_NONE;
    if (!strcmp(s, "relu")) return PG_ACTK_RELU;
    if (!strcmp(s, "gelu")) return PG_ACTK_GELU;
    if (!strcmp(s, "gelu_tanh")) return PG_ACTK_GELU_TANH;
    if (!strcmp(s, "sigmoid")) return PG_ACTK_SIGMOID;
    if (!strcmp(s, "tanh")) return PG_ACTK_TANH;
    if (!strcmp(s, "silu")) return PG_ACTK_SILU;
    return PG_ACTK_INVALID;
}

static int has_panel_width(const pg_variant *v, const void *nr)
{
    const pg_sgemm_params *p = v->params;
    return p && p->nr == *(const int *)nr;
}

/* a gemv_panels kernel for exactly this width (not the any-width C
 * reference: where no assembly reader fits, SGEMM runs the row) */
static int reads_panel_width(const pg_variant *v, const void *nr)
{
    const pg_gemv_panels_params *p = v->params;
    return p && p->nr == *(const int *)nr;
}

/* The activation's elementwise table, for the activations the SGEMM
 * epilogue does not apply (and for alpha != 1, where it applies none). */
static const pg_kernel_family *act_family(pg_act_kind act)
{
    switch (act) {
    case PG_ACTK_GELU: return pg_kernel_family_by_name("gelu_erf");
    case PG_ACTK_GELU_TANH: return pg_kernel_family_by_name("gelu_tanh");
    case PG_ACTK_SIGMOID: return pg_kernel_family_by_name("sigmoid");
    case PG_ACTK_TANH: return pg_kernel_family_by_name("tanh");
    case PG_ACTK_SILU: return pg_kernel_family_by_name("silu");
    default: return NULL;
    }
}

/* A weight packed by weight_prepack binds to the best allowed kernel of
 * its panel width; anything else to the best allowed kernel. */
pg_status pg_bind_matmul(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                         pg_binding *b)
{
    (void)out;
    const pg_tensor *w = in[1];
    if (pg_lowp_layout(w))
        return pg_lowp_bind(n, in, b);   /* bf16 / int8 weights (ops_lowp.c) */
    if (w->layout == PG_LAYOUT_PACKED) {
        b->kern[0] = pg_kernel_select_fitting(&pg_kernels_sgemm, has_panel_width, &w->pack_nr);
        if (!b->kern[0])
            return pg_fail(PG_ERR_UNSUPPORTED, "node '%s': weight '%s' is packed in %d-column panels "
                           "and the CPU mask allows no SGEMM kernel of that width (rebind the model "
                           "to re-pack it)", n->name, w->name, w->pack_nr);
        /* one row of A (a decoding step at batch 1): GEMV over the panels */
        if (pg_matmul_rows(in[0], w) == 1)
            b->kern[3] = pg_kernel_select_fitting(&pg_kernels_gemv_panels, reads_panel_width,
                                                  &w->pack_nr);
    } else {
        b->kern[0] = pg_kernel_select(&pg_kernels_sgemm);
    }
    pg_act_kind act = pg_act_from_name(pg_ir_attr_string(n, "activation", "none"));
    if (act == PG_ACTK_INVALID)
        return pg_fail(PG_ERR_INVALID_ARG, "node '%s': unknown activation '%s'", n->name,
                       pg_ir_attr_string(n, "activation", ""));
    const pg_kernel_family *f = act_family(act);
    b->kern[1] = f ? pg_kernel_select(f) : NULL;
    return PG_OK;
}

/* A gated FusedMatMul's product: rows of A (any rank, rows of K) x 2F
 * columns, in front of the product's own scratch. */
static size_t gated_bytes(const pg_tensor *a, const pg_tensor *w)
{
    size_t K = (size_t)w->shape[0], N2 = (size_t)w->shape[1];
    int64_t na = pg_tensor_numel(a);
    size_t M = K && na > 0 ? (size_t)na / K : 0;
    return pg_align_up(M * N2 * sizeof(float));
}

static int is_gated(const pg_node *n)
{
    return n->op == PG_OP_FUSED_MATMUL && pg_ir_attr_int(n, "gated", 0) != 0;
}

/* MatMul / FusedMatMul / QKVMatMul: room to pack an unpacked B per run
 * (a gated FusedMatMul: its product first). */
size_t pg_scratch_matmul(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                         int threads, const pg_binding *b)
{
    (void)out; (void)threads;
    const pg_tensor *w = in[1];
    size_t g = is_gated(n) && w->rank == 2 ? gated_bytes(in[0], w) : 0;
    if (pg_lowp_layout(w))
        return g + pg_lowp_scratch(n, in);
    if (w->rank < 2)
        return g;
    /* the most rows one product has: all of A's against a 2-D weight (one
     * product, see matmul_nd), else one batch's */
    const pg_tensor *a = in[0];
    size_t K = (size_t)w->shape[w->rank - 2];
    int64_t na = pg_tensor_numel(a);
    size_t M = w->rank > 2 && a->rank >= 2 ? (size_t)a->shape[a->rank - 2]
             : K && na > 0 ? (size_t)na / K : 0;
    return g + pg_gemm_scratch_bytes(b->kern[0], M, K, (size_t)w->shape[w->rank - 1],
                                     w->layout == PG_LAYOUT_PACKED);
}

/* Gemm: A^T when transA, then room to pack B (or B^T) per run. */
size_t pg_scratch_gemm(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                       int threads, const pg_binding *b)
{
    (void)threads;
    int ta = (int)pg_ir_attr_int(n, "transA", 0);
    size_t s = ta ? (size_t)pg_tensor_numel(in[0]) * sizeof(float) + 64 : 0;
    size_t K = (size_t)in[0]->shape[ta ? 0 : 1];
    return pg_align_up(s) + pg_gemm_scratch_bytes(b->kern[0], (size_t)out[0]->shape[0], K,
                                                  (size_t)out[0]->shape[1],
                                                  in[1]->layout == PG_LAYOUT_PACKED);
}

static void b_desc(pg_gemm_b *bd, const pg_tensor *b, const void *data, int trans)
{
    memset(bd, 0, sizeof *bd);
    bd->data = data;
    bd->trans = trans;
    if (b->layout == PG_LAYOUT_PACKED) {
        bd->packed = 1;
        bd->nr = (size_t)b->pack_nr;
    }
}

/* MatMul / FusedMatMul / QKVMatMul with batch broadcasting of A and B. */
static pg_status matmul_nd(pg_kctx *k, const float *bias, pg_act_kind act, float alpha)
{
    const pg_tensor *a = k->in[0], *b = k->in[1];
    int ar = a->rank, br = b->rank;
    int64_t K = a->shape[ar - 1];
    int64_t M = ar >= 2 ? a->shape[ar - 2] : 1;
    int64_t N = br >= 2 ? b->shape[br - 1] : 1;
    /* batch shape = the output's leading dims (all but its matrix dims) */
    const pg_tensor *y = k->out[0];
    int mat = (ar >= 2) + (br >= 2);
    int brank = y->rank - mat;
    int64_t bshape[PG_MAX_RANK], sa[PG_MAX_RANK], sb[PG_MAX_RANK], nbatch = 1;
    for (int d = 0; d < brank; d++) {
        bshape[d] = y->shape[d];
        nbatch *= bshape[d];
    }
    if (br == 2 && ar >= 3) {
        /* one weight for every batch: the batches' rows are one [nbatch*M, K]
         * product (A and the outputs are contiguous rows), so B is streamed
         * once instead of once per batch */
        M *= nbatch;
        nbatch = 1;
        brank = 0;
    }
    /* element strides of each batch dim for A and B (0 if broadcast) */
    int64_t ast = M * K, bst = K * N;
    for (int d = brank - 1; d >= 0; d--) {
        int da = d - (brank - (ar - 2)), db = d - (brank - (br - 2));
        int64_t sa_d = (ar >= 2 && da >= 0) ? a->shape[da] : 1;
        int64_t sb_d = (br >= 2 && db >= 0) ? b->shape[db] : 1;
        sa[d] = sa_d == 1 ? 0 : ast;
        sb[d] = sb_d == 1 ? 0 : bst;
        ast *= sa_d;
        bst *= sb_d;
    }
    pg_gemm_b bd;
    b_desc(&bd, b, k->x[1], 0);
    bd.ldb = (size_t)N;
    const float *A = k->x[0], *B = k->x[1];
    int64_t idx[PG_MAX_RANK] = { 0 };
    int nout = k->node->op == PG_OP_QKV_MATMUL ? 3 : 1;
    for (int64_t bi = 0; bi < nbatch; bi++) {
        int64_t oa = 0, ob = 0;
        for (int d = 0; d < brank; d++) {
            oa += idx[d] * sa[d];
            ob += idx[d] * sb[d];
        }
        if (!bd.packed)
            bd.data = B + ob;
        if (nout == 1) {
            float *C = (float *)k->y[0] + bi * M * N;
            pg_status st = pg_gemm2d(k, (size_t)M, (size_t)N, (size_t)K, A + oa, (size_t)K, &bd, 0,
                                     C, (size_t)N, bias, act, alpha);
            if (st)
                return st;
        } else {
            /* QKV: columns [c0, c0+n) of W go to output o, contiguous */
            size_t c0 = 0;
            for (int o = 0; o < 3; o++) {
                size_t n = (size_t)k->out[o]->shape[k->out[o]->rank - 1];
                float *C = (float *)k->y[o] + bi * M * (int64_t)n;
                pg_status st = pg_gemm2d(k, (size_t)M, n, (size_t)K, A + oa, (size_t)K, &bd, c0,
                                         C, n, bias ? bias + c0 : NULL, act, alpha);
                if (st)
                    return st;
                c0 += n;
            }
        }
        for (int d = brank - 1; d >= 0; d--) {
            if (++idx[d] < bshape[d]) break;
            idx[d] = 0;
        }
    }
    return PG_OK;
}

static pg_status gemm_op(pg_kctx *k)
{
    const pg_node *n = k->node;
    int ta = (int)pg_ir_attr_int(n, "transA", 0), tb = (int)pg_ir_attr_int(n, "transB", 0);
    float alpha = pg_ir_attr_float(n, "alpha", 1.0f), beta = pg_ir_attr_float(n, "beta", 1.0f);
    const pg_tensor *a = k->in[0], *b = k->in[1], *y = k->out[0];
    size_t M = (size_t)y->shape[0], N = (size_t)y->shape[1], K = (size_t)a->shape[ta ? 0 : 1];
    const float *A = k->x[0];
    float *C = k->y[0];
    const float *Ap = A;
    size_t lda = K;
    pg_kctx kk = *k;   /* with transA, B's packing scratch follows A's copy */
    if (ta) {
        /* transA is rare: transpose A into scratch */
        float *t = k->scratch;
        size_t used = pg_align_up(M * K * sizeof(float) + 64);
        kk.scratch = (char *)k->scratch + used;
        kk.scratch_bytes = k->scratch_bytes > used ? k->scratch_bytes - used : 0;
        for (size_t i = 0; i < M; i++)
            for (size_t kk = 0; kk < K; kk++)
                t[i * K + kk] = A[kk * M + i];
        Ap = t;
    }
    pg_gemm_b bd;
    b_desc(&bd, b, k->x[1], tb);
    bd.ldb = (size_t)b->shape[1];
    /* C input: a bias row [N] goes to the epilogue; anything else is added after */
    const float *bias = NULL;
    const pg_tensor *ct = k->n_in > 2 ? k->in[2] : NULL;
    int64_t cn = ct ? pg_tensor_numel(ct) : 0;
    int row_bias = ct && beta == 1.0f && cn == (int64_t)N && (ct->rank == 1 || ct->shape[0] == 1);
    if (row_bias)
        bias = k->x[2];
    pg_status st = pg_gemm2d(&kk, M, N, K, Ap, lda, &bd, 0, C, N, bias, PG_ACTK_NONE, alpha);
    if (st)
        return st;
    if (ct && !row_bias) {
        int64_t st[2];
        pg_broadcast_strides(ct->rank, ct->shape, 2, y->shape, st);
        const float *Cv = k->x[2];
        for (size_t i = 0; i < M; i++)
            for (size_t j = 0; j < N; j++)
                C[i * N + j] += beta * Cv[(int64_t)i * st[0] + (int64_t)j * st[1]];
    }
    return PG_OK;
}

/* FusedMatMul with gated = 1 (qkv_fusion's gate/up pair of an MLP):
 * W = [Wg | Wu] [K, 2F], bias [bg | bu]; one product of A with all of W
 * into scratch (fp32 or the lowp kernels, whichever W is packed for), then
 * each row y = act(gate) * up while it is in cache. */
static pg_status gated_matmul(pg_kctx *k, const float *bias, pg_act_kind act)
{
    const pg_tensor *a = k->in[0], *w = k->in[1];
    size_t K = (size_t)w->shape[0], N2 = (size_t)w->shape[1], F = N2 / 2;
    int64_t na = pg_tensor_numel(a);
    size_t M = K && na > 0 ? (size_t)na / K : 0;
    size_t prod = gated_bytes(a, w);
    if (k->scratch_bytes < prod)
        return pg_fail(PG_ERR_INTERNAL, "node '%s': scratch of %zu bytes, %zu needed for the "
                       "gated product", k->node->name, k->scratch_bytes, prod);
    if (M == 0 || F == 0)
        return PG_OK;
    float *P = k->scratch;
    void *py[1] = { P };
    pg_kctx kk = *k;
    kk.scratch = (char *)k->scratch + prod;
    kk.scratch_bytes = k->scratch_bytes - prod;
    kk.y = py;
    pg_status st;
    if (pg_lowp_layout(w)) {
        st = pg_lowp_matmul(&kk, bias, PG_ACTK_NONE);
    } else {
        pg_gemm_b bd;
        b_desc(&bd, w, k->x[1], 0);
        bd.ldb = N2;
        st = pg_gemm2d(&kk, M, N2, K, k->x[0], K, &bd, 0, P, N2, bias, PG_ACTK_NONE, 1.0f);
    }
    if (st)
        return st;
    float *Y = k->y[0];
    for (size_t i = 0; i < M; i++) {
        float *g = P + i * N2;
        const float *u = g + F;
        float *y = Y + i * F;
        if (act != PG_ACTK_NONE)
            pg_apply_act(k->bind->kern[1], act, g, F);
        for (size_t j = 0; j < F; j++)
            y[j] = g[j] * u[j];
    }
    return PG_OK;
}

pg_status pg_exec_matmul(pg_kctx *k)
{
    const pg_node *n = k->node;
    switch (n->op) {
    case PG_OP_GEMM:
        return gemm_op(k);
    case PG_OP_MATMUL:
        if (pg_lowp_layout(k->in[1]))
            return pg_lowp_matmul(k, NULL, PG_ACTK_NONE);
        return matmul_nd(k, NULL, PG_ACTK_NONE, 1.0f);
    default: {
        pg_act_kind act = pg_act_from_name(pg_ir_attr_string(n, "activation", "none"));
        if (act == PG_ACTK_INVALID)
            return pg_fail(PG_ERR_INVALID_ARG, "node '%s': unknown activation '%s'", n->name,
                           pg_ir_attr_string(n, "activation", ""));
        const float *bias = k->n_in > 2 ? k->x[2] : NULL;
        if (is_gated(n))
            return gated_matmul(k, bias, act);
        if (pg_lowp_layout(k->in[1]))
            return pg_lowp_matmul(k, bias, act);
        return matmul_nd(k, bias, act, pg_ir_attr_float(n, "alpha", 1.0f));
    }
    }
}

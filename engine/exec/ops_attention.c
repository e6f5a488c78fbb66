/* ops_attention.c - FusedAttention: O = softmax(scale * Q.K^T + mask) . V per
 * (batch, head), through the kernels:
 *
 *   - per (batch, head): K^T and V are packed once into the SGEMM
 *     microkernel's NR-wide panels (K^T packed straight from K [Sk, D] by a
 *     transposing pack, or by the ordinary pack when K arrives as [D, Sk]);
 *   - per tile of TQ query rows: S = Q_tile . K^T by the microkernel (the
 *     scores of TQ rows x all keys: the only scores that ever exist), each
 *     row through the softmax kernel with its scale and additive mask row,
 *     then O_tile = P . V by the microkernel straight into the output.
 *
 * One query row (Sq = 1, a decode step over a KV cache) skips the packs:
 * S = K q by gemv_nk on K's rows as they are (gemv on K^T when K arrives
 * as [D, Sk]) and O = P V by gemv on V's rows, so K and V are read once
 * instead of copied into panels first and read again.
 *
 * A whole row of keys fits the tile (TQ shrinks as Sk grows so that a tile
 * stays near SCORE_BUDGET floats, in L1), so no online-softmax rescaling is
 * needed.  (batch, head) pairs are shared out to `threads` slots, each with
 * its own part of the step's scratch (sized by the planner for the
 * compile-time thread count); a slot takes the next pair from a shared
 * counter, so a slow core does not hold the others up.
 *
 * Grouped-query attention: K and V may have Hkv heads dividing H (the
 * K/V head of query head h is h / (H / Hkv)), in either layout.
 *
 * Layouts: qkv_layout "bhsd" (default) takes Q [B,H,Sq,D], K, V, O in the
 * head layout, each head's rows contiguous; "bshd" takes Q [B,Sq,H*D],
 * K [B,Sk,H*D], V [B,Sk,H*Dv] and writes O [B,Sq,H*Dv] (the projections'
 * own layout: head h is columns h*D.. of every row).  The kernels take row
 * strides already (the microkernel's A and C, the packs' source), so bshd
 * only changes where a head starts and the stride between its rows.
 *
 * Masks: a float mask whose key dimension is contiguous is handed to the
 * softmax kernel in place; a bool mask (false -> -inf), a mask broadcast
 * along the keys, or `causal` builds the row's additive mask in scratch.
 * A row whose every key is masked out comes out NaN (the softmax kernel's
 * 0/0), as an all -inf row does in the reference.
 *
 * nan_to_zero = 1 (the exporters' Where(IsNaN(P), 0, P) guard after the
 * softmax, absorbed by attention_fusion): every NaN probability becomes 0
 * before P . V, so a fully masked row gives zeros. */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "../core/error.h"
#include "../core/threadpool.h"
#include "../kernels/gemv/gemv.h"
#include "../kernels/gemv_nk/gemv_nk.h"
#include "../kernels/sgemm/sgemm.h"
#include "../kernels/softmax/softmax.h"
#include "gemm.h"
#include "ops.h"

#define TQ_MAX 64
#define TQ_MIN 16
#define SCORE_BUDGET 4096   /* floats of scores per tile (16 KiB: stays in L1) */

static size_t up(size_t a, size_t b) { return (a + b - 1) / b * b; }

typedef struct attn_geom {
    size_t nr, mr;
    size_t tq, lds;                 /* query rows per tile, score row stride */
    size_t kp, vp, s, mrow;         /* floats of each scratch part, 16-aligned */
    size_t slot_bytes;
} attn_geom;

static void geometry(const pg_sgemm_params *p, int64_t Sk, int64_t D, int64_t Dv, attn_geom *g)
{
    g->nr = (size_t)p->nr;
    g->mr = (size_t)p->mr;
    g->lds = up((size_t)Sk ? (size_t)Sk : 1, 16);
    size_t tq = SCORE_BUDGET / g->lds;
    tq = tq > TQ_MAX ? TQ_MAX : tq < TQ_MIN ? TQ_MIN : tq;
    g->tq = tq / g->mr * g->mr;   /* whole microkernel row tiles */
    g->kp = up(up((size_t)Sk, g->nr) * (size_t)D, 16);
    g->vp = up(up((size_t)Dv, g->nr) * (size_t)Sk, 16);
    g->s = g->tq * g->lds;
    g->mrow = g->lds;
    g->slot_bytes = sizeof(float) * (g->kp + g->vp + g->s + g->mrow);
}

/* The problem in the head layout's terms, whichever layout the node uses. */
typedef struct attn_dims {
    int64_t B, H, Hkv, Sq, Sk, D, Dv;
    int bshd;
} attn_dims;

static int is_bshd(const pg_node *n)
{
    return !strcmp(pg_ir_attr_string(n, "qkv_layout", "bhsd"), "bshd");
}

/* Grouped-query attention: K and V have Hkv heads dividing H; query head
 * h reads K/V head h / (H / Hkv). */
static void dims_of(const pg_node *n, const pg_tensor *q, const pg_tensor *k, const pg_tensor *v,
                    attn_dims *d)
{
    d->bshd = is_bshd(n);
    d->B = q->shape[0];
    if (d->bshd) {
        int64_t H = pg_ir_attr_int(n, "num_heads", 1);
        d->H = H > 0 ? H : 1;
        d->Sq = q->shape[1];
        d->D = q->shape[2] / d->H;
        d->Hkv = d->D > 0 ? k->shape[2] / d->D : d->H;
        if (d->Hkv <= 0)
            d->Hkv = d->H;
        d->Sk = v->shape[1];
        d->Dv = v->shape[2] / d->Hkv;
    } else {
        d->H = q->shape[1];
        d->Hkv = k->shape[1] > 0 ? k->shape[1] : d->H;
        d->Sq = q->shape[2];
        d->D = q->shape[3];
        d->Sk = v->shape[2];
        d->Dv = v->shape[3];
    }
}

/* The tile kernel and the softmax: one choice, which the tile geometry and
 * the scratch below both follow. */
pg_status pg_bind_attention(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                            pg_binding *b)
{
    (void)n; (void)in; (void)out;
    b->kern[0] = pg_kernel_select(&pg_kernels_sgemm);
    b->kern[1] = pg_kernel_select(&pg_kernels_softmax);
    b->kern[2] = pg_kernel_select(&pg_kernels_gemv_nk);
    b->kern[3] = pg_kernel_select(&pg_kernels_gemv);
    return PG_OK;
}

size_t pg_scratch_attention(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out,
                            int threads, const pg_binding *b)
{
    (void)out;
    attn_dims d;
    dims_of(n, in[0], in[1], in[2], &d);
    attn_geom g;
    geometry(b->kern[0]->params, d.Sk, d.D, d.Dv, &g);
    size_t slot = g.slot_bytes;
    int64_t pairs = d.B * d.H;
    size_t slots = threads > 1 ? (size_t)threads : 1;
    if ((int64_t)slots > pairs)
        slots = pairs > 0 ? (size_t)pairs : 1;
    return slots * slot + 64;
}

typedef struct attn_job {
    attn_geom g;
    pg_sgemm_ukernel_fn kern;
    pg_f32_softmax_fn softmax;
    pg_f32_gemv_nk_fn gemv_nk;    /* one query row: S = K q, NULL: the tile path */
    pg_f32_gemv_fn gemv;          /* one query row: O = P V (and S = q K^T) */
    const float *Q, *K, *V;
    const void *mask;
    float *O;
    int64_t H, group, Sq, Sk, D, Dv, mst[4];
    size_t ldq, ldk, ldv, ldo;      /* row strides (floats) */
    int bshd;
    int ktr, causal, mask_bool, nan_to_zero;
    float scale;
    char *scratch;
    atomic_size_t next;
    size_t pairs;
} attn_job;

/* The additive mask row of query row i (absolute), or NULL for none. */
static const float *mask_row(const attn_job *j, int64_t b, int64_t h, int64_t i, float *mrow)
{
    const int64_t *st = j->mst;
    int64_t base = b * st[0] + h * st[1] + i * st[2];
    if (j->mask && !j->mask_bool && st[3] == 1 && !j->causal)
        return (const float *)j->mask + base;
    if (!j->mask && !j->causal)
        return NULL;
    int64_t Sk = j->Sk;
    for (int64_t c = 0; c < Sk; c++) {
        float v = 0.0f;
        if (j->mask_bool)
            v = ((const uint8_t *)j->mask)[base + c * st[3]] ? 0.0f : -INFINITY;
        else if (j->mask)
            v = ((const float *)j->mask)[base + c * st[3]];
        mrow[c] = v;
    }
    if (j->causal) {
        /* key c is visible to query i when c <= i + (Sk - Sq) */
        int64_t last = i + (Sk - j->Sq);
        for (int64_t c = last + 1 < 0 ? 0 : last + 1; c < Sk; c++)
            mrow[c] = -INFINITY;
    }
    return mrow;
}

/* Masked-off keys at the end of a row (a causal mask, padding) whose
 * probability is exactly 0 in any case: the row's softmax can stop before
 * them.  A key is dead when its mask is <= -1e30 (finfo.min, -inf) and its
 * scaled score is finite and at most 1e29 in size, so that its
 * scale*x + mask lies below -9e29; the last live key must have a mask
 * >= -1e28 and a score of at most 1e28, so the row's maximum is above
 * -2e28.  Then every dead key sits more than 104 below the maximum, where
 * exp rounds to +0 (the kernels' and libm's alike): dropping them changes
 * neither the maximum, nor the sum, nor any output bit, and spares the
 * softmax the exp of huge negative numbers (an underflow the CPU handles
 * slowly).  Returns the number of keys to run; Sk when the tail is not
 * provably dead or the whole row is masked (its softmax is not all zeros). */
static int dead_key(const float *x, float scale, const float *mask, size_t c)
{
    return (mask[c] <= -1e30f) & (fabsf(scale * x[c]) <= 1e29f);
}

static size_t live_keys(size_t Sk, const float *x, float scale, const float *mask)
{
    /* eight keys a step while all eight are dead (branch-free inside, so
     * the compiler vectorises it: a causal row's dead tail is half the
     * row, and one key a step cost more than the softmax it spares), then
     * one at a time */
    size_t L = Sk;
    while (L >= 8) {
        int dead = 1;
        for (size_t t = 1; t <= 8; t++)
            dead &= dead_key(x, scale, mask, L - t);
        if (!dead)
            break;
        L -= 8;
    }
    while (L > 0 && dead_key(x, scale, mask, L - 1))
        L--;
    if (L == 0 || L == Sk || !(mask[L - 1] >= -1e28f) || !(fabsf(scale * x[L - 1]) <= 1e28f))
        return Sk;
    return L;
}

/* Scores row si of query row i (absolute) -> its probabilities, in place. */
static void softmax_row(const attn_job *j, int64_t b, int64_t h, int64_t i, float *si, float *mrow)
{
    size_t Sk = (size_t)j->Sk;
    const float *mk = mask_row(j, b, h, i, mrow);
    size_t L = mk ? live_keys(Sk, si, j->scale, mk) : Sk;
    j->softmax(L, si, j->scale, mk, si);
    for (size_t c = L; c < Sk; c++)
        si[c] = 0.0f;
    if (j->nan_to_zero)
        for (size_t c = 0; c < Sk; c++)   /* Where(IsNaN(P), 0, P), branch-free: vectorised */
            si[c] = si[c] == si[c] ? si[c] : 0.0f;
}

static void attend_pair(const attn_job *j, float *slot, size_t bh)
{
    const attn_geom *g = &j->g;
    size_t nr = g->nr, mr = g->mr, lds = g->lds;
    int64_t b = (int64_t)bh / j->H, h = (int64_t)bh % j->H;
    size_t Sq = (size_t)j->Sq, Sk = (size_t)j->Sk, D = (size_t)j->D, Dv = (size_t)j->Dv;
    size_t ldq = j->ldq, ldk = j->ldk, ldv = j->ldv, ldo = j->ldo;
    const float *q0, *k0, *v0;
    float *o0;
    /* the K/V head this query head reads (grouped-query attention) */
    size_t kh = (size_t)(h / j->group), hkv = (size_t)(j->H / j->group);
    if (j->bshd) {
        /* head h of batch b: columns h*D.. of batch b's rows */
        size_t bb = (size_t)b, hh = (size_t)h;
        q0 = j->Q + bb * Sq * ldq + hh * D;
        k0 = j->K + bb * Sk * ldk + kh * D;
        v0 = j->V + bb * Sk * ldv + kh * Dv;
        o0 = j->O + bb * Sq * ldo + hh * Dv;
    } else {
        size_t bkv = (size_t)b * hkv + kh;
        q0 = j->Q + bh * Sq * D;
        k0 = j->K + bkv * Sk * D;
        v0 = j->V + bkv * Sk * Dv;
        o0 = j->O + bh * Sq * Dv;
    }
    float *Kp = slot, *Vp = Kp + g->kp, *S = Vp + g->vp, *mrow = S + g->s;
    if (Sk == 0) {
        for (size_t i = 0; i < Sq; i++)
            for (size_t c = 0; c < Dv; c++)
                o0[i * ldo + c] = NAN;   /* softmax over no keys */
        return;
    }
    if (Sq == 1 && j->gemv && j->gemv_nk) {
        /* one query row: matrix-vector products on K and V in place */
        if (j->ktr)
            j->gemv(Sk, D, q0, k0, Sk, NULL, S);
        else
            j->gemv_nk(Sk, D, q0, k0, ldk, NULL, S);
        softmax_row(j, b, h, 0, S, mrow);
        j->gemv(Dv, Sk, S, v0, ldv, NULL, o0);
        return;
    }
    if (j->ktr)
        pg_sgemm_pack_panels(D, Sk, k0, Sk, nr, Kp);
    else
        pg_gemm_pack_bt(D, Sk, k0, ldk, nr, Kp);   /* K [Sk, D] is B^T of B = K^T */
    /* V [Sk, Dv] with Dv == NR and its rows contiguous already is one panel */
    const float *Vb = Vp;
    if (Dv == nr && ldv == Dv)
        Vb = v0;
    else
        pg_sgemm_pack_panels(Sk, Dv, v0, ldv, nr, Vp);
    pg_sgemm_epilogue ep = { NULL, PG_ACT_NONE, 0 };
    for (size_t i0 = 0; i0 < Sq; i0 += g->tq) {
        size_t t = Sq - i0 < g->tq ? Sq - i0 : g->tq;
        const float *qt = q0 + i0 * ldq;
        /* S[t, Sk] = Q_tile . K^T, one panel of keys at a time (its D x nr
         * slice stays in L1 while the row tiles pass over it) */
        for (size_t c = 0; c < Sk; c += nr) {
            size_t w = Sk - c < nr ? Sk - c : nr;
            const float *bp = Kp + (c / nr) * D * nr;
            for (size_t i = 0; i < t; i += mr)
                j->kern(t - i < mr ? t - i : mr, w, D, qt + i * ldq, ldq, bp, S + i * lds + c, lds, &ep);
        }
        for (size_t i = 0; i < t; i++)
            softmax_row(j, b, h, (int64_t)(i0 + i), S + i * lds, mrow);
        /* O_tile = P . V */
        for (size_t c = 0; c < Dv; c += nr) {
            size_t w = Dv - c < nr ? Dv - c : nr;
            const float *bp = Vb + (c / nr) * Sk * nr;
            for (size_t i = 0; i < t; i += mr)
                j->kern(t - i < mr ? t - i : mr, w, Sk, S + i * lds, lds, bp,
                        o0 + (i0 + i) * ldo + c, ldo, &ep);
        }
    }
}

static void attn_slot(void *ctx, size_t slot)
{
    attn_job *j = ctx;
    float *mine = (float *)(j->scratch + slot * j->g.slot_bytes);
    for (;;) {
        size_t bh = atomic_fetch_add(&j->next, 1);
        if (bh >= j->pairs)
            break;
        attend_pair(j, mine, bh);
    }
}

pg_status pg_exec_attention(pg_kctx *k)
{
    const pg_tensor *q = k->in[0], *v = k->in[2];
    const pg_tensor *mt = k->n_in > 3 ? k->in[3] : NULL;
    attn_job *j = &(attn_job){ 0 };
    j->ktr = (int)pg_ir_attr_int(k->node, "k_transposed", 0);
    j->causal = (int)pg_ir_attr_int(k->node, "causal", 0);
    j->nan_to_zero = (int)pg_ir_attr_int(k->node, "nan_to_zero", 0);
    attn_dims d;
    dims_of(k->node, q, k->in[1], v, &d);
    int64_t B = d.B;
    j->H = d.H;
    j->group = d.Hkv > 0 && d.H % d.Hkv == 0 ? d.H / d.Hkv : 1;
    j->Sq = d.Sq;
    j->D = d.D;
    j->Sk = d.Sk;
    j->Dv = d.Dv;
    j->bshd = d.bshd;
    if (d.bshd && j->ktr)
        return pg_fail(PG_ERR_INVALID_ARG, "node '%s': qkv_layout=bshd takes K as rows (k_transposed=0)",
                       k->node->name);
    /* bshd: a row holds every head; bhsd: a head's rows are contiguous */
    j->ldq = (size_t)(d.bshd ? d.H * d.D : d.D);
    j->ldk = (size_t)(d.bshd ? d.Hkv * d.D : d.D);
    j->ldv = (size_t)(d.bshd ? d.Hkv * d.Dv : d.Dv);
    j->ldo = (size_t)(d.bshd ? d.H * d.Dv : d.Dv);
    j->scale = pg_ir_attr_float(k->node, "scale", 1.0f / sqrtf((float)j->D));
    geometry(k->bind->kern[0]->params, j->Sk, j->D, j->Dv, &j->g);
    j->pairs = (size_t)(B * j->H);
    if (j->pairs == 0 || j->Sq == 0 || j->Dv == 0)
        return PG_OK;
    size_t slots = k->threads > 1 ? (size_t)k->threads : 1;
    if (slots > j->pairs)
        slots = j->pairs;
    /* 64 bytes of the scratch may go to aligning its start */
    char *base = k->scratch;
    size_t avail = k->scratch_bytes;
    size_t mis = base ? (size_t)(-(uintptr_t)base & 63) : 0;
    avail = avail > mis ? avail - mis : 0;
    if (slots * j->g.slot_bytes > avail)
        slots = avail / j->g.slot_bytes;
    if (!base || slots == 0)
        return pg_fail(PG_ERR_INTERNAL, "node '%s': attention scratch too small (%zu bytes, %zu needed)",
                       k->node->name, k->scratch_bytes, j->g.slot_bytes);
    j->scratch = base + mis;
    if (mt) {
        int64_t full[4] = { B, j->H, j->Sq, j->Sk };
        pg_broadcast_strides(mt->rank, mt->shape, 4, full, j->mst);
        j->mask = k->x[3];
        j->mask_bool = mt->dtype == PG_DTYPE_BOOL;
    }
    j->kern = k->bind->kern[0]->fn.sgemm;
    j->softmax = k->bind->kern[1]->fn.softmax;
    j->gemv_nk = k->bind->kern[2] ? k->bind->kern[2]->fn.gemv_nk : NULL;
    j->gemv = k->bind->kern[3] ? k->bind->kern[3]->fn.gemv : NULL;
    j->Q = k->x[0];
    j->K = k->x[1];
    j->V = k->x[2];
    j->O = k->y[0];
    atomic_init(&j->next, 0);
    if (slots == 1)
        attn_slot(j, 0);
    else
        pg_parallel_for(slots, attn_slot, j, (int)slots);
    return PG_OK;
}

/* ops_attention.c - FusedAttention: O = softmax(scale * Q.K^T + mask) . V per
 * (batch, head), computed a tile of TQ query rows x TK keys at a time with
 * the online softmax (running max m and sum l per row, the output rows
 * rescaled when the max grows), so the scores never exceed one TQ x TK tile
 * in the step's scratch. */
#include <math.h>
#include <string.h>

#include "../core/error.h"
#include "ops.h"

#define TQ 16
#define TK 64

size_t pg_attention_scratch_bytes(int64_t dv)
{
    return sizeof(float) * (size_t)(TQ * TK + 2 * TQ + TQ * dv) + 64;
}

pg_status pg_exec_attention(pg_kctx *k)
{
    const pg_tensor *q = k->in[0], *v = k->in[2];
    const pg_tensor *mt = k->n_in > 3 ? k->in[3] : NULL;
    int ktr = (int)pg_ir_attr_int(k->node, "k_transposed", 0);
    int causal = (int)pg_ir_attr_int(k->node, "causal", 0);
    int64_t B = q->shape[0], H = q->shape[1], Sq = q->shape[2], D = q->shape[3];
    int64_t Sk = v->shape[2], Dv = v->shape[3];
    float scale = pg_ir_attr_float(k->node, "scale", 1.0f / sqrtf((float)D));
    if (k->scratch_bytes < pg_attention_scratch_bytes(Dv))
        return pg_fail(PG_ERR_INTERNAL, "node '%s': attention scratch too small", k->node->name);
    float *S = k->scratch, *m = S + TQ * TK, *l = m + TQ, *acc = l + TQ;
    int64_t mst[4] = { 0, 0, 0, 0 };
    if (mt) {
        int64_t full[4] = { B, H, Sq, Sk };
        pg_broadcast_strides(mt->rank, mt->shape, 4, full, mst);
    }
    const float *Q = k->x[0], *K = k->x[1], *V = k->x[2];
    float *O = k->y[0];
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++) {
            const float *q0 = Q + ((b * H + h) * Sq) * D;
            const float *k0 = K + ((b * H + h) * Sk) * D;
            const float *v0 = V + ((b * H + h) * Sk) * Dv;
            float *o0 = O + ((b * H + h) * Sq) * Dv;
            for (int64_t i0 = 0; i0 < Sq; i0 += TQ) {
                int64_t tq = Sq - i0 < TQ ? Sq - i0 : TQ;
                for (int64_t i = 0; i < tq; i++) {
                    m[i] = -INFINITY;
                    l[i] = 0;
                }
                memset(acc, 0, sizeof(float) * (size_t)(tq * Dv));
                for (int64_t j0 = 0; j0 < Sk; j0 += TK) {
                    int64_t tk = Sk - j0 < TK ? Sk - j0 : TK;
                    /* scores tile: with K^T stored ([D, Sk]) a row of scores is
                     * a sum of contiguous K^T rows scaled by q[d] (vectorises);
                     * with K stored [Sk, D] each score is a dot product, split
                     * over 4 partial sums */
                    for (int64_t i = 0; i < tq; i++) {
                        const float *qi = q0 + (i0 + i) * D;
                        float *si = S + i * TK;
                        if (ktr) {
                            for (int64_t j = 0; j < tk; j++) si[j] = 0;
                            for (int64_t d = 0; d < D; d++) {
                                const float *kr = k0 + d * Sk + j0;
                                float qd = qi[d];
                                for (int64_t j = 0; j < tk; j++) si[j] += qd * kr[j];
                            }
                        } else {
                            for (int64_t j = 0; j < tk; j++) {
                                const float *kj = k0 + (j0 + j) * D;
                                float p0 = 0, p1 = 0, p2 = 0, p3 = 0;
                                int64_t d = 0;
                                for (; d + 4 <= D; d += 4) {
                                    p0 += qi[d] * kj[d];
                                    p1 += qi[d + 1] * kj[d + 1];
                                    p2 += qi[d + 2] * kj[d + 2];
                                    p3 += qi[d + 3] * kj[d + 3];
                                }
                                for (; d < D; d++) p0 += qi[d] * kj[d];
                                si[j] = (p0 + p1) + (p2 + p3);
                            }
                        }
                        for (int64_t j = 0; j < tk; j++) {
                            float sc = si[j] * scale;
                            if (mt) {
                                int64_t off = b * mst[0] + h * mst[1] + (i0 + i) * mst[2] + (j0 + j) * mst[3];
                                if (mt->dtype == PG_DTYPE_BOOL)
                                    sc = ((const uint8_t *)k->x[3])[off] ? sc : -INFINITY;
                                else
                                    sc += ((const float *)k->x[3])[off];
                            }
                            if (causal && j0 + j > i0 + i + (Sk - Sq))
                                sc = -INFINITY;
                            si[j] = sc;
                        }
                    }
                    /* online softmax update */
                    for (int64_t i = 0; i < tq; i++) {
                        float *si = S + i * TK, mx = m[i];
                        for (int64_t j = 0; j < tk; j++) mx = si[j] > mx ? si[j] : mx;
                        if (mx == -INFINITY)
                            continue;   /* every key so far masked out */
                        float corr = m[i] == -INFINITY ? 0.0f : expf(m[i] - mx), sum = 0;
                        for (int64_t j = 0; j < tk; j++) {
                            si[j] = expf(si[j] - mx);
                            sum += si[j];
                        }
                        float *ai = acc + i * Dv;
                        for (int64_t d = 0; d < Dv; d++) ai[d] *= corr;
                        for (int64_t j = 0; j < tk; j++) {
                            const float *vj = v0 + (j0 + j) * Dv;
                            float p = si[j];
                            for (int64_t d = 0; d < Dv; d++) ai[d] += p * vj[d];
                        }
                        l[i] = l[i] * corr + sum;
                        m[i] = mx;
                    }
                }
                for (int64_t i = 0; i < tq; i++) {
                    float r = l[i] > 0 ? 1.0f / l[i] : NAN;
                    for (int64_t d = 0; d < Dv; d++) o0[(i0 + i) * Dv + d] = acc[i * Dv + d] * r;
                }
            }
        }
    return PG_OK;
}

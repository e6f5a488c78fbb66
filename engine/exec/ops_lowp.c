/* ops_lowp.c - the products of a compile(precision="bf16" | "int8-dynamic")
 * model: A (fp32, any rank, rows of K) converted once per run at the
 * product's input - rounded to bf16, or quantised to u8 per row (its own
 * scale and zero point, quantize_u8; to [0, 127] where the int8 kernel
 * needs it for the weights' range, pg_u8s8_act_qmax) - into the step's scratch, then the
 * packed-weight GEMM over all rows (the weight is 2-D: every batch shares
 * it).  Outputs stay fp32: bias and ReLU / GELU in the bf16 kernel's
 * epilogue; bias in the int8 kernel's dequantising epilogue and the
 * activation after it, while the rows are in cache.  QKVMatMul converts A
 * once for its three outputs. */
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../kernels/gemm_bf16/gemm_bf16.h"
#include "../kernels/gemm_u8s8/gemm_u8s8.h"
#include "lowp.h"

int pg_lowp_layout(const pg_tensor *w)
{
    return w && (w->layout == PG_LAYOUT_PACKED_BF16 || w->layout == PG_LAYOUT_PACKED_U8S8);
}

static const pg_kernel_family *act_family(pg_act_kind act, int bf16)
{
    switch (act) {
    case PG_ACTK_GELU: return bf16 ? NULL : pg_kernel_family_by_name("gelu_erf");
    case PG_ACTK_GELU_TANH: return pg_kernel_family_by_name("gelu_tanh");
    case PG_ACTK_SIGMOID: return pg_kernel_family_by_name("sigmoid");
    case PG_ACTK_TANH: return pg_kernel_family_by_name("tanh");
    case PG_ACTK_SILU: return pg_kernel_family_by_name("silu");
    default: return NULL;
    }
}

pg_status pg_lowp_bind(const pg_node *n, const pg_tensor *const *in, pg_binding *b)
{
    int bf16 = in[1]->layout == PG_LAYOUT_PACKED_BF16;
    if (bf16)
        b->kern[0] = pg_kernel_select(&pg_kernels_gemm_bf16);
    else {
        /* the best kernel, with activations narrowed to [0, 127] where it needs
         * that for these weights (pass_lowp: the vpmaddubsw kernel), or one
         * exact for both at 8 bits */
        pg_u8s8_packed pk = { .w_max = 128 };
        if (in[1]->data)
            pg_u8s8_view(in[1]->data, (size_t)in[1]->shape[0], (size_t)in[1]->shape[1], 0, &pk);
        int a_max = pg_u8s8_act_qmax(pg_kernel_select(&pg_kernels_gemm_u8s8), pk.w_max);
        b->kern[0] = pg_u8s8_select(a_max, pk.w_max);
    }
    b->kern[2] = pg_kernel_select(bf16 ? &pg_kernels_cvt_bf16 : &pg_kernels_quantize_u8);
    if (!b->kern[0] || !b->kern[2])
        return pg_fail(PG_ERR_INTERNAL, "node '%s': no %s kernel", n->name, bf16 ? "bf16" : "int8");
    pg_act_kind act = pg_act_from_name(pg_ir_attr_string(n, "activation", "none"));
    if (act == PG_ACTK_INVALID)
        return pg_fail(PG_ERR_INVALID_ARG, "node '%s': unknown activation '%s'", n->name,
                       pg_ir_attr_string(n, "activation", ""));
    const pg_kernel_family *f = act_family(act, bf16);
    b->kern[1] = f ? pg_kernel_select(f) : NULL;
    return PG_OK;
}

static size_t rows_of(const pg_tensor *a, size_t K)
{
    int64_t n = pg_tensor_numel(a);
    return K && n > 0 ? (size_t)n / K : 0;
}

size_t pg_lowp_scratch(const pg_node *n, const pg_tensor *const *in)
{
    (void)n;
    size_t K = (size_t)in[1]->shape[0], M = rows_of(in[0], K);
    if (in[1]->layout == PG_LAYOUT_PACKED_BF16) {
        size_t kp = pg_bf16_kp(K);
        return pg_align_up(M * kp * 2) + 64;
    }
    size_t kp = (K + 3) & ~(size_t)3;
    return pg_align_up(M * kp) + 3 * pg_align_up(M * 4) + 64;
}

pg_status pg_lowp_matmul(pg_kctx *k, const float *bias, pg_act_kind act)
{
    const pg_tensor *a = k->in[0], *w = k->in[1];
    size_t K = (size_t)w->shape[0], Ntot = (size_t)w->shape[1], M = rows_of(a, K);
    int nout = k->node->op == PG_OP_QKV_MATMUL ? 3 : 1;
    const float *A = k->x[0];
    int bf16 = w->layout == PG_LAYOUT_PACKED_BF16;
    if (k->scratch_bytes < pg_lowp_scratch(k->node, k->in))
        return pg_fail(PG_ERR_INTERNAL, "node '%s': scratch of %zu bytes, %zu needed",
                       k->node->name, k->scratch_bytes, pg_lowp_scratch(k->node, k->in));
    if (M == 0)
        return PG_OK;
    const pg_variant *gemm = k->bind->kern[0], *conv = k->bind->kern[2];
    if (bf16) {
        size_t kp = pg_bf16_kp(K);
        uint16_t *Ab = k->scratch;
        pg_bf16_convert_rows(conv, M, K, A, K, Ab, kp);
        int kact = act == PG_ACTK_RELU ? PG_ACT_RELU : act == PG_ACTK_GELU ? PG_ACT_GELU : PG_ACT_NONE;
        size_t c0 = 0;
        for (int o = 0; o < nout; o++) {
            size_t n = nout == 1 ? Ntot : (size_t)k->out[o]->shape[k->out[o]->rank - 1];
            float *C = k->y[o];
            pg_status st = pg_bf16_gemm_packed(gemm, M, n, K, Ab, kp, w->data, c0,
                                               bias ? bias + c0 : NULL, kact, C, n, k->threads);
            if (st)
                return st;
            if (act != PG_ACTK_NONE && kact == PG_ACT_NONE)
                for (size_t i = 0; i < M; i++)
                    pg_apply_act(k->bind->kern[1], act, C + i * n, n);
            c0 += n;
        }
        return PG_OK;
    }
    size_t kp = (K + 3) & ~(size_t)3;
    uint8_t *Aq = k->scratch;
    float *scale = (float *)((char *)k->scratch + pg_align_up(M * kp));
    int32_t *zero = (int32_t *)((char *)scale + pg_align_up(M * 4));
    pg_u8s8_packed pk;
    pg_u8s8_view(w->data, K, Ntot, 0, &pk);
    int a_max = pg_u8s8_act_qmax(gemm, pk.w_max);
    pg_u8s8_quantize_rows(conv, M, K, A, K, Aq, kp, scale, zero, NULL, a_max);
    size_t c0 = 0;
    for (int o = 0; o < nout; o++) {
        size_t n = nout == 1 ? Ntot : (size_t)k->out[o]->shape[k->out[o]->rank - 1];
        float *C = k->y[o];
        pg_u8s8_epilogue ep = { .a_zero = zero, .a_scale = scale, .bias = bias ? bias + c0 : NULL,
                                .out_inv_scale = 1.0f, .out_mode = PG_U8S8_OUT_F32,
                                .a_max = a_max };
        /* a bound activation kernel runs on each tile while it is in cache */
        const pg_variant *ak = act != PG_ACTK_NONE ? k->bind->kern[1] : NULL;
        pg_status st = pg_u8s8_gemm_packed_act(gemm, M, n, Aq, kp, &pk, c0, &ep, C, n, ak, k->threads);
        if (st)
            return st;
        if (act != PG_ACTK_NONE && !ak)
            for (size_t i = 0; i < M; i++)
                pg_apply_act(NULL, act, C + i * n, n);
        c0 += n;
    }
    return PG_OK;
}

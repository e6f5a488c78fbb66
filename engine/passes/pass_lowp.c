/* pass_lowp.c - compile(precision="bf16" | "int8-dynamic"): constant
 * MatMul weights re-laid once into the low-precision GEMM's packed format.
 *
 * Runs just before weight_prepack, at level 3, only when the graph was
 * compiled with a precision other than fp32 (pg_compile_options.precision,
 * copied into g->precision).  A weight qualifies by weight_prepack's rules
 * (a 2-D float32 constant read only as B of MatMul / FusedMatMul /
 * QKVMatMul with alpha 1, QKV splits on panel boundaries) and becomes
 *   bf16:  PG_LAYOUT_PACKED_BF16, gemm_bf16's panels (pg_bf16_pack_f32);
 *   int8:  PG_LAYOUT_PACKED_U8S8, per-column symmetric s8 with its column
 *          sums and scales (pg_u8s8_pack_f32), in [-127, 127], or [-64, 64]
 *          where the best kernel is AVX2's vpmaddubsw one (avx2_maddubs,
 *          about 1.35x the exact kernel's speed), which is exact for 8-bit
 *          activations only there; a weight that rounds badly to it keeps
 *          8 bits, and its product's activations get 7 (ops_lowp.c).
 * Both formats are the same for every variant of their family, so a mask
 * change never re-packs them.  The products then convert their fp32
 * activations at their input (bf16 rounding, or per-row u8 quantisation)
 * and keep fp32 outputs (ops_lowp.c); the rest of the graph (LayerNorm,
 * softmax, FusedAttention) stays fp32.
 *
 * Where the CPU mask allows no assembly variant of the family (only its C
 * reference), the weights stay fp32 and weight_prepack packs them for
 * SGEMM: the fallback is the fp32 path, and CompiledModel.kernels shows it. */
#include <string.h>

#include "../core/alloc.h"
#include "../kernels/gemm_bf16/gemm_bf16.h"
#include "../kernels/gemm_u8s8/gemm_u8s8.h"
#include "match.h"
#include "pass.h"

static int is_product(pg_opcode op)
{
    return op == PG_OP_MATMUL || op == PG_OP_FUSED_MATMUL || op == PG_OP_QKV_MATMUL;
}

static int packable(const pg_graph *g, int w)
{
    const pg_tensor *t = g->tensors[w];
    if (!pm_const_f32(g, w) || t->rank != 2 || pg_ir_is_output(g, w) || t->shape[0] < 1 ||
        t->shape[1] < 1)
        return 0;
    PG_IR_FOR_NODES(g, n) {
        for (int i = 0; i < n->n_inputs; i++) {
            if (n->inputs[i] != w)
                continue;
            if (i != 1 || !is_product(n->op))
                return 0;
            const pg_tensor *a = pm_tensor(g, n->inputs[0]);
            if (!a || a->dtype != PG_DTYPE_FLOAT32 || a->rank < 1)
                return 0;
            if (pg_ir_attr_float(n, "alpha", 1.0f) != 1.0f)
                return 0;
            if (n->op == PG_OP_QKV_MATMUL) {
                int ns = 0;
                const int64_t *sp = pg_ir_attr_ints(n, "splits", &ns);
                if (ns != 3 || sp[0] % 32 || sp[1] % 32)
                    return 0;
            }
        }
    }
    return 1;
}

/* The range of one weight: the best kernel's (qmax), unless it is the
 * narrow one and rounding to it loses more than W_NARROW_MAX of the weight
 * (heavy-tailed weights: MiniLM's FFN outputs lose 3% at [-64, 64], its
 * other weights 1.5%, at [-127, 127] half that); those keep 8 bits, and
 * the product narrows its activations instead (ops_lowp.c).  Measured on
 * MiniLM (cosine to fp32 over the test's sentences, the worst one): all
 * weights at [-64, 64] 0.99482; those over 2% at 8 bits on the exact
 * vpmaddwd kernel 0.99608, on the vpmaddubsw one with 7-bit activations
 * 0.99555 and 10% faster. */
#define W_NARROW_MAX 0.02
static int weight_qmax(size_t K, size_t N, const float *w, int qmax)
{
    if (qmax >= 127 || pg_u8s8_rounding_error(K, N, w, N, qmax) <= W_NARROW_MAX)
        return qmax;
    return 127;
}

static pg_status run_lowp(pg_graph *g, pg_pass_ctx *c)
{
    int prec = g->precision;
    if (prec != PG_PRECISION_BF16 && prec != PG_PRECISION_INT8_DYNAMIC)
        return PG_OK;
    const pg_kernel_family *fam = prec == PG_PRECISION_BF16 ? &pg_kernels_gemm_bf16
                                                            : &pg_kernels_gemm_u8s8;
    const pg_variant *v = pg_kernel_select(fam);
    if (!v || v == &fam->variants[fam->count - 1])
        return PG_OK;   /* only the C reference here: the fp32 path is faster */
    int qmax = prec == PG_PRECISION_INT8_DYNAMIC ? pg_u8s8_weight_qmax() : 0;
    PG_IR_FOR_NODES(g, n) {
        if (!is_product(n->op) || n->n_inputs < 2 || n->inputs[1] < 0)
            continue;
        int w = n->inputs[1];
        pg_tensor *t = g->tensors[w];
        if (t->layout != PG_LAYOUT_ROW_MAJOR || !packable(g, w))
            continue;
        size_t K = (size_t)t->shape[0], N = (size_t)t->shape[1];
        size_t bytes = prec == PG_PRECISION_BF16 ? pg_bf16_packed_bytes(K, N)
                                                 : pg_u8s8_packed_bytes(K, N, 0);
        void *dst = pg_malloc(bytes);
        if (!dst)
            return pg_fail(PG_ERR_NOMEM, "out of memory packing weight '%s'", t->name);
        if (prec == PG_PRECISION_BF16)
            pg_bf16_pack_f32(K, N, t->data, N, dst);
        else
            pg_u8s8_pack_f32(K, N, t->data, N, weight_qmax(K, N, t->data, qmax), dst);
        pg_ir_set_const_data(t, dst, bytes);
        t->layout = prec == PG_PRECISION_BF16 ? PG_LAYOUT_PACKED_BF16 : PG_LAYOUT_PACKED_U8S8;
        t->pack_nr = 32;
        PG_IR_FOR_NODES(g, r)
            for (int i = 0; i < r->n_inputs; i++)
                if (r->inputs[i] == w) {
                    pg_pass_note(c, g, PG_PASS_REWRITTEN, r->id, 0,
                                 "weight '%s' [%zu x %zu] packed as %s for %s", t->name, K, N,
                                 prec == PG_PRECISION_BF16 ? "bf16 pairs"
                                                           : "int8 (per-column scales)",
                                 v->name);
                    break;
                }
    }
    return PG_OK;
}

const pg_pass_def pg_pass_lowp_prepack = {
    "lowp_prepack", 3,
    "with precision bf16 / int8-dynamic: constant MatMul weights packed once for the bf16 or "
    "int8 GEMM kernels",
    run_lowp,
};

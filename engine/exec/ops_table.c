/* ops_table.c - which executor runs an op, which ops are views, which may
 * run in place, and how much scratch an op needs. */
#include "../core/alloc.h"
#include "gemm.h"
#include "ops.h"

size_t pg_attention_scratch_bytes(const pg_node *n, const pg_tensor *q, const pg_tensor *v, int threads);

pg_exec_fn pg_exec_lookup(pg_opcode op)
{
    switch (op) {
    case PG_OP_ADD: case PG_OP_SUB: case PG_OP_MUL: case PG_OP_DIV: case PG_OP_POW:
    case PG_OP_EQUAL: case PG_OP_LESS: case PG_OP_GREATER: case PG_OP_AND: case PG_OP_OR:
        return pg_exec_binary;
    case PG_OP_WHERE: return pg_exec_where;
    case PG_OP_SQRT: case PG_OP_RECIPROCAL: case PG_OP_ERF: case PG_OP_TANH: case PG_OP_RELU:
    case PG_OP_GELU: case PG_OP_SIGMOID: case PG_OP_SILU: case PG_OP_NEG: case PG_OP_EXP:
    case PG_OP_LOG: case PG_OP_ABS: case PG_OP_NOT: case PG_OP_CAST:
        return pg_exec_unary;
    case PG_OP_IDENTITY: case PG_OP_RESHAPE: case PG_OP_FLATTEN: case PG_OP_SQUEEZE:
    case PG_OP_UNSQUEEZE:
        return pg_exec_copy;
    case PG_OP_SOFTMAX: return pg_exec_softmax;
    case PG_OP_LAYERNORM: return pg_exec_layernorm;
    case PG_OP_RMSNORM: return pg_exec_rmsnorm;
    case PG_OP_REDUCEMEAN: case PG_OP_REDUCESUM: return pg_exec_reduce;
    case PG_OP_MATMUL: case PG_OP_GEMM: case PG_OP_FUSED_MATMUL: case PG_OP_QKV_MATMUL:
        return pg_exec_matmul;
    case PG_OP_FUSED_ATTENTION: return pg_exec_attention;
    case PG_OP_TRANSPOSE: return pg_exec_transpose;
    case PG_OP_CONCAT: return pg_exec_concat;
    case PG_OP_SPLIT: return pg_exec_split;
    case PG_OP_SLICE: return pg_exec_slice;
    case PG_OP_GATHER: return pg_exec_gather;
    case PG_OP_EXPAND: return pg_exec_expand;
    case PG_OP_SHAPE: return pg_exec_shape;
    case PG_OP_CONSTANT: return pg_exec_constant;
    case PG_OP_CONSTANTOFSHAPE: return pg_exec_constant_of_shape;
    default: return NULL;
    }
}

int pg_exec_is_view(pg_opcode op)
{
    return op == PG_OP_RESHAPE || op == PG_OP_FLATTEN || op == PG_OP_SQUEEZE ||
           op == PG_OP_UNSQUEEZE || op == PG_OP_IDENTITY;
}

unsigned pg_exec_inplace_mask(const pg_node *n, const pg_tensor *const *in, const pg_tensor *out)
{
    unsigned mask = 0;
    switch (n->op) {
    case PG_OP_ADD: case PG_OP_SUB: case PG_OP_MUL: case PG_OP_DIV: case PG_OP_POW:
    case PG_OP_WHERE:
    case PG_OP_SQRT: case PG_OP_RECIPROCAL: case PG_OP_ERF: case PG_OP_TANH: case PG_OP_RELU:
    case PG_OP_GELU: case PG_OP_SIGMOID: case PG_OP_SILU: case PG_OP_NEG: case PG_OP_EXP:
    case PG_OP_LOG: case PG_OP_ABS: case PG_OP_NOT:
    case PG_OP_SOFTMAX: case PG_OP_LAYERNORM: case PG_OP_RMSNORM:
        break;
    default:
        return 0;
    }
    for (int i = 0; i < n->n_inputs && i < 8; i++) {
        const pg_tensor *t = in[i];
        if (!t || t->dtype != out->dtype || t->rank != out->rank)
            continue;
        int same = 1;
        for (int d = 0; d < t->rank; d++)
            same &= t->shape[d] == out->shape[d];
        /* a normalisation may overwrite only its data input */
        if (same && (i == 0 || n->op == PG_OP_ADD || n->op == PG_OP_SUB || n->op == PG_OP_MUL ||
                     n->op == PG_OP_DIV || n->op == PG_OP_POW || n->op == PG_OP_WHERE))
            mask |= 1u << i;
    }
    return mask;
}

size_t pg_exec_scratch_bytes(const pg_node *n, const pg_tensor *const *in, const pg_tensor *const *out)
{
    return pg_exec_scratch_bytes_threads(n, in, out, 1);
}

size_t pg_exec_scratch_bytes_threads(const pg_node *n, const pg_tensor *const *in,
                                     const pg_tensor *const *out, int threads)
{
    switch (n->op) {
    case PG_OP_FUSED_ATTENTION:
        return pg_attention_scratch_bytes(n, in[0], in[2], threads);
    case PG_OP_GEMM: {
        size_t s = 0;
        if (pg_ir_attr_int(n, "transA", 0))
            s = (size_t)pg_tensor_numel(in[0]) * sizeof(float) + 64;
        size_t K = (size_t)in[0]->shape[pg_ir_attr_int(n, "transA", 0) ? 0 : 1];
        if (in[1]->layout != PG_LAYOUT_PACKED)   /* B (or B^T) packed per run */
            s = pg_align_up(s) + pg_gemm_scratch_bytes(K, (size_t)out[0]->shape[1]);
        return s;
    }
    case PG_OP_MATMUL: case PG_OP_FUSED_MATMUL: case PG_OP_QKV_MATMUL: {
        const pg_tensor *b = in[1];
        if (b->layout == PG_LAYOUT_PACKED || b->rank < 2)
            return 0;
        return pg_gemm_scratch_bytes((size_t)b->shape[b->rank - 2], (size_t)b->shape[b->rank - 1]);
    }
    default:
        return 0;
    }
}

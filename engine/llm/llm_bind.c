/* llm_bind.c - the decoder's kernels, chosen once: at load, and again by
 * pg_llm_rebind after a CPU-mask change.  No step selects a variant while
 * it runs, so a mask change reaches a loaded model only through a rebind
 * (pg_llm_is_stale says when one is due). */
#include <string.h>

#include "../core/cpu.h"
#include "../core/error.h"
#include "../kernels/attn_ggml/attn_ggml.h"
#include "../kernels/cvt_f16/cvt_f16.h"
#include "../kernels/kquant/kquant.h"
#include "../kernels/qdot/qdot.h"
#include "../kernels/qgemm/qgemm.h"
#include "../kernels/qgemv/qgemv.h"
#include "../kernels/gelu_tanh/gelu_tanh.h"
#include "../kernels/rope_ggml/rope_ggml.h"
#include "../kernels/round_f16/round_f16.h"
#include "../kernels/silu/silu.h"
#include "../kernels/softmax/softmax.h"
#include "../kernels/tanh/tanh.h"
#include "../kernels/vadd/vadd.h"
#include "../kernels/vmul/vmul.h"
#include "llm.h"

/* The families the decoder runs, by role (llm_kernel_role). */
static const pg_kernel_family *family_of(int role)
{
    switch (role) {
    case LLM_K_QUANTIZE_Q8_0: return &pg_kernels_quantize_q8_0;
    case LLM_K_QUANTIZE_Q8_1: return &pg_kernels_quantize_q8_1;
    case LLM_K_SILU: return &pg_kernels_silu;
    case LLM_K_VADD: return &pg_kernels_vadd;
    case LLM_K_VMUL: return &pg_kernels_vmul;
    case LLM_K_SOFTMAX: return &pg_kernels_softmax;
    case LLM_K_QGEMV_Q4_0: return &pg_kernels_qgemv_q4_0;
    case LLM_K_QGEMV_Q4_1: return &pg_kernels_qgemv_q4_1;
    case LLM_K_QGEMV_Q8_0: return &pg_kernels_qgemv_q8_0;
    case LLM_K_QGEMM_Q4_0: return &pg_kernels_qgemm_q4_0;
    case LLM_K_QGEMM_Q4_1: return &pg_kernels_qgemm_q4_1;
    case LLM_K_QGEMM_Q8_0: return &pg_kernels_qgemm_q8_0;
    case LLM_K_QUANTIZE_Q8_K: return &pg_kernels_quantize_q8_K;
    case LLM_K_QGEMV_Q4_K: return &pg_kernels_qgemv_q4_K;
    case LLM_K_QGEMV_Q5_K: return &pg_kernels_qgemv_q5_K;
    case LLM_K_QGEMV_Q6_K: return &pg_kernels_qgemv_q6_K;
    case LLM_K_QGEMV_F16: return &pg_kernels_qgemv_f16;
    case LLM_K_QGEMV_BF16: return &pg_kernels_qgemv_bf16;
    case LLM_K_QGEMV_F32: return &pg_kernels_qgemv_f32;
    case LLM_K_QGEMM_Q4_K: return &pg_kernels_qgemm_q4_K;
    case LLM_K_QGEMM_Q5_K: return &pg_kernels_qgemm_q5_K;
    case LLM_K_QGEMM_Q6_K: return &pg_kernels_qgemm_q6_K;
    case LLM_K_QGEMM_F16: return &pg_kernels_qgemm_f16;
    case LLM_K_QGEMM_BF16: return &pg_kernels_qgemm_bf16;
    case LLM_K_QGEMM_F32: return &pg_kernels_qgemm_f32;
    case LLM_K_CVT_F32_F16: return &pg_kernels_cvt_f32_f16;
    case LLM_K_CVT_F16_F32: return &pg_kernels_cvt_f16_f32;
    case LLM_K_GELU_TANH: return &pg_kernels_gelu_tanh;
    case LLM_K_TANH: return &pg_kernels_tanh;
    case LLM_K_ATTN_KQ: return &pg_kernels_attn_kq_ggml;
    case LLM_K_ATTN_PV: return &pg_kernels_attn_pv_ggml;
    case LLM_K_ROPE: return &pg_kernels_rope_ggml;
    case LLM_K_ROUND_F16: return &pg_kernels_round_f16;
    default: return NULL;
    }
}

void llm_bind(pg_llm *m)
{
    for (int r = 0; r < LLM_K_COUNT; r++)
        m->kern[r] = pg_kernel_select(family_of(r));
    m->bound_flags = pg_cpu_active_flags();
}

int llm_gemv_role(int wtype)
{
    switch (wtype) {
    case PG_GGML_Q4_0: return LLM_K_QGEMV_Q4_0;
    case PG_GGML_Q4_1: return LLM_K_QGEMV_Q4_1;
    case PG_GGML_Q4_K: return LLM_K_QGEMV_Q4_K;
    case PG_GGML_Q5_K: return LLM_K_QGEMV_Q5_K;
    case PG_GGML_Q6_K: return LLM_K_QGEMV_Q6_K;
    case PG_GGML_F16: return LLM_K_QGEMV_F16;
    case PG_GGML_BF16: return LLM_K_QGEMV_BF16;
    case PG_GGML_F32: return LLM_K_QGEMV_F32;
    default: return LLM_K_QGEMV_Q8_0;
    }
}

int llm_gemm_role(int wtype)
{
    return llm_gemv_role(wtype) - LLM_K_QGEMV_Q4_0 < 3
               ? llm_gemv_role(wtype) - LLM_K_QGEMV_Q4_0 + LLM_K_QGEMM_Q4_0
               : llm_gemv_role(wtype) - LLM_K_QGEMV_Q4_K + LLM_K_QGEMM_Q4_K;
}

pg_status pg_llm_rebind(pg_llm *m)
{
    pg_clear_error();
    if (!m)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_llm_rebind: NULL model");
    llm_bind(m);
    return llm_graph_rebind(m);
}

int pg_llm_is_stale(const pg_llm *m)
{
    return m && m->bound_flags != pg_cpu_active_flags();
}

const char *pg_llm_bound_kernel(const pg_llm *m, const char *family)
{
    if (!m || !family) {
        pg_fail(PG_ERR_INVALID_ARG, "pg_llm_bound_kernel: NULL argument");
        return NULL;
    }
    for (int r = 0; r < LLM_K_COUNT; r++)
        if (!strcmp(family_of(r)->name, family))
            return m->kern[r]->name;
    pg_fail(PG_ERR_INVALID_ARG, "the decoder runs no kernel of family '%s'", family);
    return NULL;
}

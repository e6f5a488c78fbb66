/* registry.c - the list of every op with a variant table.  An op's own
 * directory defines its table; this file only lists them in a fixed order. */
#include "variant.h"
#include "vadd/vadd.h"
#include "gemv/gemv.h"
#include "gemv_nk/gemv_nk.h"
#include "gemv_panels/gemv_panels.h"
#include "vmul/vmul.h"
#include "sgemm/sgemm.h"
#include "vexp/vexp.h"
#include "sigmoid/sigmoid.h"
#include "silu/silu.h"
#include "tanh/tanh.h"
#include "gelu_erf/gelu_erf.h"
#include "gelu_tanh/gelu_tanh.h"
#include "softmax/softmax.h"
#include "layernorm/layernorm.h"
#include "rmsnorm/rmsnorm.h"
#include "rmsnorm_ggml/rmsnorm_ggml.h"
#include "attn_ggml/attn_ggml.h"
#include "rope_ggml/rope_ggml.h"
#include "round_f16/round_f16.h"
#include "qdot/qdot.h"
#include "qgemv/qgemv.h"
#include "qgemm/qgemm.h"
#include "kquant/kquant.h"
#include "cvt_f16/cvt_f16.h"
#include "gemm_u8s8/gemm_u8s8.h"
#include "gemm_bf16/gemm_bf16.h"
#include "dwconv/dwconv.h"
#include "transpose/transpose.h"
#include "winograd/winograd.h"
#include "conv_nchwc/conv_nchwc.h"

static const pg_kernel_family *const all_ops[] = {
    &pg_kernels_vadd,
    &pg_kernels_gemv,
    &pg_kernels_gemv_nk,
    &pg_kernels_gemv_panels,
    &pg_kernels_vmul,
    &pg_kernels_sgemm,
    &pg_kernels_vexp,
    &pg_kernels_sigmoid,
    &pg_kernels_silu,
    &pg_kernels_tanh,
    &pg_kernels_gelu_erf,
    &pg_kernels_gelu_tanh,
    &pg_kernels_softmax,
    &pg_kernels_layernorm,
    &pg_kernels_rmsnorm,
    &pg_kernels_rmsnorm_ggml,
    &pg_kernels_attn_kq_ggml,
    &pg_kernels_attn_pv_ggml,
    &pg_kernels_rope_ggml,
    &pg_kernels_round_f16,
    &pg_kernels_quantize_q8_0,
    &pg_kernels_quantize_q8_1,
    &pg_kernels_qdot_q8_0_q8_0,
    &pg_kernels_qdot_q4_1_q8_1,
    &pg_kernels_qgemv_q4_0,
    &pg_kernels_qgemv_q4_1,
    &pg_kernels_qgemv_q8_0,
    &pg_kernels_qgemm_q4_0,
    &pg_kernels_qgemm_q4_1,
    &pg_kernels_qgemm_q8_0,
    &pg_kernels_quantize_q8_K,
    &pg_kernels_qgemv_q4_K,
    &pg_kernels_qgemv_q5_K,
    &pg_kernels_qgemv_q6_K,
    &pg_kernels_qgemv_f16,
    &pg_kernels_qgemv_bf16,
    &pg_kernels_qgemm_q4_K,
    &pg_kernels_qgemm_q5_K,
    &pg_kernels_qgemm_q6_K,
    &pg_kernels_qgemm_f16,
    &pg_kernels_qgemm_bf16,
    &pg_kernels_qgemv_f32,
    &pg_kernels_qgemm_f32,
    &pg_kernels_cvt_f32_f16,
    &pg_kernels_cvt_f16_f32,
    &pg_kernels_gemm_u8s8,
    &pg_kernels_quantize_u8,
    &pg_kernels_gemm_bf16,
    &pg_kernels_cvt_bf16,
    &pg_kernels_quantize_u8_span,
    &pg_kernels_minmax_keys,
    &pg_kernels_dwconv3x3,
    &pg_kernels_dwconv5x5,
    &pg_kernels_dwconv7x7,
    &pg_kernels_transpose,
    &pg_kernels_conv_nchwc,
    &pg_kernels_wino_in_f23,
    &pg_kernels_wino_out_f23,
};

const pg_kernel_family *const *pg_kernel_families_all(int *count)
{
    *count = PG_COUNTOF(all_ops);
    return all_ops;
}

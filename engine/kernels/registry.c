/* registry.c - the list of every op with a variant table.  An op's own
 * directory defines its table; this file only lists them in a fixed order. */
#include "variant.h"
#include "vadd/vadd.h"
#include "gemv/gemv.h"
#include "gemv_nk/gemv_nk.h"
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
#include "qdot/qdot.h"
#include "qgemv/qgemv.h"
#include "qgemm/qgemm.h"

static const pg_op *const all_ops[] = {
    &pg_op_vadd,
    &pg_op_gemv,
    &pg_op_gemv_nk,
    &pg_op_vmul,
    &pg_op_sgemm,
    &pg_op_vexp,
    &pg_op_sigmoid,
    &pg_op_silu,
    &pg_op_tanh,
    &pg_op_gelu_erf,
    &pg_op_gelu_tanh,
    &pg_op_softmax,
    &pg_op_layernorm,
    &pg_op_rmsnorm,
    &pg_op_quantize_q8_0,
    &pg_op_quantize_q8_1,
    &pg_op_qdot_q8_0_q8_0,
    &pg_op_qdot_q4_1_q8_1,
    &pg_op_qgemv_q4_0,
    &pg_op_qgemv_q4_1,
    &pg_op_qgemv_q8_0,
    &pg_op_qgemm_q4_0,
    &pg_op_qgemm_q4_1,
    &pg_op_qgemm_q8_0,
};

const pg_op *const *pg_ops_all(int *count)
{
    *count = PG_COUNTOF(all_ops);
    return all_ops;
}

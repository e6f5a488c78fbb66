/* kernel_fn.h - the entry-point type of every kernel family, and the union
 * pg_variant.fn holds it in.
 *
 * One line per member in PG_KERNEL_FN_LIST: the union member's name, its
 * function-pointer typedef, the return type and the parameters.  From that
 * one list come
 *
 *   - the typedef              pg_sgemm_ukernel_fn = void (*)(size_t mr, ...)
 *   - the member               pg_kernel_fn.sgemm, of that type
 *   - the member's tag         PG_KERNEL_FN_sgemm (pg_kernel_family.fn_member)
 *   - the trampoline's view    pg_kernel_fn_sgemm_checked = void (void *, size_t mr, ...):
 *                              the same parameters after one leading pointer,
 *                              which checkasm's call_new() calls through
 *
 * so a variant table row (.fn = { .sgemm = pg_f32_gemm_6x16_avx2_fma3 }),
 * a caller (v->fn.sgemm(...)) and a check (declare_func(sgemm)) all see the
 * one prototype, and the compiler rejects any row or call that disagrees.
 *
 * Families whose kernels share a signature share a member: binary (vadd,
 * vmul), unary (vexp, sigmoid, silu, tanh, gelu_erf, gelu_tanh), quantize
 * (quantize_q8_0, quantize_q8_1), vec_dot (the qdot_*), qgemv and qgemm (one
 * family per weight type).  Each family's header keeps its own name for its
 * type where it had one (pg_f32_vadd_fn is pg_f32_binary_fn).
 *
 * A new signature is one line here (no header of a family is included, so
 * every family can include this one: variant.h does). */
#ifndef PG_KERNELS_KERNEL_FN_H
#define PG_KERNELS_KERNEL_FN_H

#include <stddef.h>
#include <stdint.h>

/* sgemm's epilogue, defined in sgemm/sgemm.h (the microkernel reads it by
 * pointer only) */
typedef struct pg_sgemm_epilogue pg_sgemm_epilogue;
/* dwconv's one argument, defined in dwconv/dwconv.h */
typedef struct pg_dwconv_args pg_dwconv_args;
/* conv_nchwc's one argument, defined in conv_nchwc/conv_nchwc.h */
typedef struct pg_conv_nchwc_args pg_conv_nchwc_args;
/* the Winograd transforms' arguments, defined in winograd/winograd.h */
typedef struct pg_wino_in_args pg_wino_in_args;
typedef struct pg_wino_out_args pg_wino_out_args;
/* gemm_u8s8's epilogue, defined in gemm_u8s8/gemm_u8s8.h */
typedef struct pg_u8s8_epilogue pg_u8s8_epilogue;

/* ENTRY_(member, typedef name, return type, parameters...) */
#define PG_KERNEL_FN_LIST(ENTRY_)                                                              \
    /* vadd, vmul: y[i] = a[i] op b[i] */                                                      \
    ENTRY_(binary, pg_f32_binary_fn, void, size_t n, const float *a, const float *b, float *y) \
    /* vexp, sigmoid, silu, tanh, gelu_erf, gelu_tanh: y[i] = f(x[i]) (unary_fn.h) */          \
    ENTRY_(unary, pg_f32_unary_fn, void, size_t n, const float *x, float *y)                   \
    /* one MR x NR tile of C (sgemm/sgemm.h) */                                                \
    ENTRY_(sgemm, pg_sgemm_ukernel_fn, void, size_t mr, size_t nr, size_t k, const float *a,   \
           size_t lda, const float *b, float *c, size_t ldc, const pg_sgemm_epilogue *ep)     \
    /* y = x . B (+ bias), B K x N (gemv/gemv.h) */                                            \
    ENTRY_(gemv, pg_f32_gemv_fn, void, size_t N, size_t K, const float *x, const float *B,     \
           size_t ldb, const float *bias, float *y)                                            \
    /* y = x . B (+ bias), B packed in SGEMM's panels (gemv_panels/gemv_panels.h) */            \
    ENTRY_(gemv_panels, pg_f32_gemv_panels_fn, void, size_t N, size_t K, const float *x,       \
           const float *b, const float *bias, float *y, size_t nr)                             \
    /* y = W . x (+ bias), W N x K (gemv_nk/gemv_nk.h) */                                      \
    ENTRY_(gemv_nk, pg_f32_gemv_nk_fn, void, size_t N, size_t K, const float *x,               \
           const float *W, size_t ldw, const float *bias, float *y)                            \
    /* one row of softmax(scale * x + mask) (softmax/softmax.h) */                             \
    ENTRY_(softmax, pg_f32_softmax_fn, void, size_t n, const float *x, float scale,            \
           const float *mask, float *y)                                                        \
    /* one row of layernorm (layernorm/layernorm.h) */                                         \
    ENTRY_(layernorm, pg_f32_layernorm_fn, void, size_t n, const float *x, const float *gamma, \
           const float *beta, float eps, float *y)                                             \
    /* one row of rmsnorm (rmsnorm/rmsnorm.h) */                                               \
    ENTRY_(rmsnorm, pg_f32_rmsnorm_fn, void, size_t n, const float *x, const float *gamma,     \
           float eps, float *y)                                                                \
    /* n activations -> n / 32 blocks (qdot/qdot.h); fp32 -> f16 rows (cvt_f16/cvt_f16.h) */   \
    ENTRY_(quantize, pg_quantize_row_fn, void, size_t n, const float *x, void *y)              \
    /* f16 -> fp32 rows (cvt_f16/cvt_f16.h) */                                                 \
    ENTRY_(widen, pg_widen_row_fn, void, size_t n, const void *x, float *y)                    \
    /* *s = weights w . activations a, n elements in blocks (qdot/qdot.h) */                   \
    ENTRY_(vec_dot, pg_vec_dot_fn, void, size_t n, const void *w, const void *a, float *s)     \
    /* y = W . x, W quantised rows (qgemv/qgemv.h) */                                          \
    ENTRY_(qgemv, pg_qgemv_fn, void, size_t N, size_t K, const void *W, size_t ldw,            \
           const void *x, float *y)                                                            \
    /* C = X . W^T, W and X quantised rows (qgemm/qgemm.h) */                                  \
    ENTRY_(qgemm, pg_qgemm_fn, void, size_t M, size_t N, size_t K, const void *W, size_t ldw,  \
           const void *X, size_t ldx, float *C, size_t ldc)                                    \
    /* one row of a depthwise 3x3 / 5x5 conv, NHWC (dwconv/dwconv.h) */                        \
    ENTRY_(dwconv, pg_f32_dwconv_fn, void, const pg_dwconv_args *a)                            \
    /* a block of output channels x a run of pixels, NCHWc (conv_nchwc/conv_nchwc.h) */         \
    ENTRY_(conv_nchwc, pg_f32_conv_nchwc_fn, void, const pg_conv_nchwc_args *a)                \
    /* Winograd F(2x2,3x3) transforms of one NCHW16c tile row (winograd/winograd.h) */         \
    ENTRY_(wino_in, pg_f32_wino_in_fn, void, const pg_wino_in_args *a)                         \
    ENTRY_(wino_out, pg_f32_wino_out_fn, void, const pg_wino_out_args *a)                      \
    /* one MR x NR tile of u8 x s8 -> int32, dequantised / requantised (gemm_u8s8/gemm_u8s8.h) */ \
    ENTRY_(gemm_u8s8, pg_gemm_u8s8_ukernel_fn, void, size_t mr, size_t nr, size_t k,          \
           const uint8_t *a, size_t lda, const int8_t *b, void *c, size_t ldc,                 \
           const pg_u8s8_epilogue *ep)                                                         \
    /* one row fp32 -> u8 with its own scale and zero point (gemm_u8s8/gemm_u8s8.h) */         \
    ENTRY_(quant_u8, pg_quant_u8_row_fn, void, size_t n, const float *x, uint8_t *y,           \
           float *scale, int32_t *zero, int qmax)                                              \
    /* one MR x NR tile of bf16 x bf16 -> fp32 (gemm_bf16/gemm_bf16.h) */                      \
    ENTRY_(gemm_bf16, pg_gemm_bf16_ukernel_fn, void, size_t mr, size_t nr, size_t k,          \
           const uint16_t *a, size_t lda, const uint16_t *b, float *c, size_t ldc,             \
           const pg_sgemm_epilogue *ep)                                                        \
    /* n floats -> bf16, round to nearest even (gemm_bf16/gemm_bf16.h) */                      \
    ENTRY_(cvt_bf16, pg_cvt_f32_bf16_fn, void, size_t n, const float *x, uint16_t *y)          \
    /* quantize_u8_span: y = sat_u8(rint(x / scale) + zero) (gemm_u8s8.h) */                   \
    ENTRY_(quant_u8_span, pg_quant_u8_span_fn, void, size_t n, const float *x, float scale,    \
           int32_t zero, uint8_t *y)                                                           \
    /* minmax_keys: a tensor's range as int32 keys + a non-finite flag (gemm_u8s8.h) */        \
    ENTRY_(minmax_keys, pg_minmax_keys_fn, void, size_t n, const float *x, int32_t *out)       \
    /* s[j] = q . k_j over n keys, ggml's order (attn_ggml/attn_ggml.h) */                     \
    ENTRY_(attn_kq, pg_f32_attn_kq_fn, void, size_t n, size_t hd, const float *q,              \
           const float *k, size_t ldk, float *s)                                               \
    /* out = sum_j p[j] v_j over n values, ggml's order (attn_ggml/attn_ggml.h) */             \
    ENTRY_(attn_pv, pg_f32_attn_pv_fn, void, size_t n, size_t hd, const float *p,              \
           const float *v, size_t ldv, float *acc, float *out)                                 \
    /* RoPE of rows rows of heads, ggml's normal or NeoX pairs (rope_ggml/rope_ggml.h) */      \
    ENTRY_(rope, pg_f32_rope_fn, void, size_t rows, size_t ld, size_t heads, size_t hd,        \
           size_t n_rot, int neox, const float *cos_tab, const float *sin_tab, size_t ld_cs,   \
           float *x)                                                                           \
    /* y = x (times scale unless 0) to the nearest f16, as fp32 (round_f16/round_f16.h) */     \
    ENTRY_(round_f16, pg_f32_round_f16_fn, void, size_t n, const float *x, float scale,        \
           float *y)                                                                           \
    /* dst[c * ldd + r] = src[r * lds + c], whole tiles (transpose/transpose.h) */              \
    ENTRY_(transpose, pg_f32_transpose_fn, void, size_t rows, size_t cols, const float *src,   \
           size_t lds, float *dst, size_t ldd)

#define PG_KERNEL_FN_TYPEDEFS_(member, name, ret, ...)                                         \
    typedef ret (*name)(__VA_ARGS__);                                                          \
    typedef ret pg_kernel_fn_##member##_checked(void *, __VA_ARGS__);
PG_KERNEL_FN_LIST(PG_KERNEL_FN_TYPEDEFS_)
#undef PG_KERNEL_FN_TYPEDEFS_

/* A variant's entry point: exactly one member is set, the one its family's
 * fn_member names. */
typedef union pg_kernel_fn {
#define PG_KERNEL_FN_MEMBER_(member, name, ...) name member;
    PG_KERNEL_FN_LIST(PG_KERNEL_FN_MEMBER_)
#undef PG_KERNEL_FN_MEMBER_
} pg_kernel_fn;

/* Which member a family's table sets (pg_kernel_family.fn_member). */
typedef enum pg_kernel_fn_member {
    PG_KERNEL_FN_none = 0, /* a family that forgot to say */
#define PG_KERNEL_FN_TAG_(member, ...) PG_KERNEL_FN_##member,
    PG_KERNEL_FN_LIST(PG_KERNEL_FN_TAG_)
#undef PG_KERNEL_FN_TAG_
} pg_kernel_fn_member;

#endif

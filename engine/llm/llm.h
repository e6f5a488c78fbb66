/* llm.h - the Llama-architecture decoder's insides (the public calls are in
 * peregrine.h, section "LLM").
 *
 *   llm_load.c       GGUF -> hyper-parameters, weight views, the arena plan
 *   llm_plan.c       the step list: one decoder forward as a fixed sequence
 *   llm_forward.c    runs the step list over a batch of tokens; eval API
 *   llm_matmul.c     quantised weights x activations (GEMV and GEMM forms)
 *   llm_attention.c  RoPE, the KV cache, grouped-query attention
 *   llm_graph.c      the same decoder as a Peregrine graph (pg_llm_options.graph)
 *   sampler.c        greedy / temperature / top-k / top-p / penalties
 *
 * Why a dedicated step list and not the graph compiler: the graph compiler
 * plans static shapes, while a decoder runs the same network on a growing
 * KV cache and on batches of 1 (decode) or many (prefill) tokens.  So the
 * forward pass is "compiled" once at load into a flat list of steps whose
 * buffers are fixed offsets of one arena sized for the largest batch; a run
 * walks the list with the batch size and position as its only arguments and
 * allocates nothing.
 *
 * The graph form (llm_graph.c, pg_llm_options.graph) answers the same
 * problem inside the compiler: two static shapes (1 row, max_batch rows)
 * whose ops read the run's row count and position from an input, and the
 * KV cache as the planner's persistent buffer class.  It runs the same
 * kernels in the same order (its logits are the step list's bit for bit);
 * the step list stays the default until the graph is measured as fast
 * (benchmarks/bench_llm_graph.py). */
#ifndef PG_LLM_LLM_H
#define PG_LLM_LLM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "peregrine.h"
#include "../kernels/variant.h"
#include "../kernels/kernel_fn.h"

/* The kernels the decoder is bound to (llm_bind.c), by role. */
enum llm_kernel_role {
    LLM_K_QUANTIZE_Q8_0, LLM_K_QUANTIZE_Q8_1, LLM_K_SILU, LLM_K_VADD, LLM_K_VMUL, LLM_K_SOFTMAX,
    LLM_K_QGEMV_Q4_0, LLM_K_QGEMV_Q4_1, LLM_K_QGEMV_Q8_0,
    LLM_K_QGEMM_Q4_0, LLM_K_QGEMM_Q4_1, LLM_K_QGEMM_Q8_0,
    LLM_K_QUANTIZE_Q8_K,           /* the k-quants' activations, and their and f16 / bf16's */
    LLM_K_QGEMV_Q4_K, LLM_K_QGEMV_Q5_K, LLM_K_QGEMV_Q6_K, LLM_K_QGEMV_F16, LLM_K_QGEMV_BF16,
    LLM_K_QGEMV_F32,
    LLM_K_QGEMM_Q4_K, LLM_K_QGEMM_Q5_K, LLM_K_QGEMM_Q6_K, LLM_K_QGEMM_F16, LLM_K_QGEMM_BF16,
    LLM_K_QGEMM_F32,   /* in the order of the GEMVs above (llm_gemm_role) */
    LLM_K_CVT_F32_F16, LLM_K_CVT_F16_F32,   /* the f16 KV cache's store and load */
    LLM_K_GELU_TANH, LLM_K_TANH,   /* gemma's GELU FFN, gemma2's soft-capping */
    LLM_K_ATTN_KQ, LLM_K_ATTN_PV,  /* the attention's two products, ggml's order */
    LLM_K_COUNT
};

/* A weight matrix in GGUF layout: N rows of K elements (nn.Linear), each row
 * row_bytes of quantised blocks, read in place from the mapping. */
typedef struct llm_weight {
    const uint8_t *data;
    int type;              /* pg_ggml_type: q4_1, q8_0 (others refused at load) */
    int act_type;          /* the activation blocks its dot product takes */
    size_t N, K;
    size_t row_bytes;
} llm_weight;

typedef struct llm_layer {
    const float *attn_norm, *ffn_norm;
    const float *attn_post_norm, *ffn_post_norm;  /* gemma2 (NULL: none) */
    const float *q_norm, *k_norm;                 /* qwen3: per head, head_dim wide */
    const float *bq, *bk, *bv;                    /* qwen2: Q/K/V biases (NULL: none) */
    int swa;                                      /* windowed attention in this layer */
    llm_weight wq, wk, wv, wo, gate, up, down;    /* phi3's fused qkv / gate_up: row views */
} llm_layer;

typedef enum llm_step_kind {
    LLM_EMBED,        /* token ids -> rows of x (dequantised embedding rows) */
    LLM_RMSNORM,      /* out = rmsnorm(in) * gamma, row by row */
    LLM_QUANT,        /* in (f32 rows of K) -> act blocks (act_type) */
    LLM_MATMUL,       /* out[m, n] = W[n, :] . act[m, :] */
    LLM_ROPE_STORE,   /* rotate q and k, copy k and v into the layer's cache */
    LLM_ATTENTION,    /* causal GQA over the cache -> out */
    LLM_ADD,          /* out += in (the residual) */
    LLM_SWIGLU,       /* out = silu(out) * in */
    LLM_HEAD,         /* logits of the selected rows (tied embedding) */
    LLM_SCALE,        /* out *= the constant row `gamma` (gemma's embedding scale) */
    LLM_BIAS,         /* out[row] += gamma (qwen2's Q/K/V biases) */
    LLM_HEADNORM,     /* rmsnorm of every head of out, gamma head_dim wide (qwen3) */
    LLM_GEGLU         /* out = gelu_tanh(out) * in (gemma) */
} llm_step_kind;

typedef struct llm_step {
    llm_step_kind kind;
    int layer;
    const llm_weight *w;
    const float *gamma;
    float *in, *out;       /* f32 rows, cols of each given by `cols` */
    void *act;             /* quantised activations */
    int act_type;
    size_t cols;
} llm_step;

typedef enum llm_arch {
    LLM_ARCH_LLAMA, LLM_ARCH_QWEN2, LLM_ARCH_QWEN3, LLM_ARCH_GEMMA, LLM_ARCH_GEMMA2,
    LLM_ARCH_PHI3
} llm_arch;

typedef struct llm_hparams {
    int n_layer, n_embd, n_ff, n_head, n_head_kv, head_dim, n_vocab, n_ctx_train;
    float rope_base, norm_eps;
    /* per architecture (llm_load.c's table and the file's keys) */
    llm_arch arch;
    const char *arch_name;
    int q_dim, kv_dim;           /* n_head * head_dim, n_head_kv * head_dim */
    int n_rot;                   /* rotated dims of each head (partial RoPE: < head_dim) */
    int rope_neox;               /* pairs (i, i + n_rot/2), else (2i, 2i+1) */
    float rope_freq_scale;       /* linear RoPE scaling: 1 / factor */
    float q_scale;               /* Q *= q_scale before attention (0: none) */
    float kq_scale;              /* softmax(kq_scale * q.k) */
    float attn_softcap, final_softcap;  /* gemma2 (0: none) */
    int n_swa;                   /* sliding window of the layers that have one (0: none) */
    int ffn_gelu;                /* GELU-tanh gate (gemma), else SiLU */
    float embd_scale;            /* token embeddings times this (0: none) */
} llm_hparams;

struct pg_llm {
    pg_gguf *gguf;
    pg_tokenizer *tok;
    llm_hparams hp;
    int n_ctx, max_batch, threads;
    int n_past;                  /* tokens in the KV cache */

    llm_weight tok_embd;         /* also the output head when tied */
    llm_weight output;
    const float *output_norm;
    llm_layer *layers;

    /* the arena: one allocation, every buffer a fixed offset in it */
    uint8_t *arena;
    size_t arena_bytes;
    float *x, *xn, *q, *k, *v, *att, *ff_gate, *ff_up;
    void *act;                   /* quantised activations, max_batch rows of n_ff */
    float *logits;               /* n_vocab: the last position's */
    float *k_cache, *v_cache;    /* [layer][pos][n_head_kv * head_dim]; with kv_f16 one
                                    layer's f32 copy, widened before its attention */
    int kv_f16;                  /* the cache proper is k_cache16 / v_cache16 */
    uint16_t *k_cache16, *v_cache16;
    float *rope_cos, *rope_sin;  /* [pos][n_rot / 2] */
    const float *rope_freqs;     /* rope_freqs.weight (Llama 3): n_rot / 2 divisors, or NULL */
    float *embd_scale;           /* n_embd copies of hp.embd_scale (LLM_SCALE) */
    float *cap_inv, *cap;        /* n_vocab copies of 1 / final_softcap and final_softcap */
    float *scores;               /* per head: n_ctx floats */
    float *att_acc;              /* per head: 64 x head_dim floats (llm_attention.c) */
    int32_t *ids;                /* the current batch's token ids */

    llm_step *steps;
    int n_steps;

    /* pg_llm_options.graph: the compiled decoder (llm_graph.c) instead of
     * the step list: [0] decode (1 row), [1] prefill (max_batch rows) */
    int graph;
    pg_model *gm[2];
    void *gpersist;              /* the plans' persistent buffers (the KV cache) */
    size_t gpersist_bytes;
    int32_t *gids;               /* max_batch ids, the graph's "ids" feed */

    const pg_variant *kern[LLM_K_COUNT];  /* bound at load / rebind */
    uint64_t bound_flags;                 /* the CPU flags the mask allowed then */

    /* per-run state the steps read */
    int run_n, run_pos;
    float *run_logits;           /* where LLM_HEAD writes */
    int run_head_row0;           /* first row that gets logits */

    double t_prefill_s, t_decode_s;
    int64_t n_prefill, n_decode;
    atomic_int busy;             /* an evaluation is in progress (llm_forward.c) */
};

/* llm_bind.c: selects every role's variant under the current mask; the
 * role of a weight type's GEMV / GEMM family. */
void llm_bind(pg_llm *m);
int llm_gemv_role(int wtype);
int llm_gemm_role(int wtype);

/* llm_arch.c: the architecture's hyper-parameters and tensors; llm_load.c's
 * checked matrix view, which it reads them with. */
pg_status llm_read_hparams(pg_llm *m);
pg_status llm_read_weights(pg_llm *m);
pg_status llm_get_matrix(pg_llm *m, const char *name, int64_t K, int64_t N, int optional,
                         llm_weight *w);

/* llm_plan.c */
pg_status llm_plan(pg_llm *m);

/* llm_matmul.c: out[m * ldo + n] = W[n] . act[m] for m < M, n < W->N; act
 * holds M rows of W->K elements quantised as W->act_type.  Threaded over
 * blocks of rows of W; the decode (M = 1) and prefill (M > 1) forms. */
void llm_quantize_rows(const pg_llm *m, int act_type, size_t M, size_t K, const float *x, void *act);
/* A weight tensor the decoder can run: its type has qgemv / qgemm families
 * and K fits their block (else PG_ERR_UNSUPPORTED naming the tensor and the
 * type), its block scales (or f16 / bf16 values) are finite (else
 * PG_ERR_FORMAT); *act_type: the activations its products take. */
pg_status llm_weight_accept(const char *name, int type, size_t K, size_t N, const uint8_t *data,
                            int *act_type);
/* Bytes of one activation row of K for the widest activation type m's
 * weights take (the arena's act buffer holds max_batch of them). */
size_t llm_act_row_bytes_max(const pg_llm *m, size_t K);
size_t llm_act_row_bytes(int act_type, size_t K);
void llm_matmul(const pg_llm *m, const llm_weight *W, size_t M, const void *act, float *out,
                size_t ldo);

/* The same product with its kernels and thread count given (the graph's
 * GGUFMatMul, exec/ops_llm.c, bound to them at compile). */
void llm_matmul_with(const llm_weight *W, size_t M, const void *act, float *out, size_t ldo,
                     pg_qgemv_fn gemv, pg_qgemm_fn gemm, int threads);

/* llm_attention.c */
void llm_rope_table(pg_llm *m);
void llm_rope_store(pg_llm *m, int layer);
void llm_attention(pg_llm *m, int layer);

/* The pieces both forms share (the step list above and the graph's ops,
 * exec/ops_llm.c): RoPE of n rows of `heads` heads at positions pos..
 * (tables [pos][n_rot / 2]); the f16 rounding of the cache, Q and the
 * probabilities; causal grouped-query attention of n rows over a cache. */
void llm_rope_rows(float *x, size_t ld, int n, int pos, int heads, int hd, int n_rot, int neox,
                   const float *cos_tab, const float *sin_tab);
void llm_round_f16(float *dst, const float *src, size_t n);
void llm_scale_round_f16(float *dst, const float *src, size_t n, float scale);  /* 0: no scale */

typedef struct llm_att_args {
    int n_head, n_head_kv, head_dim, n_ctx;
    float kq_scale, softcap;     /* softcap 0: none */
    int window;                  /* sliding window (0: none) */
    int n, pos;                  /* rows, the first row's position */
    const float *q;              /* n rows of n_head * head_dim, ldq apart, f16-rounded */
    size_t ldq;
    const float *kc, *vc;        /* the cache: rows of kd (n_head_kv * head_dim) per position */
    size_t kd;
    float *out;
    size_t ldo;
    float *scores;               /* n_head * n_ctx floats */
    float *acc;                  /* n_head * 64 * head_dim floats */
    pg_f32_softmax_fn softmax;
    pg_f32_unary_fn tanh;
    pg_f32_attn_kq_fn kq;        /* the attn_kq_ggml / attn_pv_ggml kernels */
    pg_f32_attn_pv_fn pv;
    pg_f32_round_f16_fn round;   /* the probabilities to f16, as ggml's V product takes them */
    int threads;
} llm_att_args;
void llm_attend(const llm_att_args *a);

/* llm_graph.c: the decoder as a Peregrine graph (pg_llm_options.graph):
 * built from the loaded weights (views into the mapping, no copy),
 * compiled twice (decode: 1 row; prefill: max_batch rows; the row count
 * and start position are an input), the KV cache the plans' persistent
 * buffer, one allocation both models share. */
pg_status llm_graph_build(pg_llm *m, int rows, pg_graph **out);
pg_status llm_graph_compile(pg_llm *m);
void llm_graph_free(pg_llm *m);
pg_status llm_graph_rebind(pg_llm *m);
/* One batch of n <= max_batch tokens (m->ids) at m->run_pos through the
 * compiled graph; logits of rows run_head_row0.. go to m->run_logits. */
pg_status llm_graph_forward(pg_llm *m);

#endif

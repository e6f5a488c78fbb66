/* llm.h - the GGUF decoder's insides (the public calls are in peregrine.h,
 * section "LLM").
 *
 *   llm_load.c       GGUF -> hyper-parameters, weight views, the RoPE tables
 *   llm_arch.c       each architecture's keys and tensors
 *   llm_graph.c      the decoder as a Peregrine graph, compiled twice
 *   llm_forward.c    a batch of tokens through the compiled graph; eval API
 *   llm_matmul.c     quantised weights x activations (GEMV and GEMM forms)
 *   llm_attention.c  the RoPE tables, grouped-query attention over the cache
 *   llm_bind.c       the kernel variants the decoder runs, by role
 *   sampler.c        greedy / temperature / top-k / top-p / penalties
 *
 * The graph compiler plans static shapes, while a decoder runs the same
 * network on a growing KV cache and on batches of 1 (decode) or many
 * (prefill) tokens.  So the decoder is compiled at two static shapes (1
 * row, max_batch rows) whose ops read the run's row count and position from
 * an input, with the KV cache the planner's persistent buffer class, one
 * allocation both plans share: a run is pg_model_run on one of them and
 * allocates nothing. */
#ifndef PG_LLM_LLM_H
#define PG_LLM_LLM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "peregrine.h"
#include "../kernels/variant.h"
#include "../kernels/kernel_fn.h"

/* The kernel families the decoder's graph runs, by role (llm_bind.c: what
 * pg_llm_bound_kernel reports and pg_llm_is_stale compares against). */
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
    LLM_K_ROPE, LLM_K_ROUND_F16,   /* RoPE; the f16 rounding of the cache, Q and the weights */
    LLM_K_COUNT
};

/* A weight matrix in GGUF layout: N rows of K elements (nn.Linear), each row
 * row_bytes of quantised blocks, read in place from the mapping. */
typedef struct llm_weight {
    const uint8_t *data;
    int type;              /* pg_ggml_type (llm_weight_accept: the types the decoder runs) */
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
    float *logits;               /* n_vocab: the last position's */
    int kv_f16;                  /* the cache holds f16 (KVCache's f16 attribute) */
    float *rope_cos, *rope_sin;  /* [pos][n_rot / 2] */
    const float *rope_freqs;     /* rope_freqs.weight (Llama 3): n_rot / 2 divisors, or NULL */
    int32_t *ids;                /* the current batch's token ids */

    /* the compiled decoder (llm_graph.c): [0] decode (1 row), [1] prefill
     * (max_batch rows; NULL when max_batch is 1) */
    pg_model *gm[2];
    void *gpersist;              /* the plans' persistent buffers (the KV cache) */
    size_t gpersist_bytes;

    const pg_variant *kern[LLM_K_COUNT];  /* bound at load / rebind */
    uint64_t bound_flags;                 /* the CPU flags the mask allowed then */

    /* per-run state (llm_graph_forward) */
    int run_n, run_pos;
    float *run_logits;           /* where the logits go (NULL: none wanted) */
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

/* llm_matmul.c */
/* A weight tensor the decoder can run: its type has qgemv / qgemm families
 * and K fits their block (else PG_ERR_UNSUPPORTED naming the tensor and the
 * type), its block scales (or f16 / bf16 values) are finite (else
 * PG_ERR_FORMAT); *act_type: the activations its products take. */
pg_status llm_weight_accept(const char *name, int type, size_t K, size_t N, const uint8_t *data,
                            int *act_type);
size_t llm_act_row_bytes(int act_type, size_t K);

/* out[m * ldo + n] = W[n] . act[m] for m < M, n < W->N; act holds M rows
 * of W->K elements quantised as W->act_type.  Threaded over blocks of rows
 * of W; the decode (M = 1: gemv) and prefill (M > 1: gemm) forms, with the
 * kernels the graph's GGUFMatMul (exec/ops_llm.c) bound at compile. */
void llm_matmul_with(const llm_weight *W, size_t M, const void *act, float *out, size_t ldo,
                     pg_qgemv_fn gemv, pg_qgemm_fn gemm, int threads);

/* llm_attention.c: the RoPE tables (m->rope_cos / rope_sin); causal
 * grouped-query attention of n rows over a cache (the graph's
 * CachedAttention). */
void llm_rope_table(pg_llm *m);

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

/* llm_graph.c: the decoder as a Peregrine graph: built from the loaded
 * weights (views into the mapping, no copy), compiled twice (decode: 1 row; prefill: max_batch rows; the row count
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

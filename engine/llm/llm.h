/* llm.h - the Llama-architecture decoder's insides (the public calls are in
 * peregrine.h, section "LLM").
 *
 *   llm_load.c       GGUF -> hyper-parameters, weight views, the arena plan
 *   llm_plan.c       the step list: one decoder forward as a fixed sequence
 *   llm_forward.c    runs the step list over a batch of tokens; eval API
 *   llm_matmul.c     quantised weights x activations (GEMV and GEMM forms)
 *   llm_attention.c  RoPE, the KV cache, grouped-query attention
 *   sampler.c        greedy / temperature / top-k / top-p / penalties
 *
 * Why a dedicated step list and not the graph compiler: the graph compiler
 * plans static shapes, while a decoder runs the same network on a growing
 * KV cache and on batches of 1 (decode) or many (prefill) tokens.  So the
 * forward pass is "compiled" once at load into a flat list of steps whose
 * buffers are fixed offsets of one arena sized for the largest batch; a run
 * walks the list with the batch size and position as its only arguments and
 * allocates nothing. */
#ifndef PG_LLM_LLM_H
#define PG_LLM_LLM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "peregrine.h"
#include "../kernels/variant.h"

/* The kernels the decoder is bound to (llm_bind.c), by role. */
enum llm_kernel_role {
    LLM_K_QUANTIZE_Q8_0, LLM_K_QUANTIZE_Q8_1, LLM_K_SILU, LLM_K_VADD, LLM_K_VMUL, LLM_K_SOFTMAX,
    LLM_K_QGEMV_Q4_0, LLM_K_QGEMV_Q4_1, LLM_K_QGEMV_Q8_0,
    LLM_K_QGEMM_Q4_0, LLM_K_QGEMM_Q4_1, LLM_K_QGEMM_Q8_0,
    LLM_K_GELU_TANH, LLM_K_TANH,   /* gemma's GELU FFN, gemma2's soft-capping */
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
    llm_weight wq, wk, wv, wo, gate, up, down;
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
    LLM_HEAD          /* logits of the selected rows (tied embedding) */
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

typedef struct llm_hparams {
    int n_layer, n_embd, n_ff, n_head, n_head_kv, head_dim, n_vocab, n_ctx_train;
    float rope_base, norm_eps;
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
    float *k_cache, *v_cache;    /* [layer][pos][n_head_kv * head_dim] */
    float *rope_cos, *rope_sin;  /* [pos][head_dim / 2] */
    float *scores;               /* per head: n_ctx floats */
    float *att_acc;              /* per head: 64 x 64 floats (llm_attention.c) */
    int32_t *ids;                /* the current batch's token ids */

    llm_step *steps;
    int n_steps;

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

/* llm_plan.c */
pg_status llm_plan(pg_llm *m);

/* llm_matmul.c: out[m * ldo + n] = W[n] . act[m] for m < M, n < W->N; act
 * holds M rows of W->K elements quantised as W->act_type.  Threaded over
 * blocks of rows of W; the decode (M = 1) and prefill (M > 1) forms. */
void llm_quantize_rows(const pg_llm *m, int act_type, size_t M, size_t K, const float *x, void *act);
size_t llm_act_row_bytes(int act_type, size_t K);
void llm_matmul(const pg_llm *m, const llm_weight *W, size_t M, const void *act, float *out,
                size_t ldo);

/* llm_attention.c */
void llm_rope_table(pg_llm *m);
void llm_rope_store(pg_llm *m, int layer);
void llm_attention(pg_llm *m, int layer);

#endif

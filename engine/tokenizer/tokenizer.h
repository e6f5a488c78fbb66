/* tokenizer.h - the tokenizers' insides (the public calls are in
 * peregrine.h, section "tokenizer"): byte-level BPE (tokenizer.ggml.model
 * "gpt2") and SentencePiece (model "llama": Llama 2, Mistral, Gemma, Phi-3).
 *
 *   tokenizer.c   API: load from GGUF, special-token split, encode, decode
 *   pretokenize.c the pre-tokenizer rules (text -> words), BPE only
 *   merge.c       the merge loop both share (pairs queued by a key)
 *   bpe.c         merges by rank inside one word
 *   spm.c         SentencePiece: merges by score, byte fallback, U+2581
 *   strmap.c      string -> int tables (vocabulary, merge ranks)
 *   unicode_class.c  character classes, UTF-8, the GPT-2 byte map */
#ifndef PG_TOKENIZER_TOKENIZER_H
#define PG_TOKENIZER_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "peregrine.h"

/* ---- pre-tokenizer ---- */

typedef enum pg_pretok_kind {
    PG_PRETOK_GPT2 = 0,     /* the GPT-2 regex alone */
    PG_PRETOK_DIGITS = 1,   /* \p{N} split first, then GPT-2 (smollm, starcoder, ...) */
    PG_PRETOK_LLAMA3 = 2,   /* llama 3's regex (llama-bpe, falcon3, ...) */
    PG_PRETOK_QWEN2 = 3     /* llama 3's with single digits (\p{N} for \p{N}{1,3}): qwen2 */
} pg_pretok_kind;

/* Word lengths in code points; push never fails loudly: oom is set. */
typedef struct pg_word_list {
    size_t *len;
    size_t  n, cap;
    int     oom;
} pg_word_list;

void pg_word_list_push(pg_word_list *l, size_t len);
void pg_pretokenize(pg_pretok_kind kind, const uint32_t *cps, size_t n, pg_word_list *out);

/* ---- string -> int32 tables ---- */

typedef struct pg_strmap_entry {
    uint64_t off;    /* key bytes at arena + off */
    uint32_t len;
    int32_t  val;
} pg_strmap_entry;

typedef struct pg_strmap {
    const char      *arena;
    pg_strmap_entry *entries;
    uint32_t        *slots;   /* entry index + 1; 0 = empty */
    uint64_t         mask;
    uint32_t         n;
} pg_strmap;

/* Room for n entries over keys in arena. */
pg_status pg_strmap_init(pg_strmap *m, const char *arena, uint32_t n);
void pg_strmap_free(pg_strmap *m);
/* Insert; an existing key keeps its value unless replace is set. */
void pg_strmap_put(pg_strmap *m, uint64_t off, uint32_t len, int32_t val, int replace);
/* Value of the key a (+ sep + b when b is not NULL), -1 when absent. */
int32_t pg_strmap_get(const pg_strmap *m, const char *a, size_t alen, const char *b, size_t blen);

/* ---- the tokenizer ---- */

/* Per-token flags beside the type: llama.cpp's LSTRIP / RSTRIP attributes
 * (white space next to a special token in the text is dropped). */
enum { PG_TOKATTR_LSTRIP = 1, PG_TOKATTR_RSTRIP = 2 };

struct pg_tokenizer {
    char            pre[32];
    int             spm;            /* SentencePiece (model "llama"), else byte-level BPE */
    int             add_space_prefix;   /* spm: a space before text that follows a special */
    pg_pretok_kind  pretok;
    int             ignore_merges;  /* a word that is a token is taken whole (llama 3) */
    int             wants_bos;      /* add_bos_token, or the pre-tokenizer's default */
    int32_t         n_vocab;
    char           *text;      /* every token text, NUL-terminated, then every merge */
    uint64_t       *tok_off;
    uint32_t       *tok_len;
    uint8_t        *tok_type;
    uint8_t        *tok_attr;  /* PG_TOKATTR_* */
    float          *score;     /* spm: tokenizer.ggml.scores (0 where absent) */
    int32_t         byte_tok[256];   /* spm: the <0xNN> token of each byte, -1 if none */
    int32_t         unk;    pg_strmap       vocab;     /* token text -> id */
    pg_strmap       merges;    /* "left right" -> rank */
    int32_t         bos, eos;
    int32_t        *special;   /* ids matched in raw text, longest text first */
    int32_t         n_special;
    uint8_t         byte_utf8[256][2];   /* GPT-2 byte map, as UTF-8 */
    uint8_t         byte_utf8_len[256];
    int16_t         cp_byte[324];        /* its inverse: code point -> byte, -1 */
};

/* ---- the merge loop both vocabularies share (merge.c) ---- */

typedef struct pg_merge_sym {
    size_t start, len;   /* len 0: merged into its left neighbour */
    long   prev, next;   /* -1 at the ends */
} pg_merge_sym;

typedef struct pg_merge_pair {
    double key;
    long   left, right;
    size_t left_len, right_len;   /* the sides' lengths when queued */
} pg_merge_pair;

/* Scratch for one encode call (grown as needed, freed at the end). */
typedef struct pg_merge_scratch {
    pg_merge_sym  *sym;
    size_t         sym_cap;
    pg_merge_pair *heap;
    size_t         heap_n, heap_cap;
    int            oom;
} pg_merge_scratch;

/* Whether the pieces piece[0, a_len) and piece[a_len, a_len + b_len) merge,
 * and with what key (the highest merges first). */
typedef int (*pg_merge_key_fn)(const void *ctx, const uint8_t *piece, size_t a_len, size_t b_len,
                               double *key);

/* Merge text[0, len) from its UTF-8 characters; returns the symbol count
 * (s->sym[0] first, then along .next; merged-away ones have len 0).  Out
 * of memory sets s->oom. */
long pg_merge_run(pg_merge_scratch *s, const uint8_t *text, size_t len,
                  pg_merge_key_fn key_of, const void *ctx);
void pg_merge_scratch_free(pg_merge_scratch *s);
/* Grow *p to hold need elements (doubling); 0 when out of memory. */
int pg_grow(void **p, size_t *cap, size_t need, size_t elem);

/* ---- byte-level BPE (bpe.c) ---- */

typedef pg_merge_scratch pg_bpe_scratch;

/* Merge one byte-mapped word and hand each resulting id to emit. */
void pg_bpe_word(const pg_tokenizer *t, pg_bpe_scratch *s, const char *word, size_t len,
                 void (*emit)(void *ctx, int32_t id), void *ctx);

/* ---- SentencePiece (spm.c) ---- */

typedef struct pg_spm_scratch {
    uint8_t            *text;   /* the fragment with spaces as U+2581 */
    size_t              text_cap;
    pg_merge_scratch    merge;
    int                 oom;
} pg_spm_scratch;

/* Encode one stretch of text without special tokens (space_prefix: put a
 * space before it, as llama.cpp does after a special token). */
void pg_spm_fragment(const pg_tokenizer *t, pg_spm_scratch *s, const uint8_t *text, size_t len,
                     int space_prefix, void (*emit)(void *ctx, int32_t id), void *ctx);
void pg_spm_scratch_free(pg_spm_scratch *s);
/* The bytes of a normal or byte token of an spm vocabulary (U+2581 as a
 * space, <0xNN> as its byte) into buf (as far as room goes); returns the count. */
size_t pg_spm_piece(const pg_tokenizer *t, int32_t id, char *buf, size_t room);
/* The byte a <0xNN> text stands for, -1 if it is not one. */
int pg_spm_byte_of(const char *s, size_t len);

#endif

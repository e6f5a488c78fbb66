/* tokenizer.c - the public tokenizer: built from GGUF metadata, encode
 * (special tokens, then BPE or SentencePiece), decode.
 *
 * Encoding follows llama.cpp's llama_tokenize:
 *   1. special tokens written in the text are cut out first, longest text
 *      first, every occurrence left to right (control and unknown tokens
 *      only when parse_special is set; user-defined ones always); white
 *      space beside a token with the LSTRIP / RSTRIP attribute goes too
 *      (llama.cpp sets RSTRIP on a Phi-3 file's specials, by its name);
 *   2. a "gpt2" vocabulary: each remaining stretch of text is split into
 *      words by the pre-tokenizer the file names (tokenizer.ggml.pre), each
 *      word's UTF-8 bytes are mapped to GPT-2's printable code points and
 *      merged by rank (bpe.c);
 *   3. a "llama" (SentencePiece) vocabulary: each stretch is merged by
 *      score (spm.c), with a space in front of the first stretch and of
 *      every stretch after a special token when add_space_prefix says so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "tokenizer.h"
#include "unicode_class.h"

void pg_word_list_push(pg_word_list *l, size_t len)
{
    if (l->n == l->cap) {
        size_t c = l->cap ? l->cap * 2 : 256;
        size_t *p = realloc(l->len, c * sizeof *p);
        if (!p) {
            l->oom = 1;
            return;
        }
        l->len = p;
        l->cap = c;
    }
    l->len[l->n++] = len;
}

/* ---- loading ---------------------------------------------------------- */

/* Pre-tokenizer names llama.cpp maps to the two rule sets implemented. */
static const char *const digits_family[] = {
    "smollm", "starcoder", "refact", "command-r", "codeshell", "exaone", "minerva",
};
static const char *const gpt2_family[] = {
    "gpt-2", "phi-2", "mpt", "olmo", "jais", "gigachat", "trillion", "granite-docling",
    "a.x-4.0", "mellum",
};
/* llama 3's rules; these also take a word that is a token whole and want a
 * BOS by default */
static const char *const llama3_family[] = {
    "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
};

/* llama 3's rules with single digits; no ignore_merges, BOS as the file says */
static const char *const qwen2_family[] = { "qwen2", "deepseek-r1-qwen" };

static int in_list(const char *s, size_t len, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(list[i]) == len && memcmp(list[i], s, len) == 0)
            return 1;
    return 0;
}

static pg_status get_str(const pg_gguf *g, const char *key, const char **s, uint64_t *len)
{
    int64_t i = pg_gguf_find_key(g, key);
    if (i < 0)
        return pg_fail(PG_ERR_FORMAT, "tokenizer: the GGUF file has no '%s'", key);
    return pg_gguf_get_string(g, i, s, len);
}

static int32_t get_id(const pg_gguf *g, const char *key, int32_t n_vocab)
{
    int64_t i = pg_gguf_find_key(g, key), v;
    if (i < 0 || pg_gguf_get_int(g, i, &v) != PG_OK || v < 0 || v >= n_vocab)
        return -1;
    return (int32_t)v;
}

static int longer_text_first(const void *a, const void *b, void *t_)
{
    const pg_tokenizer *t = t_;
    uint32_t la = t->tok_len[*(const int32_t *)a], lb = t->tok_len[*(const int32_t *)b];
    if (la != lb)
        return la > lb ? -1 : 1;
    return *(const int32_t *)a - *(const int32_t *)b;
}

/* The bool (or integer) at key, dflt when the file has none. */
static int get_flag(const pg_gguf *g, const char *key, int dflt)
{
    int64_t i = pg_gguf_find_key(g, key), v;
    return i >= 0 && pg_gguf_get_int(g, i, &v) == PG_OK ? v != 0 : dflt;
}

/* Texts llama.cpp takes as end-of-generation tokens and makes control
 * tokens whatever type the file gives them. */
static const char *const eog_texts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>",
};

/* llama.cpp's per-model token attributes: a model whose general.name says
 * Phi-3 drops white space after its special tokens, except these. */
static void set_token_attrs(pg_tokenizer *t, const pg_gguf *g)
{
    const char *s;
    uint64_t len;
    if (get_str(g, "general.name", &s, &len) != PG_OK) {
        pg_clear_error();
        return;
    }
    char name[256];
    size_t n = len < sizeof name - 1 ? (size_t)len : sizeof name - 1;
    for (size_t i = 0; i < n; i++)
        name[i] = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] + 32) : (s[i] ? s[i] : ' ');
    name[n] = '\0';
    if (!strstr(name, "phi3") && !strstr(name, "phi-3"))
        return;
    for (int32_t k = 0; k < t->n_special; k++)
        t->tok_attr[t->special[k]] |= PG_TOKATTR_RSTRIP;
    static const char *const keep[] = { "<unk>", "<s>", "<|endoftext|>" };
    for (size_t k = 0; k < sizeof keep / sizeof *keep; k++) {
        int32_t id = pg_strmap_get(&t->vocab, keep[k], strlen(keep[k]), NULL, 0);
        if (id >= 0)
            t->tok_attr[id] &= (uint8_t)~PG_TOKATTR_RSTRIP;
    }
}

static pg_status load(pg_tokenizer *t, const pg_gguf *g)
{
    const char *s;
    uint64_t len, n_tok, n_merge = 0;
    pg_status st = get_str(g, "tokenizer.ggml.model", &s, &len);
    if (st != PG_OK)
        return st;
    if (len == 5 && memcmp(s, "llama", 5) == 0) {
        /* SentencePiece: no pre-tokenizer; llama.cpp's defaults */
        t->spm = 1;
        t->add_space_prefix = get_flag(g, "tokenizer.ggml.add_space_prefix", 1);
        t->wants_bos = 1;
        if (get_str(g, "tokenizer.ggml.pre", &s, &len) != PG_OK) {
            pg_clear_error();
            s = "default";
            len = 7;
        }
        memcpy(t->pre, s, len < sizeof t->pre - 1 ? len : sizeof t->pre - 1);
    } else if (len != 4 || memcmp(s, "gpt2", 4) != 0) {
        return pg_fail(PG_ERR_UNSUPPORTED, "tokenizer: model '%.*s' is not supported (byte-level "
                       "BPE 'gpt2' and SentencePiece 'llama' are)", (int)(len > 64 ? 64 : len), s);
    } else if (get_str(g, "tokenizer.ggml.pre", &s, &len) != PG_OK)
        return pg_fail(PG_ERR_UNSUPPORTED, "tokenizer: the file names no pre-tokenizer "
                       "(tokenizer.ggml.pre); llama.cpp's 'default' rules are not implemented");
    else if (in_list(s, len, digits_family, sizeof digits_family / sizeof *digits_family))
        t->pretok = PG_PRETOK_DIGITS;
    else if (in_list(s, len, gpt2_family, sizeof gpt2_family / sizeof *gpt2_family))
        t->pretok = PG_PRETOK_GPT2;
    else if (in_list(s, len, llama3_family, sizeof llama3_family / sizeof *llama3_family)) {
        t->pretok = PG_PRETOK_LLAMA3;
        t->ignore_merges = 1;
        t->wants_bos = 1;
    } else if (in_list(s, len, qwen2_family, sizeof qwen2_family / sizeof *qwen2_family))
        t->pretok = PG_PRETOK_QWEN2;
    else
        return pg_fail(PG_ERR_UNSUPPORTED, "tokenizer: pre-tokenizer '%.*s' is not implemented "
                       "(smollm, starcoder, gpt2, llama-bpe, qwen2 and their kin are)",
                       (int)(len > 64 ? 64 : len), s);
    if (!t->spm)
        memcpy(t->pre, s, len < sizeof t->pre - 1 ? len : sizeof t->pre - 1);

    int64_t ki = pg_gguf_find_key(g, "tokenizer.ggml.tokens");
    if (ki < 0)
        return pg_fail(PG_ERR_FORMAT, "tokenizer: the GGUF file has no 'tokenizer.ggml.tokens'");
    if ((st = pg_gguf_array_len(g, ki, &n_tok)) != PG_OK)
        return st;
    if (n_tok == 0 || n_tok > INT32_MAX / 2)
        return pg_fail(PG_ERR_FORMAT, "tokenizer: %llu tokens", (unsigned long long)n_tok);
    int64_t mi = t->spm ? -1 : pg_gguf_find_key(g, "tokenizer.ggml.merges");   /* spm: unused */
    if (mi >= 0 && (st = pg_gguf_array_len(g, mi, &n_merge)) != PG_OK)
        return st;
    if (n_merge > INT32_MAX / 2)
        return pg_fail(PG_ERR_FORMAT, "tokenizer: %llu merges", (unsigned long long)n_merge);
    int64_t ti = pg_gguf_find_key(g, "tokenizer.ggml.token_type");
    uint64_t n_types = 0;
    if (ti >= 0 && ((st = pg_gguf_array_len(g, ti, &n_types)) != PG_OK))
        return st;
    if (ti >= 0 && n_types != n_tok)
        return pg_fail(PG_ERR_FORMAT, "tokenizer: %llu token types for %llu tokens",
                       (unsigned long long)n_types, (unsigned long long)n_tok);
    int64_t si = pg_gguf_find_key(g, "tokenizer.ggml.scores");
    uint64_t n_scores = 0;
    if (si >= 0 && ((st = pg_gguf_array_len(g, si, &n_scores)) != PG_OK))
        return st;
    if (si >= 0 && n_scores != n_tok)
        return pg_fail(PG_ERR_FORMAT, "tokenizer: %llu scores for %llu tokens",
                       (unsigned long long)n_scores, (unsigned long long)n_tok);

    /* one arena for every token text and merge, NUL-terminated each */
    uint64_t total = 0;
    for (uint64_t i = 0; i < n_tok + n_merge; i++) {
        if ((st = i < n_tok ? pg_gguf_array_get_string(g, ki, i, &s, &len)
                            : pg_gguf_array_get_string(g, mi, i - n_tok, &s, &len)) != PG_OK)
            return st;
        if (len > UINT32_MAX - 1)
            return pg_fail(PG_ERR_FORMAT, "tokenizer: a token of %llu bytes", (unsigned long long)len);
        total += (i < n_tok && len == 0 ? 24 : len) + 1;   /* an empty token: "[EMPTY_<id>]" */
    }
    t->n_vocab = (int32_t)n_tok;
    t->text = malloc(total ? total : 1);
    t->tok_off = malloc(n_tok * sizeof *t->tok_off);
    t->tok_len = malloc(n_tok * sizeof *t->tok_len);
    t->tok_type = malloc(n_tok);
    t->tok_attr = calloc(n_tok, 1);
    t->score = calloc(n_tok, sizeof *t->score);
    if (!t->text || !t->tok_off || !t->tok_len || !t->tok_type || !t->tok_attr || !t->score)
        return pg_fail(PG_ERR_NOMEM, "tokenizer: out of memory");
    if ((st = pg_strmap_init(&t->vocab, t->text, (uint32_t)n_tok)) != PG_OK ||
        (st = pg_strmap_init(&t->merges, t->text, (uint32_t)(n_merge ? n_merge : 1))) != PG_OK)
        return st;
    uint64_t off = 0;
    for (uint64_t i = 0; i < n_tok; i++) {
        pg_gguf_array_get_string(g, ki, i, &s, &len);
        if (len == 0)   /* llama.cpp's name for an empty token */
            len = (uint64_t)snprintf(t->text + off, 24, "[EMPTY_%llu]", (unsigned long long)i);
        else
            memcpy(t->text + off, s, len);
        t->text[off + len] = '\0';
        t->tok_off[i] = off;
        t->tok_len[i] = (uint32_t)len;
        int64_t ty = PG_TOKEN_NORMAL;
        if (ti >= 0 && pg_gguf_array_get_int(g, ti, i, &ty) != PG_OK)
            return pg_last_status();
        t->tok_type[i] = (uint8_t)(ty >= 0 && ty <= PG_TOKEN_BYTE ? ty : PG_TOKEN_UNDEFINED);
        double sc = 0;
        if (si >= 0 && pg_gguf_array_get_float(g, si, i, &sc) != PG_OK)
            return pg_last_status();
        t->score[i] = (float)sc;
        pg_strmap_put(&t->vocab, off, (uint32_t)len, (int32_t)i, 1);   /* a repeated text: the last id wins */
        off += len + 1;
    }
    for (uint64_t i = 0; i < n_merge; i++) {
        pg_gguf_array_get_string(g, mi, i, &s, &len);
        memcpy(t->text + off, s, len);
        t->text[off + len] = '\0';
        pg_strmap_put(&t->merges, off, (uint32_t)len, (int32_t)i, 0);   /* the first rank wins */
        off += len + 1;
    }

    int64_t ab = pg_gguf_find_key(g, "tokenizer.ggml.add_bos_token"), abv;
    if (ab >= 0 && pg_gguf_get_int(g, ab, &abv) == PG_OK)
        t->wants_bos = abv != 0;
    t->bos = get_id(g, "tokenizer.ggml.bos_token_id", t->n_vocab);
    t->eos = get_id(g, "tokenizer.ggml.eos_token_id", t->n_vocab);
    t->unk = get_id(g, "tokenizer.ggml.unknown_token_id", t->n_vocab);
    if (t->spm) {
        /* llama.cpp's defaults for a SentencePiece vocabulary: <unk> <s> </s> = 0 1 2 */
        if (t->bos < 0 && t->n_vocab > 1)
            t->bos = 1;
        if (t->eos < 0 && t->n_vocab > 2)
            t->eos = 2;
        if (t->unk < 0)
            t->unk = 0;
    }
    for (size_t k = 0; k < sizeof eog_texts / sizeof *eog_texts; k++) {
        int32_t id = pg_strmap_get(&t->vocab, eog_texts[k], strlen(eog_texts[k]), NULL, 0);
        if (id >= 0)
            t->tok_type[id] = PG_TOKEN_CONTROL;
    }

    /* tokens matched literally in the text, longest first */
    t->special = malloc(n_tok * sizeof *t->special);
    if (!t->special)
        return pg_fail(PG_ERR_NOMEM, "tokenizer: out of memory");
    for (int32_t i = 0; i < t->n_vocab; i++) {
        int ty = t->tok_type[i];
        if ((ty == PG_TOKEN_CONTROL || ty == PG_TOKEN_USER_DEFINED || ty == PG_TOKEN_UNKNOWN) &&
            t->tok_len[i] > 0)
            t->special[t->n_special++] = i;
    }
    qsort_r(t->special, (size_t)t->n_special, sizeof *t->special, longer_text_first, t);
    set_token_attrs(t, g);

    /* spm byte fallback: <0xNN>, else the byte's own one-byte text */
    for (int b = 0; b < 256; b++) {
        char hex[7], one = (char)b;
        snprintf(hex, sizeof hex, "<0x%02X>", b);
        t->byte_tok[b] = pg_strmap_get(&t->vocab, hex, 6, NULL, 0);
        if (t->byte_tok[b] < 0)
            t->byte_tok[b] = pg_strmap_get(&t->vocab, &one, 1, NULL, 0);
    }

    for (int b = 0; b < 256; b++)
        t->byte_utf8_len[b] = (uint8_t)pg_utf8_encode(pg_byte_to_cp((uint8_t)b), t->byte_utf8[b]);
    for (uint32_t cp = 0; cp < 324; cp++)
        t->cp_byte[cp] = (int16_t)pg_cp_to_byte(cp);
    return PG_OK;
}

pg_status pg_tokenizer_from_gguf(const pg_gguf *g, pg_tokenizer **out)
{
    if (!out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_tokenizer_from_gguf: out is NULL");
    *out = NULL;
    if (!g)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_tokenizer_from_gguf: the GGUF handle is NULL");
    pg_tokenizer *t = calloc(1, sizeof *t);
    if (!t)
        return pg_fail(PG_ERR_NOMEM, "tokenizer: out of memory");
    pg_status st = load(t, g);
    if (st != PG_OK) {
        pg_tokenizer_free(t);
        return st;
    }
    *out = t;
    return PG_OK;
}

void pg_tokenizer_free(pg_tokenizer *t)
{
    if (!t)
        return;
    pg_strmap_free(&t->vocab);
    pg_strmap_free(&t->merges);
    free(t->text);
    free(t->tok_off);
    free(t->tok_len);
    free(t->tok_type);
    free(t->tok_attr);
    free(t->score);
    free(t->special);
    free(t);
}

int32_t pg_tokenizer_vocab_size(const pg_tokenizer *t) { return t ? t->n_vocab : 0; }
int32_t pg_tokenizer_bos(const pg_tokenizer *t) { return t ? t->bos : -1; }
int32_t pg_tokenizer_eos(const pg_tokenizer *t) { return t ? t->eos : -1; }
int pg_tokenizer_wants_bos(const pg_tokenizer *t) { return t && t->wants_bos && t->bos >= 0; }
const char *pg_tokenizer_pre(const pg_tokenizer *t) { return t ? t->pre : ""; }

static int bad_id(const pg_tokenizer *t, int32_t id, const char *fn)
{
    if (!t) {
        pg_fail(PG_ERR_INVALID_ARG, "%s: the tokenizer is NULL", fn);
        return 1;
    }
    if (id < 0 || id >= t->n_vocab) {
        pg_fail(PG_ERR_INVALID_ARG, "%s: token id %d out of range (vocabulary of %d)", fn, id,
                t->n_vocab);
        return 1;
    }
    return 0;
}

const char *pg_tokenizer_token_text(const pg_tokenizer *t, int32_t id)
{
    return bad_id(t, id, "pg_tokenizer_token_text") ? NULL : t->text + t->tok_off[id];
}

int pg_tokenizer_token_type(const pg_tokenizer *t, int32_t id)
{
    return bad_id(t, id, "pg_tokenizer_token_type") ? -1 : t->tok_type[id];
}

int32_t pg_tokenizer_find(const pg_tokenizer *t, const char *text)
{
    if (!t || !text)
        return -1;
    return pg_strmap_get(&t->vocab, text, strlen(text), NULL, 0);
}

/* ---- encoding --------------------------------------------------------- */

typedef struct encoder {
    const pg_tokenizer *t;
    int32_t            *ids;
    size_t              cap, n;
    uint32_t           *cps;
    uint8_t            *word;     /* byte-mapped word, up to 2 bytes per byte */
    pg_word_list        words;
    pg_bpe_scratch      bpe;
    pg_spm_scratch      spm;
    int                 prev_special;   /* spm: nothing or a special token came last */
} encoder;

static void emit(void *ctx, int32_t id)
{
    encoder *e = ctx;
    if (e->n < e->cap)
        e->ids[e->n] = id;
    e->n++;   /* counted past the capacity, to tell the caller what it needs */
}

/* Pre-tokenize and merge one stretch of text without special tokens. */
static void encode_raw(encoder *e, const uint8_t *s, size_t len)
{
    if (e->t->spm) {
        pg_spm_fragment(e->t, &e->spm, s, len, e->t->add_space_prefix && e->prev_special, emit, e);
        e->prev_special = 0;
        return;
    }
    size_t n_cp = pg_utf8_decode(s, len, e->cps);
    e->words.n = 0;
    pg_pretokenize(e->t->pretok, e->cps, n_cp, &e->words);
    size_t at = 0;
    for (size_t w = 0; w < e->words.n; w++) {
        size_t wl = 0;
        for (size_t k = at; k < at + e->words.len[w]; k++) {
            uint8_t u[4];
            int nb = pg_utf8_encode(e->cps[k], u);
            for (int j = 0; j < nb; j++) {
                memcpy(e->word + wl, e->t->byte_utf8[u[j]], e->t->byte_utf8_len[u[j]]);
                wl += e->t->byte_utf8_len[u[j]];
            }
        }
        at += e->words.len[w];
        pg_bpe_word(e->t, &e->bpe, (const char *)e->word, wl, emit, e);
    }
}

/* First occurrence of needle in hay[0..n), or NULL. */
static const uint8_t *find_bytes(const uint8_t *hay, size_t n, const char *needle, size_t m)
{
    if (m == 0 || m > n)
        return NULL;
    for (size_t i = 0; i + m <= n; i++)
        if (hay[i] == (uint8_t)needle[0] && memcmp(hay + i, needle, m) == 0)
            return hay + i;
    return NULL;
}

/* Encode text[0..len): find the first special token (in the priority
 * order: longest first) anywhere in it, encode what is left of it, emit
 * it, continue right of it.  The recursion on the left part starts from the
 * next special in order, which is how llama.cpp's repeated partitioning
 * comes out: a longer special always wins over a shorter one inside it. */
static int is_space(uint8_t c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');   /* C's isspace */
}

static void encode_span(encoder *e, const uint8_t *s, size_t len, int32_t first_special,
                        int parse_special)
{
    for (int32_t k = first_special; k < e->t->n_special; k++) {
        int32_t id = e->t->special[k];
        int ty = e->t->tok_type[id];
        if (!parse_special && ty != PG_TOKEN_USER_DEFINED)
            continue;
        const char *txt = e->t->text + e->t->tok_off[id];
        size_t tl = e->t->tok_len[id];
        const uint8_t *hit = find_bytes(s, len, txt, tl);
        if (!hit)
            continue;
        /* every occurrence of this special, the stretches between them
         * partitioned further by the specials after it (less the white
         * space an LSTRIP / RSTRIP token takes) */
        uint8_t attr = e->t->tok_attr[id];
        while (hit) {
            size_t left = (size_t)(hit - s);
            if (attr & PG_TOKATTR_LSTRIP)
                while (left && is_space(s[left - 1]))
                    left--;
            encode_span(e, s, left, k + 1, parse_special);
            emit(e, id);
            e->prev_special = 1;
            len -= (size_t)(hit - s) + tl;
            s = hit + tl;
            if (attr & PG_TOKATTR_RSTRIP)
                for (; len && is_space(*s); len--)
                    s++;
            hit = find_bytes(s, len, txt, tl);
        }
        encode_span(e, s, len, k + 1, parse_special);
        return;
    }
    if (len)
        encode_raw(e, s, len);
}

pg_status pg_tokenize(const pg_tokenizer *t, const char *text, size_t len, int add_bos,
                      int parse_special, int32_t *ids, size_t capacity, size_t *n_out)
{
    if (!t || (!text && len) || (!ids && capacity) || !n_out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_tokenize: NULL tokenizer, text, ids or n_out");
    *n_out = 0;
    if (len > SIZE_MAX / 8)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_tokenize: text of %zu bytes is too long", len);
    if (add_bos && t->bos < 0)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_tokenize: add_bos, but the vocabulary has no BOS token");
    encoder e = { .t = t, .ids = ids, .cap = capacity, .prev_special = 1 };
    /* a code point per byte at most; a byte maps to at most 2 bytes, and
     * an invalid byte becomes U+FFFD (3 bytes, so 6 mapped) */
    e.cps = malloc((len ? len : 1) * sizeof *e.cps);
    e.word = malloc((len ? len : 1) * 6);
    if (!e.cps || !e.word) {
        free(e.cps);
        free(e.word);
        return pg_fail(PG_ERR_NOMEM, "pg_tokenize: out of memory for %zu bytes of text", len);
    }
    if (add_bos)
        emit(&e, t->bos);
    encode_span(&e, (const uint8_t *)text, len, 0, parse_special);
    int oom = e.words.oom || e.bpe.oom || e.spm.oom;
    free(e.cps);
    free(e.word);
    free(e.words.len);
    pg_merge_scratch_free(&e.bpe);
    pg_spm_scratch_free(&e.spm);
    if (oom)
        return pg_fail(PG_ERR_NOMEM, "pg_tokenize: out of memory");
    *n_out = e.n;
    if (e.n > capacity)
        return pg_fail(PG_ERR_SHAPE, "pg_tokenize: the text needs %zu ids, the buffer holds %zu",
                       e.n, capacity);
    return PG_OK;
}

/* ---- decoding --------------------------------------------------------- */

/* Append the bytes of one token to buf (as far as it has room); returns
 * how many it stands for. */
static size_t piece(const pg_tokenizer *t, int32_t id, int special, char *buf, size_t room)
{
    const uint8_t *s = (const uint8_t *)t->text + t->tok_off[id];
    size_t len = t->tok_len[id], n = 0;
    int ty = t->tok_type[id];
    if (ty == PG_TOKEN_USER_DEFINED ||
        (special && (ty == PG_TOKEN_CONTROL || ty == PG_TOKEN_UNKNOWN))) {
        if (buf)
            memcpy(buf, s, len < room ? len : room);
        return len;
    }
    if (t->spm && (ty == PG_TOKEN_NORMAL || ty == PG_TOKEN_BYTE))
        return pg_spm_piece(t, id, buf, room);
    if (ty != PG_TOKEN_NORMAL)
        return 0;   /* control tokens without special, unused, byte: nothing */
    /* undo the byte map, code point by code point; a code point that maps
     * to no byte is passed through as its UTF-8 */
    uint32_t cps[64];
    size_t i = 0;
    while (i < len) {
        size_t chunk = len - i < 64 ? len - i : 64;
        /* do not cut a UTF-8 character: back off to a lead byte */
        while (chunk > 1 && i + chunk < len && (s[i + chunk] & 0xc0) == 0x80)
            chunk--;
        size_t nc = pg_utf8_decode(s + i, chunk, cps);
        for (size_t c = 0; c < nc; c++) {
            int b = cps[c] < 324 ? t->cp_byte[cps[c]] : -1;
            uint8_t u[4];
            int nb = b >= 0 ? 1 : pg_utf8_encode(cps[c], u);
            if (b >= 0)
                u[0] = (uint8_t)b;
            for (int k = 0; k < nb; k++, n++)
                if (buf && n < room)
                    buf[n] = (char)u[k];
        }
        i += chunk;
    }
    return n;
}

pg_status pg_token_to_piece(const pg_tokenizer *t, int32_t id, int special, char *buf,
                            size_t capacity, size_t *n_out)
{
    if (bad_id(t, id, "pg_token_to_piece"))
        return pg_last_status();
    if ((!buf && capacity) || !n_out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_token_to_piece: NULL buf or n_out");
    size_t n = piece(t, id, special, buf, capacity);
    *n_out = n;
    if (n > capacity)
        return pg_fail(PG_ERR_SHAPE, "pg_token_to_piece: token %d needs %zu bytes, the buffer "
                       "holds %zu", id, n, capacity);
    return PG_OK;
}

pg_status pg_detokenize(const pg_tokenizer *t, const int32_t *ids, size_t n_ids, int special,
                        char *buf, size_t capacity, size_t *n_out)
{
    if (!t || (!ids && n_ids) || (!buf && capacity) || !n_out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_detokenize: NULL tokenizer, ids, buf or n_out");
    size_t n = 0;
    for (size_t i = 0; i < n_ids; i++) {
        if (bad_id(t, ids[i], "pg_detokenize"))
            return pg_last_status();
        /* as llama_detokenize: the space an spm vocabulary puts before the
         * text comes off the first token (none comes off after a BOS) */
        char first = 0;
        if (i == 0 && t->spm && t->add_space_prefix && piece(t, ids[0], special, &first, 1) &&
            first == ' ') {
            size_t pl = piece(t, ids[0], special, NULL, 0);
            char tmp[256];
            if (pl <= sizeof tmp) {
                piece(t, ids[0], special, tmp, sizeof tmp);
                size_t c = pl - 1 < capacity ? pl - 1 : capacity;
                if (c)
                    memcpy(buf, tmp + 1, c);
                n = pl - 1;
                continue;
            }
            /* a longer one: write it, then drop its first byte */
            n = piece(t, ids[0], special, buf, capacity);
            if (capacity)
                memmove(buf, buf + 1, (n < capacity ? n : capacity) - 1);
            n--;
            continue;
        }
        n += piece(t, ids[i], special, n < capacity ? buf + n : NULL, n < capacity ? capacity - n : 0);
    }
    *n_out = n;
    if (n > capacity)
        return pg_fail(PG_ERR_SHAPE, "pg_detokenize: the text needs %zu bytes, the buffer holds %zu",
                       n, capacity);
    return PG_OK;
}

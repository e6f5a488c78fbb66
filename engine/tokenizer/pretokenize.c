/* pretokenize.c - split text into the words BPE runs on.
 *
 * The rules are the regexes the tokenizers were trained with, as llama.cpp
 * applies them (llama-vocab.cpp picks the regexes per tokenizer.ggml.pre,
 * unicode.cpp runs them); written here as plain scans over code points:
 *
 *   GPT-2:   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *   SmolLM, StarCoder and kin: first \p{N} (every digit its own piece, the
 *            text between digits another), then the GPT-2 rules inside each
 *            piece.
 *   Llama 3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
 *            ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 *   Qwen2:   Llama 3's with \p{N} (one digit a word) for \p{N}{1,3}
 *
 * Each rule only looks inside the piece it splits: a code point past the
 * piece's end has no class at all, so "\s+(?!\S)" at the end of a piece
 * takes all of its trailing white space.  Contractions are case-sensitive
 * ASCII, as in the GPT-2 regex. */
#include "tokenizer.h"
#include "unicode_class.h"

typedef struct piece {
    const uint32_t *cps;
    size_t          begin, end;
} piece;

static unsigned cls(const piece *p, size_t pos)
{
    return pos >= p->begin && pos < p->end ? pg_cp_class(p->cps[pos]) : 0;
}

static uint32_t cp_at(const piece *p, size_t pos)
{
    return pos >= p->begin && pos < p->end ? p->cps[pos] : 0xffffffffu;
}

static uint32_t ascii_lower(uint32_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* Length of the contraction ('s 't 'm 'd 're 've 'll) at pos, 0 if none;
 * fold: match the letters in either case (Llama 3), else lower case only. */
static size_t contraction_len(const piece *p, size_t pos, int fold)
{
    if (cp_at(p, pos) != '\'' || pos + 1 >= p->end)
        return 0;
    uint32_t n1 = cp_at(p, pos + 1);
    if (fold)
        n1 = ascii_lower(n1);
    if (n1 == 's' || n1 == 't' || n1 == 'm' || n1 == 'd')
        return 2;
    if (pos + 2 >= p->end)
        return 0;
    uint32_t n2 = cp_at(p, pos + 2);
    if (fold)
        n2 = ascii_lower(n2);
    if ((n1 == 'r' && n2 == 'e') || (n1 == 'v' && n2 == 'e') || (n1 == 'l' && n2 == 'l'))
        return 3;
    return 0;
}

/* The splitters append word lengths (code points) as they find the ends:
 * `prev` is where the current word starts, `out` the list. */
#define EMIT(end_)                                                   \
    do {                                                             \
        size_t e_ = (end_);                                          \
        if (e_ > prev)                                               \
            pg_word_list_push(out, e_ - prev);                       \
        prev = e_;                                                   \
    } while (0)

/* Appends the lengths (in code points) of the words of one piece. */
static void split_gpt2(const piece *p, pg_word_list *out)
{
    size_t prev = p->begin, pos = p->begin;
    while (pos < p->end) {
        uint32_t c = cp_at(p, pos);
        unsigned k = cls(p, pos);
        /* 's 't 'm 'd 're 've 'll */
        size_t cl = contraction_len(p, pos, 0);
        if (cl) {
            EMIT(pos + cl);
            pos += cl;
            continue;
        }
        /* an optional leading space, then a run of one class */
        unsigned k2 = c == ' ' ? cls(p, pos + 1) : k;
        if (k2 & PG_CP_LETTER) {
            pos += c == ' ';
            while (cls(p, pos) & PG_CP_LETTER)
                pos++;
            EMIT(pos);
            continue;
        }
        if (k2 & PG_CP_NUMBER) {
            pos += c == ' ';
            while (cls(p, pos) & PG_CP_NUMBER)
                pos++;
            EMIT(pos);
            continue;
        }
        if (k2 && !(k2 & (PG_CP_SPACE | PG_CP_LETTER | PG_CP_NUMBER))) {
            pos += c == ' ';
            for (;;) {
                unsigned kk = cls(p, pos);
                if (!kk || (kk & (PG_CP_SPACE | PG_CP_LETTER | PG_CP_NUMBER)))
                    break;
                pos++;
            }
            EMIT(pos);
            continue;
        }
        size_t ws = 0;
        while (cls(p, pos + ws) & PG_CP_SPACE)
            ws++;
        /* \s+(?!\S): white space before a non-space leaves its last one to
         * lead the next word */
        if (ws > 1 && pos + ws < p->end) {
            pos += ws - 1;
            EMIT(pos);
            continue;
        }
        if (ws > 0) {
            pos += ws;
            EMIT(pos);
            continue;
        }
        EMIT(++pos);   /* nothing matched: one code point alone */
    }
}

static int is_cr_lf(uint32_t c) { return c == '\r' || c == '\n'; }

static void split_llama3(const piece *p, pg_word_list *out, size_t max_digits)
{
    size_t prev = p->begin, pos = p->begin;
    while (pos < p->end) {
        uint32_t c = cp_at(p, pos);
        unsigned k = cls(p, pos);
        /* contractions, either case */
        size_t cl = contraction_len(p, pos, 1);
        if (cl) {
            EMIT(pos + cl);
            pos += cl;
            continue;
        }
        /* [^\r\n\p{L}\p{N}]?\p{L}+: one leading non-letter (not a digit or
         * line break) may lead a run of letters */
        if (!is_cr_lf(c) && !(k & PG_CP_NUMBER) &&
            ((k & PG_CP_LETTER) || (cls(p, pos + 1) & PG_CP_LETTER))) {
            pos++;
            while (cls(p, pos) & PG_CP_LETTER)
                pos++;
            EMIT(pos);
            continue;
        }
        /* \p{N}{1,3} (qwen2: \p{N}) */
        if (k & PG_CP_NUMBER) {
            size_t ini = pos;
            while (cls(p, pos) & PG_CP_NUMBER) {
                if (++pos - ini >= max_digits) {
                    EMIT(pos);
                    ini = pos;
                }
            }
            EMIT(pos);
            continue;
        }
        /* ' '?[^\s\p{L}\p{N}]+[\r\n]* */
        unsigned k2 = c == ' ' ? cls(p, pos + 1) : k;
        if (!(k2 & (PG_CP_SPACE | PG_CP_LETTER | PG_CP_NUMBER)) && k) {
            pos += c == ' ';
            for (;;) {
                unsigned kk = cls(p, pos);
                if (!kk || (kk & (PG_CP_SPACE | PG_CP_LETTER | PG_CP_NUMBER)))
                    break;
                pos++;
            }
            while (pos < p->end && is_cr_lf(cp_at(p, pos)))
                pos++;
            EMIT(pos);
            continue;
        }
        size_t ws = 0, last_crlf_end = 0;
        while (cls(p, pos + ws) & PG_CP_SPACE) {
            if (is_cr_lf(cp_at(p, pos + ws)))
                last_crlf_end = pos + ws + 1;
            ws++;
        }
        if (last_crlf_end) {             /* \s*[\r\n]+ */
            pos = last_crlf_end;
            EMIT(pos);
            continue;
        }
        if (ws > 1 && pos + ws < p->end) {   /* \s+(?!\S) */
            pos += ws - 1;
            EMIT(pos);
            continue;
        }
        if (ws > 0) {
            pos += ws;
            EMIT(pos);
            continue;
        }
        EMIT(++pos);
    }
}

void pg_pretokenize(pg_pretok_kind kind, const uint32_t *cps, size_t n, pg_word_list *out)
{
    if (kind == PG_PRETOK_GPT2 || kind == PG_PRETOK_LLAMA3 || kind == PG_PRETOK_QWEN2) {
        piece p = { cps, 0, n };
        if (kind == PG_PRETOK_GPT2)
            split_gpt2(&p, out);
        else
            split_llama3(&p, out, kind == PG_PRETOK_QWEN2 ? 1 : 3);
        return;
    }
    /* PG_PRETOK_DIGITS: every \p{N} code point is a piece of its own */
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        int digit = i < n && (pg_cp_class(cps[i]) & PG_CP_NUMBER);
        if (i == n || digit) {
            if (i > start) {
                piece p = { cps, start, i };
                split_gpt2(&p, out);
            }
            if (digit)
                pg_word_list_push(out, 1);
            start = i + 1;
        }
    }
}

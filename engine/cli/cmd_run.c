/* cmd_run.c - `peregrine run`: generate text with a GGUF decoder.
 *
 *   peregrine run -m FILE -p PROMPT [-n N] [-t THREADS] [-c CTX] [--chat]
 *                 [--temp T] [--top-k K] [--top-p P] [--repeat-penalty R]
 *                 [--repeat-last-n N] [--seed S] [--ignore-eos]
 *
 * The generated text streams to stdout token by token (a token's bytes as
 * they are: a UTF-8 character split over two tokens is completed by the
 * next write); the prompt is not echoed.  Prefill and decode speeds go to
 * stderr.  Only the public API (peregrine.h) is used.
 *
 * Every argument is checked before anything runs: numbers in full (no
 * trailing text, no overflow) and against the limits run_usage lists.  An
 * error is one line on stderr, "peregrine run: ...", and exit status 2 for
 * a bad command line, 1 for a runtime failure (cmd_run.h).  The order:
 * the options as they come, then -m / -p present and the prompt not empty
 * (all status 2, nothing opened); then the model file (readable, GGUF, -c
 * within its trained context, a chat template it knows for --chat) before
 * the model loads; then the prompt's tokens against the context after.
 * The prompt starts with BOS when the vocabulary asks for one
 * (pg_tokenizer_wants_bos) and its text does not begin with it already. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "peregrine.h"

#include "cmd_run.h"

/* The limits (run_usage states them). */
#define RUN_MAX_THREADS 64          /* the engine's thread pool caps a call at 64 workers */
#define RUN_MAX_TOKENS (1 << 20)    /* -n, -c, --repeat-last-n: the loader's largest context */
#define RUN_MIN_CTX 2               /* -c: room for a prompt token and a new one */
#define RUN_MAX_TEMP 100            /* --temp: 100 is as good as uniform already */
#define RUN_MAX_PENALTY 100         /* --repeat-penalty */
#define RUN_MAX_SEED "18446744073709551615"   /* 2^64 - 1 */

#define WHO "peregrine run"
#define STR_(x) #x
#define STR(x) STR_(x)

int pg_cli_error(int status, const char *who, const char *fmt, ...)
{
    char msg[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *c = msg; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = ' ';
    fflush(stdout);
    fprintf(stderr, "%s: %s\n", who, msg);
    return status;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void run_usage(FILE *f)
{
    fprintf(f,
            "usage: peregrine run -m FILE -p PROMPT [options]\n"
            "Generate text with a GGUF decoder: the continuation streams to stdout, the\n"
            "speeds go to stderr.  Options and their limits:\n"
            "  -m FILE              GGUF decoder (llama, qwen2, qwen3, gemma, gemma2, phi3);\n"
            "                       required\n"
            "  -p PROMPT            the prompt text, not empty; required\n"
            "  -n N                 tokens to generate, 1..%d (default 128); more than\n"
            "                       the context leaves after the prompt is clamped to what\n"
            "                       fits, with a one-line note on stderr\n"
            "  -t THREADS           threads, 1..%d (default: one per online core, at most %d)\n"
            "  -c CTX               context (KV-cache positions), %d..the model's trained\n"
            "                       context (default min(2048, trained)); the prompt must\n"
            "                       have fewer tokens than CTX\n"
            "  --chat               wrap the prompt as a user turn of the file's chat template\n"
            "                       (ChatML, Gemma, Phi-3 or Llama 2 [INST])\n"
            "  --temp T             temperature, 0 <= T <= %d, 0 = greedy (default 0)\n"
            "  --top-k K            keep the K likeliest tokens, 0..%d, 0 = off (default 40)\n"
            "  --top-p P            nucleus mass, 0 < P <= 1, 1 = off (default 0.95)\n"
            "  --repeat-penalty R   0 < R <= %d, 1 = off (default 1.0)\n"
            "  --repeat-last-n N    tokens the penalty looks back over, 0..%d (default 64)\n"
            "  --seed S             sampler seed, 0..%s (default 0)\n"
            "  --ignore-eos         keep going after the end-of-text token\n"
            "  -h, --help           this help (stdout, exit status 0)\n"
            "Numbers are decimal, whole (no trailing text); temperatures and the like finite.\n"
            "Exit status: 0 success; 1 runtime failure (the model file missing, unreadable,\n"
            "not GGUF or unsupported, no known chat template for --chat, a prompt that does not\n"
            "fit the context, an engine error); 2 usage error (unknown option, missing or\n"
            "malformed value, value out of range, -m or -p missing, empty prompt).  Each error\n"
            "is one line on stderr starting with \"peregrine run: \"; nothing is generated.\n",
            RUN_MAX_TOKENS, RUN_MAX_THREADS, RUN_MAX_THREADS, RUN_MIN_CTX, RUN_MAX_TEMP, INT_MAX,
            RUN_MAX_PENALTY, RUN_MAX_TOKENS, RUN_MAX_SEED);
}

/* ---- option values -------------------------------------------------------- */

/* An option value for a message: at most 40 bytes of it. */
static const char *shown(const char *v, char *buf, size_t cap)
{
    size_t n = strlen(v);
    if (n + 1 <= cap && n <= 40)
        return v;
    snprintf(buf, cap, "%.40s...", v);
    return buf;
}

/* A decimal integer in lo..hi, the whole of v. */
static int parse_int(const char *opt, const char *v, long lo, long hi, int *out)
{
    char b[64];
    char *end = NULL;
    errno = 0;
    long x = *v && !isspace((unsigned char)*v) ? strtol(v, &end, 10) : 0;
    if (!end || end == v || *end)
        return pg_cli_error(PG_CLI_USAGE, WHO, "%s '%s' is not an integer (%ld..%ld)", opt,
                            shown(v, b, sizeof b), lo, hi);
    if (errno == ERANGE || x < lo || x > hi)
        return pg_cli_error(PG_CLI_USAGE, WHO, "%s %s is out of range (%ld..%ld)", opt,
                            shown(v, b, sizeof b), lo, hi);
    *out = (int)x;
    return 0;
}

/* A finite number, the whole of v; the range is the caller's. */
static int parse_num(const char *opt, const char *v, double *out)
{
    char b[64];
    char *end = NULL;
    errno = 0;
    double x = *v && !isspace((unsigned char)*v) ? strtod(v, &end) : 0.0;
    if (!end || end == v || *end)
        return pg_cli_error(PG_CLI_USAGE, WHO, "%s '%s' is not a number", opt,
                            shown(v, b, sizeof b));
    if (!isfinite(x) || (errno == ERANGE && fabs(x) >= 1.0))
        return pg_cli_error(PG_CLI_USAGE, WHO, "%s %s is not a finite number", opt,
                            shown(v, b, sizeof b));
    *out = x;   /* an underflow (1e-999) is its nearest double, 0 or subnormal */
    return 0;
}

/* A number with lo <= x <= hi, or lo < x <= hi when lo_open. */
static int parse_range(const char *opt, const char *v, double lo, int lo_open, double hi,
                       const char *what, float *out)
{
    char b[64];
    double x = 0.0;
    if (parse_num(opt, v, &x))
        return PG_CLI_USAGE;
    if (!(lo_open ? x > lo : x >= lo) || !(x <= hi))
        return pg_cli_error(PG_CLI_USAGE, WHO, "%s %s is out of range (%s)", opt,
                            shown(v, b, sizeof b), what);
    *out = (float)x;
    return 0;
}

static int parse_seed(const char *opt, const char *v, uint64_t *out)
{
    char b[64];
    char *end = NULL;
    errno = 0;
    unsigned long long x = isdigit((unsigned char)*v) ? strtoull(v, &end, 10) : 0;
    if (!end || *end)
        return pg_cli_error(PG_CLI_USAGE, WHO, "%s '%s' is not an integer (0..%s)", opt,
                            shown(v, b, sizeof b), RUN_MAX_SEED);
    if (errno == ERANGE)
        return pg_cli_error(PG_CLI_USAGE, WHO, "%s %s is out of range (0..%s)", opt,
                            shown(v, b, sizeof b), RUN_MAX_SEED);
    *out = (uint64_t)x;
    return 0;
}

/* ---- the model file --------------------------------------------------------- */

/* Readable and a regular file: the path and errno's reason if not. */
static int check_model_file(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return pg_cli_error(PG_CLI_RUNTIME, WHO, "cannot open model file '%s': %s", path,
                            strerror(errno));
    struct stat sb;
    int e = fstat(fd, &sb) != 0 ? errno : 0;
    close(fd);
    if (e)
        return pg_cli_error(PG_CLI_RUNTIME, WHO, "cannot stat model file '%s': %s", path,
                            strerror(e));
    if (S_ISDIR(sb.st_mode))
        return pg_cli_error(PG_CLI_RUNTIME, WHO, "model file '%s' is a directory", path);
    if (!S_ISREG(sb.st_mode))
        return pg_cli_error(PG_CLI_RUNTIME, WHO, "model file '%s' is not a regular file", path);
    return 0;
}

/* "<general.architecture>.context_length", 0 if the file has none. */
static int64_t trained_context(const pg_gguf *g)
{
    int64_t i = pg_gguf_find_key(g, "general.architecture");
    const char *arch = NULL;
    uint64_t len = 0;
    int64_t n = 0;
    char key[128];
    if (i < 0 || pg_gguf_get_string(g, i, &arch, &len) != PG_OK || len > 64)
        return 0;
    snprintf(key, sizeof key, "%.*s.context_length", (int)len, arch);
    i = pg_gguf_find_key(g, key);
    if (i < 0 || pg_gguf_get_int(g, i, &n) != PG_OK || n < 0)
        return 0;
    return n;
}

/* The ChatML default system turn a template writes when the conversation has
 * none: the literal from '<|im_start|>system' to its '<|im_end|>' after
 * "loop.first", with Jinja's \n escapes expanded.  "" if there is none. */
static void default_system(const char *tpl, size_t len, char *out, size_t cap)
{
    out[0] = 0;
    const char *end = tpl + len;
    const char *lf = strstr(tpl, "loop.first");
    if (!lf || lf >= end)
        return;
    const char *s = strstr(lf, "<|im_start|>system");
    if (!s || s >= end)
        return;
    const char *e = strstr(s, "<|im_end|>");
    if (!e || e >= end)
        return;
    e += strlen("<|im_end|>");
    size_t o = 0;
    for (const char *p = s; p < e && o + 2 < cap; p++) {
        if (p[0] == '\\' && p + 1 < e && p[1] == 'n') {
            out[o++] = '\n';
            p++;
        } else {
            out[o++] = *p;
        }
    }
    out[o++] = '\n';   /* the template's + '\n' after the literal */
    out[o] = 0;
}

/* A copy of s without its leading and trailing white space (Jinja's trim
 * and Python's strip, which the Gemma and Llama 2 templates apply). */
static void trimmed(const char *s, const char **b, size_t *n)
{
    const char *e = s + strlen(s);
    while (*s && isspace((unsigned char)*s))
        s++;
    while (e > s && isspace((unsigned char)e[-1]))
        e--;
    *b = s;
    *n = (size_t)(e - s);
}

/* prompt -> the text of one user turn (malloc'd) in the file's template:
 * ChatML (with its default system turn), or one of the forms SentencePiece
 * files ship, recognised by their markers as llama.cpp's built-in templates
 * are - Gemma (<start_of_turn>), Phi-3 (<|user|> ... <|end|>), Llama 2
 * ([INST]); their bos_token is left to the BOS the vocabulary asks for.
 * NULL and *why set if the template is missing or none of these, or memory
 * ran out. */
static char *chat_prompt(const pg_gguf *g, const char *prompt, const char **why)
{
    int64_t i = pg_gguf_find_key(g, "tokenizer.chat_template");
    const char *tpl = NULL;
    uint64_t len = 0;
    char sys[1024] = "";
    char *out = NULL;
    *why = "has no chat template (tokenizer.chat_template)";
    if (i < 0 || pg_gguf_get_string(g, i, &tpl, &len) != PG_OK)
        return NULL;
    char *t = malloc(len + 1);
    *why = "out of memory";
    if (!t)
        return NULL;
    memcpy(t, tpl, len);
    t[len] = 0;
    *why = "has a chat template that is not ChatML, Gemma, Phi-3 or Llama 2";
    const char *b;
    size_t bn, n = strlen(prompt) + 64;
    trimmed(prompt, &b, &bn);
    if (strstr(t, "<|im_start|>")) {
        default_system(t, len, sys, sizeof(sys));
        n += strlen(sys);
        out = malloc(n);
        *why = "out of memory";
        if (out)
            snprintf(out, n, "%s<|im_start|>user\n%s<|im_end|>\n<|im_start|>assistant\n", sys,
                     prompt);
    } else if (strstr(t, "<start_of_turn>")) {
        out = malloc(n);
        *why = "out of memory";
        if (out)
            snprintf(out, n, "<start_of_turn>user\n%.*s<end_of_turn>\n<start_of_turn>model\n",
                     (int)bn, b);
    } else if (strstr(t, "<|user|>") && strstr(t, "<|end|>")) {
        out = malloc(n);
        *why = "out of memory";
        if (out)
            snprintf(out, n, "<|user|>\n%s<|end|>\n<|assistant|>\n", prompt);
    } else if (strstr(t, "[INST]")) {
        out = malloc(n);
        *why = "out of memory";
        if (out)
            snprintf(out, n, "[INST] %.*s [/INST]", (int)bn, b);
    }
    free(t);
    return out;
}

/* ---- the command ------------------------------------------------------------ */

typedef struct run_args {
    const char *model, *prompt;
    int n_new, n_set, chat, ignore_eos;
    pg_llm_options opt;
    pg_sampler_params sp;
} run_args;

/* 0 and *a filled, -1 for --help (printed), or the exit status of an error. */
static int parse_args(int argc, char **argv, run_args *a)
{
    memset(a, 0, sizeof *a);
    a->n_new = 128;
    pg_sampler_default_params(&a->sp);
    a->sp.temperature = 0.0f;
    for (int i = 2; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            run_usage(stdout);
            return -1;
        }
        if (!strcmp(o, "--chat")) {
            a->chat = 1;
            continue;
        }
        if (!strcmp(o, "--ignore-eos")) {
            a->ignore_eos = 1;
            continue;
        }
        static const char *const valued[] = { "-m", "-p", "-n", "-t", "-c", "--temp", "--top-k",
                                              "--top-p", "--repeat-penalty", "--repeat-last-n",
                                              "--seed" };
        int known = 0;
        for (size_t k = 0; k < sizeof valued / sizeof *valued; k++)
            known |= !strcmp(o, valued[k]);
        char b[64];
        if (!known) {
            if (o[0] == '-' && o[1])
                return pg_cli_error(PG_CLI_USAGE, WHO, "unknown option '%s' (see peregrine run "
                                    "--help)", shown(o, b, sizeof b));
            return pg_cli_error(PG_CLI_USAGE, WHO, "unexpected argument '%s' (the prompt goes "
                                "after -p; see peregrine run --help)", shown(o, b, sizeof b));
        }
        if (i + 1 >= argc)
            return pg_cli_error(PG_CLI_USAGE, WHO, "option %s needs a value (see peregrine run "
                                "--help)", o);
        const char *v = argv[++i];
        int r = 0, k = 0;
        if (!strcmp(o, "-m")) {
            if (!*v)
                return pg_cli_error(PG_CLI_USAGE, WHO, "-m: the model path is empty");
            a->model = v;
        } else if (!strcmp(o, "-p")) {
            a->prompt = v;
        } else if (!strcmp(o, "-n")) {
            r = parse_int(o, v, 1, RUN_MAX_TOKENS, &a->n_new);
            a->n_set = 1;
        } else if (!strcmp(o, "-t")) {
            r = parse_int(o, v, 1, RUN_MAX_THREADS, &a->opt.threads);
        } else if (!strcmp(o, "-c")) {
            r = parse_int(o, v, RUN_MIN_CTX, RUN_MAX_TOKENS, &a->opt.n_ctx);
        } else if (!strcmp(o, "--temp")) {
            r = parse_range(o, v, 0.0, 0, RUN_MAX_TEMP, "0 <= T <= " STR(RUN_MAX_TEMP),
                            &a->sp.temperature);
        } else if (!strcmp(o, "--top-k")) {
            r = parse_int(o, v, 0, INT_MAX, &a->sp.top_k);
        } else if (!strcmp(o, "--top-p")) {
            r = parse_range(o, v, 0.0, 1, 1.0, "0 < P <= 1", &a->sp.top_p);
        } else if (!strcmp(o, "--repeat-penalty")) {
            r = parse_range(o, v, 0.0, 1, RUN_MAX_PENALTY, "0 < R <= " STR(RUN_MAX_PENALTY),
                            &a->sp.repeat_penalty);
        } else if (!strcmp(o, "--repeat-last-n")) {
            r = parse_int(o, v, 0, RUN_MAX_TOKENS, &k);
            a->sp.repeat_last_n = k;
        } else {
            r = parse_seed(o, v, &a->sp.seed);
        }
        if (r)
            return r;
    }
    if (!a->model)
        return pg_cli_error(PG_CLI_USAGE, WHO, "missing -m FILE (usage: peregrine run -m FILE "
                            "-p PROMPT [options]; see peregrine run --help)");
    if (!a->prompt)
        return pg_cli_error(PG_CLI_USAGE, WHO, "missing -p PROMPT (usage: peregrine run -m FILE "
                            "-p PROMPT [options]; see peregrine run --help)");
    if (!*a->prompt)
        return pg_cli_error(PG_CLI_USAGE, WHO, "the prompt (-p) is empty");
    return 0;
}

/* The file checks before the model loads: readable, GGUF, -c within the
 * trained context; the ChatML text for --chat into *text. */
static int check_model(const run_args *a, char **text)
{
    int r = check_model_file(a->model);
    if (r)
        return r;
    pg_gguf *g = NULL;
    if (pg_gguf_open(a->model, &g) != PG_OK)
        return pg_cli_error(PG_CLI_RUNTIME, WHO, "%s", pg_last_error());
    int64_t trained = trained_context(g);
    if (a->opt.n_ctx && trained > 0 && a->opt.n_ctx > trained)
        r = pg_cli_error(PG_CLI_USAGE, WHO, "-c %d is out of range (%d..%lld, the trained "
                         "context of %s)", a->opt.n_ctx, RUN_MIN_CTX, (long long)trained,
                         a->model);
    if (!r && a->chat) {
        const char *why = "";
        *text = chat_prompt(g, a->prompt, &why);
        if (!*text)
            r = pg_cli_error(PG_CLI_RUNTIME, WHO, "--chat: %s %s", a->model, why);
    }
    pg_gguf_close(g);
    return r;
}

int cmd_run(int argc, char **argv)
{
    run_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc < 0 ? PG_CLI_OK : rc;
    char *text = NULL;
    if ((rc = check_model(&a, &text)) != 0)
        return rc;
    const char *in = text ? text : a.prompt;

    pg_llm *m = NULL;
    pg_sampler *s = NULL;
    int32_t *ids = NULL;
    rc = PG_CLI_RUNTIME;
    double t0 = now_s();
    if (pg_llm_load(a.model, &a.opt, &m) != PG_OK) {
        const char *e = pg_last_error();   /* "llm: ..." messages do not name the file */
        pg_cli_error(PG_CLI_RUNTIME, WHO, "%s%s%s", strstr(e, a.model) ? "" : a.model,
                     strstr(e, a.model) ? "" : ": ", e);
        goto out;
    }
    double t_load = now_s() - t0;
    const pg_tokenizer *tok = pg_llm_tokenizer(m);
    int32_t bos = pg_tokenizer_bos(tok);
    int add_bos = pg_tokenizer_wants_bos(tok);
    size_t n_ids = 0, cap = strlen(in) + 8;
    for (int attempt = 0;; attempt++) {   /* invalid bytes can take more than one id each */
        free(ids);
        ids = malloc(cap * sizeof(int32_t));
        if (!ids) {
            pg_cli_error(PG_CLI_RUNTIME, WHO, "out of memory for %zu prompt tokens", cap);
            goto out;
        }
        pg_status st = pg_tokenize(tok, in, strlen(in), 0, 1, ids + 1, cap - 1, &n_ids);
        if (st == PG_OK) {
            if (add_bos && (n_ids == 0 || ids[1] != bos))
                ids[0] = bos, n_ids++;   /* the BOS the vocabulary asks for */
            else
                memmove(ids, ids + 1, n_ids * sizeof *ids);
            break;
        }
        if (st != PG_ERR_SHAPE || attempt > 0 || n_ids < cap)
            goto fail;
        cap = n_ids + 1;
    }
    pg_llm_info info;
    pg_llm_get_info(m, &info);
    if (n_ids == 0) {
        pg_cli_error(PG_CLI_RUNTIME, WHO, "the prompt has no tokens");
        goto out;
    }
    if (n_ids >= (size_t)info.n_ctx) {
        if (a.opt.n_ctx || info.n_ctx >= info.n_ctx_train)
            pg_cli_error(PG_CLI_RUNTIME, WHO, "the prompt is %zu tokens; the context (%s %d) "
                         "must be longer: shorten the prompt%s", n_ids,
                         a.opt.n_ctx ? "-c" : "the model's", info.n_ctx,
                         info.n_ctx < info.n_ctx_train ? " or raise -c" : "");
        else
            pg_cli_error(PG_CLI_RUNTIME, WHO, "the prompt is %zu tokens; the context (default "
                         "%d) must be longer: raise -c (up to %d) or shorten the prompt", n_ids,
                         info.n_ctx, info.n_ctx_train);
        goto out;
    }
    int n_new = a.n_new;
    if ((size_t)n_new > (size_t)info.n_ctx - n_ids) {
        n_new = (int)((size_t)info.n_ctx - n_ids);
        pg_cli_error(0, WHO, "note: -n %d clamped to %d, what the context of %d leaves after "
                     "the %zu-token prompt",
                     a.n_new, n_new, info.n_ctx, n_ids);
    }
    if (pg_sampler_new(&a.sp, pg_llm_vocab(m), &s) != PG_OK)
        goto fail;
    for (size_t i = 0; i < n_ids; i++)
        pg_sampler_accept(s, ids[i]);
    /* the ends of a turn the templates write, as llama.cpp's end-of-generation texts */
    static const char *const stops[] = { "<|im_end|>", "<|endoftext|>", "<end_of_turn>", "<|end|>",
                                         "<|eot_id|>" };
    int32_t stop_ids[sizeof stops / sizeof *stops];
    for (size_t k = 0; k < sizeof stops / sizeof *stops; k++)
        stop_ids[k] = pg_tokenizer_find(tok, stops[k]);

    double t1 = now_s();
    if (pg_llm_eval(m, ids, n_ids, NULL, 0) != PG_OK)
        goto fail;
    double t_prefill = now_s() - t1;

    /* prompt + n_new <= n_ctx: the n_new - 1 evaluated tokens always fit */
    int produced = 0;
    double t2 = now_s();
    char piece[256];
    for (; produced < n_new; produced++) {
        int32_t t;
        /* the last token needs no evaluation: sample it only */
        int last = produced == n_new - 1;
        pg_status st = last ? pg_sample(s, pg_llm_logits(m), &t) : pg_llm_decode_next(m, s, &t);
        if (st != PG_OK)
            goto fail;
        int stop = t == info.eos;
        for (size_t k = 0; k < sizeof stops / sizeof *stops; k++)
            stop |= t == stop_ids[k];
        if (!a.ignore_eos && stop) {
            produced++;
            break;
        }
        size_t n = 0;
        if (pg_token_to_piece(tok, t, 0, piece, sizeof(piece), &n) == PG_OK) {
            fwrite(piece, 1, n, stdout);
            fflush(stdout);
        }
    }
    double t_decode = now_s() - t2;
    printf("\n");
    fflush(stdout);
    fprintf(stderr,
            "\n[peregrine run] %s, %d threads; load %.2f s\n"
            "[peregrine run] prefill %zu tokens in %.3f s: %.1f tokens/s\n"
            "[peregrine run] decode  %d tokens in %.3f s: %.1f tokens/s\n",
            info.name, info.threads, t_load, n_ids, t_prefill,
            t_prefill > 0 ? (double)n_ids / t_prefill : 0.0, produced, t_decode,
            t_decode > 0 ? produced / t_decode : 0.0);
    rc = PG_CLI_OK;
    goto out;
fail:
    pg_cli_error(PG_CLI_RUNTIME, WHO, "%s", pg_last_error());
out:
    pg_sampler_free(s);
    pg_llm_free(m);
    free(ids);
    free(text);
    return rc;
}

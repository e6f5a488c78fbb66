/* cmd_run.c - `peregrine run`: generate text with a GGUF decoder.
 *
 *   peregrine run -m FILE -p PROMPT [-n N] [-t THREADS] [-c CTX] [--chat]
 *                 [--temp T] [--top-k K] [--top-p P] [--repeat-penalty R]
 *                 [--repeat-last-n N] [--seed S]
 *
 * The generated text streams to stdout token by token (a token's bytes as
 * they are: a UTF-8 character split over two tokens is completed by the
 * next write); the prompt is not echoed.  Prefill and decode speeds go to
 * stderr.  Only the public API (peregrine.h) is used. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "peregrine.h"

#include "cmd_run.h"

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
            "  -m FILE              GGUF model (llama architecture, q4_1 / q8_0)\n"
            "  -p PROMPT            the prompt text\n"
            "  -n N                 tokens to generate (default 128)\n"
            "  -t THREADS           threads (default: one per core)\n"
            "  -c CTX               KV-cache positions (default min(2048, trained))\n"
            "  --chat               wrap the prompt as a user turn of the file's ChatML template\n"
            "  --temp T             temperature, 0 = greedy (default 0)\n"
            "  --top-k K            (default 40)      --top-p P  (default 0.95)\n"
            "  --repeat-penalty R   (default 1.0)     --repeat-last-n N (default 64)\n"
            "  --seed S             sampler seed (default 0)\n"
            "  --ignore-eos         keep going after the end-of-text token\n");
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

/* prompt -> ChatML text (malloc'd), NULL if the file's template is not ChatML. */
static char *chat_prompt(const char *model, const char *prompt)
{
    pg_gguf *g;
    if (pg_gguf_open(model, &g) != PG_OK)
        return NULL;
    int64_t i = pg_gguf_find_key(g, "tokenizer.chat_template");
    const char *tpl = NULL;
    uint64_t len = 0;
    char sys[1024] = "";
    char *out = NULL;
    if (i >= 0 && pg_gguf_get_string(g, i, &tpl, &len) == PG_OK) {
        char *t = malloc(len + 1);
        if (t) {
            memcpy(t, tpl, len);
            t[len] = 0;
            if (strstr(t, "<|im_start|>")) {
                default_system(t, len, sys, sizeof(sys));
                size_t n = strlen(sys) + strlen(prompt) + 64;
                out = malloc(n);
                if (out)
                    snprintf(out, n, "%s<|im_start|>user\n%s<|im_end|>\n<|im_start|>assistant\n",
                             sys, prompt);
            }
            free(t);
        }
    }
    pg_gguf_close(g);
    return out;
}

int cmd_run(int argc, char **argv)
{
    const char *model = NULL, *prompt = NULL;
    int n_new = 128, chat = 0, ignore_eos = 0;
    pg_llm_options opt = { 0, 0, 0 };
    pg_sampler_params sp;
    pg_sampler_default_params(&sp);
    sp.temperature = 0.0f;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define TAKE(name) (!strcmp(a, name) && v && (i++, 1))
        if (TAKE("-m")) model = v;
        else if (TAKE("-p")) prompt = v;
        else if (TAKE("-n")) n_new = atoi(v);
        else if (TAKE("-t")) opt.threads = atoi(v);
        else if (TAKE("-c")) opt.n_ctx = atoi(v);
        else if (TAKE("--temp")) sp.temperature = (float)atof(v);
        else if (TAKE("--top-k")) sp.top_k = atoi(v);
        else if (TAKE("--top-p")) sp.top_p = (float)atof(v);
        else if (TAKE("--repeat-penalty")) sp.repeat_penalty = (float)atof(v);
        else if (TAKE("--repeat-last-n")) sp.repeat_last_n = atoi(v);
        else if (TAKE("--seed")) sp.seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--chat")) chat = 1;
        else if (!strcmp(a, "--ignore-eos")) ignore_eos = 1;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            run_usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "peregrine run: unknown or incomplete option '%s'\n", a);
            run_usage(stderr);
            return 2;
        }
#undef TAKE
    }
    if (!model || !prompt || n_new < 0 || opt.threads < 0 || opt.n_ctx < 0) {
        run_usage(stderr);
        return 2;
    }
    char *text = chat ? chat_prompt(model, prompt) : NULL;
    if (chat && !text) {
        fprintf(stderr, "peregrine run: %s has no ChatML chat template (or could not be read)\n",
                model);
        return 1;
    }
    const char *in = text ? text : prompt;

    pg_llm *m = NULL;
    pg_sampler *s = NULL;
    int32_t *ids = NULL;
    int rc = 1;
    double t0 = now_s();
    if (pg_llm_load(model, &opt, &m) != PG_OK)
        goto fail;
    double t_load = now_s() - t0;
    const pg_tokenizer *tok = pg_llm_tokenizer(m);
    size_t n_ids = 0, cap = strlen(in) + 8;
    ids = malloc(cap * sizeof(int32_t));
    if (!ids || pg_tokenize(tok, in, strlen(in), 0, 1, ids, cap, &n_ids) != PG_OK)
        goto fail;
    if (n_ids == 0) {
        fprintf(stderr, "peregrine run: the prompt has no tokens\n");
        goto done;
    }
    if (pg_sampler_new(&sp, pg_llm_vocab(m), &s) != PG_OK)
        goto fail;
    for (size_t i = 0; i < n_ids; i++)
        pg_sampler_accept(s, ids[i]);
    pg_llm_info info;
    pg_llm_get_info(m, &info);
    int32_t im_end = pg_tokenizer_find(tok, "<|im_end|>");
    int32_t eot = pg_tokenizer_find(tok, "<|endoftext|>");

    double t1 = now_s();
    if (pg_llm_eval(m, ids, n_ids, NULL, 0) != PG_OK)
        goto fail;
    double t_prefill = now_s() - t1;

    int produced = 0;
    double t2 = now_s();
    char piece[256];
    for (; produced < n_new; produced++) {
        int32_t t;
        /* the last token needs no evaluation: sample it only */
        int last = produced == n_new - 1 || (int)n_ids + produced + 1 >= info.n_ctx;
        pg_status st = last ? pg_sample(s, pg_llm_logits(m), &t) : pg_llm_decode_next(m, s, &t);
        if (st != PG_OK)
            goto fail;
        if (!ignore_eos && (t == info.eos || t == im_end || t == eot)) {
            produced++;
            break;
        }
        size_t n = 0;
        if (pg_token_to_piece(tok, t, 0, piece, sizeof(piece), &n) == PG_OK) {
            fwrite(piece, 1, n, stdout);
            fflush(stdout);
        }
        if (last) {
            produced++;
            break;
        }
    }
    double t_decode = now_s() - t2;
    printf("\n");
    fprintf(stderr,
            "\n[peregrine run] %s, %d threads; load %.2f s\n"
            "[peregrine run] prefill %zu tokens in %.3f s: %.1f tokens/s\n"
            "[peregrine run] decode  %d tokens in %.3f s: %.1f tokens/s\n",
            info.name, info.threads, t_load, n_ids, t_prefill,
            t_prefill > 0 ? (double)n_ids / t_prefill : 0.0, produced, t_decode,
            t_decode > 0 ? produced / t_decode : 0.0);
done:
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "peregrine run: %s\n", pg_last_error());
out:
    pg_sampler_free(s);
    pg_llm_free(m);
    free(ids);
    free(text);
    return rc;
}

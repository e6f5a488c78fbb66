/* cmd_run.h - `peregrine run` (cmd_run.c): text generation from a GGUF file,
 * and the error convention every subcommand of the tool shares. */
#ifndef PG_CLI_CMD_RUN_H
#define PG_CLI_CMD_RUN_H

/* Exit statuses of the tool (listed in every --help). */
enum {
    PG_CLI_OK = 0,
    PG_CLI_RUNTIME = 1,   /* a runtime failure: the model file, the engine, the prompt's fit */
    PG_CLI_USAGE = 2      /* a bad command line: unknown option, missing or malformed value,
                             value out of range, empty prompt */
};

#if defined(__GNUC__) || defined(__clang__)
#define PG_CLI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define PG_CLI_PRINTF(f, a)
#endif

/* Print exactly one line to stderr, "<who>: <message>\n" (who: "peregrine",
 * "peregrine run", ...), with any control character of the message (a
 * newline in an argument or an engine message) shown as a space.  Returns
 * status, so that `return pg_cli_error(PG_CLI_USAGE, ...)` ends a command. */
int pg_cli_error(int status, const char *who, const char *fmt, ...) PG_CLI_PRINTF(3, 4);

/* argv[1] is "run"; options from argv[2].  Returns the exit status. */
int cmd_run(int argc, char **argv);

#endif

/* cmd_run.h - `peregrine run` (cmd_run.c): text generation from a GGUF file. */
#ifndef PG_CLI_CMD_RUN_H
#define PG_CLI_CMD_RUN_H

/* argv[1] is "run"; options from argv[2].  Returns the exit status. */
int cmd_run(int argc, char **argv);

#endif

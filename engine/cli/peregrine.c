/* peregrine.c - the command-line tool.
 *
 *   peregrine info      the CPU, the dispatch level and the variant each op picks
 *   peregrine run       generate text with a GGUF decoder (cmd_run.c)
 *
 * Exit status 0, 1 for a runtime failure, 2 for a bad command line; every
 * error is one line on stderr (pg_cli_error, cmd_run.h). */
#include <stdio.h>
#include <string.h>

#include "peregrine.h"

#include "cmd_run.h"

static void print_bytes(const char *label, int bytes)
{
    if (bytes >= 1 << 20)
        printf("  %-6s %d MiB\n", label, bytes >> 20);
    else if (bytes > 0)
        printf("  %-6s %d KiB\n", label, bytes >> 10);
    else
        printf("  %-6s unknown\n", label);
}

static int cmd_info(void)
{
    pg_cpu_info ci;
    if (pg_cpu_get_info(&ci) != PG_OK) {
        return pg_cli_error(PG_CLI_RUNTIME, "peregrine info", "%s", pg_last_error());
    }
    printf("Peregrine %s\n", pg_version());
    printf("cpu      %s %s%s%s\n", ci.arch, ci.vendor, ci.brand[0] ? " / " : "", ci.brand);
    printf("cores    %d\n", ci.cores);
    printf("flags   ");
    for (int b = 0; b < 64; b++) {
        uint64_t bit = (uint64_t)1 << b;
        if ((ci.flags & bit) && pg_cpu_flag_name(bit))
            printf(" %s%s", pg_cpu_flag_name(bit), (ci.active & bit) ? "" : "(masked)");
    }
    printf("\nlevel    %s (%d-bit vectors)", ci.level, ci.vector_bits);
    if (ci.sve_bits)
        printf(", SVE %d-bit", ci.sve_bits);
    printf("\ncaches\n");
    print_bytes("L1d", ci.l1d_bytes);
    print_bytes("L2", ci.l2_bytes);
    print_bytes("L3", ci.l3_bytes);
    printf("dispatch\n");
    for (int op = 0; op < pg_kernel_family_count(); op++) {
        pg_variant_info vi;
        if (pg_variant_get_info(op, pg_variant_selected(op), &vi) == PG_OK)
            printf("  %-14s %s\n", pg_kernel_family_name(op), vi.name);
    }
    return 0;
}

static void info_usage(FILE *f)
{
    fprintf(f, "usage: peregrine info\n"
               "The CPU, its features and caches, the dispatch level and the kernel variant\n"
               "each kernel family picks.  No options (-h, --help: this help on stdout).\n"
               "environment: PEREGRINE_CPU_MASK=LEVEL restricts dispatch (c, avx2, neon, ...)\n"
               "Exit status: 0 success; 1 the CPU could not be read; 2 usage error (any\n"
               "argument).  Each error is one line on stderr starting with \"peregrine info: \".\n");
}

static void usage(FILE *f)
{
    fprintf(f, "usage: peregrine info | peregrine run -m FILE -p PROMPT [options]\n"
               "  info   CPU features, caches, dispatch level and the kernel each op uses\n"
               "         (peregrine info --help)\n"
               "  run    generate text with a GGUF model; options and their limits:\n"
               "         peregrine run --help\n"
               "  -h, --help   this help on stdout, exit status 0\n"
               "environment: PEREGRINE_CPU_MASK=LEVEL restricts dispatch (c, avx2, neon, ...)\n"
               "Exit status: 0 success; 1 runtime failure (a model file that cannot be read or\n"
               "used, an engine error); 2 usage error (unknown command or option, a missing,\n"
               "malformed or out-of-range value).  Each error is one line on stderr starting\n"
               "with \"peregrine: \" (or \"peregrine run: \", \"peregrine info: \").\n");
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return pg_cli_error(PG_CLI_USAGE, "peregrine", "missing command (usage: peregrine info | "
                            "peregrine run -m FILE -p PROMPT [options]; see peregrine --help)");
    const char *c = argv[1];
    if (!strcmp(c, "-h") || !strcmp(c, "--help")) {
        usage(stdout);
        return PG_CLI_OK;
    }
    if (!strcmp(c, "run"))
        return cmd_run(argc, argv);
    if (!strcmp(c, "info")) {
        if (argc == 3 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"))) {
            info_usage(stdout);
            return PG_CLI_OK;
        }
        if (argc > 2)
            return pg_cli_error(PG_CLI_USAGE, "peregrine info", "%s '%.40s' (info takes no "
                                "options; see peregrine info --help)",
                                argv[2][0] == '-' ? "unknown option" : "unexpected argument",
                                argv[2]);
        return cmd_info();
    }
    return pg_cli_error(PG_CLI_USAGE, "peregrine", "%s '%.40s' (commands: info, run; see "
                        "peregrine --help)", c[0] == '-' ? "unknown option" : "unknown command",
                        c);
}

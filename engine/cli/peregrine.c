/* peregrine.c - the command-line tool.
 *
 *   peregrine info      the CPU, the dispatch level and the variant each op picks
 *   peregrine run       generate text with a GGUF decoder (cmd_run.c)
 */
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
        fprintf(stderr, "peregrine: %s\n", pg_last_error());
        return 1;
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

static void usage(FILE *f)
{
    fprintf(f, "usage: peregrine info | peregrine run -m FILE -p PROMPT [-n N] [-t T] [--chat] ...\n"
               "  info   CPU features, caches, dispatch level and the kernel each op uses\n"
               "  run    generate text with a GGUF model (peregrine run --help)\n"
               "environment: PEREGRINE_CPU_MASK=LEVEL restricts dispatch (c, avx2, neon, ...)\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "info"))
        return cmd_info();
    if (!strcmp(argv[1], "run"))
        return cmd_run(argc, argv);
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "peregrine: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}

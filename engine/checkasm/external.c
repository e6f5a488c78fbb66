/* external.c - check one function from outside the engine against a kernel family's
 * C reference, with that op's own check (sizes, tolerances, register
 * canaries, guard bytes, crash recovery):
 *
 *   checkasm --load=./kernel.so --symbol=my_vadd --family=vadd [--bench]
 *
 * The notebook's %%peregrine kernel cell assembles a user's routine into a
 * shared library and runs this in a subprocess, so a crash in the user's
 * code is a message, never a dead Jupyter kernel.
 *
 * How: the op's check walks its table and asks checkasm_check_variant()
 * which slots to test.  In external mode the first slot (v = 0, never the
 * reference) stands for the loaded function: checkasm_external_variant()
 * hands back a variant record naming the user's symbol, stored into the
 * member of pg_kernel_fn the family's table uses (its fn_member), and
 * checkasm_variant_fn() (behind checkasm_set_funcs) returns it, so the
 * op's check calls it through the family's own prototype.
 * Every other slot (of every op, at every level) is skipped, so the walk
 * checks the loaded function exactly once. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkasm.h"
#include "external.h"

static struct {
    const char *lib_path, *symbol, *op_name;
    const pg_kernel_family *op;
    pg_variant variant;
    void *handle;
} ext;

int checkasm_external_arg(const char *a)
{
    if (!strncmp(a, "--load=", 7))
        ext.lib_path = a + 7;
    else if (!strncmp(a, "--symbol=", 9))
        ext.symbol = a + 9;
    else if (!strncmp(a, "--family=", 9))
        ext.op_name = a + 9;
    else
        return 0;
    return 1;
}

int checkasm_external_enabled(void)
{
    return ext.lib_path || ext.symbol || ext.op_name;
}

int checkasm_external_load(int (*has_check)(const char *op))
{
    if (!ext.lib_path || !ext.symbol || !ext.op_name) {
        fprintf(stderr, "checkasm: --load, --symbol and --family go together\n");
        return 0;
    }
    ext.op = pg_kernel_family_by_name(ext.op_name);
    if (!ext.op) {
        fprintf(stderr, "checkasm: unknown op '%s'\n", ext.op_name);
        return 0;
    }
    if (!has_check(ext.op_name)) {
        fprintf(stderr, "checkasm: op '%s' has no check to run an external function through\n",
                ext.op_name);
        return 0;
    }
    if (ext.op->count < 2) {
        /* the checks only visit slots before the reference */
        fprintf(stderr, "checkasm: op '%s' has no assembly slot on this architecture\n",
                ext.op_name);
        return 0;
    }
    ext.handle = dlopen(ext.lib_path, RTLD_NOW | RTLD_LOCAL);
    if (!ext.handle) {
        fprintf(stderr, "checkasm: cannot load %s: %s\n", ext.lib_path, dlerror());
        return 0;
    }
    void *sym = dlsym(ext.handle, ext.symbol);
    if (!sym) {
        fprintf(stderr, "checkasm: %s does not export '%s' (declare it with PG_FUNC)\n",
                ext.lib_path, ext.symbol);
        return 0;
    }
    ext.variant.name = ext.symbol;
    ext.variant.isa = "external";
    ext.variant.required = 0;
    /* POSIX makes dlsym's void * convertible to a function pointer */
    switch (ext.op->fn_member) {
#define STORE_(member, name, ...)                                                          \
    case PG_KERNEL_FN_##member: ext.variant.fn.member = (name)sym; break;
        PG_KERNEL_FN_LIST(STORE_)
#undef STORE_
    default:
        fprintf(stderr, "checkasm: op '%s' records no entry-point type\n", ext.op_name);
        return 0;
    }
    ext.variant.params = ext.op->variants[0].params;
    return 1;
}

const pg_variant *checkasm_external_variant(const pg_kernel_family *op, int v)
{
    if (!checkasm_external_enabled())
        return &op->variants[v];
    return op == ext.op && v == 0 ? &ext.variant : NULL;
}

static const char *member_name(int member)
{
#define NAME_(m, ...) #m,
    static const char *const names[] = { "none", PG_KERNEL_FN_LIST(NAME_) };
#undef NAME_
    return member >= 0 && member < PG_COUNTOF(names) ? names[member] : "?";
}

const pg_kernel_fn *checkasm_variant_fn(const pg_kernel_family *op, int v, int member)
{
    if ((int)op->fn_member != member) {
        /* the check's declare_func names another member than the table sets:
         * a bug in the check, so stop rather than call through the wrong type */
        fprintf(stderr, "checkasm: the check of %s has declare_func(%s), its table sets .fn.%s\n",
                op->name, member_name(member), member_name((int)op->fn_member));
        abort();
    }
    if (checkasm_external_enabled() && op == ext.op && v == 0)
        return &ext.variant.fn;
    return &op->variants[v].fn;
}

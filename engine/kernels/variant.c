/* variant.c - dispatch over variant tables and the public op listing. */
#include <string.h>

#include "../core/cpu.h"
#include "../core/error.h"
#include "variant.h"

const pg_variant *pg_kernel_select(const pg_kernel_family *op)
{
    uint64_t active = pg_cpu_active_flags();
    for (int i = 0; i < op->count; i++)
        if ((op->variants[i].required & active) == op->variants[i].required &&
            pg_variant_self_check(op, &op->variants[i]))
            return &op->variants[i];
    return &op->variants[op->count - 1];
}

const pg_variant *pg_kernel_select_fitting(const pg_kernel_family *op,
                                           int (*fits)(const pg_variant *v, const void *ctx),
                                           const void *ctx)
{
    uint64_t active = pg_cpu_active_flags();
    for (int i = 0; i < op->count; i++)
        if ((op->variants[i].required & active) == op->variants[i].required &&
            fits(&op->variants[i], ctx) && pg_variant_self_check(op, &op->variants[i]))
            return &op->variants[i];
    return NULL;
}

int pg_variant_index(const pg_kernel_family *op, const pg_variant *v)
{
    ptrdiff_t i = v - op->variants;
    return (i >= 0 && i < op->count) ? (int)i : -1;
}

const pg_variant *pg_kernel_variant_checked(const pg_kernel_family *op, int index)
{
    if (index < 0)
        return pg_kernel_select(op);
    if (index >= op->count) {
        pg_fail(PG_ERR_INVALID_ARG, "%s has no variant %d (it has %d)", op->name, index, op->count);
        return NULL;
    }
    const pg_variant *v = &op->variants[index];
    uint64_t have = pg_cpu_caps_get()->flags;
    if ((v->required & have) != v->required) {
        pg_fail(PG_ERR_UNSUPPORTED, "%s variant %s needs %s, which this CPU does not have",
                op->name, v->name, v->isa);
        return NULL;
    }
    return v;
}

const pg_kernel_family *pg_kernel_family_by_name(const char *name)
{
    int n = 0;
    const pg_kernel_family *const *ops = pg_kernel_families_all(&n);
    for (int i = 0; i < n; i++)
        if (!strcmp(ops[i]->name, name))
            return ops[i];
    return NULL;
}

static const pg_kernel_family *op_at(int i)
{
    int n = 0;
    const pg_kernel_family *const *ops = pg_kernel_families_all(&n);
    if (i < 0 || i >= n) {
        pg_fail(PG_ERR_INVALID_ARG, "no op with index %d (there are %d)", i, n);
        return NULL;
    }
    return ops[i];
}

int pg_kernel_family_count(void)
{
    int n = 0;
    pg_kernel_families_all(&n);
    return n;
}

const char *pg_kernel_family_name(int i)
{
    const pg_kernel_family *op = op_at(i);
    return op ? op->name : NULL;
}

const char *pg_kernel_family_description(int i)
{
    const pg_kernel_family *op = op_at(i);
    return op ? op->description : NULL;
}

int pg_kernel_family_find(const char *name)
{
    int n = 0;
    const pg_kernel_family *const *ops = pg_kernel_families_all(&n);
    for (int i = 0; name && i < n; i++)
        if (!strcmp(ops[i]->name, name))
            return i;
    pg_fail(PG_ERR_INVALID_ARG, "unknown op '%s'", name ? name : "(null)");
    return -1;
}

int pg_variant_count(int i)
{
    const pg_kernel_family *op = op_at(i);
    return op ? op->count : -1;
}

int pg_variant_selected(int i)
{
    const pg_kernel_family *op = op_at(i);
    return op ? pg_variant_index(op, pg_kernel_select(op)) : -1;
}

int pg_variant_find(int i, const char *name)
{
    const pg_kernel_family *op = op_at(i);
    if (!op)
        return -1;
    for (int j = 0; name && j < op->count; j++)
        if (!strcmp(op->variants[j].name, name))
            return j;
    pg_fail(PG_ERR_INVALID_ARG, "op %s has no variant '%s'", op->name, name ? name : "(null)");
    return -1;
}

pg_status pg_variant_get_info(int i, int j, pg_variant_info *out)
{
    const pg_kernel_family *op = op_at(i);
    if (!op)
        return pg_last_status();
    if (!out || j < 0 || j >= op->count)
        return pg_fail(PG_ERR_INVALID_ARG, "op %s has no variant %d", op->name, j);
    const pg_variant *v = &op->variants[j];
    uint64_t have = pg_cpu_caps_get()->flags, active = pg_cpu_active_flags();
    out->family = op->name;
    out->name = v->name;
    out->isa = v->isa;
    out->required = v->required;
    out->runnable = (v->required & have) == v->required;
    out->active = (v->required & active) == v->required;
    out->selected = pg_kernel_select(op) == v;
    out->self_check = out->runnable ? pg_variant_self_check_state(op, v) : 0;
    return PG_OK;
}

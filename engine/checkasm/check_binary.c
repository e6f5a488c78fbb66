/* check_binary.c - every variant of the elementwise binary ops (vadd, vmul)
 * against the C reference: one IEEE operation per element, so bit-exact. */
#include "../kernels/vadd/vadd.h"
#include "../kernels/vmul/vmul.h"
#include "checkasm.h"

static void check_binary(const pg_kernel_family *op)
{
    declare_func(binary);
    for (int v = 0; v < op->count; v++) {
        if (!checkasm_check_variant(op, v))
            continue;
        checkasm_set_funcs(op, v);
        for (int i = 0; i < checkasm_n_sizes; i++) {
            size_t n = checkasm_sizes[i];
            float *a = checkasm_alloc_f32(n), *b = checkasm_alloc_f32(n);
            float *y_ref = checkasm_alloc_f32(n), *y_new = checkasm_alloc_f32(n);
            checkasm_fill_f32(a, n, -10, 10);
            checkasm_fill_f32(b, n, -10, 10);
            call_ref(n, a, b, y_ref);
            call_new(n, a, b, y_new);
            checkasm_check_f32("y", y_ref, y_new, n, 0, 0);
        }
        size_t n = 4096;
        float *a = checkasm_alloc_f32(n), *b = checkasm_alloc_f32(n), *y = checkasm_alloc_f32(n);
        checkasm_fill_f32(a, n, -1, 1);
        checkasm_fill_f32(b, n, -1, 1);
        checkasm_bench_label("n=%zu", n);
        checkasm_bench_work(n, 12.0 * n);
        bench_new(n, a, b, y);
    }
    checkasm_report(op->name);
}

void checkasm_check_vadd(void) { check_binary(&pg_kernels_vadd); }
void checkasm_check_vmul(void) { check_binary(&pg_kernels_vmul); }

/* checkasm.h - the harness that proves each assembly variant equal to its C
 * reference, after dav1d's and FFmpeg's checkasm.
 *
 * A check file (check_<op>.c) defines `void checkasm_check_<op>(void)`,
 * listed in checkasm.c.  Its shape:
 *
 *     void checkasm_check_vadd(void)
 *     {
 *         declare_func(binary);    // the member of pg_kernel_fn vadd's table sets
 *         const pg_kernel_family *op = &pg_kernels_vadd;
 *         for (int v = 0; v < op->count; v++) {
 *             if (!checkasm_check_variant(op, v))   // skips the reference, masked
 *                 continue;                          // or unrunnable variants, --function
 *             checkasm_set_funcs(op, v);             // func_ref = C, func_new = variant v
 *             for (int i = 0; i < checkasm_n_sizes; i++) {
 *                 size_t n = checkasm_sizes[i];
 *                 float *a = checkasm_alloc_f32(n), ...;   // 64-byte aligned + guard bytes
 *                 checkasm_fill_f32(a, n, -1, 1);
 *                 call_ref(n, a, b, y_ref);
 *                 call_new(n, a, b, y_new);               // register canaries, vzeroupper
 *                 checkasm_check_f32("y", y_ref, y_new, n, 0, 0);  // also checks guards
 *             }
 *             checkasm_bench_work(0, 12.0 * n);            // flops, bytes per call
 *             bench_new(n, a, b, y_new);
 *         }
 *         checkasm_report("vadd");
 *     }
 *
 * declare_func(member) takes the prototype from the family's member of
 * pg_kernel_fn (kernel_fn.h) rather than from the check: func_ref and
 * func_new are of the member's type (pg_f32_binary_fn above), and call_ref,
 * call_new and bench_new are type-checked against it, so a check cannot
 * call a kernel through a prototype other than the one its table was
 * compiled against (a wrong argument count or pointer type is an error:
 * declare_func(unary) with call_new(n, a, b, y) does not compile).
 * checkasm_set_funcs() reads that member from the table (or, in external
 * mode, from the loaded symbol) and stops the run if the family records a
 * different member (pg_kernel_family.fn_member), as when one check walks
 * several families.
 *
 * declare_func_proto(ret, args...) is the old, untyped form, for a function
 * that is in no table (the selftest's own); it has no checkasm_set_funcs. */
#ifndef PG_CHECKASM_H
#define PG_CHECKASM_H

#include <stddef.h>
#include <stdint.h>

#include "../kernels/variant.h"

/* Edge sizes every check walks (0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32,
 * 33, ...) followed by a few random ones drawn from the seed. */
extern size_t checkasm_sizes[];
extern int checkasm_n_sizes;

/* 1 if variant v of op is to be tested now: not the C reference (the last
 * entry), runnable under the active CPU mask, and matching --function.
 * Also makes v the "current function" that failures are reported against. */
int checkasm_check_variant(const pg_kernel_family *op, int v);

/* Deterministic random numbers from --seed. */
uint32_t checkasm_rand(void);
float checkasm_randf(float lo, float hi);
void checkasm_fill_f32(float *p, size_t n, float lo, float hi);

/* Buffers for one check: 64-byte aligned, followed (and preceded) by guard
 * bytes whose pattern is verified by the checkasm_check_* calls and at
 * checkasm_report().  All are freed by checkasm_report(). */
void *checkasm_alloc(size_t bytes);
float *checkasm_alloc_f32(size_t n);
/* 1 if the guards around a buffer from checkasm_alloc are intact; reports
 * an overrun against the current function otherwise. */
int checkasm_guards_ok(const void *buf, const char *what);

/* Compare got against ref.  An element passes if
 * |ref - got| <= abs_tol + rel_tol * |ref|.  Reports the first few
 * mismatches (index, values) against the current function; returns 1 on
 * success.  Also checks the guards of got. */
int checkasm_check_f32(const char *what, const float *ref, const float *got, size_t n,
                       float abs_tol, float rel_tol);
/* As above with a tolerance per element (for GEMM: a multiple of eps times
 * sum_k |a_ik * b_kj|, so the bound scales with K and the products). */
int checkasm_check_f32_tol(const char *what, const float *ref, const float *got, size_t n,
                           const float *tol);
/* Strided 2-D compare of rows x cols elements (strides in elements). */
int checkasm_check_f32_2d(const char *what, const float *ref, size_t ref_stride,
                          const float *got, size_t got_stride, size_t rows, size_t cols,
                          float abs_tol, float rel_tol);

/* Report a failure of the current function (printf-style). Returns 0. */
int checkasm_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Work per call of the function about to be benchmarked, for --bench:
 * GFLOP/s is printed if flops > 0, GB/s if bytes > 0. */
void checkasm_bench_work(double flops, double bytes);
/* A label for the next bench line ("256x256x256"), printf-style. */
void checkasm_bench_label(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Nonzero under --small (or CHECKASM_SMALL=1): emulated runs use small sizes. */
int checkasm_small(void);
/* Seconds for the driver benches: this thread's CPU time at 1 thread (a
 * shared machine's other load does not count), wall time otherwise. */
double checkasm_clock_s(int threads);
/* Nonzero when --bench was given. */
int checkasm_bench_enabled(void);
/* Print one line per op: ok / FAILED, and the variants checked. */
void checkasm_report(const char *name);

/* ---- calling conventions -------------------------------------------- */

/* The trampoline (checked_call_<arch>.S) fills the callee-saved registers
 * with canaries, calls the function, and verifies them afterwards; on
 * x86-64 it also reports a missing vzeroupper.  It is called through a
 * cast to the function's own prototype with one leading pointer, so float
 * arguments stay in their vector registers. */
void checkasm_checked_call(void *func, ...);
/* The trampoline's address as data, so the cast to each prototype is a
 * plain pointer conversion rather than a call through a mismatched type. */
extern void *const checkasm_trampoline;
/* Set from the trampoline when a check fails; read after each call_new. */
void checkasm_call_failed(int kind, uintptr_t detail);

/* Time n calls of fn(args) inside the bench macro. */
uint64_t checkasm_timer_ns(void);
/* Calls per timed batch so one batch takes about a millisecond. */
int checkasm_bench_iterations(uint64_t ns_one_call);
void checkasm_bench_record(int is_new, uint64_t ns, int iterations);

/* The entry point of slot v of op: the table's, or in external mode
 * (external.c) the function loaded from --load for slot 0.  member is the
 * PG_KERNEL_FN_* tag the caller's declare_func named: a family recording
 * another member stops the run (a check bug, not a kernel failure). */
const pg_kernel_fn *checkasm_variant_fn(const pg_kernel_family *op, int v, int member);

/* checkasm_get_<member>(fn): the member of the union, one per member, so
 * checkasm_set_funcs can read the member declare_func named. */
#define CHECKASM_GETTER_(member, name, ...)                                 \
    static inline name checkasm_get_##member(const pg_kernel_fn *fn)        \
    {                                                                       \
        return fn->member;                                                  \
    }
PG_KERNEL_FN_LIST(CHECKASM_GETTER_)
#undef CHECKASM_GETTER_

/* func_ref / func_new of type fn_t (a function-pointer type), called
 * through the trampoline as wrapped_t (the same parameters after one
 * leading void *). */
#define checkasm_declare_(fn_t, wrapped_t)                                  \
    typedef __typeof__(fn_t) checkasm_fn_t;                                 \
    typedef __typeof__(wrapped_t) checkasm_wrapped_t;                       \
    checkasm_fn_t func_ref = NULL, func_new = NULL;                         \
    (void)func_ref;                                                         \
    (void)func_new

/* declare_func(sgemm): the prototype of pg_kernel_fn.sgemm. */
#define declare_func(member)                                                \
    checkasm_declare_(((pg_kernel_fn *)0)->member,                          \
                      pg_kernel_fn_##member##_checked);                     \
    checkasm_fn_t (*const checkasm_get_)(const pg_kernel_fn *) =            \
        checkasm_get_##member;                                              \
    const int checkasm_member_ = PG_KERNEL_FN_##member;                     \
    (void)checkasm_get_;                                                    \
    (void)checkasm_member_

/* For a function in no variant table: the prototype spelled out. */
#define declare_func_proto(ret, ...)                                        \
    checkasm_declare_(ret (*)(__VA_ARGS__), ret(void *, __VA_ARGS__))

#define checkasm_set_funcs(op, v)                                           \
    do {                                                                    \
        func_ref = checkasm_get_(                                           \
            checkasm_variant_fn((op), (op)->count - 1, checkasm_member_));  \
        func_new = checkasm_get_(checkasm_variant_fn((op), (v), checkasm_member_)); \
    } while (0)

#define call_ref(...) func_ref(__VA_ARGS__)
#define call_new(...)                                                       \
    ((checkasm_wrapped_t *)checkasm_trampoline)((void *)func_new, __VA_ARGS__)

/* Benchmark func_new and func_ref on the same arguments (only with --bench):
 * a timed warm-up call sizes the batches, then the median of 5 batches. */
#define bench_new(...)                                                      \
    do {                                                                    \
        if (checkasm_bench_enabled()) {                                     \
            for (int side_ = 1; side_ >= 0; side_--) {                      \
                checkasm_fn_t f_ = side_ ? func_new : func_ref;             \
                uint64_t w_ = checkasm_timer_ns();                          \
                f_(__VA_ARGS__);                                            \
                int iters_ = checkasm_bench_iterations(checkasm_timer_ns() - w_); \
                for (int rep_ = 0; rep_ < 5; rep_++) {                      \
                    f_(__VA_ARGS__);                                        \
                    uint64_t t0_ = checkasm_timer_ns();                     \
                    for (int it_ = 0; it_ < iters_; it_++)                  \
                        f_(__VA_ARGS__);                                    \
                    checkasm_bench_record(side_, checkasm_timer_ns() - t0_, iters_); \
                }                                                           \
            }                                                               \
        }                                                                   \
    } while (0)

#endif

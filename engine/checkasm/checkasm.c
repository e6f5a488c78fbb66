/* checkasm.c - the driver: options, the walk over CPU levels, guarded
 * buffers, comparisons, crash recovery and the bench lines.
 *
 *   checkasm [--seed=N] [--function=GLOB] [--bench] [--small] [--list] [--selftest]
 *
 * For every dispatch level the CPU supports, highest first, the mask is set
 * to that level and each op's check runs; a variant is checked at the first
 * (highest) level that allows it, so walking down to "c" covers every
 * variant the machine can run, and proves each level dispatches only to
 * variants inside it. */
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/cpu.h"
#include "checkasm.h"
#include "checks.h"
#include "external.h"
#include "selftest.h"

#define GUARD_BYTES 64
#define GUARD_BYTE 0xA5
#define MAX_ALLOCS 256
#define MAX_TESTED 512

/* Read by the trampolines. */
uint64_t checkasm_canary[20];
uint8_t checkasm_has_avx, checkasm_has_xinuse;
void *const checkasm_trampoline = (void *)checkasm_checked_call;

static struct {
    uint64_t seed, rng;
    const char *function_glob;
    int bench, small, list, selftest;
    /* the function under test */
    const pg_kernel_family *op;
    const pg_variant *variant;
    int cur_failed;
    /* variants already checked at a higher level: op/variant pairs */
    const pg_variant *tested[MAX_TESTED];
    int tested_failed[MAX_TESTED];
    int n_tested;
    int passed, failed;
    int total_fail_reports;
    /* bench */
    double flops, bytes;
    char label[96];
    uint64_t bench_ns[2][5];
    int bench_iters[2], bench_n[2];
    /* guarded buffers of the current check */
    struct { uint8_t *base; size_t bytes; } allocs[MAX_ALLOCS];
    int n_allocs;
    sigjmp_buf jmp;
    volatile sig_atomic_t in_check;
} state;

size_t checkasm_sizes[32];
int checkasm_n_sizes;

/* ---- random numbers (xorshift64*) ------------------------------------ */

uint32_t checkasm_rand(void)
{
    state.rng ^= state.rng >> 12;
    state.rng ^= state.rng << 25;
    state.rng ^= state.rng >> 27;
    return (uint32_t)((state.rng * 0x2545F4914F6CDD1DULL) >> 32);
}

float checkasm_randf(float lo, float hi)
{
    return lo + (hi - lo) * (float)(checkasm_rand() >> 8) * (1.0f / 16777216.0f);
}

void checkasm_fill_f32(float *p, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++)
        p[i] = checkasm_randf(lo, hi);
}

int checkasm_small(void) { return state.small; }

double checkasm_clock_s(int threads)
{
    struct timespec ts;
    clock_gettime(threads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
int checkasm_failures(void) { return state.total_fail_reports; }
int checkasm_bench_enabled(void) { return state.bench; }

/* ---- failures --------------------------------------------------------- */

static const char *cur_name(void)
{
    return state.variant ? state.variant->name : "?";
}

int checkasm_fail(const char *fmt, ...)
{
    if (state.cur_failed < 5) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "   FAIL %s: ", cur_name());
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n");
        va_end(ap);
    }
    state.cur_failed++;
    state.total_fail_reports++;
    return 0;
}

void checkasm_call_failed(int kind, uintptr_t detail)
{
#if defined(__x86_64__)
    static const char *const regs[] = { "rbx", "rbp", "r12", "r13", "r14", "r15" };
#else
    static const char *const regs[] = { "x19", "x20", "x21", "x22", "x23", "x24", "x25",
                                        "x26", "x27", "x28", "x29", "d8",  "d9",  "d10",
                                        "d11", "d12", "d13", "d14", "d15" };
#endif
    if (kind == 2) {
        checkasm_fail("returned with the upper YMM state dirty (missing vzeroupper)");
        return;
    }
    char buf[160] = "";
    for (size_t i = 0; i < sizeof regs / sizeof regs[0]; i++)
        if (detail & ((uintptr_t)1 << i)) {
            strncat(buf, " ", sizeof buf - strlen(buf) - 1);
            strncat(buf, regs[i], sizeof buf - strlen(buf) - 1);
        }
    checkasm_fail("clobbered callee-saved register(s):%s", buf);
}

/* ---- guarded buffers ---------------------------------------------------- */

void *checkasm_alloc(size_t bytes)
{
    if (state.n_allocs == MAX_ALLOCS) {
        fprintf(stderr, "checkasm: more than %d buffers in one check\n", MAX_ALLOCS);
        exit(2);
    }
    /* [guard 64][bytes][guard 64, then padding]: the user pointer is 64-byte
     * aligned and the guard after it starts right at byte `bytes`. */
    size_t total = GUARD_BYTES + ((bytes + GUARD_BYTES + 63) & ~(size_t)63);
    uint8_t *base = aligned_alloc(64, total);
    if (!base) {
        fprintf(stderr, "checkasm: out of memory\n");
        exit(2);
    }
    memset(base, GUARD_BYTE, total);
    state.allocs[state.n_allocs].base = base;
    state.allocs[state.n_allocs].bytes = bytes;
    state.n_allocs++;
    return base + GUARD_BYTES;
}

float *checkasm_alloc_f32(size_t n) { return checkasm_alloc(n * sizeof(float)); }

int checkasm_guards_ok(const void *buf, const char *what)
{
    for (int i = 0; i < state.n_allocs; i++) {
        uint8_t *base = state.allocs[i].base;
        if (base + GUARD_BYTES != buf)
            continue;
        size_t bytes = state.allocs[i].bytes;
        for (size_t j = 0; j < GUARD_BYTES; j++) {
            if (base[j] != GUARD_BYTE)
                return checkasm_fail("%s: wrote %zu bytes before the buffer", what, GUARD_BYTES - j);
            if (base[GUARD_BYTES + bytes + j] != GUARD_BYTE)
                return checkasm_fail("%s: wrote past the end (byte %zu after %zu)", what, j, bytes);
        }
        return 1;
    }
    return 1; /* not a guarded buffer: nothing to check */
}

static void free_allocs(void)
{
    for (int i = 0; i < state.n_allocs; i++)
        free(state.allocs[i].base);
    state.n_allocs = 0;
}

/* ---- comparisons -------------------------------------------------------- */

static int close_enough(float r, float g, float tol)
{
    if (isnan(r) || isnan(g))
        return isnan(r) && isnan(g);
    if (isinf(r) || isinf(g))
        return r == g;
    return fabsf(r - g) <= tol;
}

static int compare(const char *what, const float *ref, const float *got, size_t n,
                   float abs_tol, float rel_tol, const float *tol)
{
    int ok = 1;
    for (size_t i = 0; i < n; i++) {
        float t = tol ? tol[i] : abs_tol + rel_tol * fabsf(ref[i]);
        if (!close_enough(ref[i], got[i], t)) {
            if (ok)
                checkasm_fail("%s[%zu] of %zu: expected %.9g, got %.9g (diff %.3g, tolerance %.3g)",
                              what, i, n, ref[i], got[i], fabs((double)ref[i] - got[i]), t);
            ok = 0;
        }
    }
    return checkasm_guards_ok(got, what) && ok;
}

int checkasm_check_f32(const char *what, const float *ref, const float *got, size_t n,
                       float abs_tol, float rel_tol)
{
    return compare(what, ref, got, n, abs_tol, rel_tol, NULL);
}

int checkasm_check_f32_tol(const char *what, const float *ref, const float *got, size_t n,
                           const float *tol)
{
    return compare(what, ref, got, n, 0, 0, tol);
}

int checkasm_check_f32_2d(const char *what, const float *ref, size_t ref_stride,
                          const float *got, size_t got_stride, size_t rows, size_t cols,
                          float abs_tol, float rel_tol)
{
    int ok = 1;
    for (size_t r = 0; r < rows && ok; r++) {
        char row_what[96];
        snprintf(row_what, sizeof row_what, "%s row %zu", what, r);
        ok = compare(row_what, ref + r * ref_stride, got + r * got_stride, cols, abs_tol, rel_tol, NULL);
    }
    return checkasm_guards_ok(got, what) && ok;
}

/* ---- the walk ----------------------------------------------------------- */

static int find_tested(const pg_variant *v)
{
    for (int i = 0; i < state.n_tested; i++)
        if (state.tested[i] == v)
            return i;
    return -1;
}

static void finish_variant(void)
{
    if (!state.variant)
        return;
    int i = find_tested(state.variant);
    if (i >= 0 && state.cur_failed)
        state.tested_failed[i] = 1;
    state.variant = NULL;
}

int checkasm_check_variant(const pg_kernel_family *op, int v)
{
    finish_variant();
    if (v < 0 || v >= op->count - 1)
        return 0; /* the last entry is the reference itself */
    const pg_variant *var = checkasm_external_variant(op, v);
    if (!var)
        return 0; /* external mode: only the loaded function is checked */
    uint64_t active = pg_cpu_active_flags();
    if ((var->required & active) != var->required)
        return 0;
    if (state.function_glob && fnmatch(state.function_glob, var->name, 0) &&
        fnmatch(state.function_glob, op->name, 0))
        return 0;
    if (find_tested(var) >= 0)
        return 0;
    if (state.n_tested == MAX_TESTED)
        return 0;
    state.tested[state.n_tested] = var;
    state.tested_failed[state.n_tested] = 0;
    state.n_tested++;
    state.op = op;
    state.variant = var;
    state.cur_failed = 0;
    return 1;
}

void checkasm_report(const char *name)
{
    finish_variant();
    free_allocs();
    int n = 0, bad = 0;
    for (int i = 0; i < state.n_tested; i++) {
        if (!state.tested[i] || state.tested_failed[i] < 0)
            continue;
        n++;
        bad += state.tested_failed[i] > 0;
        printf("   %-28s %-34s %s\n", name, state.tested[i]->name,
               state.tested_failed[i] ? "FAILED" : "ok");
        state.passed += !state.tested_failed[i];
        state.failed += state.tested_failed[i] > 0;
        state.tested_failed[i] = -1; /* reported */
    }
    (void)n;
    (void)bad;
}

/* ---- bench ----------------------------------------------------------------- */

uint64_t checkasm_timer_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int checkasm_bench_iterations(uint64_t ns_one_call)
{
    uint64_t target = 1000000; /* one millisecond per batch */
    if (ns_one_call == 0)
        return 1000;
    uint64_t it = target / ns_one_call;
    return it < 1 ? 1 : it > 100000 ? 100000 : (int)it;
}

void checkasm_bench_work(double flops, double bytes)
{
    state.flops = flops;
    state.bytes = bytes;
}

void checkasm_bench_label(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(state.label, sizeof state.label, fmt, ap);
    va_end(ap);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double median_ns(int side)
{
    uint64_t s[5];
    memcpy(s, state.bench_ns[side], sizeof s);
    qsort(s, 5, sizeof s[0], cmp_u64);
    return (double)s[2] / state.bench_iters[side];
}

void checkasm_bench_record(int is_new, uint64_t ns, int iterations)
{
    int side = is_new ? 1 : 0;
    if (state.bench_n[side] < 5)
        state.bench_ns[side][state.bench_n[side]++] = ns;
    state.bench_iters[side] = iterations;
    if (side == 1 || state.bench_n[0] < 5)
        return;
    /* both sides measured: print one line */
    double t_new = median_ns(1), t_ref = median_ns(0);
    printf("   bench %-34s %-18s %12.1f ns  x%6.2f vs C", cur_name(), state.label, t_new,
           t_new > 0 ? t_ref / t_new : 0.0);
    if (state.flops > 0)
        printf("  %8.2f GFLOP/s", state.flops / t_new);
    if (state.bytes > 0)
        printf("  %8.2f GB/s", state.bytes / t_new);
    printf("\n");
    state.bench_n[0] = state.bench_n[1] = 0;
    state.label[0] = '\0';
}

/* ---- crash recovery ---------------------------------------------------- */

static void on_signal(int sig)
{
    if (!state.in_check) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    siglongjmp(state.jmp, sig);
}

/* ---- main ------------------------------------------------------------------ */

static void make_sizes(void)
{
    static const size_t edges[] = { 0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65 };
    int n = 0;
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        if (!state.small || edges[i] <= 33)
            checkasm_sizes[n++] = edges[i];
    int extra = state.small ? 1 : 4;
    for (int i = 0; i < extra; i++)
        checkasm_sizes[n++] = state.small ? 34 + checkasm_rand() % 30 : 66 + checkasm_rand() % 1000;
    checkasm_n_sizes = n;
}

static void detect_trampoline_support(void)
{
    const pg_cpu_caps *c = pg_cpu_caps_get();
    checkasm_has_avx = (c->flags & PG_CPU_AVX) != 0;
#if defined(__x86_64__)
    if (checkasm_has_avx) {
        uint32_t a, b, cc, d;
        __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(cc), "=d"(d) : "a"(0xd), "c"(1));
        checkasm_has_xinuse = (a >> 2) & 1; /* xgetbv with ecx = 1 */
    }
#endif
    for (int i = 0; i < 20; i++)
        checkasm_canary[i] = ((uint64_t)checkasm_rand() << 32) | checkasm_rand() | 1;
}

static void list_functions(void)
{
    int n = 0;
    const pg_kernel_family *const *ops = pg_kernel_families_all(&n);
    uint64_t have = pg_cpu_caps_get()->flags;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < ops[i]->count; j++) {
            const pg_variant *v = &ops[i]->variants[j];
            printf("%-16s %-34s %-8s %s\n", ops[i]->name, v->name, v->isa,
                   (v->required & have) == v->required ? "runnable" : "not on this CPU");
        }
}

static int has_check(const char *name)
{
    for (int c = 0; c < checkasm_n_checks; c++)
        if (!strcmp(checkasm_checks[c].name, name))
            return 1;
    return 0;
}

static void usage(void)
{
    printf("usage: checkasm [--seed=N] [--function=GLOB] [--bench] [--small] [--list] [--selftest]\n"
           "  --function=GLOB  check only ops or variants whose name matches\n"
           "  --bench          time each variant against the C reference\n"
           "  --small          small sizes (for runs under emulation; also CHECKASM_SMALL=1)\n"
           "  --list           list every op and variant and whether this CPU runs it\n"
           "  --selftest       prove the harness catches planted faults\n"
           "  --load=LIB.so --symbol=NAME --family=NAME\n"
           "                   check one external function as OP's first variant\n");
}

int main(int argc, char **argv)
{
    state.seed = (uint64_t)time(NULL);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strncmp(a, "--seed=", 7))
            state.seed = strtoull(a + 7, NULL, 0);
        else if (!strncmp(a, "--function=", 11))
            state.function_glob = a + 11;
        else if (!strcmp(a, "--bench"))
            state.bench = 1;
        else if (!strcmp(a, "--small"))
            state.small = 1;
        else if (!strcmp(a, "--list"))
            state.list = 1;
        else if (!strcmp(a, "--selftest"))
            state.selftest = 1;
        else if (checkasm_external_arg(a))
            ;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage();
            return 0;
        } else {
            fprintf(stderr, "checkasm: unknown option '%s'\n", a);
            usage();
            return 2;
        }
    }
    const char *small_env = getenv("CHECKASM_SMALL");
    if (small_env && *small_env && strcmp(small_env, "0"))
        state.small = 1;
    if (state.list) {
        list_functions();
        return 0;
    }
    state.rng = state.seed * 0x9E3779B97F4A7C15ULL + 1;
    detect_trampoline_support();
    make_sizes();
    if (state.selftest)
        return checkasm_selftest() ? 0 : 1;
    if (checkasm_external_enabled() && !checkasm_external_load(has_check))
        return 2;

    pg_cpu_info ci;
    pg_cpu_get_info(&ci);
    uint64_t user_mask = pg_cpu_get_mask();
    printf("checkasm: seed %" PRIu64 ", %s, level %s%s\n", state.seed, ci.arch, ci.level,
           state.small ? ", small sizes" : "");

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_NODEFER;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGILL, &sa, NULL);
    sigaction(SIGFPE, &sa, NULL);

    for (int lvl = pg_cpu_level_count() - 1; lvl >= 0; lvl--) {
        uint64_t f = 0;
        pg_cpu_level_flags(pg_cpu_level_name(lvl), &f);
        if ((f & ci.flags) != f || (f & user_mask) != f)
            continue;
        pg_cpu_set_mask(f);
        printf(" level %s\n", pg_cpu_level_name(lvl));
        for (int c = 0; c < checkasm_n_checks; c++) {
            /* the variant each op dispatches to must be allowed by the mask */
            int n_ops = 0;
            const pg_kernel_family *const *ops = pg_kernel_families_all(&n_ops);
            for (int o = 0; c == 0 && o < n_ops; o++) {
                const pg_variant *sel = pg_kernel_select(ops[o]);
                if ((sel->required & f) != sel->required) {
                    printf("   dispatch of %s picked %s outside level %s\n", ops[o]->name,
                           sel->name, pg_cpu_level_name(lvl));
                    state.failed++;
                }
            }
            int sig = sigsetjmp(state.jmp, 1);
            if (sig == 0) {
                state.in_check = 1;
                checkasm_checks[c].fn();
                state.in_check = 0;
            } else {
                state.in_check = 0;
                checkasm_fail("crashed with signal %d (%s)", sig, strsignal(sig));
                checkasm_report(checkasm_checks[c].name);
            }
        }
    }
    pg_cpu_set_mask(user_mask);
    printf("checkasm: %d passed, %d failed\n", state.passed, state.failed);
    return state.failed ? 1 : 0;
}

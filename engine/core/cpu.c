/* cpu.c - detected features, the dispatch mask and the level names.
 *
 * Levels are cumulative sets of flags, lowest first.  Masking to a level
 * lets every lower variant run on a higher machine (as dav1d's
 * dav1d_set_cpu_flags_mask does), which is how checkasm tests them all. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu.h"
#include "error.h"

#define ALL_FLAGS UINT64_MAX

typedef struct level { const char *name; uint64_t flags; int vector_bits; } level;

#define X86_SSE2   (PG_CPU_SSE2)
#define X86_SSE41  (X86_SSE2 | PG_CPU_SSE41)
#define X86_AVX    (X86_SSE41 | PG_CPU_AVX)
#define X86_AVX2   (X86_AVX | PG_CPU_AVX2 | PG_CPU_FMA | PG_CPU_F16C)
#define X86_AVXVNNI (X86_AVX2 | PG_CPU_AVXVNNI)
#define X86_AVX512 (X86_AVX2 | PG_CPU_AVX512F | PG_CPU_AVX512BW | PG_CPU_AVX512VL | PG_CPU_AVX512DQ)
/* AVX512-VNNI does not imply the VEX-encoded AVX-VNNI: Zen 4 has the first
 * without the second (Zen 5 and Sapphire Rapids have both), so requiring
 * both kept Zen 4 at "avx512", off every VNNI and BF16 kernel */
#define X86_AVX512VNNI (X86_AVX512 | PG_CPU_AVX512VNNI)
#define X86_AVX512BF16 (X86_AVX512VNNI | PG_CPU_AVX512BF16)
#define X86_AMX (X86_AVX512BF16 | PG_CPU_AMXBF16 | PG_CPU_AMXINT8)
#define ARM_NEON   (PG_CPU_NEON)
#define ARM_DOT    (ARM_NEON | PG_CPU_DOTPROD | PG_CPU_FP16)
#define ARM_I8MM   (ARM_DOT | PG_CPU_I8MM | PG_CPU_BF16)
#define ARM_SVE    (ARM_DOT | PG_CPU_SVE)
#define ARM_SVE2   (ARM_SVE | PG_CPU_SVE2)

#if defined(__x86_64__)
static const level levels[] = {
    { "c", 0, 0 },           { "sse2", X86_SSE2, 128 },   { "sse41", X86_SSE41, 128 },
    { "avx", X86_AVX, 256 }, { "avx2", X86_AVX2, 256 },   { "avxvnni", X86_AVXVNNI, 256 },
    { "avx512", X86_AVX512, 512 }, { "avx512vnni", X86_AVX512VNNI, 512 },
    { "avx512bf16", X86_AVX512BF16, 512 }, { "amx", X86_AMX, 512 },
};
#define ARCH_NAME "x86_64"
#elif defined(__aarch64__)
static const level levels[] = {
    { "c", 0, 0 }, { "neon", ARM_NEON, 128 }, { "dotprod", ARM_DOT, 128 },
    { "i8mm", ARM_I8MM, 128 }, { "sve", ARM_SVE, -1 }, { "sve2", ARM_SVE2, -1 },
};
#define ARCH_NAME "aarch64"
#else
static const level levels[] = { { "c", 0, 0 } };
#define ARCH_NAME "generic"
#endif
#define NLEVELS ((int)(sizeof levels / sizeof levels[0]))

static const struct { uint64_t bit; const char *name; } flag_names[] = {
    { PG_CPU_SSE2, "sse2" },         { PG_CPU_SSE41, "sse41" },
    { PG_CPU_AVX, "avx" },           { PG_CPU_AVX2, "avx2" },
    { PG_CPU_FMA, "fma" },           { PG_CPU_F16C, "f16c" },
    { PG_CPU_AVX512F, "avx512f" },   { PG_CPU_AVX512BW, "avx512bw" },
    { PG_CPU_AVX512VL, "avx512vl" }, { PG_CPU_AVX512DQ, "avx512dq" },
    { PG_CPU_AVX512VNNI, "avx512vnni" }, { PG_CPU_AVXVNNI, "avxvnni" },
    { PG_CPU_AVX512BF16, "avx512bf16" }, { PG_CPU_AMXBF16, "amxbf16" },
    { PG_CPU_AMXINT8, "amxint8" },
    { PG_CPU_NEON, "neon" },         { PG_CPU_DOTPROD, "dotprod" },
    { PG_CPU_FP16, "fp16" },         { PG_CPU_SVE, "sve" },
    { PG_CPU_SVE2, "sve2" },         { PG_CPU_BF16, "bf16" },
    { PG_CPU_I8MM, "i8mm" },
};

static pg_cpu_caps caps;
static pthread_once_t detect_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t cpu_mask = ALL_FLAGS;
static _Atomic unsigned generation = 1;

static int read_sysfs_cache(int index, int *level_out)
{
    char path[96], buf[64];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", index);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int level = 0;
    if (fscanf(f, "%d", &level) != 1)
        level = 0;
    fclose(f);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", index);
    f = fopen(path, "r");
    if (!f || !fgets(buf, sizeof buf, f)) {
        if (f) fclose(f);
        return 0;
    }
    fclose(f);
    if (!strncmp(buf, "Instruction", 11))
        return 0;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
    f = fopen(path, "r");
    int kib = 0;
    if (f) {
        if (fscanf(f, "%dK", &kib) != 1)
            kib = 0;
        fclose(f);
    }
    *level_out = level;
    return kib * 1024;
}

/* Fill cache sizes the cpuid path did not (AArch64 has no portable way). */
static void caches_from_sysfs(pg_cpu_caps *c)
{
    for (int i = 0; i < 8; i++) {
        int lvl = 0;
        int size = read_sysfs_cache(i, &lvl);
        if (size < 0)
            break;
        if (lvl == 1 && !c->l1d_bytes) c->l1d_bytes = size;
        if (lvl == 2 && !c->l2_bytes) c->l2_bytes = size;
        if (lvl == 3 && !c->l3_bytes) c->l3_bytes = size;
    }
    if (!c->line_bytes)
        c->line_bytes = 64;
}

static uint64_t parse_mask(const char *s, int *ok);

static void detect(void)
{
    pg_cpu_detect_arch(&caps);
    caches_from_sysfs(&caps);
    const char *env = getenv("PEREGRINE_CPU_MASK");
    if (env && *env) {
        int ok = 0;
        uint64_t m = parse_mask(env, &ok);
        if (ok)
            atomic_store(&cpu_mask, m);
        else
            fprintf(stderr, "peregrine: ignoring PEREGRINE_CPU_MASK=%s: %s\n", env, pg_last_error());
    }
}

const pg_cpu_caps *pg_cpu_caps_get(void)
{
    pthread_once(&detect_once, detect);
    return &caps;
}

uint64_t pg_cpu_active_flags(void)
{
    return pg_cpu_caps_get()->flags & atomic_load(&cpu_mask);
}

unsigned pg_cpu_generation(void)
{
    pg_cpu_caps_get();
    return atomic_load(&generation);
}

const char *pg_cpu_flag_name(uint64_t flag)
{
    for (size_t i = 0; i < sizeof flag_names / sizeof flag_names[0]; i++)
        if (flag_names[i].bit == flag)
            return flag_names[i].name;
    return NULL;
}

int pg_cpu_level_count(void) { return NLEVELS; }

const char *pg_cpu_level_name(int i)
{
    return (i >= 0 && i < NLEVELS) ? levels[i].name : NULL;
}

pg_status pg_cpu_level_flags(const char *name, uint64_t *out)
{
    if (!name || !out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_cpu_level_flags: NULL argument");
    if (!strcmp(name, "all")) {
        *out = ALL_FLAGS;
        return PG_OK;
    }
    for (int i = 0; i < NLEVELS; i++)
        if (!strcmp(levels[i].name, name)) {
            *out = levels[i].flags;
            return PG_OK;
        }
    char known[256] = "all";
    for (int i = 0; i < NLEVELS; i++) {
        strncat(known, ", ", sizeof known - strlen(known) - 1);
        strncat(known, levels[i].name, sizeof known - strlen(known) - 1);
    }
    return pg_fail(PG_ERR_INVALID_ARG, "unknown CPU level '%s' on %s (known: %s)", name, ARCH_NAME, known);
}

/* A mask is a level name, or a comma-separated list of flag names. */
static uint64_t parse_mask(const char *s, int *ok)
{
    uint64_t m = 0;
    *ok = 0;
    if (!strchr(s, ',') && pg_cpu_level_flags(s, &m) == PG_OK) {
        *ok = 1;
        return m;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        uint64_t bit = 0;
        for (size_t i = 0; i < sizeof flag_names / sizeof flag_names[0]; i++)
            if (!strcmp(flag_names[i].name, tok))
                bit = flag_names[i].bit;
        if (!bit) {
            pg_fail(PG_ERR_INVALID_ARG, "'%s' is neither a CPU level nor a feature name", tok);
            return 0;
        }
        m |= bit;
    }
    *ok = 1;
    return m;
}

pg_status pg_cpu_set_mask(uint64_t mask)
{
    pg_cpu_caps_get();
    atomic_store(&cpu_mask, mask);
    atomic_fetch_add(&generation, 1);
    return PG_OK;
}

pg_status pg_cpu_set_mask_name(const char *name)
{
    if (!name)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_cpu_set_mask_name: NULL name");
    int ok = 0;
    uint64_t m = parse_mask(name, &ok);
    if (!ok)
        return pg_last_status();
    return pg_cpu_set_mask(m);
}

uint64_t pg_cpu_get_mask(void)
{
    pg_cpu_caps_get();
    return atomic_load(&cpu_mask);
}

pg_status pg_cpu_get_info(pg_cpu_info *out)
{
    if (!out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_cpu_get_info: NULL output");
    const pg_cpu_caps *c = pg_cpu_caps_get();
    memset(out, 0, sizeof *out);
    snprintf(out->arch, sizeof out->arch, "%s", ARCH_NAME);
    memcpy(out->vendor, c->vendor, sizeof out->vendor); /* same sizes, NUL-terminated */
    memcpy(out->brand, c->brand, sizeof out->brand);
    out->flags = c->flags;
    out->mask = atomic_load(&cpu_mask);
    out->active = out->flags & out->mask;
    snprintf(out->level, sizeof out->level, "c");
    for (int i = 0; i < NLEVELS; i++)
        if ((levels[i].flags & out->active) == levels[i].flags) {
            snprintf(out->level, sizeof out->level, "%s", levels[i].name);
            out->vector_bits = levels[i].vector_bits < 0 ? c->sve_bits : levels[i].vector_bits;
        }
    out->sve_bits = c->sve_bits;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    out->cores = n > 0 ? (int)n : 1;
    out->l1d_bytes = c->l1d_bytes;
    out->l2_bytes = c->l2_bytes;
    out->l3_bytes = c->l3_bytes;
    out->cacheline_bytes = c->line_bytes;
    return PG_OK;
}

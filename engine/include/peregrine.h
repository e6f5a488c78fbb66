/*
 * peregrine.h - the public C API of the Peregrine inference engine.
 *
 * Everything a program (or the Python package, through cffi) may call is
 * declared here.  Conventions:
 *   - every name starts with pg_ / PG_;
 *   - objects are opaque handles created and destroyed through the API;
 *   - every call that can fail returns a pg_status; on failure
 *     pg_last_error() gives a message (per thread) naming what went wrong.
 *
 * The part between PG_CFFI_BEGIN and PG_CFFI_END is read verbatim by
 * peregrine_nb/_lib.py as the cffi cdef, so it must stay plain declarations:
 * no preprocessor directives, no inline code, enums with explicit values.
 */
#ifndef PEREGRINE_H
#define PEREGRINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PG_API __attribute__((visibility("default")))
#else
#define PG_API
#endif

/* PG_CFFI_BEGIN */

/* ---- status and errors ------------------------------------------------ */

typedef enum pg_status {
    PG_OK = 0,
    PG_ERR_INVALID_ARG = 1,   /* a NULL pointer, a bad size, an unknown name */
    PG_ERR_NOMEM = 2,         /* an allocation failed */
    PG_ERR_UNSUPPORTED = 3,   /* this CPU or build cannot do it */
    PG_ERR_SHAPE = 4,         /* shapes that do not agree */
    PG_ERR_DTYPE = 5,         /* a dtype that is not allowed there */
    PG_ERR_GRAPH = 6,         /* a malformed graph: cycle, dangling input, unknown op */
    PG_ERR_IO = 7,            /* a file could not be read */
    PG_ERR_FORMAT = 8,        /* a file is malformed or truncated */
    PG_ERR_INTERNAL = 9       /* a bug in the engine */
} pg_status;

/* Message of the last error raised on this thread ("" if none). */
PG_API const char *pg_last_error(void);
/* Status of the last error raised on this thread (PG_OK if none). */
PG_API pg_status pg_last_status(void);
/* Short name of a status ("PG_ERR_SHAPE"). */
PG_API const char *pg_status_name(pg_status s);
PG_API const char *pg_version(void);

/* ---- CPU detection and the dispatch mask ------------------------------ */

/* One bit per feature.  x86 and AArch64 features have distinct bits. */
typedef enum pg_cpu_flag {
    PG_CPU_SSE2        = 1,
    PG_CPU_SSE41       = 2,
    PG_CPU_AVX         = 4,
    PG_CPU_AVX2        = 8,
    PG_CPU_FMA         = 16,
    PG_CPU_F16C        = 32,
    PG_CPU_AVX512F     = 64,
    PG_CPU_AVX512BW    = 128,
    PG_CPU_AVX512VL    = 256,
    PG_CPU_AVX512DQ    = 512,
    PG_CPU_AVX512VNNI  = 1024,
    PG_CPU_AVXVNNI     = 2048,
    PG_CPU_NEON        = 65536,
    PG_CPU_DOTPROD     = 131072,
    PG_CPU_FP16        = 262144,
    PG_CPU_SVE         = 524288,
    PG_CPU_SVE2        = 1048576,
    PG_CPU_BF16        = 2097152,
    PG_CPU_I8MM        = 4194304
} pg_cpu_flag;

typedef struct pg_cpu_info {
    char     arch[16];          /* "x86_64" or "aarch64" */
    char     vendor[16];        /* "AuthenticAMD", "GenuineIntel", "" */
    char     brand[64];         /* CPU model string where the CPU tells it */
    uint64_t flags;             /* every feature detected (pg_cpu_flag bits) */
    uint64_t mask;              /* the mask in force */
    uint64_t active;            /* flags & mask: what dispatch may use */
    char     level[16];         /* highest dispatch level active: "avx2", "neon", "c" */
    int      vector_bits;       /* widest vector the active level uses */
    int      sve_bits;          /* SVE vector length in bits, 0 without SVE */
    int      cores;             /* online logical CPUs */
    int      l1d_bytes;         /* data caches, per core for L1/L2; 0 if unknown */
    int      l2_bytes;
    int      l3_bytes;
    int      cacheline_bytes;
} pg_cpu_info;

PG_API pg_status pg_cpu_get_info(pg_cpu_info *out);
/* Restrict dispatch to the features in mask (a set of pg_cpu_flag bits). */
PG_API pg_status pg_cpu_set_mask(uint64_t mask);
/* Restrict dispatch by level name: "c", "sse2", "sse41", "avx", "avx2",
 * "avx512", "avx512vnni", "neon", "dotprod", "sve", "sve2", or "all". */
PG_API pg_status pg_cpu_set_mask_name(const char *level);
PG_API uint64_t pg_cpu_get_mask(void);
/* The feature name of one flag bit ("avx2"), NULL if the bit is unused. */
PG_API const char *pg_cpu_flag_name(uint64_t flag);
/* The flags a level name stands for (all levels below it included). */
PG_API pg_status pg_cpu_level_flags(const char *level, uint64_t *out);
/* Dispatch levels of this architecture, lowest ("c") first. */
PG_API int pg_cpu_level_count(void);
PG_API const char *pg_cpu_level_name(int i);

/* ---- kernels: ops and their variant tables ---------------------------- */

/* Every op has one variant table: the single source of truth that dispatch,
 * checkasm, the Python API and the benchmarks all read. */
typedef struct pg_variant_info {
    const char *op;             /* "sgemm" */
    const char *name;           /* "f32_gemm_6x16_avx2_fma3" */
    const char *isa;            /* "avx2", "neon", "c" */
    uint64_t    required;       /* pg_cpu_flag bits it needs */
    int         runnable;       /* the CPU has them (ignores the mask) */
    int         active;         /* runnable and allowed by the mask */
    int         selected;       /* the one dispatch picks now */
} pg_variant_info;

PG_API int pg_op_count(void);
PG_API const char *pg_op_name(int op);
PG_API const char *pg_op_description(int op);
/* Index of an op by name, or -1 (and an error) if there is none. */
PG_API int pg_op_find(const char *name);
PG_API int pg_variant_count(int op);
PG_API pg_status pg_variant_get_info(int op, int variant, pg_variant_info *out);
/* Index of a variant of op by name, or -1 (and an error). */
PG_API int pg_variant_find(int op, const char *name);
/* The variant dispatch picks for op under the current mask. */
PG_API int pg_variant_selected(int op);

/* ---- threads ---------------------------------------------------------- */

/* Threads the kernels use by default (0 = one per online core). */
PG_API pg_status pg_set_num_threads(int n);
PG_API int pg_get_num_threads(void);

/* PG_CFFI_END */

#ifdef __cplusplus
}
#endif

#endif /* PEREGRINE_H */

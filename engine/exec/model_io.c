/* model_io.c - compiled models saved to a file and loaded back
 * (pg_model_save, pg_model_save_many, pg_model_load; the layout is in
 * peregrine.h).
 *
 * Save writes, per model, the graph after its passes - every tensor with
 * its dtype, shape, layout and panel width, every node with its
 * attributes - and once for the file the constants' bytes as they are
 * (weights packed), each at a 64-byte aligned offset of a 4096-aligned
 * data section; constants with the same bytes (the weights of one network
 * compiled for several shapes) are stored once.  Load maps the file
 * read-only, rebuilds the graph with the IR helpers (so reader lists and
 * name maps are right by construction) with every constant pointing into
 * the mapping (pg_tensor.data_borrowed: the IR never frees those bytes,
 * the model unmaps them when it is freed), verifies it, infers shapes
 * again and checks them against the file's, re-packs weights whose panel
 * width the SGEMM kernel selected now lacks (into owned memory), then
 * binds kernels and plans memory (pg_model_bind_and_plan), as a compile
 * ends.
 *
 * Every number read from the file is checked before it is used: a count
 * against the bytes left, an id against the tensors read, an offset plus
 * length against its section (overflow-safe), a constant's byte count
 * against its shape, dtype and layout, a shape's element count against
 * int64.  Errors are PG_ERR_FORMAT naming the file, what was being read and
 * where. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/alloc.h"
#include "../core/cpu.h"
#include "../core/error.h"
#include "../core/threadpool.h"
#include "../kernels/gemm_bf16/gemm_bf16.h"
#include "../kernels/gemm_u8s8/gemm_u8s8.h"
#include "../passes/passes.h"
#include "model.h"

#define FILE_VERSION 2u   /* 2: int8 packed weights end with their max |b| */
#define ENDIAN_MARK 0x01020304u
#define HEADER_BYTES 256u
#define ENTRY_BYTES 128u
#define DATA_ALIGN 4096u
#define MAX_MODELS 65536u
#define MAX_STR (1u << 20)      /* a name or string attribute */
#define MAX_ARITY 4096u         /* inputs / outputs of one node */
#define MAX_ATTRS 4096u
#define MAX_ATTR_N (1u << 28)   /* elements of an INTS / FLOATS attribute */
#define MAX_PACK_NR 4096

static const char MAGIC[8] = { 'P', 'G', 'M', 'O', 'D', 'E', 'L', 0 };

/* Header offsets (peregrine.h). */
enum {
    H_MAGIC = 0, H_VERSION = 8, H_ENDIAN = 12, H_ENGINE = 16, H_OPS = 48, H_ARCH = 56,
    H_FILE_BYTES = 72, H_TABLE_OFF = 80, H_N_MODELS = 88, H_TABLE_SUM = 96, H_DATA_OFF = 104,
    H_DATA_BYTES = 112, H_DATA_SUM = 120, H_SUM = 128
};
/* One entry of the model table. */
enum {
    E_GRAPH_OFF = 0, E_GRAPH_BYTES = 8, E_GRAPH_SUM = 16, E_FLAGS = 24, E_LEVELNAME = 32,
    E_LEVEL = 48, E_THREADS = 52, E_THREADS_RES = 56, E_PACK_NR = 60, E_PLANNER = 64,
    E_N_TENSORS = 96, E_N_NODES = 100, E_PRECISION = 104
};

/* ---- checksums ------------------------------------------------------------ */

/* FNV-1a over 64-bit little-endian words (a byte at a time for the tail),
 * fed in pieces: the same value as over the pieces concatenated. */
typedef struct hasher {
    uint64_t h;
    uint8_t carry[8];
    size_t nc;
} hasher;

#define FNV_PRIME 0x100000001b3ull

static void hash_init(hasher *s)
{
    s->h = 0xcbf29ce484222325ull;
    s->nc = 0;
}

static void hash_update(hasher *s, const void *data, size_t n)
{
    const uint8_t *p = data;
    while (n && s->nc) {
        s->carry[s->nc++] = *p++;
        n--;
        if (s->nc == 8) {
            uint64_t w;
            memcpy(&w, s->carry, 8);
            s->h = (s->h ^ w) * FNV_PRIME;
            s->nc = 0;
        }
    }
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        s->h = (s->h ^ w) * FNV_PRIME;
    }
    if (n) {   /* n < 8 here, and the carry is empty */
        memcpy(s->carry, p, n);
        s->nc = n;
    }
}

static uint64_t hash_final(hasher *s)
{
    for (size_t i = 0; i < s->nc; i++)
        s->h = (s->h ^ s->carry[i]) * FNV_PRIME;
    s->nc = 0;
    return s->h;
}

static uint64_t checksum(const void *data, size_t n)
{
    hasher s;
    hash_init(&s);
    hash_update(&s, data, n);
    return hash_final(&s);
}

/* What the file's ops mean: names and arities of this build's op table. */
static uint64_t op_fingerprint(void)
{
    uint64_t h = 0xcbf29ce484222325ull;
    int n = pg_graph_op_count();
    for (int i = 0; i < n; i++) {
        pg_graph_op_info oi;
        if (pg_graph_op_get_info(i, &oi))
            continue;
        char buf[160];
        int len = snprintf(buf, sizeof buf, "%s/%d/%d/%d/%d/%d/%d;", oi.name, oi.min_inputs,
                           oi.max_inputs, oi.min_outputs, oi.max_outputs, oi.is_view, oi.in_place);
        if (len > 0)
            h = (h ^ checksum(buf, (size_t)len < sizeof buf ? (size_t)len : sizeof buf - 1)) * FNV_PRIME;
    }
    return h;
}

static void level_name(uint64_t flags, char *out, size_t cap)
{
    snprintf(out, cap, "c");
    int n = pg_cpu_level_count();
    for (int i = 0; i < n; i++) {
        uint64_t need = 0;
        const char *name = pg_cpu_level_name(i);
        if (name && pg_cpu_level_flags(name, &need) == PG_OK && (need & flags) == need)
            snprintf(out, cap, "%s", name);
    }
}

/* ---- writing ----------------------------------------------------------------- */

typedef struct wbuf {
    uint8_t *p;
    size_t n, cap;
    int oom;
} wbuf;

static void put(wbuf *b, const void *src, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n)
            cap *= 2;
        uint8_t *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}

static void put_u8(wbuf *b, uint8_t v) { put(b, &v, 1); }
static void put_u32(wbuf *b, uint32_t v) { put(b, &v, 4); }
static void put_i32(wbuf *b, int32_t v) { put(b, &v, 4); }
static void put_i64(wbuf *b, int64_t v) { put(b, &v, 8); }
static void put_u64(wbuf *b, uint64_t v) { put(b, &v, 8); }
static void put_f32(wbuf *b, float v) { put(b, &v, 4); }
static void put_str(wbuf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    put_u32(b, (uint32_t)n);
    put(b, s, n);
}

static int write_all(int fd, const void *p, size_t n)
{
    const uint8_t *c = p;
    while (n) {
        ssize_t w = write(fd, c, n > (1u << 30) ? (1u << 30) : n);
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static int write_zeros(int fd, size_t n)
{
    static const uint8_t z[4096];
    while (n) {
        size_t k = n < sizeof z ? n : sizeof z;
        if (write_all(fd, z, k))
            return -1;
        n -= k;
    }
    return 0;
}

/* The data section being laid out: one entry per distinct constant (same
 * bytes, same offset), found again by a hash of its bytes. */
typedef struct uconst {
    const void *p;
    size_t n;
    uint64_t hash, off;
} uconst;

typedef struct dedup {
    uconst *v;
    int n, cap;
    int *slot;           /* open addressing: index into v, -1 empty */
    size_t nslot;        /* a power of two */
    uint64_t end;        /* bytes laid out so far */
} dedup;

/* The data offset of a constant's bytes (placed if new); -1 on OOM. */
static int64_t place_const(dedup *d, const void *p, size_t n)
{
    uint64_t h = checksum(p, n) ^ (uint64_t)n;
    size_t i = (size_t)h & (d->nslot - 1);
    for (; d->slot[i] >= 0; i = (i + 1) & (d->nslot - 1)) {
        const uconst *u = &d->v[d->slot[i]];
        if (u->hash == h && u->n == n && (!n || !memcmp(u->p, p, n)))
            return (int64_t)u->off;
    }
    if (d->n == d->cap)
        return -1;   /* sized for every constant: cannot happen */
    uint64_t off = (d->end + PG_ALIGN - 1) & ~(uint64_t)(PG_ALIGN - 1);
    d->v[d->n] = (uconst){ p, n, h, off };
    d->slot[i] = d->n++;
    d->end = off + n;
    return (int64_t)off;
}

/* One model's graph section into b; its constants placed in d. */
/* The precision of a model's products (PG_PRECISION_*): int8 when any
 * weight is packed for gemm_u8s8, else bf16 when any is for gemm_bf16. */
static int32_t graph_precision(const pg_graph *g)
{
    int32_t p = PG_PRECISION_FP32;
    PG_IR_FOR_TENSORS(g, t) {
        if (t->layout == PG_LAYOUT_PACKED_U8S8)
            return PG_PRECISION_INT8_DYNAMIC;
        if (t->layout == PG_LAYOUT_PACKED_BF16)
            p = PG_PRECISION_BF16;
    }
    return p;
}

static int encode_graph(const pg_model *m, wbuf *b, dedup *d, int *pack_nr, uint32_t *nt_out,
                        uint32_t *nn_out)
{
    const pg_graph *g = m->g;
    int *index = pg_malloc(sizeof(int) * (size_t)(g->n_tensors + 1));
    if (!index)
        return -1;
    uint32_t n_tensors = 0, n_nodes = 0;
    for (int i = 0; i < g->n_tensors; i++)
        index[i] = g->tensors[i] ? (int)n_tensors++ : -1;
    for (int i = 0; i < g->n_nodes; i++)
        n_nodes += g->nodes[i] != NULL;
    *nt_out = n_tensors;
    *nn_out = n_nodes;
    *pack_nr = 0;
    put_u32(b, n_tensors);
    put_u32(b, n_nodes);
    put_u32(b, (uint32_t)g->n_inputs);
    put_u32(b, (uint32_t)g->n_outputs);
    int oom = 0;
    PG_IR_FOR_TENSORS(g, t) {
        put_str(b, t->name);
        put_i32(b, (int32_t)t->dtype);
        put_i32(b, t->rank);
        for (int k = 0; k < t->rank; k++)
            put_i64(b, t->shape[k]);
        put_u8(b, (uint8_t)t->layout);
        put_i32(b, t->pack_nr);
        put_u8(b, (uint8_t)(t->is_const ? 1 : 0));
        put_u8(b, (uint8_t)(t->is_input ? 1 : 0));
        if (t->is_const) {
            int64_t off = place_const(d, t->data, t->nbytes);
            oom |= off < 0;
            put_u64(b, (uint64_t)(off < 0 ? 0 : off));
            put_u64(b, (uint64_t)t->nbytes);
            if (t->layout == PG_LAYOUT_PACKED && !*pack_nr)
                *pack_nr = t->pack_nr;
        }
    }
    PG_IR_FOR_NODES(g, n) {
        put_str(b, n->name);
        put_str(b, n->op_type);
        put_u32(b, (uint32_t)n->n_inputs);
        for (int i = 0; i < n->n_inputs; i++)
            put_i32(b, n->inputs[i] >= 0 ? index[n->inputs[i]] : -1);
        put_u32(b, (uint32_t)n->n_outputs);
        for (int o = 0; o < n->n_outputs; o++)
            put_i32(b, index[n->outputs[o]]);
        put_u32(b, (uint32_t)n->n_attrs);
        for (int a = 0; a < n->n_attrs; a++) {
            const pg_attr *at = &n->attrs[a];
            put_str(b, at->name);
            put_u8(b, (uint8_t)at->type);
            switch (at->type) {
            case PG_ATTR_INT: put_i64(b, at->i); break;
            case PG_ATTR_FLOAT: put_f32(b, at->f); break;
            case PG_ATTR_INTS:
                put_u32(b, (uint32_t)at->n);
                for (int k = 0; k < at->n; k++)
                    put_i64(b, at->ints[k]);
                break;
            case PG_ATTR_FLOATS:
                put_u32(b, (uint32_t)at->n);
                for (int k = 0; k < at->n; k++)
                    put_f32(b, at->floats[k]);
                break;
            case PG_ATTR_STRING: put_str(b, at->s); break;
            case PG_ATTR_TENSOR: put_i32(b, at->tensor >= 0 ? index[at->tensor] : -1); break;
            }
        }
    }
    for (int i = 0; i < g->n_inputs; i++)
        put_i32(b, index[g->inputs[i]]);
    for (int i = 0; i < g->n_outputs; i++) {
        put_i32(b, index[g->outputs[i]]);
        put_str(b, g->output_names[i]);
    }
    pg_free(index);
    return oom || b->oom ? -1 : 0;
}

static void put_at_u32(uint8_t *h, size_t o, uint32_t v) { memcpy(h + o, &v, 4); }
static void put_at_i32(uint8_t *h, size_t o, int32_t v) { memcpy(h + o, &v, 4); }
static void put_at_u64(uint8_t *h, size_t o, uint64_t v) { memcpy(h + o, &v, 8); }

static pg_status save_locked(const pg_model *const *models, int n_models, const char *path)
{
    pg_status st = PG_OK;
    size_t n_consts = 0;
    for (int i = 0; i < n_models; i++)
        PG_IR_FOR_TENSORS(models[i]->g, t)
            n_consts += t->is_const != 0;
    dedup d = { 0 };
    d.nslot = 16;
    while (d.nslot < 2 * n_consts + 2)
        d.nslot *= 2;
    d.cap = (int)n_consts + 1;
    d.v = pg_malloc(sizeof *d.v * (size_t)d.cap);
    d.slot = pg_malloc(sizeof *d.slot * d.nslot);
    wbuf *gb = pg_calloc((size_t)n_models, sizeof *gb);
    size_t table_bytes = (size_t)n_models * ENTRY_BYTES;
    uint8_t *head = pg_calloc(1, HEADER_BYTES + table_bytes);
    char *tmp = malloc(strlen(path) + 32);
    if (!d.v || !d.slot || !gb || !head || !tmp || n_consts > (size_t)INT32_MAX - 2) {
        st = pg_fail(PG_ERR_NOMEM, "out of memory saving '%s'", path);
        goto out;
    }
    for (size_t i = 0; i < d.nslot; i++)
        d.slot[i] = -1;

    /* the graph sections, and the table entry of each */
    uint64_t at = HEADER_BYTES + table_bytes;
    for (int i = 0; i < n_models; i++) {
        const pg_model *m = models[i];
        int pack_nr;
        uint32_t nt, nn;
        if (encode_graph(m, &gb[i], &d, &pack_nr, &nt, &nn)) {
            st = pg_fail(PG_ERR_NOMEM, "out of memory saving '%s'", path);
            goto out;
        }
        uint8_t *e = head + HEADER_BYTES + (size_t)i * ENTRY_BYTES;
        put_at_u64(e, E_GRAPH_OFF, at);
        put_at_u64(e, E_GRAPH_BYTES, gb[i].n);
        put_at_u64(e, E_GRAPH_SUM, checksum(gb[i].p, gb[i].n));
        put_at_u64(e, E_FLAGS, m->bound_flags);
        level_name(m->bound_flags, (char *)e + E_LEVELNAME, 16);
        put_at_i32(e, E_LEVEL, m->level);
        put_at_i32(e, E_THREADS, m->threads_opt);
        put_at_i32(e, E_THREADS_RES, m->threads);
        put_at_i32(e, E_PACK_NR, pack_nr);
        /* the strategy asked for ("greedy_by_size/online" past the exact
         * planner's size: the planner picks that again by itself) */
        snprintf((char *)e + E_PLANNER, 32, "%.*s", (int)strcspn(m->plan.planner, "/"), m->plan.planner);
        put_at_u32(e, E_N_TENSORS, nt);
        put_at_u32(e, E_N_NODES, nn);
        put_at_i32(e, E_PRECISION, graph_precision(m->g));
        at += gb[i].n;
    }
    uint64_t data_off = (at + DATA_ALIGN - 1) & ~(uint64_t)(DATA_ALIGN - 1);
    uint64_t data_bytes = d.end, file_bytes = data_off + data_bytes;
    /* the data checksum, over the section as it will be laid out */
    static const uint8_t zeros[PG_ALIGN];
    hasher ds;
    hash_init(&ds);
    uint64_t o = 0;
    for (int k = 0; k < d.n; k++) {
        hash_update(&ds, zeros, (size_t)(d.v[k].off - o));
        hash_update(&ds, d.v[k].p, d.v[k].n);
        o = d.v[k].off + d.v[k].n;
    }

    uint8_t *h = head;
    memcpy(h + H_MAGIC, MAGIC, 8);
    put_at_u32(h, H_VERSION, FILE_VERSION);
    put_at_u32(h, H_ENDIAN, ENDIAN_MARK);
    snprintf((char *)h + H_ENGINE, 32, "%s", pg_version());
    put_at_u64(h, H_OPS, op_fingerprint());
    pg_cpu_info ci;
    if (pg_cpu_get_info(&ci) == PG_OK)
        snprintf((char *)h + H_ARCH, 16, "%s", ci.arch);
    put_at_u64(h, H_FILE_BYTES, file_bytes);
    put_at_u64(h, H_TABLE_OFF, HEADER_BYTES);
    put_at_u32(h, H_N_MODELS, (uint32_t)n_models);
    put_at_u64(h, H_TABLE_SUM, checksum(h + HEADER_BYTES, table_bytes));
    put_at_u64(h, H_DATA_OFF, data_off);
    put_at_u64(h, H_DATA_BYTES, data_bytes);
    put_at_u64(h, H_DATA_SUM, hash_final(&ds));
    put_at_u64(h, H_SUM, checksum(h, H_SUM));

    /* written to a temporary name and renamed: a reader never sees half a file */
    snprintf(tmp, strlen(path) + 32, "%s.tmp%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        st = pg_fail(PG_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        goto out;
    }
    int bad = write_all(fd, head, HEADER_BYTES + table_bytes);
    for (int i = 0; i < n_models && !bad; i++)
        bad = write_all(fd, gb[i].p, gb[i].n);
    bad = bad || write_zeros(fd, (size_t)(data_off - at));
    o = 0;
    for (int k = 0; k < d.n && !bad; k++) {
        bad = write_zeros(fd, (size_t)(d.v[k].off - o)) || (d.v[k].n && write_all(fd, d.v[k].p, d.v[k].n));
        o = d.v[k].off + d.v[k].n;
    }
    int err = errno;
    if (close(fd) != 0 && !bad) {
        bad = 1;
        err = errno;
    }
    if (bad)
        st = pg_fail(PG_ERR_IO, "cannot write '%s': %s", path, strerror(err));
    else if (rename(tmp, path) != 0)
        st = pg_fail(PG_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    if (st)
        unlink(tmp);
out:
    if (gb)
        for (int i = 0; i < n_models; i++)
            free(gb[i].p);
    pg_free(gb);
    pg_free(head);
    pg_free(d.v);
    pg_free(d.slot);
    free(tmp);
    return st;
}

pg_status pg_model_save_many(const pg_model *const *models, int n, const char *path)
{
    pg_clear_error();
    if (!models || !path || n < 1 || (unsigned)n > MAX_MODELS)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_model_save_many: NULL argument or %d models (1..%u)", n,
                       MAX_MODELS);
    for (int i = 0; i < n; i++) {
        if (!models[i])
            return pg_fail(PG_ERR_INVALID_ARG, "pg_model_save_many: model %d is NULL", i);
        if (!models[i]->steps)
            return pg_fail(PG_ERR_INVALID_ARG, "pg_model_save: model %d is not bound to kernels "
                           "(its last rebind failed)", i);
        for (int j = 0; j < i; j++)
            if (models[j] == models[i])
                return pg_fail(PG_ERR_INVALID_ARG, "pg_model_save_many: model %d is model %d again", i, j);
    }
    /* no model changes while it is written: each is claimed as a run is */
    int taken = 0;
    for (; taken < n; taken++)
        if (atomic_exchange(&((pg_model *)models[taken])->busy, 1))
            break;
    pg_status st = taken < n ? pg_fail(PG_ERR_INVALID_ARG, "pg_model_save: model %d is running on another "
                                       "thread", taken)
                             : save_locked(models, n, path);
    for (int i = 0; i < taken; i++)
        atomic_store(&((pg_model *)models[i])->busy, 0);
    return st;
}

pg_status pg_model_save(const pg_model *m, const char *path)
{
    if (!m || !path) {
        pg_clear_error();
        return pg_fail(PG_ERR_INVALID_ARG, "pg_model_save: NULL model or path");
    }
    return pg_model_save_many(&m, 1, path);
}

/* ---- reading: the header and the model table -------------------------------- */

typedef struct header {
    uint32_t version, n_models;
    char engine[32], arch[16];
    uint64_t ops, file_bytes, table_off, table_sum, data_off, data_bytes, data_sum;
} header;

typedef struct entry {
    uint64_t graph_off, graph_bytes, graph_sum, flags;
    char level_name[16], planner[32];
    int32_t level, threads, threads_resolved, pack_nr, precision;
    uint32_t n_tensors, n_nodes;
} entry;

static void get_str(char *dst, const uint8_t *src, size_t cap)
{
    memcpy(dst, src, cap);
    dst[cap - 1] = 0;
}

static uint32_t at_u32(const uint8_t *p, size_t o) { uint32_t v; memcpy(&v, p + o, 4); return v; }
static int32_t at_i32(const uint8_t *p, size_t o) { int32_t v; memcpy(&v, p + o, 4); return v; }
static uint64_t at_u64(const uint8_t *p, size_t o) { uint64_t v; memcpy(&v, p + o, 8); return v; }

/* Checks the header and the table of a mapped file of `size` bytes. */
static pg_status parse_header(const char *path, const uint8_t *h, uint64_t size, header *o)
{
    if (size < HEADER_BYTES || memcmp(h + H_MAGIC, MAGIC, 8))
        return pg_fail(PG_ERR_FORMAT, "'%s' is not a Peregrine compiled model (%s)", path,
                       size < HEADER_BYTES ? "shorter than the 256-byte header" : "no PGMODEL magic");
    uint32_t endian = at_u32(h, H_ENDIAN);
    if (endian != ENDIAN_MARK)
        return pg_fail(PG_ERR_FORMAT, "'%s' was written on a machine of the other byte order "
                       "(mark 0x%08x): compile the model on this one", path, endian);
    o->version = at_u32(h, H_VERSION);
    if (o->version != FILE_VERSION)
        return pg_fail(PG_ERR_FORMAT, "'%s' is format version %u; this engine (Peregrine %s) reads "
                       "version %u: compile the model again with this engine", path, o->version,
                       pg_version(), FILE_VERSION);
    get_str(o->engine, h + H_ENGINE, 32);
    if (strcmp(o->engine, pg_version()))
        return pg_fail(PG_ERR_FORMAT, "'%s' was saved by Peregrine %s; this is Peregrine %s: "
                       "compile the model again with this engine", path, o->engine, pg_version());
    o->ops = at_u64(h, H_OPS);
    if (o->ops != op_fingerprint())
        return pg_fail(PG_ERR_FORMAT, "'%s' was saved by a build of Peregrine %s with another op "
                       "table (fingerprint %016llx, this build %016llx): compile the model again",
                       path, o->engine, (unsigned long long)o->ops, (unsigned long long)op_fingerprint());
    if (at_u64(h, H_SUM) != checksum(h, H_SUM))
        return pg_fail(PG_ERR_FORMAT, "'%s': the header's checksum does not match (the file is damaged)", path);
    get_str(o->arch, h + H_ARCH, 16);
    o->file_bytes = at_u64(h, H_FILE_BYTES);
    o->table_off = at_u64(h, H_TABLE_OFF);
    o->n_models = at_u32(h, H_N_MODELS);
    o->table_sum = at_u64(h, H_TABLE_SUM);
    o->data_off = at_u64(h, H_DATA_OFF);
    o->data_bytes = at_u64(h, H_DATA_BYTES);
    o->data_sum = at_u64(h, H_DATA_SUM);
    if (o->file_bytes != size)
        return pg_fail(PG_ERR_FORMAT, "'%s' is %s: the header says %llu bytes, the file has %llu", path,
                       size < o->file_bytes ? "truncated" : "longer than written",
                       (unsigned long long)o->file_bytes, (unsigned long long)size);
    if (o->n_models < 1 || o->n_models > MAX_MODELS || o->table_off != HEADER_BYTES ||
        (uint64_t)o->n_models * ENTRY_BYTES > size - HEADER_BYTES)
        return pg_fail(PG_ERR_FORMAT, "'%s': a table of %u models at %llu does not fit the file", path,
                       o->n_models, (unsigned long long)o->table_off);
    uint64_t table_end = HEADER_BYTES + (uint64_t)o->n_models * ENTRY_BYTES;
    if (o->data_off < table_end || o->data_off % DATA_ALIGN || o->data_off > size ||
        o->data_bytes != size - o->data_off)
        return pg_fail(PG_ERR_FORMAT, "'%s': the data section (%llu bytes at %llu) is out of place in "
                       "%llu bytes", path, (unsigned long long)o->data_bytes,
                       (unsigned long long)o->data_off, (unsigned long long)size);
    if (checksum(h + HEADER_BYTES, (size_t)(table_end - HEADER_BYTES)) != o->table_sum)
        return pg_fail(PG_ERR_FORMAT, "'%s': the model table's checksum does not match (the file is damaged)",
                       path);
    return PG_OK;
}

/* Entry `index` of the table of a file whose header checked. */
static pg_status parse_entry(const char *path, const uint8_t *base, const header *hd, int index, entry *o)
{
    if (index < 0 || (uint32_t)index >= hd->n_models)
        return pg_fail(PG_ERR_INVALID_ARG, "'%s' holds %u model(s): there is no model %d", path,
                       hd->n_models, index);
    const uint8_t *e = base + HEADER_BYTES + (size_t)index * ENTRY_BYTES;
    o->graph_off = at_u64(e, E_GRAPH_OFF);
    o->graph_bytes = at_u64(e, E_GRAPH_BYTES);
    o->graph_sum = at_u64(e, E_GRAPH_SUM);
    o->flags = at_u64(e, E_FLAGS);
    get_str(o->level_name, e + E_LEVELNAME, 16);
    get_str(o->planner, e + E_PLANNER, 32);
    o->level = at_i32(e, E_LEVEL);
    o->threads = at_i32(e, E_THREADS);
    o->threads_resolved = at_i32(e, E_THREADS_RES);
    o->pack_nr = at_i32(e, E_PACK_NR);
    o->n_tensors = at_u32(e, E_N_TENSORS);
    o->n_nodes = at_u32(e, E_N_NODES);
    o->precision = at_i32(e, E_PRECISION);
    uint64_t table_end = HEADER_BYTES + (uint64_t)hd->n_models * ENTRY_BYTES;
    if (o->graph_off < table_end || o->graph_off > hd->data_off || o->graph_bytes > hd->data_off - o->graph_off)
        return pg_fail(PG_ERR_FORMAT, "'%s': model %d's graph (%llu bytes at %llu) is outside the graph "
                       "sections", path, index, (unsigned long long)o->graph_bytes,
                       (unsigned long long)o->graph_off);
    if (o->level < 0 || o->level > 3)
        return pg_fail(PG_ERR_FORMAT, "'%s': model %d: compile level %d is not 0..3", path, index, (int)o->level);
    if (o->threads < 0 || o->threads > PG_MAX_THREADS || o->threads_resolved < 1 ||
        o->threads_resolved > PG_MAX_THREADS)
        return pg_fail(PG_ERR_FORMAT, "'%s': model %d: thread counts %d / %d are out of range", path, index,
                       (int)o->threads, (int)o->threads_resolved);
    if (strcmp(o->planner, "greedy_by_size") && strcmp(o->planner, "greedy_by_first_use") &&
        strcmp(o->planner, "naive"))
        return pg_fail(PG_ERR_FORMAT, "'%s': model %d: planner '%.31s' is not one this engine has", path,
                       index, o->planner);
    if (o->precision < PG_PRECISION_FP32 || o->precision > PG_PRECISION_INT8_DYNAMIC)
        return pg_fail(PG_ERR_FORMAT, "'%s': model %d: precision code %d is not 0..2", path, index,
                       (int)o->precision);
    if (o->pack_nr < 0 || o->pack_nr > MAX_PACK_NR)
        return pg_fail(PG_ERR_FORMAT, "'%s': model %d: panel width %d is out of range", path, index,
                       (int)o->pack_nr);
    if (checksum(base + o->graph_off, (size_t)o->graph_bytes) != o->graph_sum)
        return pg_fail(PG_ERR_FORMAT, "'%s': model %d's graph section does not match its checksum (the "
                       "file is damaged)", path, index);
    return PG_OK;
}

typedef struct mapped {
    void *base;
    size_t size;
} mapped;

static pg_status map_file(const char *path, mapped *mp)
{
    mp->base = NULL;
    mp->size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return pg_fail(PG_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return pg_fail(PG_ERR_IO, "'%s' is not a regular file", path);
    }
    if ((uint64_t)sb.st_size < HEADER_BYTES) {
        close(fd);
        return pg_fail(PG_ERR_FORMAT, "'%s' is not a Peregrine compiled model (%lld bytes: shorter "
                       "than the 256-byte header)", path, (long long)sb.st_size);
    }
    void *base = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (base == MAP_FAILED)
        return pg_fail(PG_ERR_IO, "cannot map '%s': %s", path, strerror(errno));
    mp->base = base;
    mp->size = (size_t)sb.st_size;
    return PG_OK;
}

/* ---- reading: the graph ----------------------------------------------------- */

typedef struct reader {
    const uint8_t *p;
    size_t n, o;
    const char *path;
    const char *what;    /* what is being read, for the message */
    int idx;             /* its index, -1 for none */
    int failed;
} reader;

static int bad(reader *r, const char *fmt, ...) PG_PRINTF(2, 3);
static int bad(reader *r, const char *fmt, ...)
{
    if (r->failed)
        return -1;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char where[64] = "";
    if (r->idx >= 0)
        snprintf(where, sizeof where, " %d", r->idx);
    pg_fail(PG_ERR_FORMAT, "'%s': %s%s (graph section byte %zu): %s", r->path, r->what, where, r->o, msg);
    r->failed = 1;
    return -1;
}

static int take(reader *r, void *dst, size_t k, const char *field)
{
    if (r->failed)
        return -1;
    if (k > r->n - r->o)
        return bad(r, "the section ends inside its %s", field);
    memcpy(dst, r->p + r->o, k);
    r->o += k;
    return 0;
}

static uint32_t rd_u32(reader *r, const char *f) { uint32_t v = 0; take(r, &v, 4, f); return v; }
static int32_t rd_i32(reader *r, const char *f) { int32_t v = 0; take(r, &v, 4, f); return v; }
static int64_t rd_i64(reader *r, const char *f) { int64_t v = 0; take(r, &v, 8, f); return v; }
static uint64_t rd_u64(reader *r, const char *f) { uint64_t v = 0; take(r, &v, 8, f); return v; }
static uint8_t rd_u8(reader *r, const char *f) { uint8_t v = 0; take(r, &v, 1, f); return v; }
static float rd_f32(reader *r, const char *f) { float v = 0; take(r, &v, 4, f); return v; }

/* A string: a NUL-terminated copy in buf (cap bytes) or a pg_malloc'd one
 * when buf is NULL.  NULL on failure. */
static char *rd_str(reader *r, const char *field, char *buf, size_t cap)
{
    uint32_t len = rd_u32(r, field);
    if (r->failed)
        return NULL;
    if (len > MAX_STR || len > r->n - r->o) {
        bad(r, "its %s is %u bytes long, past the section", field, len);
        return NULL;
    }
    if (memchr(r->p + r->o, 0, len)) {
        bad(r, "its %s holds a NUL byte", field);
        return NULL;
    }
    char *s = buf;
    if (!s || len + 1 > cap) {
        if (buf) {
            bad(r, "its %s is %u bytes long (at most %zu)", field, len, cap - 1);
            return NULL;
        }
        if (!(s = pg_malloc((size_t)len + 1))) {
            pg_fail(PG_ERR_NOMEM, "out of memory loading '%s'", r->path);
            r->failed = 1;
            return NULL;
        }
    }
    memcpy(s, r->p + r->o, len);
    s[len] = 0;
    r->o += len;
    return s;
}

/* The bytes a constant of this shape, dtype and layout holds; 0 and a
 * message on overflow or nonsense. */
/* An int8 packed weight's stored range (its blob's last word) must be its
 * values' own: the binder picks a kernel exact up to that range
 * (avx2_maddubs: 64), so a file that understated it would compute wrong
 * without a word.  1 (and the error set) when it does not match. */
static int bad_int8_range(reader *r, const char *name, const pg_tensor *t)
{
    size_t K = (size_t)t->shape[0], N = (size_t)t->shape[1];
    pg_u8s8_packed pk;
    pg_u8s8_view(t->data, K, N, 0, &pk);
    int m = pg_u8s8_weights_max(t->data, K, N, 0);
    if (pk.w_max == m)
        return 0;
    bad(r, "'%s': an int8 packed weight whose stored range |%d| is not its values' |%d|", name,
        pk.w_max, m);
    return 1;
}

static int const_bytes(reader *r, const pg_tensor *t, uint64_t *out)
{
    uint64_t es = pg_dtype_size(t->dtype), n = 1;
    if (t->layout == PG_LAYOUT_PACKED_BF16 || t->layout == PG_LAYOUT_PACKED_U8S8) {
        /* compile(precision=...): one fixed 32-column panel layout per family */
        if (t->dtype != PG_DTYPE_FLOAT32 || t->rank != 2 || t->pack_nr != 32 ||
            t->shape[0] < 1 || t->shape[1] < 1 || t->shape[0] > (1 << 24) || t->shape[1] > (1 << 24))
            return bad(r, "a bf16 / int8 packed constant must be float32 [K, N] (K, N in 1..2^24) "
                       "with panel width 32 (it is %s rank %d, width %d)", pg_dtype_name(t->dtype),
                       t->rank, t->pack_nr);
        size_t K = (size_t)t->shape[0], N = (size_t)t->shape[1];
        *out = t->layout == PG_LAYOUT_PACKED_BF16 ? pg_bf16_packed_bytes(K, N)
                                                  : pg_u8s8_packed_bytes(K, N, 0);
        return 0;
    }
    if (t->layout == PG_LAYOUT_PACKED) {
        if (t->dtype != PG_DTYPE_FLOAT32 || t->rank != 2 || t->pack_nr < 1 || t->pack_nr > MAX_PACK_NR)
            return bad(r, "a packed constant must be float32 [K, N] with a panel width 1..%d "
                       "(it is %s rank %d, width %d)", MAX_PACK_NR, pg_dtype_name(t->dtype), t->rank,
                       t->pack_nr);
        uint64_t K = (uint64_t)t->shape[0], N = (uint64_t)t->shape[1], nr = (uint64_t)t->pack_nr;
        uint64_t panels = N / nr + (N % nr != 0);
        if (__builtin_mul_overflow(panels, K, &n) || __builtin_mul_overflow(n, nr, &n) ||
            __builtin_mul_overflow(n, es, out))
            return bad(r, "its packed size overflows");
        return 0;
    }
    for (int d = 0; d < t->rank; d++)
        if (__builtin_mul_overflow(n, (uint64_t)t->shape[d], &n))
            return bad(r, "its element count overflows");
    if (__builtin_mul_overflow(n, es, out))
        return bad(r, "its size overflows");
    return 0;
}

typedef struct saved_shape {
    int32_t dtype, rank;
    int64_t shape[PG_MAX_RANK];
} saved_shape;

/* Builds m->g from the graph section; constants point into the mapping. */
static pg_status read_graph(pg_model *m, const char *path, const entry *en, const uint8_t *base,
                            const header *hd, saved_shape **saved_out)
{
    reader r = { base + en->graph_off, (size_t)en->graph_bytes, 0, path, "graph", -1, 0 };
    const uint8_t *data = base + hd->data_off;
    *saved_out = NULL;
    pg_graph *g = pg_ir_new();
    if (!g)
        return pg_fail(PG_ERR_NOMEM, "out of memory loading '%s'", path);
    m->g = g;
    uint32_t nt = rd_u32(&r, "tensor count"), nn = rd_u32(&r, "node count");
    uint32_t ni = rd_u32(&r, "input count"), no = rd_u32(&r, "output count");
    if (r.failed)
        return pg_last_status();
    /* the smallest record of each kind bounds the counts by the section */
    size_t left = r.n - r.o;
    if (nt != en->n_tensors || nn != en->n_nodes)
        return bad(&r, "%u tensors and %u nodes; the table says %u and %u", nt, nn, en->n_tensors,
                   en->n_nodes), PG_ERR_FORMAT;
    if (nt > left / 19 || nn > left / 20 || ni > nt || no > left / 8 || nt > INT32_MAX / 2)
        return bad(&r, "counts past the section (%u tensors, %u nodes, %u inputs, %u outputs in %zu bytes)",
                   nt, nn, ni, no, left), PG_ERR_FORMAT;
    saved_shape *saved = pg_calloc((size_t)nt + 1, sizeof *saved);
    if (!saved)
        return pg_fail(PG_ERR_NOMEM, "out of memory loading '%s'", path);
    *saved_out = saved;
    char name[4096];
    for (uint32_t i = 0; i < nt; i++) {
        r.what = "tensor";
        r.idx = (int)i;
        if (!rd_str(&r, "name", name, sizeof name))
            return pg_last_status();
        int32_t dtype = rd_i32(&r, "dtype"), rank = rd_i32(&r, "rank");
        if (r.failed)
            return pg_last_status();
        if (!pg_dtype_size((pg_dtype)dtype))
            return bad(&r, "'%s' has dtype %d, not one this engine knows", name, dtype), PG_ERR_FORMAT;
        if (rank < 0 || rank > PG_MAX_RANK)
            return bad(&r, "'%s' has rank %d, not 0..%d", name, rank, PG_MAX_RANK), PG_ERR_FORMAT;
        int64_t shape[PG_MAX_RANK] = { 0 }, numel = 1;
        for (int d = 0; d < rank; d++) {
            shape[d] = rd_i64(&r, "shape");
            if (!r.failed && shape[d] < 0)
                return bad(&r, "'%s' has dim %d = %lld", name, d, (long long)shape[d]), PG_ERR_FORMAT;
            if (!r.failed && (__builtin_mul_overflow(numel, shape[d], &numel) || numel > INT64_MAX / 16))
                return bad(&r, "'%s' has more elements than int64 counts", name), PG_ERR_FORMAT;
        }
        uint8_t layout = rd_u8(&r, "layout");
        int32_t pack_nr = rd_i32(&r, "panel width");
        uint8_t is_const = rd_u8(&r, "const flag"), is_input = rd_u8(&r, "input flag");
        if (r.failed)
            return pg_last_status();
        if (layout > PG_LAYOUT_PACKED_U8S8 || is_const > 1 || is_input > 1 || (is_const && is_input) ||
            (layout != PG_LAYOUT_ROW_MAJOR && !is_const) || (layout == PG_LAYOUT_ROW_MAJOR && pack_nr != 0))
            return bad(&r, "'%s' has layout %u, panel width %d, const %u, input %u: not a valid "
                       "combination", name, layout, pack_nr, is_const, is_input), PG_ERR_FORMAT;
        int id = pg_ir_add_tensor(g, name, (pg_dtype)dtype, rank, shape);
        if (id < 0)
            return bad(&r, "%s", pg_last_error()), PG_ERR_FORMAT;
        if (id != (int)i)
            return pg_fail(PG_ERR_INTERNAL, "loading '%s': tensor %u got id %d", path, i, id);
        pg_tensor *t = g->tensors[id];
        t->layout = (pg_layout)layout;
        t->pack_nr = pack_nr;
        saved[i].dtype = dtype;
        saved[i].rank = rank;
        memcpy(saved[i].shape, shape, sizeof shape);
        if (is_const) {
            uint64_t off = rd_u64(&r, "data offset"), nbytes = rd_u64(&r, "byte count"), want = 0;
            if (r.failed || const_bytes(&r, t, &want))
                return pg_last_status();
            if (nbytes != want)
                return bad(&r, "'%s' holds %llu bytes; its shape and dtype%s need %llu", name,
                           (unsigned long long)nbytes, layout == PG_LAYOUT_PACKED ? " packed" : "",
                           (unsigned long long)want), PG_ERR_FORMAT;
            if (off % PG_ALIGN || off > hd->data_bytes || nbytes > hd->data_bytes - off)
                return bad(&r, "'%s' has its %llu bytes at data offset %llu, outside the %llu-byte data "
                           "section (or unaligned)", name, (unsigned long long)nbytes,
                           (unsigned long long)off, (unsigned long long)hd->data_bytes), PG_ERR_FORMAT;
            if (nbytes) {
                t->data = (void *)(data + off);
                t->data_borrowed = 1;
            } else if (!(t->data = pg_malloc(1))) {
                return pg_fail(PG_ERR_NOMEM, "out of memory loading '%s'", path);
            }
            t->nbytes = (size_t)nbytes;
            t->is_const = 1;
            if (layout == PG_LAYOUT_PACKED_U8S8 && bad_int8_range(&r, name, t))
                return PG_ERR_FORMAT;
        }
        if (is_input) {
            /* listed in the order the input table gives, below */
            t->is_input = 2;
        }
    }
    int ints_cap = 0;
    int *ins = NULL;
    int64_t *i64s = NULL;
    float *f32s = NULL;
    pg_status st = PG_OK;
#define FAIL_FMT(...) do { bad(&r, __VA_ARGS__); st = pg_last_status(); goto out; } while (0)
#define CHECK_R() do { if (r.failed) { st = pg_last_status(); goto out; } } while (0)
    for (uint32_t i = 0; i < nn; i++) {
        r.what = "node";
        r.idx = (int)i;
        char op[128];
        if (!rd_str(&r, "name", name, sizeof name) || !rd_str(&r, "op type", op, sizeof op))
            CHECK_R();
        if (pg_ir_op_from_name(op) == PG_OP_UNKNOWN) {
            st = pg_fail(PG_ERR_UNSUPPORTED, "'%s': node '%s' is a %s, an op this build does not have",
                         path, name, op);
            goto out;
        }
        uint32_t n_in = rd_u32(&r, "input count");
        CHECK_R();
        if (n_in > MAX_ARITY || n_in > (r.n - r.o) / 4)
            FAIL_FMT("'%s' has %u inputs", name, n_in);
        int need = (int)n_in + 1;
        if (need > ints_cap) {
            pg_free(ins);
            ints_cap = need + MAX_ARITY;
            if (!(ins = pg_malloc(sizeof(int) * (size_t)ints_cap))) {
                st = pg_fail(PG_ERR_NOMEM, "out of memory loading '%s'", path);
                goto out;
            }
        }
        for (uint32_t k = 0; k < n_in; k++) {
            int32_t t = rd_i32(&r, "input");
            CHECK_R();
            if (t < -1 || t >= (int32_t)nt)
                FAIL_FMT("'%s' reads tensor %d of %u", name, t, nt);
            ins[k] = t;
        }
        uint32_t n_out = rd_u32(&r, "output count");
        CHECK_R();
        if (n_out < 1 || n_out > MAX_ARITY || n_out > (r.n - r.o) / 4 || n_in + n_out + 1 > (uint32_t)ints_cap)
            FAIL_FMT("'%s' has %u outputs", name, n_out);
        int *outs = ins + n_in;
        for (uint32_t k = 0; k < n_out; k++) {
            int32_t t = rd_i32(&r, "output");
            CHECK_R();
            if (t < 0 || t >= (int32_t)nt)
                FAIL_FMT("'%s' writes tensor %d of %u", name, t, nt);
            if (g->tensors[t]->is_const || g->tensors[t]->is_input)
                FAIL_FMT("'%s' writes '%s', a constant or an input", name, g->tensors[t]->name);
            outs[k] = t;
        }
        int nid = pg_ir_add_node(g, op, name, ins, (int)n_in, outs, (int)n_out);
        if (nid < 0)
            FAIL_FMT("%s", pg_last_error());
        pg_node *nd = g->nodes[nid];
        uint32_t na = rd_u32(&r, "attribute count");
        CHECK_R();
        if (na > MAX_ATTRS || na > (r.n - r.o) / 5)
            FAIL_FMT("'%s' has %u attributes", name, na);
        for (uint32_t a = 0; a < na; a++) {
            char an[256];
            if (!rd_str(&r, "attribute name", an, sizeof an))
                CHECK_R();
            uint8_t type = rd_u8(&r, "attribute type");
            CHECK_R();
            pg_status ast = PG_OK;
            switch (type) {
            case PG_ATTR_INT: {
                int64_t v = rd_i64(&r, "attribute");
                CHECK_R();
                ast = pg_ir_set_attr_int(nd, an, v);
                break;
            }
            case PG_ATTR_FLOAT: {
                float v = rd_f32(&r, "attribute");
                CHECK_R();
                ast = pg_ir_set_attr_float(nd, an, v);
                break;
            }
            case PG_ATTR_INTS:
            case PG_ATTR_FLOATS: {
                uint32_t cnt = rd_u32(&r, "attribute length");
                CHECK_R();
                size_t es = type == PG_ATTR_INTS ? 8 : 4;
                if (cnt > MAX_ATTR_N || cnt > (r.n - r.o) / es)
                    FAIL_FMT("'%s' attribute '%s' has %u elements, past the section", name, an, cnt);
                if (type == PG_ATTR_INTS) {
                    pg_free(i64s);
                    if (!(i64s = pg_malloc(8 * (size_t)cnt + 8))) {
                        st = pg_fail(PG_ERR_NOMEM, "out of memory loading '%s'", path);
                        goto out;
                    }
                    take(&r, i64s, 8 * (size_t)cnt, "attribute");
                    CHECK_R();
                    ast = pg_ir_set_attr_ints(nd, an, i64s, (int)cnt);
                } else {
                    pg_free(f32s);
                    if (!(f32s = pg_malloc(4 * (size_t)cnt + 4))) {
                        st = pg_fail(PG_ERR_NOMEM, "out of memory loading '%s'", path);
                        goto out;
                    }
                    take(&r, f32s, 4 * (size_t)cnt, "attribute");
                    CHECK_R();
                    ast = pg_ir_set_attr_floats(nd, an, f32s, (int)cnt);
                }
                break;
            }
            case PG_ATTR_STRING: {
                char *v = rd_str(&r, "attribute", NULL, 0);
                CHECK_R();
                ast = pg_ir_set_attr_string(nd, an, v);
                pg_free(v);
                break;
            }
            case PG_ATTR_TENSOR: {
                int32_t t = rd_i32(&r, "attribute");
                CHECK_R();
                if (t < 0 || t >= (int32_t)nt || !g->tensors[t]->is_const)
                    FAIL_FMT("'%s' attribute '%s' names tensor %d, not a constant", name, an, t);
                ast = pg_ir_set_attr_tensor(nd, an, t);
                break;
            }
            default:
                FAIL_FMT("'%s' attribute '%s' has type %u", name, an, type);
            }
            if (ast)
                FAIL_FMT("%s", pg_last_error());
        }
    }
    r.what = "input table";
    r.idx = -1;
    for (uint32_t i = 0; i < ni; i++) {
        int32_t t = rd_i32(&r, "input");
        CHECK_R();
        if (t < 0 || t >= (int32_t)nt || g->tensors[t]->is_input != 2)
            FAIL_FMT("entry %u names tensor %d, not an input (or twice)", i, t);
        g->tensors[t]->is_input = 1;
        if (g->n_inputs == g->cap_inputs) {
            int cap = g->cap_inputs ? 2 * g->cap_inputs : 8;
            int *p = pg_realloc(g->inputs, sizeof(int) * (size_t)g->cap_inputs, sizeof(int) * (size_t)cap);
            if (!p) {
                st = pg_fail(PG_ERR_NOMEM, "out of memory loading '%s'", path);
                goto out;
            }
            g->inputs = p;
            g->cap_inputs = cap;
        }
        g->inputs[g->n_inputs++] = t;
    }
    PG_IR_FOR_TENSORS(g, t)
        if (t->is_input == 2)
            FAIL_FMT("tensor '%s' is marked an input but not in the input table", t->name);
    r.what = "output table";
    for (uint32_t i = 0; i < no; i++) {
        int32_t t = rd_i32(&r, "output");
        CHECK_R();
        if (t < 0 || t >= (int32_t)nt)
            FAIL_FMT("entry %u names tensor %d of %u", i, t, nt);
        if (!rd_str(&r, "output name", name, sizeof name))
            CHECK_R();
        if (pg_ir_add_graph_output(g, t, name))
            FAIL_FMT("%s", pg_last_error());
    }
    if (r.o != r.n)
        FAIL_FMT("%zu bytes left over after the graph", r.n - r.o);
out:
#undef FAIL_FMT
#undef CHECK_R
    pg_free(ins);
    pg_free(i64s);
    pg_free(f32s);
    return st;
}

/* The graph as this engine sees it must be the graph the file describes:
 * structure, and every shape inference gives back. */
static pg_status check_graph(pg_graph *g, const char *path, const saved_shape *saved)
{
    if (g->n_outputs < 1)
        return pg_fail(PG_ERR_FORMAT, "'%s': the graph has no outputs", path);
    char msg[512];
    pg_status st = pg_ir_verify(g);
    if (!st)
        st = pg_ir_infer_shapes(g);
    if (st) {
        snprintf(msg, sizeof msg, "%s", pg_last_error());
        return pg_fail(PG_ERR_FORMAT, "'%s': the saved graph does not check: %s", path, msg);
    }
    PG_IR_FOR_TENSORS(g, t) {
        const saved_shape *s = &saved[t->id];
        int same = t->dtype == (pg_dtype)s->dtype && t->rank == s->rank;
        for (int d = 0; same && d < t->rank; d++)
            same = t->shape[d] == s->shape[d];
        if (!same)
            return pg_fail(PG_ERR_FORMAT, "'%s': tensor '%s' is %s rank %d in the file, shape inference "
                           "makes it %s rank %d", path, t->name, pg_dtype_name((pg_dtype)s->dtype),
                           s->rank, pg_dtype_name(t->dtype), t->rank);
    }
    return PG_OK;
}

pg_status pg_model_load(const char *path, const pg_model_load_options *opts, pg_model **out)
{
    pg_clear_error();
    if (!path || !out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_model_load: NULL path or output");
    *out = NULL;
    mapped mp;
    pg_status st = map_file(path, &mp);
    if (st)
        return st;
    header hd;
    entry en;
    const uint8_t *base = mp.base;
    if ((st = parse_header(path, base, mp.size, &hd)) ||
        (st = parse_entry(path, base, &hd, opts ? opts->index : 0, &en))) {
        munmap(mp.base, mp.size);
        return st;
    }
    if (opts && opts->verify_data &&
        checksum(base + hd.data_off, (size_t)hd.data_bytes) != hd.data_sum) {
        munmap(mp.base, mp.size);
        return pg_fail(PG_ERR_FORMAT, "'%s': the constants' checksum does not match (the weights are damaged)", path);
    }
    pg_model *m = pg_calloc(1, sizeof *m);
    if (!m) {
        munmap(mp.base, mp.size);
        return pg_fail(PG_ERR_NOMEM, "out of memory loading '%s'", path);
    }
    /* from here pg_model_free unmaps */
    m->map = mp.base;
    m->map_bytes = mp.size;
    m->loaded = 1;
    m->file_flags = en.flags;
    m->level = en.level;
    m->threads_opt = opts && opts->threads > 0 ? opts->threads : en.threads;
    m->threads = pg_threads_resolve(m->threads_opt);
    saved_shape *saved = NULL;
    st = read_graph(m, path, &en, base, &hd, &saved);
    if (!st)
        st = check_graph(m->g, path, saved);
    pg_free(saved);
    if (st)
        goto fail;
    /* weights packed for a panel width the kernel selected now lacks:
     * re-packed into owned memory (the mapping stays for the rest) */
    if ((st = pg_prepack_relayout(m->g, &m->repacked_at_load)))
        goto fail;
    const char *planner = opts && opts->planner && *opts->planner ? opts->planner : en.planner;
    if ((st = pg_model_bind_and_plan(m, planner))) {
        /* a graph the kernels refuse was damaged (or is from another
         * build); this CPU lacking something stays PG_ERR_UNSUPPORTED, and
         * a planner the caller named stays theirs */
        int callers = opts && opts->planner && *opts->planner && strstr(pg_last_error(), "planner");
        if (st != PG_ERR_NOMEM && st != PG_ERR_UNSUPPORTED && !callers) {
            char msg[400];
            snprintf(msg, sizeof msg, "%s", pg_last_error());
            st = pg_fail(PG_ERR_FORMAT, "'%s': the saved graph cannot be bound: %s", path, msg);
        }
        goto fail;
    }
    *out = m;
    return PG_OK;
fail:
    pg_model_free(m);
    return st;
}

pg_status pg_model_file_info_get(const char *path, int index, pg_model_file_info *out)
{
    pg_clear_error();
    if (!path || !out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_model_file_info_get: NULL argument");
    memset(out, 0, sizeof *out);
    mapped mp;
    pg_status st = map_file(path, &mp);
    if (st)
        return st;
    header hd;
    entry en;
    st = parse_header(path, mp.base, mp.size, &hd);
    if (!st)
        st = parse_entry(path, mp.base, &hd, index, &en);
    munmap(mp.base, mp.size);
    if (st)
        return st;
    out->format_version = hd.version;
    out->n_models = (int)hd.n_models;
    snprintf(out->engine_version, sizeof out->engine_version, "%s", hd.engine);
    snprintf(out->arch, sizeof out->arch, "%s", hd.arch);
    snprintf(out->bound_level, sizeof out->bound_level, "%s", en.level_name);
    snprintf(out->planner, sizeof out->planner, "%s", en.planner);
    out->bound_flags = en.flags;
    out->level = en.level;
    out->threads = en.threads;
    out->threads_resolved = en.threads_resolved;
    out->pack_nr = en.pack_nr;
    out->file_bytes = hd.file_bytes;
    out->graph_bytes = en.graph_bytes;
    out->data_bytes = hd.data_bytes;
    out->n_tensors = (int)en.n_tensors;
    out->n_nodes = (int)en.n_nodes;
    out->precision = en.precision;
    return PG_OK;
}

pg_status pg_model_get_load_info(const pg_model *m, pg_model_load_info *out)
{
    if (!m || !out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_model_get_load_info: NULL argument");
    memset(out, 0, sizeof *out);
    out->loaded = m->loaded;
    out->repacked = m->repacked_at_load;
    out->file_flags = m->file_flags;
    out->rebound = m->loaded && m->file_flags != m->bound_flags;
    const uint8_t *lo = m->map, *hi = lo ? lo + m->map_bytes : NULL;
    PG_IR_FOR_TENSORS(m->g, t) {
        if (!t->is_const)
            continue;
        const uint8_t *p = t->data;
        if (t->data_borrowed && lo && p >= lo && p + t->nbytes <= hi)
            out->mapped_bytes += t->nbytes;
        else
            out->owned_bytes += t->nbytes;
    }
    return PG_OK;
}

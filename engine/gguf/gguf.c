/* gguf.c - parse a GGUF file: header, metadata, tensor infos; zero copy.
 *
 * Layout (little-endian, versions 2 and 3):
 *   uint32 magic "GGUF", uint32 version, uint64 n_tensors, uint64 n_kv,
 *   n_kv x { string key, uint32 type, value },
 *   n_tensors x { string name, uint32 n_dims, uint64 dims[n_dims],
 *                 uint32 ggml type, uint64 offset },
 *   padding to general.alignment (default 32), then the data section.
 * A string is a uint64 length and that many bytes (no NUL).
 *
 * Safety: every read goes through need(), which compares the bytes wanted
 * with the bytes left (never pos + n, which could wrap), and every count is
 * bounded by the bytes left before anything is allocated for it, so a
 * corrupt count cannot ask for terabytes.  Failures name the item and the
 * byte offset. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/error.h"
#include "ggml_types.h"
#include "gguf.h"

/* ---- bounded reader --------------------------------------------------- */

typedef struct reader {
    const uint8_t *p;
    uint64_t       size;
    uint64_t       pos;
    const char    *name;
    char           what[96];  /* the item being read, for messages */
} reader;

static pg_status truncated(const reader *r, uint64_t n)
{
    return pg_fail(PG_ERR_FORMAT,
                   "gguf: %s: truncated or corrupt: %s at offset %llu needs %llu bytes, "
                   "the file has %llu left",
                   r->name, r->what, (unsigned long long)r->pos, (unsigned long long)n,
                   (unsigned long long)(r->size - r->pos));
}

static int need(const reader *r, uint64_t n)
{
    return n <= r->size - r->pos;
}

uint64_t pg_gguf_load_le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static pg_status read_u32(reader *r, uint32_t *out)
{
    if (!need(r, 4))
        return truncated(r, 4);
    *out = (uint32_t)pg_gguf_load_le(r->p + r->pos, 4);
    r->pos += 4;
    return PG_OK;
}

static pg_status read_u64(reader *r, uint64_t *out)
{
    if (!need(r, 8))
        return truncated(r, 8);
    *out = pg_gguf_load_le(r->p + r->pos, 8);
    r->pos += 8;
    return PG_OK;
}

/* A string: returns its offset (of the bytes) and length, checked. */
static pg_status read_string(reader *r, uint64_t *at, uint64_t *len)
{
    pg_status st = read_u64(r, len);
    if (st != PG_OK)
        return st;
    if (!need(r, *len)) {
        r->pos -= 8;
        return pg_fail(PG_ERR_FORMAT,
                       "gguf: %s: truncated or corrupt: %s at offset %llu is a string of "
                       "%llu bytes, the file has %llu left",
                       r->name, r->what, (unsigned long long)r->pos, (unsigned long long)*len,
                       (unsigned long long)(r->size - r->pos - 8));
    }
    *at = r->pos;
    r->pos += *len;
    return PG_OK;
}

static char *copy_string(const reader *r, uint64_t at, uint64_t len)
{
    if (len > SIZE_MAX - 1)
        return NULL;
    char *s = malloc((size_t)len + 1);
    if (!s)
        return NULL;
    memcpy(s, r->p + at, (size_t)len);
    s[len] = '\0';
    return s;
}

/* Bytes of one scalar of a metadata type, 0 for string/array/unknown. */
static uint64_t scalar_bytes(int type)
{
    switch (type) {
    case PG_GGUF_UINT8: case PG_GGUF_INT8: case PG_GGUF_BOOL: return 1;
    case PG_GGUF_UINT16: case PG_GGUF_INT16: return 2;
    case PG_GGUF_UINT32: case PG_GGUF_INT32: case PG_GGUF_FLOAT32: return 4;
    case PG_GGUF_UINT64: case PG_GGUF_INT64: case PG_GGUF_FLOAT64: return 8;
    default: return 0;
    }
}

/* ---- name index ------------------------------------------------------- */

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ull;   /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

static pg_status index_init(name_index *ix, int64_t n)
{
    uint64_t cap = 16;
    while (cap < (uint64_t)n * 2)
        cap <<= 1;
    ix->slots = calloc(cap, sizeof *ix->slots);
    ix->mask = cap - 1;
    return ix->slots ? PG_OK : pg_fail(PG_ERR_NOMEM, "gguf: out of memory for a name index");
}

/* Slot of name: holding it, or the empty one where it would go. */
static uint64_t index_slot(const name_index *ix, const char *name,
                           const char *(*name_of)(const void *, int64_t), const void *ctx)
{
    uint64_t h = hash_name(name) & ix->mask;
    while (ix->slots[h] && strcmp(name_of(ctx, ix->slots[h] - 1), name) != 0)
        h = (h + 1) & ix->mask;
    return h;
}

static const char *kv_name_of(const void *ctx, int64_t i) { return ((const pg_gguf *)ctx)->kv[i].key; }
static const char *tensor_name_of(const void *ctx, int64_t i) { return ((const pg_gguf *)ctx)->tensors[i].name; }

int64_t pg_gguf_index_find(const pg_gguf *g, int tensors, const char *name)
{
    const name_index *ix = tensors ? &g->tensor_index : &g->kv_index;
    if (!ix->slots)
        return -1;
    uint64_t h = index_slot(ix, name, tensors ? tensor_name_of : kv_name_of, g);
    return ix->slots[h] - 1;
}

/* ---- parsing ---------------------------------------------------------- */

static pg_status parse_kv(pg_gguf *g, reader *r, int64_t i)
{
    gguf_kv *kv = &g->kv[i];
    uint64_t at = 0, len = 0;
    snprintf(r->what, sizeof r->what, "metadata %lld key", (long long)i);
    pg_status st = read_string(r, &at, &len);
    if (st != PG_OK)
        return st;
    if (!(kv->key = copy_string(r, at, len)))
        return pg_fail(PG_ERR_NOMEM, "gguf: %s: out of memory for a key", r->name);
    snprintf(r->what, sizeof r->what, "metadata '%.48s' type", kv->key);
    uint32_t type = 0;
    if ((st = read_u32(r, &type)) != PG_OK)
        return st;
    kv->type = (int)type;
    snprintf(r->what, sizeof r->what, "metadata '%.48s' value", kv->key);
    if (type == PG_GGUF_STRING) {
        kv->pos = r->pos;
        return read_string(r, &at, &len);
    }
    if (type != PG_GGUF_ARRAY) {
        uint64_t b = scalar_bytes((int)type);
        if (!b)
            return pg_fail(PG_ERR_FORMAT, "gguf: %s: metadata '%s' at offset %llu has unknown "
                           "value type %u", r->name, kv->key, (unsigned long long)(r->pos - 4), type);
        if (!need(r, b))
            return truncated(r, b);
        kv->pos = r->pos;
        r->pos += b;
        return PG_OK;
    }
    /* array: uint32 element type, uint64 count, elements */
    uint32_t et = 0;
    if ((st = read_u32(r, &et)) != PG_OK || (st = read_u64(r, &kv->n)) != PG_OK)
        return st;
    kv->arr_type = (int)et;
    kv->pos = r->pos;
    if (et == PG_GGUF_STRING) {
        /* every element takes at least its 8-byte length */
        if (kv->n > (r->size - r->pos) / 8)
            return pg_fail(PG_ERR_FORMAT, "gguf: %s: metadata '%s': array of %llu strings at "
                           "offset %llu cannot fit in the %llu bytes left", r->name, kv->key,
                           (unsigned long long)kv->n, (unsigned long long)r->pos,
                           (unsigned long long)(r->size - r->pos));
        kv->str_pos = malloc((size_t)(kv->n ? kv->n : 1) * sizeof *kv->str_pos);
        if (!kv->str_pos)
            return pg_fail(PG_ERR_NOMEM, "gguf: %s: out of memory for '%s'", r->name, kv->key);
        for (uint64_t j = 0; j < kv->n; j++) {
            snprintf(r->what, sizeof r->what, "metadata '%.48s' element %llu", kv->key,
                     (unsigned long long)j);
            kv->str_pos[j] = r->pos;
            if ((st = read_string(r, &at, &len)) != PG_OK)
                return st;
        }
        return PG_OK;
    }
    uint64_t b = scalar_bytes((int)et);
    if (!b)
        return pg_fail(PG_ERR_FORMAT, "gguf: %s: metadata '%s' at offset %llu: arrays of type %u "
                       "are not supported", r->name, kv->key, (unsigned long long)(r->pos - 12), et);
    if (kv->n > (r->size - r->pos) / b)
        return pg_fail(PG_ERR_FORMAT, "gguf: %s: truncated or corrupt: metadata '%s' at offset "
                       "%llu is an array of %llu x %llu bytes, the file has %llu left", r->name,
                       kv->key, (unsigned long long)r->pos, (unsigned long long)kv->n,
                       (unsigned long long)b, (unsigned long long)(r->size - r->pos));
    r->pos += kv->n * b;
    return PG_OK;
}

static pg_status parse_tensor_info(pg_gguf *g, reader *r, int64_t i)
{
    gguf_tensor *t = &g->tensors[i];
    uint64_t at = 0, len = 0;
    snprintf(r->what, sizeof r->what, "tensor %lld name", (long long)i);
    pg_status st = read_string(r, &at, &len);
    if (st != PG_OK)
        return st;
    if (!(t->name = copy_string(r, at, len)))
        return pg_fail(PG_ERR_NOMEM, "gguf: %s: out of memory for a tensor name", r->name);
    snprintf(r->what, sizeof r->what, "tensor '%.48s' n_dims", t->name);
    uint32_t nd = 0;
    if ((st = read_u32(r, &nd)) != PG_OK)
        return st;
    if (nd < 1 || nd > PG_GGUF_MAX_DIMS)
        return pg_fail(PG_ERR_FORMAT, "gguf: %s: tensor '%s' at offset %llu has %u dimensions "
                       "(1..%d allowed)", r->name, t->name, (unsigned long long)(r->pos - 4), nd,
                       PG_GGUF_MAX_DIMS);
    t->n_dims = (int)nd;
    snprintf(r->what, sizeof r->what, "tensor '%.48s' dims", t->name);
    int64_t n = 1;
    for (int d = 0; d < PG_GGUF_MAX_DIMS; d++) {
        uint64_t v = 1;
        if (d < (int)nd && (st = read_u64(r, &v)) != PG_OK)
            return st;
        if (v > (uint64_t)INT64_MAX || (v && (uint64_t)n > (uint64_t)INT64_MAX / v))
            return pg_fail(PG_ERR_FORMAT, "gguf: %s: tensor '%s' at offset %llu: the element "
                           "count overflows at dimension %d (%llu)", r->name, t->name,
                           (unsigned long long)(r->pos - 8), d, (unsigned long long)v);
        t->dims[d] = (int64_t)v;
        n *= (int64_t)v;
    }
    t->n_elements = n;
    snprintf(r->what, sizeof r->what, "tensor '%.48s' type", t->name);
    uint32_t type = 0;
    if ((st = read_u32(r, &type)) != PG_OK)
        return st;
    const pg_ggml_type_traits *tt = pg_ggml_traits((int)type);
    if (!tt)
        return pg_fail(PG_ERR_FORMAT, "gguf: %s: tensor '%s' at offset %llu has ggml type %u, "
                       "which this engine does not know", r->name, t->name,
                       (unsigned long long)(r->pos - 4), type);
    t->type = (int)type;
    if (t->dims[0] % tt->block)
        return pg_fail(PG_ERR_FORMAT, "gguf: %s: tensor '%s': row length %lld is not a multiple "
                       "of the %s block (%lld)", r->name, t->name, (long long)t->dims[0],
                       tt->name, (long long)tt->block);
    uint64_t blocks = (uint64_t)(n / tt->block);
    if (blocks > UINT64_MAX / (uint64_t)tt->bytes)
        return pg_fail(PG_ERR_FORMAT, "gguf: %s: tensor '%s': byte size overflows", r->name, t->name);
    t->bytes = blocks * (uint64_t)tt->bytes;
    snprintf(r->what, sizeof r->what, "tensor '%.48s' offset", t->name);
    return read_u64(r, &t->offset);
}

/* general.alignment: a uint32 power of two when present. */
static pg_status read_alignment(pg_gguf *g)
{
    g->alignment = PG_GGUF_DEFAULT_ALIGNMENT;
    int64_t i = pg_gguf_find_key(g, "general.alignment");
    if (i < 0)
        return PG_OK;
    if (g->kv[i].type != PG_GGUF_UINT32)
        return pg_fail(PG_ERR_FORMAT, "gguf: %s: general.alignment at offset %llu has type %d, "
                       "not uint32", g->name, (unsigned long long)g->kv[i].pos, g->kv[i].type);
    uint32_t a = (uint32_t)pg_gguf_load_le(g->base + g->kv[i].pos, 4);
    if (a == 0 || (a & (a - 1)))
        return pg_fail(PG_ERR_FORMAT, "gguf: %s: general.alignment at offset %llu is %u, not a "
                       "power of two", g->name, (unsigned long long)g->kv[i].pos, a);
    g->alignment = a;
    return PG_OK;
}

static pg_status check_tensor_placement(pg_gguf *g)
{
    uint64_t room = g->size - g->data_offset;   /* data_offset <= size checked by the caller */
    for (int64_t i = 0; i < g->n_tensors; i++) {
        const gguf_tensor *t = &g->tensors[i];
        if (t->offset % g->alignment)
            return pg_fail(PG_ERR_FORMAT, "gguf: %s: tensor '%s' data offset %llu is not a "
                           "multiple of the alignment %u", g->name, t->name,
                           (unsigned long long)t->offset, g->alignment);
        if (t->offset > room || t->bytes > room - t->offset)
            return pg_fail(PG_ERR_FORMAT, "gguf: %s: truncated or corrupt: tensor '%s' data at "
                           "file offset %llu + %llu bytes runs past the end of the file (%llu "
                           "bytes)", g->name, t->name,
                           (unsigned long long)(g->data_offset + (t->offset > room ? 0 : t->offset)),
                           (unsigned long long)t->bytes, (unsigned long long)g->size);
    }
    return PG_OK;
}

static pg_status build_indexes(pg_gguf *g)
{
    pg_status st = index_init(&g->kv_index, g->n_kv);
    if (st != PG_OK || (st = index_init(&g->tensor_index, g->n_tensors)) != PG_OK)
        return st;
    for (int64_t i = 0; i < g->n_kv; i++) {
        uint64_t h = index_slot(&g->kv_index, g->kv[i].key, kv_name_of, g);
        if (g->kv_index.slots[h])
            return pg_fail(PG_ERR_FORMAT, "gguf: %s: metadata key '%s' appears twice", g->name,
                           g->kv[i].key);
        g->kv_index.slots[h] = i + 1;
    }
    for (int64_t i = 0; i < g->n_tensors; i++) {
        uint64_t h = index_slot(&g->tensor_index, g->tensors[i].name, tensor_name_of, g);
        if (g->tensor_index.slots[h])
            return pg_fail(PG_ERR_FORMAT, "gguf: %s: tensor name '%s' appears twice", g->name,
                           g->tensors[i].name);
        g->tensor_index.slots[h] = i + 1;
    }
    return PG_OK;
}

static pg_status parse(pg_gguf *g)
{
    reader r = { g->base, g->size, 0, g->name, "header magic" };
    uint32_t magic = 0;
    uint64_t n_tensors = 0, n_kv = 0;
    pg_status st = read_u32(&r, &magic);
    if (st != PG_OK)
        return st;
    if (magic != PG_GGUF_MAGIC)
        return pg_fail(PG_ERR_FORMAT, "gguf: %s: not a GGUF file (magic at offset 0 is "
                       "%02x %02x %02x %02x, wanted 'GGUF')", g->name, g->base[0], g->base[1],
                       g->base[2], g->base[3]);
    snprintf(r.what, sizeof r.what, "header version");
    if ((st = read_u32(&r, &g->version)) != PG_OK)
        return st;
    if (g->version == 1)
        return pg_fail(PG_ERR_FORMAT, "gguf: %s: GGUF version 1 is not supported (2 and 3 are)", g->name);
    if (g->version > 0xffff && (g->version & 0xffff) == 0)
        return pg_fail(PG_ERR_FORMAT, "gguf: %s: a big-endian GGUF file (version field 0x%08x); "
                       "only little-endian files are supported", g->name, g->version);
    if (g->version != 2 && g->version != 3)
        return pg_fail(PG_ERR_FORMAT, "gguf: %s: GGUF version %u at offset 4 is not supported "
                       "(2 and 3 are)", g->name, g->version);
    snprintf(r.what, sizeof r.what, "header tensor count");
    if ((st = read_u64(&r, &n_tensors)) != PG_OK)
        return st;
    snprintf(r.what, sizeof r.what, "header metadata count");
    if ((st = read_u64(&r, &n_kv)) != PG_OK)
        return st;
    /* a key-value takes at least 8 (key length) + 4 (type) + 1 bytes, a
     * tensor info at least 8 + 4 + 8 + 4 + 8: bound the counts before
     * allocating for them */
    uint64_t left = g->size - r.pos;
    if (n_kv > left / 13)
        return pg_fail(PG_ERR_FORMAT, "gguf: %s: corrupt header: %llu metadata entries (offset 16) "
                       "cannot fit in %llu bytes", g->name, (unsigned long long)n_kv,
                       (unsigned long long)left);
    if (n_tensors > left / 32)
        return pg_fail(PG_ERR_FORMAT, "gguf: %s: corrupt header: %llu tensors (offset 8) cannot "
                       "fit in %llu bytes", g->name, (unsigned long long)n_tensors,
                       (unsigned long long)left);
    /* one spare zeroed entry: a parse that stops half-way leaves its
     * allocations there for pg_gguf_close to free */
    g->kv = calloc(n_kv + 1, sizeof *g->kv);
    g->tensors = calloc(n_tensors + 1, sizeof *g->tensors);
    if (!g->kv || !g->tensors)
        return pg_fail(PG_ERR_NOMEM, "gguf: %s: out of memory", g->name);
    for (uint64_t i = 0; i < n_kv; i++) {
        if ((st = parse_kv(g, &r, (int64_t)i)) != PG_OK)
            return st;
        g->n_kv = (int64_t)i + 1;
    }
    for (uint64_t i = 0; i < n_tensors; i++) {
        if ((st = parse_tensor_info(g, &r, (int64_t)i)) != PG_OK)
            return st;
        g->n_tensors = (int64_t)i + 1;
    }
    if ((st = build_indexes(g)) != PG_OK || (st = read_alignment(g)) != PG_OK)
        return st;
    uint64_t pad = (g->alignment - r.pos % g->alignment) % g->alignment;
    g->data_offset = r.pos + pad;
    if (g->n_tensors && g->data_offset > g->size)
        return pg_fail(PG_ERR_FORMAT, "gguf: %s: truncated: the data section would start at "
                       "offset %llu, past the end of the file (%llu bytes)", g->name,
                       (unsigned long long)g->data_offset, (unsigned long long)g->size);
    if (g->data_offset > g->size)
        g->data_offset = g->size;
    return check_tensor_placement(g);
}

/* ---- open / close ----------------------------------------------------- */

static pg_status open_common(pg_gguf *g, pg_gguf **out)
{
    pg_status st = parse(g);
    if (st != PG_OK) {
        pg_gguf_close(g);
        return st;
    }
    *out = g;
    return PG_OK;
}

pg_status pg_gguf_open_image(const void *image, uint64_t size, const char *name, pg_gguf **out)
{
    if (!out)
        return pg_fail(PG_ERR_INVALID_ARG, "gguf: out is NULL");
    *out = NULL;
    if (!image && size)
        return pg_fail(PG_ERR_INVALID_ARG, "gguf: image is NULL");
    pg_gguf *g = calloc(1, sizeof *g);
    if (!g || !(g->name = strdup(name ? name : "<memory>"))) {
        free(g);
        return pg_fail(PG_ERR_NOMEM, "gguf: out of memory");
    }
    g->base = image;
    g->size = size;
    return open_common(g, out);
}

pg_status pg_gguf_open(const char *path, pg_gguf **out)
{
    if (!out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_gguf_open: out is NULL");
    *out = NULL;
    if (!path)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_gguf_open: path is NULL");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return pg_fail(PG_ERR_IO, "gguf: cannot open %s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return pg_fail(PG_ERR_IO, "gguf: %s is not a regular file", path);
    }
    if (sb.st_size < 4 || (uint64_t)sb.st_size > SIZE_MAX) {
        close(fd);
        return pg_fail(PG_ERR_FORMAT, "gguf: %s: %lld bytes is too short for a GGUF header",
                       path, (long long)sb.st_size);
    }
    void *base = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (base == MAP_FAILED)
        return pg_fail(PG_ERR_IO, "gguf: cannot map %s: %s", path, strerror(errno));
    pg_gguf *g = calloc(1, sizeof *g);
    if (!g || !(g->name = strdup(path))) {
        free(g);
        munmap(base, (size_t)sb.st_size);
        return pg_fail(PG_ERR_NOMEM, "gguf: out of memory");
    }
    g->base = base;
    g->size = (uint64_t)sb.st_size;
    g->mapped = 1;
    return open_common(g, out);
}

void pg_gguf_close(pg_gguf *g)
{
    if (!g)
        return;
    for (int64_t i = 0; i < g->n_kv; i++) {
        free(g->kv[i].key);
        free(g->kv[i].str_pos);
    }
    if (g->kv) {   /* the spare entry (see parse) */
        free(g->kv[g->n_kv].key);
        free(g->kv[g->n_kv].str_pos);
    }
    for (int64_t i = 0; i < g->n_tensors; i++)
        free(g->tensors[i].name);
    if (g->tensors)
        free(g->tensors[g->n_tensors].name);
    free(g->kv);
    free(g->tensors);
    free(g->kv_index.slots);
    free(g->tensor_index.slots);
    if (g->mapped)
        munmap((void *)g->base, (size_t)g->size);
    free(g->name);
    free(g);
}

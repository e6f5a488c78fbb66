/* gguf_meta.c - the metadata getters of the GGUF reader.
 *
 * Everything here reads positions the parser already checked against the
 * file size, so the getters only check their own arguments: the handle,
 * the index, the value type. */
#include <string.h>

#include "../core/error.h"
#include "gguf.h"

static const gguf_kv *kv_at(const pg_gguf *g, int64_t i, const char *fn)
{
    if (!g) {
        pg_fail(PG_ERR_INVALID_ARG, "%s: the GGUF handle is NULL", fn);
        return NULL;
    }
    if (i < 0 || i >= g->n_kv) {
        pg_fail(PG_ERR_INVALID_ARG, "%s: metadata index %lld out of range (the file has %lld)",
                fn, (long long)i, (long long)g->n_kv);
        return NULL;
    }
    return &g->kv[i];
}

uint32_t pg_gguf_version(const pg_gguf *g) { return g ? g->version : 0; }
uint32_t pg_gguf_alignment(const pg_gguf *g) { return g ? g->alignment : 0; }
uint64_t pg_gguf_file_size(const pg_gguf *g) { return g ? g->size : 0; }
uint64_t pg_gguf_data_offset(const pg_gguf *g) { return g ? g->data_offset : 0; }
int64_t pg_gguf_kv_count(const pg_gguf *g) { return g ? g->n_kv : 0; }

const char *pg_gguf_kv_key(const pg_gguf *g, int64_t i)
{
    const gguf_kv *kv = kv_at(g, i, "pg_gguf_kv_key");
    return kv ? kv->key : NULL;
}

int64_t pg_gguf_find_key(const pg_gguf *g, const char *key)
{
    if (!g || !key)
        return -1;
    return pg_gguf_index_find(g, 0, key);
}

int pg_gguf_kv_type(const pg_gguf *g, int64_t i)
{
    const gguf_kv *kv = kv_at(g, i, "pg_gguf_kv_type");
    return kv ? kv->type : -1;
}

int pg_gguf_kv_array_type(const pg_gguf *g, int64_t i)
{
    const gguf_kv *kv = kv_at(g, i, "pg_gguf_kv_array_type");
    if (!kv)
        return -1;
    if (kv->type != PG_GGUF_ARRAY) {
        pg_fail(PG_ERR_DTYPE, "pg_gguf_kv_array_type: '%s' is not an array", kv->key);
        return -1;
    }
    return kv->arr_type;
}

/* One scalar of type at p as an integer; 0 if type is not an integer. */
static int scalar_int(int type, const uint8_t *p, int64_t *out)
{
    uint64_t u;
    switch (type) {
    case PG_GGUF_UINT8: case PG_GGUF_BOOL: *out = p[0]; return 1;
    case PG_GGUF_INT8: *out = (int8_t)p[0]; return 1;
    case PG_GGUF_UINT16: *out = (uint16_t)pg_gguf_load_le(p, 2); return 1;
    case PG_GGUF_INT16: *out = (int16_t)(uint16_t)pg_gguf_load_le(p, 2); return 1;
    case PG_GGUF_UINT32: *out = (uint32_t)pg_gguf_load_le(p, 4); return 1;
    case PG_GGUF_INT32: *out = (int32_t)(uint32_t)pg_gguf_load_le(p, 4); return 1;
    case PG_GGUF_INT64: *out = (int64_t)pg_gguf_load_le(p, 8); return 1;
    case PG_GGUF_UINT64:
        u = pg_gguf_load_le(p, 8);
        if (u > (uint64_t)INT64_MAX)
            return -1;
        *out = (int64_t)u;
        return 1;
    default: return 0;
    }
}

static int scalar_float(int type, const uint8_t *p, double *out)
{
    if (type == PG_GGUF_FLOAT32) {
        uint32_t b = (uint32_t)pg_gguf_load_le(p, 4);
        float f;
        memcpy(&f, &b, 4);
        *out = f;
        return 1;
    }
    if (type == PG_GGUF_FLOAT64) {
        uint64_t b = pg_gguf_load_le(p, 8);
        memcpy(out, &b, 8);
        return 1;
    }
    return 0;
}

static pg_status int_result(int r, const gguf_kv *kv, int type, const char *fn)
{
    if (r > 0)
        return PG_OK;
    if (r < 0)
        return pg_fail(PG_ERR_DTYPE, "%s: '%s' holds a uint64 above INT64_MAX", fn, kv->key);
    return pg_fail(PG_ERR_DTYPE, "%s: '%s' holds type %d, not an integer", fn, kv->key, type);
}

pg_status pg_gguf_get_int(const pg_gguf *g, int64_t i, int64_t *out)
{
    const gguf_kv *kv = kv_at(g, i, "pg_gguf_get_int");
    if (!kv)
        return pg_last_status();
    if (!out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_gguf_get_int: out is NULL");
    return int_result(scalar_int(kv->type, g->base + kv->pos, out), kv, kv->type, "pg_gguf_get_int");
}

pg_status pg_gguf_get_float(const pg_gguf *g, int64_t i, double *out)
{
    const gguf_kv *kv = kv_at(g, i, "pg_gguf_get_float");
    if (!kv)
        return pg_last_status();
    if (!out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_gguf_get_float: out is NULL");
    if (!scalar_float(kv->type, g->base + kv->pos, out))
        return pg_fail(PG_ERR_DTYPE, "pg_gguf_get_float: '%s' holds type %d, not a float",
                       kv->key, kv->type);
    return PG_OK;
}

/* The string whose uint64 length sits at pos (checked by the parser). */
static void string_at(const pg_gguf *g, uint64_t pos, const char **s, uint64_t *len)
{
    *len = pg_gguf_load_le(g->base + pos, 8);
    *s = (const char *)g->base + pos + 8;
}

pg_status pg_gguf_get_string(const pg_gguf *g, int64_t i, const char **s, uint64_t *len)
{
    const gguf_kv *kv = kv_at(g, i, "pg_gguf_get_string");
    if (!kv)
        return pg_last_status();
    if (!s || !len)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_gguf_get_string: s or len is NULL");
    if (kv->type != PG_GGUF_STRING)
        return pg_fail(PG_ERR_DTYPE, "pg_gguf_get_string: '%s' holds type %d, not a string",
                       kv->key, kv->type);
    string_at(g, kv->pos, s, len);
    return PG_OK;
}

static const gguf_kv *array_at(const pg_gguf *g, int64_t i, const char *fn)
{
    const gguf_kv *kv = kv_at(g, i, fn);
    if (kv && kv->type != PG_GGUF_ARRAY) {
        pg_fail(PG_ERR_DTYPE, "%s: '%s' is not an array", fn, kv->key);
        return NULL;
    }
    return kv;
}

static const gguf_kv *element_at(const pg_gguf *g, int64_t i, uint64_t j, const char *fn)
{
    const gguf_kv *kv = array_at(g, i, fn);
    if (kv && j >= kv->n) {
        pg_fail(PG_ERR_INVALID_ARG, "%s: element %llu of '%s' out of range (it has %llu)", fn,
                (unsigned long long)j, kv->key, (unsigned long long)kv->n);
        return NULL;
    }
    return kv;
}

/* Bytes of one numeric element (the parser refused other element types). */
static uint64_t elem_bytes(int type)
{
    switch (type) {
    case PG_GGUF_UINT16: case PG_GGUF_INT16: return 2;
    case PG_GGUF_UINT32: case PG_GGUF_INT32: case PG_GGUF_FLOAT32: return 4;
    case PG_GGUF_UINT64: case PG_GGUF_INT64: case PG_GGUF_FLOAT64: return 8;
    default: return 1;
    }
}

pg_status pg_gguf_array_len(const pg_gguf *g, int64_t i, uint64_t *n)
{
    const gguf_kv *kv = array_at(g, i, "pg_gguf_array_len");
    if (!kv)
        return pg_last_status();
    if (!n)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_gguf_array_len: n is NULL");
    *n = kv->n;
    return PG_OK;
}

pg_status pg_gguf_array_get_int(const pg_gguf *g, int64_t i, uint64_t j, int64_t *out)
{
    const gguf_kv *kv = element_at(g, i, j, "pg_gguf_array_get_int");
    if (!kv)
        return pg_last_status();
    if (!out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_gguf_array_get_int: out is NULL");
    if (kv->arr_type == PG_GGUF_STRING)
        return pg_fail(PG_ERR_DTYPE, "pg_gguf_array_get_int: '%s' is an array of strings", kv->key);
    const uint8_t *p = g->base + kv->pos + j * elem_bytes(kv->arr_type);
    return int_result(scalar_int(kv->arr_type, p, out), kv, kv->arr_type, "pg_gguf_array_get_int");
}

pg_status pg_gguf_array_get_float(const pg_gguf *g, int64_t i, uint64_t j, double *out)
{
    const gguf_kv *kv = element_at(g, i, j, "pg_gguf_array_get_float");
    if (!kv)
        return pg_last_status();
    if (!out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_gguf_array_get_float: out is NULL");
    if (kv->arr_type == PG_GGUF_STRING)
        return pg_fail(PG_ERR_DTYPE, "pg_gguf_array_get_float: '%s' is an array of strings", kv->key);
    const uint8_t *p = g->base + kv->pos + j * elem_bytes(kv->arr_type);
    if (!scalar_float(kv->arr_type, p, out))
        return pg_fail(PG_ERR_DTYPE, "pg_gguf_array_get_float: '%s' holds type %d, not floats",
                       kv->key, kv->arr_type);
    return PG_OK;
}

pg_status pg_gguf_array_get_string(const pg_gguf *g, int64_t i, uint64_t j, const char **s,
                                   uint64_t *len)
{
    const gguf_kv *kv = element_at(g, i, j, "pg_gguf_array_get_string");
    if (!kv)
        return pg_last_status();
    if (!s || !len)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_gguf_array_get_string: s or len is NULL");
    if (kv->arr_type != PG_GGUF_STRING)
        return pg_fail(PG_ERR_DTYPE, "pg_gguf_array_get_string: '%s' holds type %d, not strings",
                       kv->key, kv->arr_type);
    string_at(g, kv->str_pos[j], s, len);
    return PG_OK;
}

pg_status pg_gguf_array_data(const pg_gguf *g, int64_t i, const void **data)
{
    const gguf_kv *kv = array_at(g, i, "pg_gguf_array_data");
    if (!kv)
        return pg_last_status();
    if (!data)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_gguf_array_data: data is NULL");
    if (kv->arr_type == PG_GGUF_STRING)
        return pg_fail(PG_ERR_DTYPE, "pg_gguf_array_data: '%s' is an array of strings", kv->key);
    *data = g->base + kv->pos;
    return PG_OK;
}

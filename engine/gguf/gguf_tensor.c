/* gguf_tensor.c - tensor infos, zero-copy views and f32 expansion.
 *
 * The parser checked that every tensor's bytes lie inside the file, so a
 * view is the mapping's base + data offset + tensor offset. */
#include "../core/error.h"
#include "ggml_types.h"
#include "gguf.h"

static const gguf_tensor *tensor_at(const pg_gguf *g, int64_t i, const char *fn)
{
    if (!g) {
        pg_fail(PG_ERR_INVALID_ARG, "%s: the GGUF handle is NULL", fn);
        return NULL;
    }
    if (i < 0 || i >= g->n_tensors) {
        pg_fail(PG_ERR_INVALID_ARG, "%s: tensor index %lld out of range (the file has %lld)", fn,
                (long long)i, (long long)g->n_tensors);
        return NULL;
    }
    return &g->tensors[i];
}

static const uint8_t *tensor_data(const pg_gguf *g, const gguf_tensor *t)
{
    return g->base + g->data_offset + t->offset;
}

int64_t pg_gguf_tensor_count(const pg_gguf *g) { return g ? g->n_tensors : 0; }

pg_status pg_gguf_tensor_info_get(const pg_gguf *g, int64_t i, pg_gguf_tensor_info *out)
{
    const gguf_tensor *t = tensor_at(g, i, "pg_gguf_tensor_info_get");
    if (!t)
        return pg_last_status();
    if (!out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_gguf_tensor_info_get: out is NULL");
    out->name = t->name;
    out->type = t->type;
    out->n_dims = t->n_dims;
    for (int d = 0; d < PG_GGUF_MAX_DIMS; d++)
        out->dims[d] = t->dims[d];
    out->n_elements = t->n_elements;
    out->offset = t->offset;
    out->file_offset = g->data_offset + t->offset;
    out->bytes = t->bytes;
    out->data = tensor_data(g, t);
    return PG_OK;
}

int64_t pg_gguf_find_tensor(const pg_gguf *g, const char *name)
{
    if (!g || !name) {
        pg_fail(PG_ERR_INVALID_ARG, "pg_gguf_find_tensor: handle or name is NULL");
        return -1;
    }
    int64_t i = pg_gguf_index_find(g, 1, name);
    if (i < 0)
        pg_fail(PG_ERR_INVALID_ARG, "gguf: %s has no tensor named '%s'", g->name, name);
    return i;
}

pg_status pg_gguf_dequantize(const pg_gguf *g, int64_t i, float *out, int64_t n)
{
    const gguf_tensor *t = tensor_at(g, i, "pg_gguf_dequantize");
    if (!t)
        return pg_last_status();
    if (!out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_gguf_dequantize: out is NULL");
    if (n != t->n_elements)
        return pg_fail(PG_ERR_SHAPE, "pg_gguf_dequantize: tensor '%s' has %lld elements, the "
                       "output holds %lld", t->name, (long long)t->n_elements, (long long)n);
    return pg_dequantize_row(t->type, tensor_data(g, t), out, n);
}

pg_status pg_gguf_dequantize_rows(const pg_gguf *g, int64_t i, int64_t row0, int64_t n_rows,
                                  float *out)
{
    const gguf_tensor *t = tensor_at(g, i, "pg_gguf_dequantize_rows");
    if (!t)
        return pg_last_status();
    if (!out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_gguf_dequantize_rows: out is NULL");
    int64_t row_len = t->dims[0];
    int64_t rows = row_len ? t->n_elements / row_len : 0;
    if (row0 < 0 || n_rows < 0 || row0 > rows || n_rows > rows - row0)
        return pg_fail(PG_ERR_SHAPE, "pg_gguf_dequantize_rows: rows [%lld, %lld) of tensor '%s', "
                       "which has %lld", (long long)row0, (long long)row0 + (long long)n_rows,
                       t->name, (long long)rows);
    const pg_ggml_type_traits *tt = pg_ggml_traits(t->type);
    uint64_t row_bytes = (uint64_t)(row_len / tt->block) * (uint64_t)tt->bytes;
    return pg_dequantize_row(t->type, tensor_data(g, t) + (uint64_t)row0 * row_bytes, out,
                             n_rows * row_len);
}

pg_status pg_dequantize(int type, const void *src, float *out, int64_t n)
{
    return pg_dequantize_row(type, src, out, n);
}

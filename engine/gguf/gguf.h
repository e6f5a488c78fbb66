/* gguf.h - the engine's side of the GGUF reader (the public calls are in
 * peregrine.h, section "GGUF").
 *
 * The reader parses a whole file image once, checking every count, length,
 * offset and type against the image size before using it, and keeps
 * pointers into the image (zero copy).  pg_gguf_open maps a file; the
 * engine's tests also parse images already in memory (truncated or
 * corrupted copies) without writing files. */
#ifndef PG_GGUF_GGUF_H
#define PG_GGUF_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "peregrine.h"

#define PG_GGUF_MAX_DIMS 4

/* What the parser keeps; the accessors (gguf_meta.c, gguf_tensor.c) read it. */
typedef struct gguf_kv {
    char     *key;        /* NUL-terminated copy */
    int       type;       /* pg_gguf_type */
    int       arr_type;   /* element type when type == ARRAY */
    uint64_t  n;          /* array length */
    uint64_t  pos;        /* offset of the value (of the first element for arrays) */
    uint64_t *str_pos;    /* array of strings: offset of each element's length */
} gguf_kv;

typedef struct gguf_tensor {
    char    *name;
    int      type;
    int      n_dims;
    int64_t  dims[PG_GGUF_MAX_DIMS];
    int64_t  n_elements;
    uint64_t offset;
    uint64_t bytes;
} gguf_tensor;

/* Open addressing over names: slot holds index + 1, 0 = empty. */
typedef struct name_index {
    int64_t *slots;
    uint64_t mask;
} name_index;

struct pg_gguf {
    char          *name;
    const uint8_t *base;
    uint64_t       size;
    int            mapped;     /* base came from mmap and is unmapped on close */
    uint32_t       version;
    uint32_t       alignment;
    uint64_t       data_offset;
    int64_t        n_kv;
    gguf_kv       *kv;
    int64_t        n_tensors;
    gguf_tensor   *tensors;
    name_index     kv_index;
    name_index     tensor_index;
};

/* Parse an image in memory.  The image is borrowed: it must outlive the
 * handle.  name is used in error messages only. */
pg_status pg_gguf_open_image(const void *image, uint64_t size, const char *name, pg_gguf **out);

/* Little-endian load of 1..8 bytes (the file may leave values unaligned). */
uint64_t pg_gguf_load_le(const uint8_t *p, int bytes);
/* Index of a name in an index built by the parser, -1 if absent. */
int64_t pg_gguf_index_find(const pg_gguf *g, int tensors, const char *name);

/* The GGUF header: "GGUF" read as a little-endian uint32. */
#define PG_GGUF_MAGIC 0x46554747u
#define PG_GGUF_DEFAULT_ALIGNMENT 32u

#endif

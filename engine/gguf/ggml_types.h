/* ggml_types.h - what the engine knows about ggml's tensor types: the
 * block size (elements per block), the bytes per block and the name.
 *
 * GGUF files store every tensor in one of ggml's types; a quantised type
 * packs a fixed number of elements (its block) into a fixed number of
 * bytes, so a row of n elements takes n / block * bytes.  The numbering is
 * ggml's (it is what the file says), so the enum values must not change. */
#ifndef PG_GGUF_GGML_TYPES_H
#define PG_GGUF_GGML_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "peregrine.h"

typedef struct pg_ggml_type_traits {
    const char *name;     /* "q4_1"; NULL for a number ggml never used */
    int64_t     block;    /* elements per block (1 for plain types) */
    int64_t     bytes;    /* bytes per block */
    int         dequant;  /* dequant.c can turn it into f32 */
} pg_ggml_type_traits;

/* Traits of a type number, or NULL when the engine does not know its size
 * (an unknown number, or a type whose layout it has not been taught). */
const pg_ggml_type_traits *pg_ggml_traits(int type);

/* Dequantise n elements (a multiple of the type's block) from src to f32.
 * The C reference: plain loops that follow ggml's block layouts, no
 * tuning.  Checks its arguments; PG_ERR_UNSUPPORTED for a type it cannot
 * expand. */
pg_status pg_dequantize_row(int type, const void *src, float *dst, int64_t n);

/* IEEE half and bfloat16 to float, bit by bit (no F16C: this is the oracle). */
float pg_f16_to_f32(uint16_t h);
float pg_bf16_to_f32(uint16_t h);
/* float to half, rounding to nearest even (what ggml's converters do). */
uint16_t pg_f32_to_f16(float f);

#endif

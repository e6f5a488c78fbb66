/* ggml_types.c - block sizes and bytes of ggml's tensor types.
 *
 * Sizes follow ggml's block structs (ggml-common.h):
 *   q4_0 = f16 d + 16 nibble bytes                (32 elements, 18 bytes)
 *   q4_1 = f16 d, f16 m + 16 nibble bytes         (32, 20)
 *   q5_0 = f16 d + 4 high-bit bytes + 16 nibbles  (32, 22)
 *   q5_1 = f16 d, f16 m + 4 + 16                  (32, 24)
 *   q8_0 = f16 d + 32 int8                        (32, 34)
 *   q8_1 = f16 d, f16 s + 32 int8                 (32, 36)
 *   q2_K..q8_K are 256-element super-blocks.
 * Types the engine has no layout for (the IQ and ternary families) are
 * left out, so a file using them fails to open with a clear message. */
#include "ggml_types.h"

static const pg_ggml_type_traits traits[] = {
    [PG_GGML_F32]  = { "f32",  1,   4,   1 },
    [PG_GGML_F16]  = { "f16",  1,   2,   1 },
    [PG_GGML_Q4_0] = { "q4_0", 32,  18,  1 },
    [PG_GGML_Q4_1] = { "q4_1", 32,  20,  1 },
    [PG_GGML_Q5_0] = { "q5_0", 32,  22,  1 },
    [PG_GGML_Q5_1] = { "q5_1", 32,  24,  1 },
    [PG_GGML_Q8_0] = { "q8_0", 32,  34,  1 },
    [PG_GGML_Q8_1] = { "q8_1", 32,  36,  1 },
    [PG_GGML_Q2_K] = { "q2_K", 256, 84,  1 },
    [PG_GGML_Q3_K] = { "q3_K", 256, 110, 1 },
    [PG_GGML_Q4_K] = { "q4_K", 256, 144, 1 },
    [PG_GGML_Q5_K] = { "q5_K", 256, 176, 1 },
    [PG_GGML_Q6_K] = { "q6_K", 256, 210, 1 },
    [PG_GGML_Q8_K] = { "q8_K", 256, 292, 1 },
    [PG_GGML_I8]   = { "i8",   1,   1,   1 },
    [PG_GGML_I16]  = { "i16",  1,   2,   1 },
    [PG_GGML_I32]  = { "i32",  1,   4,   1 },
    [PG_GGML_I64]  = { "i64",  1,   8,   0 },
    [PG_GGML_F64]  = { "f64",  1,   8,   1 },
    [PG_GGML_BF16] = { "bf16", 1,   2,   1 },
};

const pg_ggml_type_traits *pg_ggml_traits(int type)
{
    if (type < 0 || type >= (int)(sizeof traits / sizeof traits[0]))
        return NULL;
    return traits[type].name ? &traits[type] : NULL;
}

const char *pg_ggml_type_name(int type)
{
    const pg_ggml_type_traits *t = pg_ggml_traits(type);
    return t ? t->name : NULL;
}

int64_t pg_ggml_type_block_size(int type)
{
    const pg_ggml_type_traits *t = pg_ggml_traits(type);
    return t ? t->block : 0;
}

int64_t pg_ggml_type_block_bytes(int type)
{
    const pg_ggml_type_traits *t = pg_ggml_traits(type);
    return t ? t->bytes : 0;
}

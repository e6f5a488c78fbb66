/* unicode_class.h - the character classes the pre-tokenizers split on,
 * UTF-8 decoding as llama.cpp does it, and GPT-2's byte-to-unicode map. */
#ifndef PG_TOKENIZER_UNICODE_CLASS_H
#define PG_TOKENIZER_UNICODE_CLASS_H

#include <stddef.h>
#include <stdint.h>

typedef struct pg_cp_range {
    uint32_t first, last;
} pg_cp_range;

/* Generated tables (unicode_class_data.c), sorted, non-overlapping. */
extern const pg_cp_range pg_unicode_letters[];
extern const int pg_unicode_letters_count;
extern const pg_cp_range pg_unicode_numbers[];
extern const int pg_unicode_numbers_count;

/* Classes as bits; a code point outside the text being split has none
 * (the "out of range" of the split rules), every real one has PG_CP_ANY. */
enum {
    PG_CP_ANY = 1,
    PG_CP_LETTER = 2,     /* \p{L} */
    PG_CP_NUMBER = 4,     /* \p{N} */
    PG_CP_SPACE = 8       /* \s: the Unicode White_Space property */
};

unsigned pg_cp_class(uint32_t cp);

/* Decode UTF-8 into code points.  A byte that does not start a complete
 * sequence becomes U+FFFD and decoding resumes at the next byte (what
 * llama.cpp does, so both split invalid input the same way).  cps must hold
 * len entries; returns the count. */
size_t pg_utf8_decode(const uint8_t *s, size_t len, uint32_t *cps);
/* Encode one code point; returns 1..4 bytes (U+FFFD for invalid ones). */
int pg_utf8_encode(uint32_t cp, uint8_t out[4]);

/* GPT-2 byte-level BPE works on text where each byte is replaced by a
 * printable code point: bytes '!'..'~', 0xA1..0xAC and 0xAE..0xFF stand for
 * themselves, the other 68 take 256, 257, ... in byte order. */
uint32_t pg_byte_to_cp(uint8_t b);
/* The byte a code point stands for, or -1 if it stands for none. */
int pg_cp_to_byte(uint32_t cp);

#endif

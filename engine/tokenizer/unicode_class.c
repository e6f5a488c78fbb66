/* unicode_class.c - character classes, UTF-8, GPT-2's byte map. */
#include "unicode_class.h"

static int in_ranges(const pg_cp_range *r, int n, uint32_t cp)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (cp < r[mid].first)
            hi = mid - 1;
        else if (cp > r[mid].last)
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

static int is_white_space(uint32_t cp)
{
    /* the White_Space property (PropList.txt); it is what \s matches in
     * the regex engines the tokenizers were defined with */
    return (cp >= 0x09 && cp <= 0x0d) || cp == 0x20 || cp == 0x85 || cp == 0xa0 ||
           cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

unsigned pg_cp_class(uint32_t cp)
{
    unsigned c = PG_CP_ANY;
    if (cp < 0x80) {   /* the common case, without a search */
        if ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z')
            return c | PG_CP_LETTER;
        if (cp >= '0' && cp <= '9')
            return c | PG_CP_NUMBER;
        return is_white_space(cp) ? c | PG_CP_SPACE : c;
    }
    if (in_ranges(pg_unicode_letters, pg_unicode_letters_count, cp))
        c |= PG_CP_LETTER;
    else if (in_ranges(pg_unicode_numbers, pg_unicode_numbers_count, cp))
        c |= PG_CP_NUMBER;
    if (is_white_space(cp))
        c |= PG_CP_SPACE;
    return c;
}

size_t pg_utf8_decode(const uint8_t *s, size_t len, uint32_t *cps)
{
    size_t n = 0, i = 0;
    while (i < len) {
        uint8_t b = s[i];
        int need;
        uint32_t cp;
        if (b < 0x80) {
            cps[n++] = b;
            i++;
            continue;
        }
        if ((b & 0xe0) == 0xc0) {
            need = 1;
            cp = b & 0x1f;
        } else if ((b & 0xf0) == 0xe0) {
            need = 2;
            cp = b & 0x0f;
        } else if ((b & 0xf8) == 0xf0) {
            need = 3;
            cp = b & 0x07;
        } else {            /* a continuation byte or 0xf8.. where a start belongs */
            cps[n++] = 0xfffd;
            i++;
            continue;
        }
        int ok = i + (size_t)need < len;
        for (int k = 1; ok && k <= need; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                ok = 0;
            else
                cp = (cp << 6) | (s[i + k] & 0x3f);
        }
        if (!ok) {
            cps[n++] = 0xfffd;
            i++;
            continue;
        }
        cps[n++] = cp;
        i += (size_t)need + 1;
    }
    return n;
}

int pg_utf8_encode(uint32_t cp, uint8_t out[4])
{
    if (cp < 0x80) {
        out[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (uint8_t)(0xc0 | (cp >> 6));
        out[1] = (uint8_t)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (uint8_t)(0xe0 | (cp >> 12));
        out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (uint8_t)(0x80 | (cp & 0x3f));
        return 3;
    }
    if (cp <= 0x10ffff) {
        out[0] = (uint8_t)(0xf0 | (cp >> 18));
        out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
        out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
        out[3] = (uint8_t)(0x80 | (cp & 0x3f));
        return 4;
    }
    out[0] = 0xef;
    out[1] = 0xbf;
    out[2] = 0xbd;
    return 3;
}

static int byte_is_itself(unsigned b)
{
    return (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae);
}

uint32_t pg_byte_to_cp(uint8_t b)
{
    if (byte_is_itself(b))
        return b;
    /* the n-th byte (in order) that does not stand for itself gets 256 + n */
    uint32_t n = 0;
    for (unsigned k = 0; k < b; k++)
        n += !byte_is_itself(k);
    return 256 + n;
}

int pg_cp_to_byte(uint32_t cp)
{
    if (cp < 256)
        return byte_is_itself(cp) ? (int)cp : -1;
    if (cp >= 256 + 68)
        return -1;
    uint32_t n = 0;
    for (unsigned k = 0; k < 256; k++)
        if (!byte_is_itself(k) && n++ == cp - 256)
            return (int)k;
    return -1;
}

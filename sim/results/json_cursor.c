/*
 * json_cursor.c: the JSON cursor writers that are not inline
 * (json_cursor.h): escaped strings, microseconds, pieces.
 */
#include "results/json_cursor.h"
#include <glib.h>

strata_jc_piece strata_jc_piece_new(const char *text)
{
    char *s = g_malloc0(strata_jc_escaped_room(text) + STRATA_JC_PIECE_STEP);
    return (strata_jc_piece){.s = s, .n = (size_t)(strata_jc_escaped(s, text) - s)};
}

strata_jc_piece strata_jc_piece_raw(const char *text)
{
    size_t n = text ? strlen(text) : 0;
    char *s = g_malloc0(n + STRATA_JC_PIECE_STEP + 1);
    return (strata_jc_piece){.s = n ? memcpy(s, text, n) : s, .n = n};
}

void strata_jc_piece_clear(strata_jc_piece *pc)
{
    g_free(pc->s);
    *pc = (strata_jc_piece){0};
}

char *strata_jc_escaped(char *p, const char *text)
{
    static const char hex[] = "0123456789abcdef";
    for (const unsigned char *c = (const unsigned char *)(text ? text : ""); *c; c++) {
        if (*c >= 0x20 && *c != '"' && *c != '\\') {
            *p++ = (char)*c;
            continue;
        }
        *p++ = '\\';
        switch (*c) {
        case '"': *p++ = '"'; break;
        case '\\': *p++ = '\\'; break;
        case '\n': *p++ = 'n'; break;
        case '\t': *p++ = 't'; break;
        case '\r': *p++ = 'r'; break;
        default: p = STRATA_JC_LIT(p, "u00"); *p++ = hex[*c >> 4]; *p++ = hex[*c & 15];
        }
    }
    return p;
}

/* Whether a word of 8 bytes of text holds one that needs escaping: below
 * 0x20, '"' or '\\'. The bytewise subtractions can borrow from the byte
 * above only past a byte that already matched, so "some byte matched" is
 * exact, which is all this asks. */
static bool word_needs_escape(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    uint64_t quote = w ^ (ones * '"'), backslash = w ^ (ones * '\\');
    return (((w - ones * 0x20) & ~w) | ((quote - ones) & ~quote) | ((backslash - ones) & ~backslash)) & highs;
}

char *strata_jc_escaped_n(char *p, const char *text, size_t n)
{
    size_t i = 0;
    for (uint64_t w; i + 8 <= n; i += 8) {
        memcpy(&w, text + i, 8);
        if (word_needs_escape(w))
            break;
        memcpy(p, &w, 8);
        p += 8;
    }
    return strata_jc_escaped(p, text + i);
}

char *strata_jc_string(char *p, const char *a, const char *b)
{
    *p++ = '"';
    p = strata_jc_escaped(strata_jc_escaped(p, a), b);
    *p++ = '"';
    return p;
}

/* The digits of the nanoseconds with a point put in (of 1000 + ns below a
 * microsecond: "1xyz" made "0.xyz"). */
char *strata_jc_micros(char *p, int64_t ns)
{
    if (ns >= 1000) {
        size_t n = strata_format_u64(p, (uint64_t)ns);
        char *frac = p + n - 3; /* its last three digits move up by one for the point: no memmove call */
        frac[3] = frac[2];
        frac[2] = frac[1];
        frac[1] = frac[0];
        frac[0] = '.';
        return p + n + 1;
    }
    if (ns >= 0) {
        strata_format_u64(p + 1, (uint64_t)ns + 1000);
        p[0] = '0';
        p[1] = '.';
        return p + 5;
    }
    p = strata_jc_i64(p, ns / 1000);
    int frac = (int)(ns % 1000);
    p[0] = '.';
    p[1] = (char)('0' + frac / 100);
    p[2] = (char)('0' + frac / 10 % 10);
    p[3] = (char)('0' + frac % 10);
    return p + 4;
}

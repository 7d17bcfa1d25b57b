/*
 * json_cursor.h: JSON text written through a cursor into memory reserved
 * for it beforehand, for writers that print millions of small records (the
 * timeline): each writer puts its text at p and returns the cursor after
 * it, with no bounds check, no call into stdio and no allocation.
 *
 * The caller reserves, besides the text's own length: STRATA_JC_NUMBER
 * bytes for a number, STRATA_JC_MICROS for strata_jc_micros(), 6 bytes a
 * byte of an escaped string, and STRATA_JC_PIECE_STEP after a piece (a
 * piece is copied in whole steps; the bytes past its end are written over
 * by what follows, or lie past the end of the text).
 *
 * Invariants: integers are printf's "%" PRIu64 / PRId64 digits; a string's
 * text escapes '"', '\\', '\n', '\t', '\r' as such and the other bytes
 * below 0x20 as \u00xx, and keeps every other byte as it is.
 */
#ifndef STRATA_JSON_CURSOR_H
#define STRATA_JSON_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "core/units.h"

enum { STRATA_JC_NUMBER = STRATA_U64_DIGITS + 1 };
enum { STRATA_JC_MICROS = STRATA_JC_NUMBER + 4 };
enum { STRATA_JC_PIECE_STEP = 16 };

/* Text made once (a name, escaped) and copied into many records. */
typedef struct strata_jc_piece {
    char *s; /* n bytes, then at least a step of zeros */
    size_t n;
} strata_jc_piece;

/* The escaped text of text (NULL: ""); strata_jc_piece_clear() frees it. */
strata_jc_piece strata_jc_piece_new(const char *text);
/* text as it is (JSON text already); a piece made from its second byte on
 * still has a whole step of padding after it. */
strata_jc_piece strata_jc_piece_raw(const char *text);
void strata_jc_piece_clear(strata_jc_piece *pc);

#define STRATA_JC_LIT(p, lit) ((char *)memcpy((p), "" lit, sizeof(lit) - 1) + sizeof(lit) - 1)

static inline char *strata_jc_mem(char *p, const char *text, size_t n)
{
    return (char *)memcpy(p, text, n) + n;
}

static inline char *strata_jc_put_piece(char *p, const strata_jc_piece *pc)
{
    for (size_t i = 0; i < pc->n; i += STRATA_JC_PIECE_STEP)
        memcpy(p + i, pc->s + i, STRATA_JC_PIECE_STEP);
    return p + pc->n;
}

static inline char *strata_jc_u64(char *p, uint64_t v)
{
    if (v < 10) { /* ids, small counts, zeros: no call */
        *p = (char)('0' + v);
        return p + 1;
    }
    return p + strata_format_u64(p, v);
}

static inline char *strata_jc_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return strata_jc_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return strata_jc_u64(p, (uint64_t)v);
}

/* Room for the escaped text of text (NULL: none). */
static inline size_t strata_jc_escaped_room(const char *text)
{
    return text ? 6 * strlen(text) : 0;
}

/* The JSON text of a string (NULL: ""), without quotes. */
char *strata_jc_escaped(char *p, const char *text);
/* The same of text whose length n is known (faster: 8 bytes at a time). */
char *strata_jc_escaped_n(char *p, const char *text, size_t n);
/* A JSON string of a then b (NULL: none) joined, quotes included. */
char *strata_jc_string(char *p, const char *a, const char *b);
/* Microseconds printed exactly from whole nanoseconds: "1234.567". */
char *strata_jc_micros(char *p, int64_t ns);

#endif

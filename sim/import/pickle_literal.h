/*
 * pickle_literal.h: the literals inside pickle opcodes, decoded without
 * touching the parser (private to sim/import/pickle*.c): little-endian
 * fields, decimal and two's complement ints, protocol 0 quoted strings and
 * raw-unicode-escape text.
 *
 * Errors are messages for the caller to report at the opcode's offset:
 * a function that fails returns false or NULL and sets *why (g_free).
 * Ints beyond int64 become an approximate BIGINT, as pickle.h promises.
 */
#ifndef STRATA_PICKLE_LITERAL_H
#define STRATA_PICKLE_LITERAL_H

#include "import/pickle.h"

/* A scalar value: INT (u: the int64's bits), BIGINT or FLOAT (u: the
 * double's bits). */
typedef struct pickle_scalar {
    strata_pickle_type type;
    uint64_t u;
} pickle_scalar;

static inline uint64_t strata_pickle_read_le(const uint8_t *b, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)b[i] << (8 * i);
    return v;
}
pickle_scalar strata_pickle_scalar_double(strata_pickle_type type, double d);
/* Decimal text, optionally signed (opname: for the message). */
bool strata_pickle_decimal(const char *opname, const char *s, size_t n, pickle_scalar *out,
                           char **why);
/* LONG1/LONG4 payload: little-endian two's complement of n bytes. */
pickle_scalar strata_pickle_twos_complement(const uint8_t *b, size_t n);
/* Protocol 0 UNICODE: raw-unicode-escape (\uXXXX, \UXXXXXXXX, else Latin-1). */
GString *strata_pickle_raw_unicode(const char *s, size_t n, char **why);
/* Protocol 0 STRING: a Python repr, 'text' or "text", with backslash escapes. */
GString *strata_pickle_quoted(const char *s, size_t n, char **why);

#endif

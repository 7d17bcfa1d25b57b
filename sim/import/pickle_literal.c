/*
 * pickle_literal.c: the literals inside pickle opcodes (see
 * pickle_literal.h).
 */
#include "import/pickle_literal.h"

#include <errno.h>
#include <math.h>
#include <string.h>

static bool refuse(char **why, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static bool refuse(char **why, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    *why = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    return false;
}

/* Frees `out` (NULL ok) and fails with a message. */
static GString *discard(GString *out, char **why, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static GString *discard(GString *out, char **why, const char *fmt, ...)
{
    if (out)
        g_string_free(out, TRUE);
    va_list ap;
    va_start(ap, fmt);
    *why = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    return NULL;
}

static bool set(pickle_scalar *out, pickle_scalar v)
{
    *out = v;
    return true;
}

pickle_scalar strata_pickle_scalar_double(strata_pickle_type type, double d)
{
    pickle_scalar v = {type, 0};
    memcpy(&v.u, &d, sizeof v.u);
    return v;
}

bool strata_pickle_decimal(const char *opname, const char *s, size_t n, pickle_scalar *out,
                           char **why)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf) {
        if (n >= sizeof buf) {
            /* Long decimal: keep an approximate value. */
            char *t = g_strndup(s, n);
            char *end = NULL;
            double d = g_ascii_strtod(t, &end);
            bool ok = end && *end == '\0' && isfinite(d);
            g_free(t);
            if (!ok)
                return refuse(why, "%s expects a decimal integer", opname);
            return set(out, strata_pickle_scalar_double(STRATA_PICKLE_BIGINT, d));
        }
        return refuse(why, "%s expects a decimal integer, got an empty line", opname);
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    const char *digits = buf + ((buf[0] == '-' || buf[0] == '+') ? 1 : 0);
    if (*digits == '\0')
        return refuse(why, "%s expects a decimal integer, got '%s'", opname, buf);
    for (const char *c = digits; *c; c++)
        if (*c < '0' || *c > '9')
            return refuse(why, "%s expects a decimal integer, got '%s'", opname, buf);
    errno = 0;
    char *end = NULL;
    long long v = strtoll(buf, &end, 10);
    if (errno == ERANGE) {
        double d = g_ascii_strtod(buf, NULL);
        return set(out, strata_pickle_scalar_double(STRATA_PICKLE_BIGINT, d));
    }
    return set(out, (pickle_scalar){STRATA_PICKLE_INT, (uint64_t)(int64_t)v});
}

pickle_scalar strata_pickle_twos_complement(const uint8_t *b, size_t n)
{
    if (n == 0)
        return (pickle_scalar){STRATA_PICKLE_INT, 0};
    bool negative = (b[n - 1] & 0x80) != 0;
    bool fits = true;
    if (n > 8) {
        uint8_t fill = negative ? 0xff : 0x00;
        for (size_t i = 8; i < n; i++)
            if (b[i] != fill)
                fits = false;
        if (fits && (((b[7] & 0x80) != 0) != negative))
            fits = false;
    }
    if (fits) {
        size_t k = n < 8 ? n : 8;
        uint64_t v = strata_pickle_read_le(b, k);
        if (k < 8 && negative)
            v |= ~UINT64_C(0) << (8 * k);
        return (pickle_scalar){STRATA_PICKLE_INT, v};
    }
    /* Beyond int64: an approximate double (magnitude of two's complement). */
    double d = 0;
    for (size_t i = n; i-- > 0;)
        d = d * 256.0 + (double)(negative ? (uint8_t)~b[i] : b[i]);
    if (negative)
        d = -(d + 1);
    return strata_pickle_scalar_double(STRATA_PICKLE_BIGINT, d);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

GString *strata_pickle_raw_unicode(const char *s, size_t n, char **why)
{
    GString *out = g_string_sized_new(n);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\' && i + 1 < n && (s[i + 1] == 'u' || s[i + 1] == 'U')) {
            size_t digits = s[i + 1] == 'u' ? 4 : 8;
            if (i + 2 + digits > n)
                return discard(out, why, "UNICODE has a truncated \\u escape");
            gunichar cp = 0;
            for (size_t k = 0; k < digits; k++) {
                int h = hexval(s[i + 2 + k]);
                if (h < 0)
                    return discard(out, why, "UNICODE has a bad \\u escape");
                cp = cp * 16 + (gunichar)h;
            }
            if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
                return discard(out, why, "UNICODE escape U+%X is not a character", cp);
            g_string_append_unichar(out, cp);
            i += 1 + digits;
        } else {
            g_string_append_unichar(out, c);
        }
    }
    return out;
}

GString *strata_pickle_quoted(const char *s, size_t n, char **why)
{
    if (n < 2 || (s[0] != '\'' && s[0] != '"') || s[n - 1] != s[0])
        return discard(NULL, why, "STRING expects a quoted string");
    GString *out = g_string_sized_new(n);
    for (size_t i = 1; i + 1 < n; i++) {
        char c = s[i];
        if (c != '\\') {
            g_string_append_c(out, c);
            continue;
        }
        if (i + 2 >= n)
            return discard(out, why, "STRING ends inside an escape");
        char e = s[++i];
        switch (e) {
        case 'n': g_string_append_c(out, '\n'); break;
        case 't': g_string_append_c(out, '\t'); break;
        case 'r': g_string_append_c(out, '\r'); break;
        case '\\': case '\'': case '"': g_string_append_c(out, e); break;
        case 'x': {
            int h1 = i + 2 < n ? hexval(s[i + 1]) : -1, h2 = i + 2 < n ? hexval(s[i + 2]) : -1;
            if (h1 < 0 || h2 < 0)
                return discard(out, why, "STRING has a bad \\x escape");
            g_string_append_c(out, (char)(h1 * 16 + h2));
            i += 2;
            break;
        }
        default:
            return discard(out, why, "STRING has an unknown escape '\\%c'", e);
        }
    }
    /* Python 3 decodes protocol 0-2 str as ASCII by default. */
    for (size_t i = 0; i < out->len; i++)
        if ((unsigned char)out->str[i] >= 0x80)
            return discard(out, why, "STRING holds non-ASCII bytes");
    return out;
}


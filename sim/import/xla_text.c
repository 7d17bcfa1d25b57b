/*
 * xla_text.c: line reader, shapes and errors for the XLA dump readers
 * (contract in xla_text.h).
 */
#include "import/xla_text.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <glib/gstdio.h>
#include "core/error.h"

typedef struct xla_ptype {
    const char *name;
    unsigned bits;
    strata_dtype dtype;
} xla_ptype;

/* XLA's primitive types (xla_data.proto), with strata's dtype where one exists.
 * s2 and u2 (PrimitiveType S2 = 26, U2 = 27; jnp.int2 and jnp.uint2) are
 * written packed four to a byte (`s2[8,16]{1,0:E(2)}`, size=32 in jaxlib
 * 0.12.0.1's buffer assignment); strata has no 2-bit dtype, so they are
 * sized and carry no dtype=. */
static const xla_ptype ptypes[] = {
    {"pred", 8, STRATA_DTYPE_BOOL},    {"s4", 4, STRATA_DTYPE_INT4},
    {"u4", 4, STRATA_DTYPE_NONE},      {"s2", 2, STRATA_DTYPE_NONE},
    {"u2", 2, STRATA_DTYPE_NONE},      {"s8", 8, STRATA_DTYPE_INT8},
    {"u8", 8, STRATA_DTYPE_UINT8},     {"s16", 16, STRATA_DTYPE_INT16},
    {"u16", 16, STRATA_DTYPE_NONE},    {"s32", 32, STRATA_DTYPE_INT32},
    {"u32", 32, STRATA_DTYPE_NONE},    {"s64", 64, STRATA_DTYPE_INT64},
    {"u64", 64, STRATA_DTYPE_NONE},    {"f16", 16, STRATA_DTYPE_F16},
    {"bf16", 16, STRATA_DTYPE_BF16},   {"f32", 32, STRATA_DTYPE_F32},
    {"f64", 64, STRATA_DTYPE_F64},     {"c64", 64, STRATA_DTYPE_NONE},
    {"c128", 128, STRATA_DTYPE_NONE},  {"f8e5m2", 8, STRATA_DTYPE_F8},
    {"f8e4m3fn", 8, STRATA_DTYPE_F8},  {"f8e4m3b11fnuz", 8, STRATA_DTYPE_F8},
    {"f8e5m2fnuz", 8, STRATA_DTYPE_F8}, {"f8e4m3fnuz", 8, STRATA_DTYPE_F8},
    {"f8e4m3", 8, STRATA_DTYPE_F8},    {"f8e3m4", 8, STRATA_DTYPE_F8},
    {"f8e8m0fnu", 8, STRATA_DTYPE_F8}, {"f4e2m1fn", 4, STRATA_DTYPE_NONE},
    {"token", 0, STRATA_DTYPE_NONE},   {"opaque", 0, STRATA_DTYPE_NONE},
    {NULL, 0, STRATA_DTYPE_NONE},
};

bool xla_skip(const char *s, const char *prefix, const char **rest)
{
    size_t n = strlen(prefix);
    if (strncmp(s, prefix, n) != 0)
        return false;
    if (rest)
        *rest = s + n;
    return true;
}

bool xla_parse_u64(const char **p, uint64_t *out)
{
    const char *s = *p;
    if (!g_ascii_isdigit(*s))
        return false;
    uint64_t v = 0;
    while (g_ascii_isdigit(*s)) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
        s++;
    }
    *p = s;
    *out = v;
    return true;
}

/* Skips a bracketed group starting at *s (one of ( [ {), nesting any of them. */
static const char *skip_group(const char *s)
{
    int depth = 0;
    for (; *s; s++) {
        if (*s == '(' || *s == '[' || *s == '{')
            depth++;
        else if (*s == ')' || *s == ']' || *s == '}') {
            if (--depth == 0)
                return s + 1;
        }
    }
    return NULL;
}

/* The layout {1,0:T(8,128)S(5)}: only the memory space is kept. */
static const char *parse_layout(const char *s, xla_shape *out)
{
    const char *end = skip_group(s);
    if (end == NULL)
        return NULL;
    for (const char *p = s; p < end; p++)
        if (p[0] == 'S' && p[1] == '(') {
            const char *q = p + 2;
            uint64_t space;
            if (xla_parse_u64(&q, &space) && space < 1024)
                out->memory_space = (int)space;
        }
    return end;
}

static bool parse_array(const char *s, const char **end, xla_shape *out)
{
    const xla_ptype *t = NULL;
    size_t best = 0;
    for (const xla_ptype *p = ptypes; p->name; p++) {
        size_t n = strlen(p->name);
        if (strncmp(s, p->name, n) == 0 && s[n] == '[' && n > best) {
            t = p;
            best = n;
        }
    }
    if (t == NULL)
        return false;
    memset(out, 0, sizeof *out);
    out->dtype = t->dtype;
    out->bits = t->bits;
    out->elements = 1;
    s += best + 1;
    while (*s != ']') {
        uint64_t d = 1; /* an unbounded dynamic dimension '?' counts as 1 */
        if (*s == '?')
            s++;
        else {
            xla_skip(s, "<=", &s);
            if (!xla_parse_u64(&s, &d))
                return false;
        }
        /* Every dimension and the product of all (in bits) at most 2^63:
         * the sizes and FLOPs derived from a shape never wrap. */
        if (d > XLA_MAX_COUNT || out->rank >= XLA_MAX_RANK ||
            (d != 0 && out->elements > XLA_MAX_COUNT / d))
            return false;
        if (out->rank < STRATA_MAX_DIMS)
            out->dims[out->n_dims++] = d;
        out->rank++;
        out->elements *= d;
        if (*s == ',')
            s++;
        else if (*s != ']')
            return false;
    }
    s++;
    if (t->bits > 8 && out->elements > XLA_MAX_COUNT / (t->bits / 8))
        return false;
    if (*s == '{' && (s = parse_layout(s, out)) == NULL)
        return false;
    *end = s;
    return true;
}

bool xla_shape_parse(const char *text, const char **end, xla_shape *out)
{
    if (*text != '(')
        return parse_array(text, end, out);
    const char *close = skip_group(text);
    if (close == NULL)
        return false;
    memset(out, 0, sizeof *out);
    /* The first array of the tuple, however deep: a loop, not recursion
     * (a tuple nested 50,000 deep must not take 50,000 stack frames). */
    const char *p = text;
    while (*p == '(' || *p == ' ')
        p++;
    xla_shape first;
    const char *e;
    if (*p != ')' && parse_array(p, &e, &first))
        *out = first;
    out->is_tuple = true;
    *end = close;
    return true;
}

bool xla_shape_elements(const char *text, GArray *out)
{
    if (*text != '(')
        return false;
    const char *p = text + 1;
    for (;;) {
        /* spaces, and the comment XLA glues before every fifth element */
        while (*p == ' ' || (p[0] == '/' && p[1] == '*')) {
            if (*p == ' ') {
                p++;
                continue;
            }
            const char *c = strstr(p + 2, "*/");
            if (c == NULL)
                return false;
            p = c + 2;
        }
        if (*p == ')')
            return out->len == 0;
        const char *e;
        xla_shape el;
        if (!xla_shape_parse(p, &e, &el))
            return false;
        g_array_append_val(out, el);
        p = e;
        if (*p == ')')
            return true;
        if (*p != ',')
            return false;
        p++;
    }
}

uint64_t xla_shape_dim(const xla_shape *s, uint32_t i)
{
    return i < s->n_dims ? s->dims[i] : 0;
}

/* text[0, n) cut to 60 characters, unprintable bytes as '?'. */
static char *printable(const char *text, size_t n)
{
    char *s = n > 60 ? g_strdup_printf("%.57s...", text) : g_strndup(text, n);
    for (char *p = s; *p; p++)
        if (!g_ascii_isprint(*p))
            *p = '?';
    return s;
}

void xla_unknown_note(xla_unknown *u, const char *file, uint64_t line, const char *what, const char *text,
                      size_t text_len)
{
    if (u->count++ > 0)
        return;
    char *s = printable(text, text_len);
    u->first = g_strdup_printf("%s:%" G_GUINT64_FORMAT ": %s '%s'", file, line, what, s);
    g_free(s);
}

void xla_unknown_merge(xla_unknown *into, const xla_unknown *from)
{
    if (from->count == 0)
        return;
    if (into->first == NULL)
        into->first = g_strdup(from->first);
    into->count += from->count;
}

void xla_unknown_clear(xla_unknown *u)
{
    g_free(u->first);
    u->first = NULL;
    u->count = 0;
}

bool xla_fail_line(GError **err, const char *file, uint64_t line, const char *text, const char *expected)
{
    char *s = printable(text, strlen(text));
    strata_fail_at(err, file, line, "expected %s, got '%s'", expected, s);
    g_free(s);
    return false;
}

bool xla_read_lines(const char *path, strata_progress *progress, xla_line_fn fn, void *self, GError **err)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot read: %s", path, g_strerror(errno));
        return false;
    }
    uint64_t size = 0;
    char *base = NULL;
    if (progress) {
        GStatBuf st;
        size = g_stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
        base = g_path_get_basename(path);
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    uint64_t lineno = 0;
    bool ok = true;
    while (ok && (n = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (n > 0 && line[n - 1] == '\n')
            line[--n] = '\0';
        if (n > 0 && line[n - 1] == '\r')
            line[--n] = '\0';
        if (strlen(line) != (size_t)n)
            ok = strata_fail_at(err, path, lineno, "expected text, got a NUL byte");
        else
            ok = fn(self, path, line, lineno, err);
        if (progress) {
            long at = ftell(f);
            strata_progress_count(progress, "import xla", at > 0 ? (uint64_t)at : 0, size, NULL, base);
        }
    }
    g_free(base);
    if (ok && ferror(f)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot read: %s", path, g_strerror(errno));
        ok = false;
    }
    free(line);
    fclose(f);
    return ok;
}

/* A buffer name from a value key: NAME for NAME{}, NAME{0.1} for NAME{0,1};
 * characters a trace name cannot hold become '_'. */
char *xla_trace_name(const char *key)
{
    char *s = g_str_has_suffix(key, "{}") ? g_strndup(key, strlen(key) - 2) : g_strdup(key);
    for (char *p = s; *p; p++)
        if (*p == ',')
            *p = '.';
        else if (!g_ascii_isgraph(*p) || *p == '=' || *p == '#')
            *p = '_';
    return s;
}

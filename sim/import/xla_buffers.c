/*
 * xla_buffers.c: the buffer assignment reader (contract in xla_buffers.h).
 *
 * Design: a small state machine over lines: ALLOCATIONS (headers, values,
 * the total), STATS (an indented block, skipped), VALUES (everything after
 * `Used values:`, skipped). Allocation indices must count up from 0 in file
 * order, as XLA prints them.
 */
#include "import/xla_buffers.h"
#include <string.h>
#include "core/error.h"

typedef enum { BA_ALLOCATIONS, BA_STATS, BA_VALUES } ba_state;

struct xla_buffers {
    ba_state state;
    GArray *allocs;  /* xla_allocation */
    GArray *values;  /* xla_value */
    bool has_total;
    uint64_t total;
    uint64_t total_of_sizes; /* sum of the allocation sizes so far, at most 2^63 */
    xla_unknown unknown;     /* fields and lines of a newer XLA, read past */
};

xla_buffers *xla_buffers_new(void)
{
    xla_buffers *b = g_new0(xla_buffers, 1);
    b->allocs = g_array_new(FALSE, TRUE, sizeof(xla_allocation));
    b->values = g_array_new(FALSE, TRUE, sizeof(xla_value));
    return b;
}

void xla_buffers_free(xla_buffers *b)
{
    if (b == NULL)
        return;
    for (guint i = 0; i < b->values->len; i++) {
        xla_value *v = &g_array_index(b->values, xla_value, i);
        g_free(v->key);
        g_free(v->name);
    }
    g_array_free(b->values, TRUE);
    g_array_free(b->allocs, TRUE);
    xla_unknown_clear(&b->unknown);
    g_free(b);
}

/* Reads `|SHAPE|` at *p (the shape's text is not needed: values carry it). */
static bool skip_bars(const char **p)
{
    if (**p != '|')
        return false;
    const char *close = strchr(*p + 1, '|');
    if (close == NULL)
        return false;
    *p = close + 1;
    return true;
}

/* The end of a field that this reader does not know, `WORD[ TEXT]` with
 * WORD in lower case: the next `, ` or the header's closing `:` outside
 * |SHAPE| bars and brackets; NULL when s is not such a field. */
static const char *unknown_field_end(const char *s)
{
    if (!g_ascii_islower(*s))
        return NULL;
    const char *p = s;
    while (g_ascii_isalnum(*p) || *p == '-' || *p == '_')
        p++;
    if (*p != ' ' && *p != ',' && *p != ':')
        return NULL;
    int depth = 0;
    bool bars = false;
    for (; *p; p++) {
        if (*p == '|')
            bars = !bars;
        else if (!bars && (*p == '{' || *p == '[' || *p == '('))
            depth++;
        else if (!bars && (*p == '}' || *p == ']' || *p == ')') && depth > 0)
            depth--;
        else if (!bars && depth == 0 && ((p[0] == ',' && p[1] == ' ') || (p[0] == ':' && p[1] == '\0')))
            return p;
    }
    return NULL;
}

/* One `, ATTRIBUTE` of an allocation header: false on a known attribute
 * with a bad value, or on text that is no attribute; an unknown attribute
 * is noted in unknown and read past. */
static bool header_attribute(const char **p, xla_allocation *a, xla_unknown *unknown, const char *file,
                             uint64_t lineno)
{
    const char *s = *p;
    if (xla_skip(s, "color ", &s)) {
        if (!xla_parse_u64(&s, &a->color))
            return false;
    } else if (xla_skip(s, "parameter ", &s)) {
        if (!xla_parse_u64(&s, &a->parameter))
            return false;
        a->flags |= XLA_ALLOC_PARAMETER;
        if (xla_skip(s, ", shape ", &s) && !skip_bars(&s))
            return false;
        if (xla_skip(s, " at ShapeIndex {", &s)) {
            const char *close = strchr(s, '}');
            if (close == NULL)
                return false;
            s = close + 1;
        }
    } else if (xla_skip(s, "output shape is ", &s)) {
        if (!skip_bars(&s))
            return false;
        a->flags |= XLA_ALLOC_OUTPUT;
    } else if (xla_skip(s, "constant", &s)) {
        a->flags |= XLA_ALLOC_CONSTANT;
    } else if (xla_skip(s, "thread-local", &s)) {
        a->flags |= XLA_ALLOC_THREAD_LOCAL;
    } else if (xla_skip(s, "maybe-live-out", &s)) {
        a->flags |= XLA_ALLOC_LIVE_OUT;
    } else if (xla_skip(s, "preallocated-temp", &s) || xla_skip(s, "preallocated temp", &s)) {
        a->flags |= XLA_ALLOC_TEMP;
    } else {
        const char *end = unknown_field_end(s);
        if (end == NULL)
            return false;
        xla_unknown_note(unknown, file, lineno, "allocation field", s, (size_t)(end - s));
        s = end;
    }
    *p = s;
    return true;
}

static bool parse_header(xla_buffers *b, const char *file, const char *line, uint64_t lineno,
                         GError **err)
{
    xla_allocation a = {.line = lineno};
    const char *s = line + strlen("allocation ");
    if (!xla_parse_u64(&s, &a.index) || !xla_skip(s, ": ", &s))
        goto bad;
    if (xla_skip(s, "0x", &s)) {
        while (g_ascii_isxdigit(*s))
            s++;
        if (!xla_skip(s, ", ", &s))
            goto bad;
    }
    if (!xla_skip(s, "size ", &s) || !xla_parse_u64(&s, &a.size))
        goto bad;
    while (xla_skip(s, ", ", &s))
        if (!header_attribute(&s, &a, &b->unknown, file, lineno))
            goto bad;
    if (strcmp(s, ":") != 0)
        goto bad;
    if (a.size > XLA_MAX_COUNT)
        return strata_fail_at(err, file, lineno, "expected an allocation size of at most 2^63 bytes, got %" G_GUINT64_FORMAT,
                        a.size);
    if (b->total_of_sizes > XLA_MAX_COUNT - a.size)
        return strata_fail_at(err, file, lineno,
                        "expected the allocations to total at most 2^63 bytes, this one brings them past it");
    b->total_of_sizes += a.size;
    if (a.index != b->allocs->len)
        return strata_fail_at(err, file, lineno, "expected allocation %u (allocations count up from 0), got %"
                        G_GUINT64_FORMAT, b->allocs->len, a.index);
    g_array_append_val(b->allocs, a);
    return true;
bad:
    return xla_fail_line(err, file, lineno, line,
                         "'allocation N: size B[, parameter P | output shape is |S| | constant | "
                         "thread-local | maybe-live-out | preallocated-temp]...:'");
}

/* `<ID NAME[{INDEX}][ (phi)][ @COLOR]>`: fills id, name, key and color. */
static bool parse_short_value(const char **p, xla_value *v)
{
    const char *s = *p;
    if (!xla_skip(s, "<", &s) || !xla_parse_u64(&s, &v->id) || !xla_skip(s, " ", &s))
        return false;
    const char *name = s;
    while (*s && *s != ' ' && *s != '>' && *s != '{')
        s++;
    if (s == name)
        return false;
    v->name = g_strndup(name, (gsize)(s - name));
    if (*s == '{') {
        const char *close = strchr(s, '}');
        if (close == NULL)
            return false;
        v->key = g_strndup(name, (gsize)(close + 1 - name));
        s = close + 1;
    } else {
        v->key = g_strconcat(v->name, "{}", NULL);
    }
    xla_skip(s, " (phi)", &s);
    if (xla_skip(s, " @", &s) && !xla_parse_u64(&s, &v->color))
        return false;
    if (!xla_skip(s, ">", &s))
        return false;
    *p = s;
    return true;
}

static bool parse_value(xla_buffers *b, const char *file, const char *line, uint64_t lineno,
                        GError **err)
{
    if (b->allocs->len == 0)
        return strata_fail_at(err, file, lineno, "expected an 'allocation N: ...' line before its values");
    xla_value v = {.line = lineno, .alloc = b->allocs->len - 1};
    const char *s = line + strlen(" value: ");
    const char *e;
    if (!parse_short_value(&s, &v) || !xla_skip(s, " (size=", &s) || !xla_parse_u64(&s, &v.size) ||
        !xla_skip(s, ",offset=", &s) || !xla_parse_u64(&s, &v.offset) || !xla_skip(s, "): ", &s) ||
        !xla_shape_parse(s, &e, &v.shape)) {
        g_free(v.key);
        g_free(v.name);
        return xla_fail_line(err, file, lineno, line, "' value: <ID NAME[ @COLOR]> (size=S,offset=O): SHAPE'");
    }
    const xla_allocation *a = &g_array_index(b->allocs, xla_allocation, v.alloc);
    if (v.offset > a->size || v.size > a->size - v.offset) {
        g_free(v.key);
        g_free(v.name);
        return strata_fail_at(err, file, lineno,
                        "expected the value inside allocation %" G_GUINT64_FORMAT " (size %"
                        G_GUINT64_FORMAT "), got offset %" G_GUINT64_FORMAT " size %" G_GUINT64_FORMAT,
                        a->index, a->size, v.offset, v.size);
    }
    g_array_append_val(b->values, v);
    return true;
}

static bool parse_total(xla_buffers *b, const char *file, const char *line, uint64_t lineno,
                        GError **err)
{
    const char *s = line + strlen("Total bytes used: ");
    if (!xla_parse_u64(&s, &b->total) || !(*s == '\0' || *s == ' '))
        return xla_fail_line(err, file, lineno, line, "'Total bytes used: N (HUMAN)'");
    b->has_total = true;
    return true;
}

bool xla_buffers_feed(xla_buffers *b, const char *file, const char *line, uint64_t lineno, GError **err)
{
    if (b->state == BA_VALUES)
        return true;
    if (b->state == BA_STATS) {
        if (line[0] == ' ' || line[0] == '\0')
            return true;
        b->state = BA_ALLOCATIONS;
    }
    if (line[0] == '\0' || strcmp(line, "BufferAssignment:") == 0)
        return true;
    if (xla_skip(line, "allocation ", NULL))
        return parse_header(b, file, line, lineno, err);
    if (xla_skip(line, " value: ", NULL))
        return parse_value(b, file, line, lineno, err);
    if (xla_skip(line, "Total bytes used: ", NULL))
        return parse_total(b, file, line, lineno, err);
    if (strcmp(line, "Used values:") == 0) {
        b->state = BA_VALUES;
        return true;
    }
    if (strcmp(line, "BufferAssignment stats:") == 0) {
        b->state = BA_STATS;
        return true;
    }
    /* A line kind of a newer XLA: words, not indented (an indented line
     * is a value or a statistic, whose forms are known). */
    if (g_ascii_isalpha(line[0])) {
        xla_unknown_note(&b->unknown, file, lineno, "buffer-assignment line", line, strlen(line));
        return true;
    }
    return xla_fail_line(err, file, lineno, line,
                         "'allocation N: ...', ' value: ...', 'Total bytes used: N' or 'Used values:'");
}

const xla_unknown *xla_buffers_unknown(const xla_buffers *b)
{
    return &b->unknown;
}

bool xla_buffers_finish(xla_buffers *b, const char *file, GError **err)
{
    if (b->allocs->len == 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: expected a buffer assignment ('allocation N: size B...' lines), found none",
                    file);
        return false;
    }
    uint64_t sum = 0;
    for (guint i = 0; i < b->allocs->len; i++)
        sum += g_array_index(b->allocs, xla_allocation, i).size;
    if (b->has_total && sum != b->total) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: expected 'Total bytes used' to be the sum of the allocation sizes (%"
                    G_GUINT64_FORMAT "), got %" G_GUINT64_FORMAT, file, sum, b->total);
        return false;
    }
    return true;
}

uint32_t xla_buffers_n_allocations(const xla_buffers *b)
{
    return b->allocs->len;
}

const xla_allocation *xla_buffers_allocation(const xla_buffers *b, uint32_t i)
{
    return &g_array_index(b->allocs, xla_allocation, i);
}

uint32_t xla_buffers_n_values(const xla_buffers *b)
{
    return b->values->len;
}

const xla_value *xla_buffers_value(const xla_buffers *b, uint32_t i)
{
    return &g_array_index(b->values, xla_value, i);
}

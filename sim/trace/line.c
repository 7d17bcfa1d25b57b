/*
 * line.c: one line of `strata-trace 1` text into a strata_op (line.h;
 * the grammar is traces/FORMAT.md's).
 *
 * Design: a line is tokenized in place (NULs written over separators), so
 * the strings of the op point into the line and no heap is touched per op
 * except when a list attribute (in=, out=, donate=) grows past its largest
 * size so far (the scratch keeps the lists). Names and keys are scanned
 * once, by tables and inlined compares, as this runs on every line of
 * every trace.
 *
 * Grammar of an op line (after stripping a `#` comment):
 *     KIND OPERAND... [KEY=VALUE]...
 * Positional operands come first; every token after them is an attribute.
 * Which operands and attributes each kind takes is in parse_operands() and
 * kind_attrs[] below.
 *
 * Invariants:
 *  1. Every error is STRATA_ERROR_INPUT and starts "ORIGIN:LINE:COL: ".
 *  2. An op has stream != NULL (STRATA_DEFAULT_STREAM when absent) and
 *     line set to its 1-based line in the file.
 *  3. Every field of the op is set from the line alone: what an earlier
 *     line set is cleared (the head of the op always, its attributes'
 *     fields after a line that had any).
 *  4. Syntax only; history (live names, recorded events) is
 *     trace/check.c's.
 */
#include "trace/line.h"
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include "core/error.h"
#include "core/units.h"

/* A list attribute's names: pointers into the line, NULL-terminated;
 * grown, never shrunk, so that a line costs no allocation. */
typedef struct name_list {
    const char **names;
    uint32_t cap; /* room in names, the NULL included */
} name_list;

struct strata_line_scratch {
    char *text;        /* owned copy of the line (strata_parse_op_line only) */
    bool tail_zero;    /* the op last parsed has every field from has_bytes on zero */
    bool op_cleared;   /* the op has been cleared whole once (padding, shape[]) */
    name_list ins;     /* names into the line */
    name_list outs;
    name_list donates;
};

typedef struct line_ctx {
    const char *origin;
    uint64_t line;
    const char *start; /* first byte of the line, for columns */
    const char *end;   /* end of the line's content (before any comment) */
} line_ctx;

/* ---- errors ----------------------------------------------------------- */

G_GNUC_PRINTF(4, 5)
static bool fail_at(const line_ctx *lc, const char *at, GError **err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    long col = at ? (long)(at - lc->start) + 1 : 1;
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s:%" G_GUINT64_FORMAT ":%ld: %s", lc->origin,
                lc->line, col, msg);
    g_free(msg);
    return false;
}

static bool fail_got(const line_ctx *lc, const char *at, const char *expected, GError **err)
{
    char *q = strata_quote(at);
    fail_at(lc, at, err, "expected %s, got '%s'", expected, q);
    g_free(q);
    return false;
}

/* ---- tokens and names ------------------------------------------------- */

/* What each byte is to the tokenizer, as bits: every byte of every line
 * goes through one of the loops below, so one lookup replaces a chain of
 * compares. A name byte is printable (0x21..0x7e, or any byte from 0x80
 * on, as in UTF-8), but not '=', ',' or '#'. */
enum { B_NAME = 1, B_BLANK = 2, B_END = 4, B_EQ = 8 };
#define B_CLASS(c)                                                                                                 \
    ((c) == ' ' || (c) == '\t' ? B_BLANK                                                                           \
     : (c) == '\0'             ? B_END                                                                             \
     : (c) == '='              ? B_EQ                                                                              \
     : ((c) >= 0x21 && (c) != 0x7f && (c) != ',' && (c) != '#') ? B_NAME                                           \
                               : 0)
#define B_CLASS4(c) B_CLASS(c), B_CLASS((c) + 1), B_CLASS((c) + 2), B_CLASS((c) + 3)
#define B_CLASS16(c) B_CLASS4(c), B_CLASS4((c) + 4), B_CLASS4((c) + 8), B_CLASS4((c) + 12)
#define B_CLASS64(c) B_CLASS16(c), B_CLASS16((c) + 16), B_CLASS16((c) + 32), B_CLASS16((c) + 48)
static const uint8_t byte_class[256] = {B_CLASS64(0), B_CLASS64(64), B_CLASS64(128), B_CLASS64(192)};

static unsigned class_of(char c)
{
    return byte_class[(unsigned char)c];
}

static char *skip_blanks(char *p)
{
    while (class_of(*p) & B_BLANK)
        p++;
    return p;
}

/* Whether c ends a token (a blank or the end of the line). */
static bool token_end(char c)
{
    return (class_of(c) & (B_BLANK | B_END)) != 0;
}

/* Cuts the token that ends at end: its NUL written, cursor after it. */
static void cut_token(char **cursor, char *end)
{
    if (*end != '\0')
        *end++ = '\0';
    *cursor = end;
}

static char *next_token(char **cursor)
{
    char *p = skip_blanks(*cursor);
    if (*p == '\0') {
        *cursor = p;
        return NULL;
    }
    char *tok = p;
    while (!token_end(*p))
        p++;
    cut_token(cursor, p);
    return tok;
}

static bool name_byte(unsigned char c)
{
    return byte_class[c] & B_NAME;
}

/* A name: non-empty, printable, without '=', ',' or '#'. */
static bool valid_name(const char *s)
{
    if (*s == '\0')
        return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (!name_byte(*p))
            return false;
    return true;
}

static bool take_name(const line_ctx *lc, char *tok, const char *what, const char **out, GError **err)
{
    if (!valid_name(tok)) {
        char *expected = g_strdup_printf("%s (printable, without '=', ',' or '#')", what);
        fail_got(lc, tok, expected, err);
        g_free(expected);
        return false;
    }
    *out = tok;
    return true;
}

static char *join_names(const char *(*name_of)(unsigned), unsigned from, unsigned to)
{
    GString *s = g_string_new(NULL);
    for (unsigned i = from; i < to; i++)
        g_string_append_printf(s, "%s%s", i > from ? ", " : "", name_of(i));
    return g_string_free(s, FALSE);
}

static const char *kind_name_u(unsigned i) { return strata_op_kind_name((strata_op_kind)i); }
static const char *tag_name_u(unsigned i) { return strata_tag_name((strata_tag)i); }
static const char *dtype_name_u(unsigned i) { return strata_dtype_name((strata_dtype)i); }

/* ---- attribute values ------------------------------------------------- */

/* The decimal digits at p as *v: the byte after them, or NULL when p holds
 * no digit or the value overflows. */
static const char *decimal(const char *p, uint64_t *v)
{
    if (*p < '0' || *p > '9')
        return NULL;
    for (*v = 0; *p >= '0' && *p <= '9'; p++)
        if (__builtin_mul_overflow(*v, 10, v) || __builtin_add_overflow(*v, (uint64_t)(*p - '0'), v))
            return NULL;
    return p;
}

/* Fast path for the common forms "4096" and "64KiB": decimal digits and an
 * optional binary unit, overflow-checked. Anything else (fractions,
 * exponents, decimal units, errors) goes to strata_parse_size(), which
 * defines the syntax; the two agree wherever the fast path answers
 * (tests/test_trace.c checks them against each other). */
static bool fast_size(const char *text, uint64_t *bytes)
{
    static const struct {
        const char *unit;
        unsigned shift;
    } units[] = {{"", 0}, {"B", 0}, {"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40}};
    uint64_t v = 0;
    const char *p = decimal(text, &v);
    if (!p)
        return false;
    if (*p == '\0') {
        *bytes = v;
        return true;
    }
    for (size_t i = 1; i < G_N_ELEMENTS(units); i++) {
        if (strata_same_name(p, units[i].unit)) {
            if (units[i].shift && v > (UINT64_MAX >> units[i].shift))
                return false;
            *bytes = v << units[i].shift;
            return true;
        }
    }
    return false;
}

static bool parse_size_value(const line_ctx *lc, const char *text, uint64_t *bytes, GError **err)
{
    if (!fast_size(text, bytes) && !strata_parse_size(text, bytes, NULL))
        return fail_got(lc, text, "a size such as 4096, 64KiB or 1.5GiB", err);
    if (*bytes == 0)
        return fail_got(lc, text, "a size above 0", err);
    return true;
}

static bool parse_time_value(const line_ctx *lc, const char *text, double *seconds, GError **err)
{
    if (!strata_parse_time(text, seconds, NULL))
        return fail_got(lc, text, "a time such as 250ns, 3us, 2ms or 1.5s", err);
    return true;
}

/* Room in l for n names and the NULL after them. */
static void name_list_reserve(name_list *l, uint32_t n)
{
    if (n + 1 <= l->cap)
        return;
    l->cap = MAX(n + 1, 2 * l->cap);
    l->names = g_renew(const char *, l->names, l->cap);
}

static bool parse_name_list(const line_ctx *lc, char *text, name_list *into, const char *const **names, uint32_t *n,
                            GError **err)
{
    uint32_t count = 0;
    char *p = text;
    for (;;) {
        /* One pass over a name: its bytes up to the ',' or the end. */
        char *q = p;
        while (name_byte((unsigned char)*q))
            q++;
        if (q == p || (*q != ',' && *q != '\0')) {
            char *comma = strchr(p, ',');
            if (comma)
                *comma = '\0';
            return fail_got(lc, p, "a buffer name (a list is A,B,C)", err);
        }
        bool last = *q == '\0';
        *q = '\0';
        name_list_reserve(into, count + 1);
        into->names[count++] = p;
        if (last)
            break;
        p = q + 1;
    }
    into->names[count] = NULL; /* terminator, not counted */
    *n = count;
    *names = into->names;
    return true;
}

static bool parse_shape(const line_ctx *lc, char *text, strata_op *op, GError **err)
{
    const char *expected = "a shape such as 8x128 (at most 8 positive extents)";
    char *p = text;
    op->n_dims = 0;
    for (;;) {
        char *x = strchr(p, 'x');
        if (x)
            *x = '\0';
        uint64_t extent = 0;
        bool digits = *p >= '0' && *p <= '9';
        if (!digits || !strata_parse_u64(p, &extent, NULL) || extent == 0 || op->n_dims == STRATA_MAX_DIMS) {
            if (x)
                *x = 'x';
            return fail_got(lc, text, expected, err);
        }
        op->shape[op->n_dims++] = extent;
        if (!x)
            break;
        *x = 'x';
        p = x + 1;
    }
    return true;
}

typedef enum {
    ATTR_STREAM, ATTR_TAG, ATTR_DTYPE, ATTR_SHAPE, ATTR_ADDR, ATTR_BYTES, ATTR_FLOPS,
    ATTR_IN, ATTR_OUT, ATTR_DONATE, ATTR_TIME, ATTR_UNIT, ATTR_AT, ATTR_NOTE, ATTR_AXIS, ATTR_ALGO,
    ATTR_SHIFT, ATTR_DEVICE, ATTR__COUNT
} attr_id;

static const char *algo_name_u(unsigned i) { return strata_algo_name((strata_algo)i); }

/* "expected WHAT (one of NAMES), got 'value'" over the names 1..count. */
static bool fail_enum(const line_ctx *lc, const char *value, const char *what, const char *(*name_of)(unsigned),
                      unsigned count, GError **err)
{
    char *known = join_names(name_of, 1, count);
    char *expected = g_strdup_printf("%s (one of %s)", what, known);
    fail_got(lc, value, expected, err);
    g_free(known);
    g_free(expected);
    return false;
}

/* axis=data or axis=data,model: mesh axis names [a-z][a-z0-9_]*. */
static bool parse_axis(const line_ctx *lc, const char *value, strata_op *op, GError **err)
{
    bool start = true;
    for (const char *p = value;; p++) {
        bool lower = *p >= 'a' && *p <= 'z';
        bool ok = start ? lower : (lower || (*p >= '0' && *p <= '9') || *p == '_' || *p == ',' || *p == '\0');
        if (!ok)
            return fail_got(lc, value, "mesh axis names such as data or data,model ([a-z][a-z0-9_]*)", err);
        if (*p == '\0')
            break;
        start = *p == ',';
    }
    op->axis = value;
    return true;
}

static bool parse_int_attr(const line_ctx *lc, const char *value, bool is_device, strata_op *op, GError **err)
{
    const char *p = value;
    bool negative = !is_device && (*p == '-' || *p == '+') ? *p++ == '-' : false;
    uint64_t v = 0;
    bool ok = *p >= '0' && *p <= '9' && strata_parse_u64(p, &v, NULL) && v <= INT32_MAX;
    for (const char *q = p; ok && *q; q++)
        ok = *q >= '0' && *q <= '9';
    if (!ok || (!is_device && v == 0))
        return fail_got(lc, value, is_device ? "a device index such as 0 or 3" : "a shift such as +1 or -1 (not 0)",
                        err);
    if (is_device) {
        op->has_device = true;
        op->device = (uint32_t)v;
    } else {
        op->shift = negative ? -(int32_t)v : (int32_t)v;
    }
    return true;
}

static bool parse_attr(const line_ctx *lc, attr_id id, char *value, strata_op *op, strata_line_scratch *s,
                       GError **err)
{
    switch (id) {
    case ATTR_STREAM: return take_name(lc, value, "a stream name", &op->stream, err);
    case ATTR_UNIT: return take_name(lc, value, "a compute unit name", &op->unit, err);
    case ATTR_TAG:
        return strata_tag_from_name(value, &op->tag) ||
               fail_enum(lc, value, "a tag", tag_name_u, STRATA_TAG__COUNT, err);
    case ATTR_DTYPE:
        return strata_dtype_from_name(value, &op->dtype) ||
               fail_enum(lc, value, "a dtype", dtype_name_u, STRATA_DTYPE__COUNT, err);
    case ATTR_SHAPE: return parse_shape(lc, value, op, err);
    case ATTR_ADDR:
        if (!strata_parse_u64(value, &op->addr, NULL))
            return fail_got(lc, value, "an address such as 0x7f0000 or 4096", err);
        op->has_addr = true;
        return true;
    case ATTR_BYTES:
        op->has_bytes = true;
        return parse_size_value(lc, value, &op->bytes, err);
    case ATTR_FLOPS:
        if (!strata_parse_flops(value, &op->flops, NULL))
            return fail_got(lc, value, "an amount of work such as 1000000, 2e9 or 4.5GFLOP", err);
        op->has_flops = true;
        return true;
    case ATTR_IN: return parse_name_list(lc, value, &s->ins, &op->ins, &op->n_ins, err);
    case ATTR_OUT: return parse_name_list(lc, value, &s->outs, &op->outs, &op->n_outs, err);
    case ATTR_DONATE: return parse_name_list(lc, value, &s->donates, &op->donates, &op->n_donates, err);
    case ATTR_TIME:
        op->has_time = true;
        return parse_time_value(lc, value, &op->time_s, err);
    case ATTR_AT:
        op->has_at = true;
        return parse_time_value(lc, value, &op->at_s, err);
    case ATTR_NOTE: return take_name(lc, value, "a note (one word)", &op->note, err);
    case ATTR_AXIS: return parse_axis(lc, value, op, err);
    case ATTR_ALGO:
        return strata_algo_from_name(value, &op->algo) ||
               fail_enum(lc, value, "an algorithm", algo_name_u, STRATA_ALGO__COUNT, err);
    case ATTR_SHIFT: return parse_int_attr(lc, value, false, op, err);
    case ATTR_DEVICE: return parse_int_attr(lc, value, true, op, err);
    case ATTR__COUNT: break;
    }
    return false;
}

static const char *const attr_names[ATTR__COUNT] = {
    [ATTR_STREAM] = "stream", [ATTR_TAG] = "tag",   [ATTR_DTYPE] = "dtype", [ATTR_SHAPE] = "shape",
    [ATTR_ADDR] = "addr",     [ATTR_BYTES] = "bytes", [ATTR_FLOPS] = "flops", [ATTR_IN] = "in",
    [ATTR_OUT] = "out",       [ATTR_DONATE] = "donate", [ATTR_TIME] = "time", [ATTR_UNIT] = "unit",
    [ATTR_AT] = "at",         [ATTR_NOTE] = "note",     [ATTR_AXIS] = "axis",  [ATTR_ALGO] = "algo",
    [ATTR_SHIFT] = "shift",   [ATTR_DEVICE] = "device",
};

/* Attribute id of the key tok[0..len), or ATTR__COUNT. By length, then by
 * compares of that constant length (inlined, not calls): this runs for
 * every attribute of every line. */
static unsigned attr_lookup(const char *tok, size_t len)
{
#define IS(id, text) (memcmp(tok, text, sizeof text - 1) == 0 ? (found = (id), true) : false)
    unsigned found = ATTR__COUNT;
    switch (len) {
    case 2: (void)(IS(ATTR_IN, "in") || IS(ATTR_AT, "at")); break;
    case 3: (void)(IS(ATTR_TAG, "tag") || IS(ATTR_OUT, "out")); break;
    case 4:
        (void)(IS(ATTR_TIME, "time") || IS(ATTR_UNIT, "unit") || IS(ATTR_ADDR, "addr") || IS(ATTR_NOTE, "note") ||
               IS(ATTR_AXIS, "axis") || IS(ATTR_ALGO, "algo"));
        break;
    case 5:
        (void)(IS(ATTR_FLOPS, "flops") || IS(ATTR_BYTES, "bytes") || IS(ATTR_DTYPE, "dtype") ||
               IS(ATTR_SHAPE, "shape") || IS(ATTR_SHIFT, "shift"));
        break;
    case 6: (void)(IS(ATTR_STREAM, "stream") || IS(ATTR_DONATE, "donate") || IS(ATTR_DEVICE, "device")); break;
    default: break;
    }
    return found;
#undef IS
}

#define A(x) (1u << (x))
#define COMMON_ATTRS (A(ATTR_STREAM) | A(ATTR_AT) | A(ATTR_NOTE) | A(ATTR_DEVICE))
#define COLLECTIVE_ATTRS (COMMON_ATTRS | A(ATTR_AXIS) | A(ATTR_ALGO))
/* Which attributes each kind takes (mask of attr_id bits). */
static const unsigned kind_attrs[STRATA_OP__COUNT] = {
    [STRATA_OP_ALLOC] = COMMON_ATTRS | A(ATTR_TAG) | A(ATTR_DTYPE) | A(ATTR_SHAPE) | A(ATTR_ADDR),
    [STRATA_OP_FREE] = COMMON_ATTRS,
    [STRATA_OP_COPY] = COMMON_ATTRS | A(ATTR_BYTES),
    [STRATA_OP_COMPUTE] = COMMON_ATTRS | A(ATTR_FLOPS) | A(ATTR_IN) | A(ATTR_OUT) | A(ATTR_DONATE) |
                          A(ATTR_TIME) | A(ATTR_UNIT) | A(ATTR_BYTES),
    [STRATA_OP_RECORD] = COMMON_ATTRS,
    [STRATA_OP_WAIT] = COMMON_ATTRS,
    [STRATA_OP_RELEASE] = COMMON_ATTRS,
    [STRATA_OP_OPTION] = 0,
    [STRATA_OP_ALL_REDUCE] = COLLECTIVE_ATTRS,
    [STRATA_OP_ALL_GATHER] = COLLECTIVE_ATTRS,
    [STRATA_OP_REDUCE_SCATTER] = COLLECTIVE_ATTRS,
    [STRATA_OP_ALL_TO_ALL] = COLLECTIVE_ATTRS,
    [STRATA_OP_COLLECTIVE_PERMUTE] = COLLECTIVE_ATTRS | A(ATTR_SHIFT),
};

static char *known_attrs(strata_op_kind kind)
{
    GString *s = g_string_new(NULL);
    for (unsigned i = 0; i < ATTR__COUNT; i++)
        if (kind_attrs[kind] & A(i))
            g_string_append_printf(s, "%s%s=", s->len ? ", " : "", attr_names[i]);
    return g_string_free(s, FALSE);
}

/* ---- one line ---------------------------------------------------------- */

/* The fields the kind and the operands set come before has_bytes. */
_Static_assert(offsetof(strata_op, kind) < offsetof(strata_op, has_bytes) &&
                   offsetof(strata_op, line) < offsetof(strata_op, has_bytes) &&
                   offsetof(strata_op, stream) < offsetof(strata_op, has_bytes) &&
                   offsetof(strata_op, name) < offsetof(strata_op, has_bytes) &&
                   offsetof(strata_op, src) < offsetof(strata_op, has_bytes) &&
                   offsetof(strata_op, memory) < offsetof(strata_op, has_bytes) &&
                   offsetof(strata_op, value) < offsetof(strata_op, has_bytes) &&
                   offsetof(strata_op, size) < offsetof(strata_op, has_bytes),
               "the operands' fields of strata_op precede its attributes'");

static bool missing(const line_ctx *lc, const char *what, GError **err)
{
    return fail_at(lc, lc->end, err, "expected %s, got end of line", what);
}

/* The next operand, a name: `what` says what it is; the message when the
 * line ends says it follows the op's kind (first: true) or the destination. */
static bool take_operand(const line_ctx *lc, char **cursor, const char *what, const strata_op *op, bool first,
                         const char **out, GError **err)
{
    /* The common case in one pass: a token of name bytes only. */
    char *tok = skip_blanks(*cursor), *p = tok;
    while (name_byte((unsigned char)*p))
        p++;
    if (p > tok && token_end(*p)) {
        cut_token(cursor, p);
        *out = tok;
        return true;
    }
    tok = next_token(cursor);
    if (tok)
        return take_name(lc, tok, what, out, err);
    char *m = first ? g_strdup_printf("%s after '%s'", what, strata_op_kind_name(op->kind))
                    : g_strdup_printf("%s after the destination", what);
    missing(lc, m, err);
    g_free(m);
    return false;
}

/* The common case of a size operand: decimal digits, above 0, no unit.
 * False (cursor unmoved) for any other token, which parse_size_value()
 * then reads or refuses. */
static bool plain_size(char **cursor, uint64_t *bytes)
{
    char *tok = skip_blanks(*cursor);
    uint64_t v = 0;
    char *p = (char *)decimal(tok, &v);
    if (!p || v == 0 || !token_end(*p))
        return false;
    cut_token(cursor, p);
    *bytes = v;
    return true;
}

/* Positional operands of each kind. *cursor is left after the last one. */
static bool parse_operands(const line_ctx *lc, strata_op *op, char **cursor, GError **err)
{
    char *tok = NULL;
    bool ok = true;
    switch (op->kind) {
    case STRATA_OP_ALLOC:
        ok = take_operand(lc, cursor, "a buffer name", op, true, &op->name, err);
        if (ok && plain_size(cursor, &op->size))
            break;
        if (ok && !(tok = next_token(cursor)))
            ok = missing(lc, "a size such as 4096, 64KiB or 1.5GiB after the buffer name", err);
        ok = ok && parse_size_value(lc, tok, &op->size, err);
        break;
    case STRATA_OP_FREE:
    case STRATA_OP_ALL_REDUCE:
        ok = take_operand(lc, cursor, "a buffer name", op, true, &op->name, err);
        break;
    case STRATA_OP_RECORD:
    case STRATA_OP_WAIT:
        ok = take_operand(lc, cursor, "an event name", op, true, &op->name, err);
        break;
    case STRATA_OP_COMPUTE:
        ok = take_operand(lc, cursor, "a label", op, true, &op->name, err);
        break;
    case STRATA_OP_COPY:
    case STRATA_OP_ALL_GATHER:
    case STRATA_OP_REDUCE_SCATTER:
    case STRATA_OP_ALL_TO_ALL:
    case STRATA_OP_COLLECTIVE_PERMUTE:
        ok = take_operand(lc, cursor, "a destination buffer", op, true, &op->name, err) &&
             take_operand(lc, cursor, "a source buffer", op, false, &op->src, err);
        break;
    default:
        break;
    }
    if (!ok)
        return false;
    if (op->kind == STRATA_OP_OPTION) {
        if (!(tok = next_token(cursor)))
            return missing(lc, "KEY=VALUE after 'option'", err);
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || eq[1] == '\0')
            return fail_got(lc, tok, "KEY=VALUE after 'option'", err);
        *eq = '\0';
        if (!valid_name(tok)) {
            *eq = '=';
            return fail_got(lc, tok, "an option key (printable, without ',' or '#')", err);
        }
        op->name = tok;
        op->value = eq + 1;
        for (const unsigned char *p = (const unsigned char *)op->value; *p; p++)
            if (*p < 0x21 || *p == 0x7f)
                return fail_got(lc, op->value, "a printable option value", err);
    }
    /* Optional trailing positional: alloc's and release's MEMORY, a token
     * without '=' (one with it is the first attribute). */
    if (op->kind == STRATA_OP_ALLOC || op->kind == STRATA_OP_RELEASE) {
        char *p = skip_blanks(*cursor), *q = p;
        while (!(class_of(*q) & (B_BLANK | B_END | B_EQ)))
            q++;
        if (q > p && *q != '=') {
            tok = next_token(cursor);
            if (!take_name(lc, tok, "a memory name", &op->memory, err))
                return false;
        }
    }
    return true;
}

/* The next token, as next_token(), with *eq at its first '=' (NULL when it
 * has none): one pass over its bytes. */
static char *next_attr(char **cursor, char **eq)
{
    char *p = skip_blanks(*cursor);
    *eq = NULL;
    if (*p == '\0') {
        *cursor = p;
        return NULL;
    }
    char *tok = p;
    while (!(class_of(*p) & (B_BLANK | B_END | B_EQ)))
        p++;
    if (*p == '=')
        *eq = p;
    while (!token_end(*p))
        p++;
    cut_token(cursor, p);
    return tok;
}

static bool parse_attrs(const line_ctx *lc, strata_op *op, char *cursor, strata_line_scratch *s, GError **err)
{
    unsigned seen = 0;
    char *tok, *eq;
    while ((tok = next_attr(&cursor, &eq))) {
        s->tail_zero = false;
        if (!eq) {
            char *known = known_attrs(op->kind);
            char *expected = *known ? g_strdup_printf("an attribute KEY=VALUE (%s)", known)
                                    : g_strdup_printf("end of line after the operands of '%s'",
                                                      strata_op_kind_name(op->kind));
            fail_got(lc, tok, expected, err);
            g_free(known);
            g_free(expected);
            return false;
        }
        *eq = '\0';
        unsigned id = attr_lookup(tok, (size_t)(eq - tok));
        if (id == ATTR__COUNT || !(kind_attrs[op->kind] & A(id))) {
            char *known = known_attrs(op->kind);
            char *q = strata_quote(tok);
            if (*known)
                fail_at(lc, tok, err, "unknown attribute '%s' for %s: expected one of %s", q,
                        strata_op_kind_name(op->kind), known);
            else
                fail_at(lc, tok, err, "unknown attribute '%s': %s takes no attributes", q,
                        strata_op_kind_name(op->kind));
            g_free(q);
            g_free(known);
            return false;
        }
        if (seen & A(id))
            return fail_at(lc, tok, err, "duplicate attribute '%s='", attr_names[id]);
        seen |= A(id);
        char *value = eq + 1;
        if (*value == '\0')
            return fail_at(lc, value, err, "expected a value after '%s=', got end of attribute", attr_names[id]);
        if (!parse_attr(lc, (attr_id)id, value, op, s, err))
            return false;
    }
    return true;
}

/* Zeroes the fields from has_bytes on, one by one: a memset of those 230
 * bytes is a string store slow to start, on most lines. shape[] beyond
 * n_dims stays zero, as parse_shape() is the only writer. */
static void clear_attributes(strata_op *op)
{
    _Static_assert(sizeof(strata_op) == 320, "clear_attributes() clears every field from has_bytes on: add the new one");
    op->has_bytes = false;
    op->bytes = 0;
    op->unit = NULL;
    op->tag = 0;
    op->dtype = 0;
    if (op->n_dims)
        memset(op->shape, 0, sizeof op->shape);
    op->n_dims = 0;
    op->has_addr = false;
    op->addr = 0;
    op->has_flops = false;
    op->flops = 0;
    op->has_time = false;
    op->time_s = 0;
    op->ins = op->outs = op->donates = NULL;
    op->n_ins = op->n_outs = op->n_donates = 0;
    op->axis = NULL;
    op->algo = 0;
    op->shift = 0;
    op->has_device = false;
    op->device = 0;
    op->coll = NULL;
    op->has_at = false;
    op->at_s = 0;
    op->note = NULL;
}

bool strata_line_parse(char *text, size_t len, const char *origin, uint64_t line, strata_line_scratch *s,
                       strata_op *op, GError **err)
{
    char *end = memchr(text, '#', len);
    if (end)
        *end = '\0';
    else
        end = text + len;
    line_ctx lc = {origin, line, text, end};
    /* Only attributes set the fields from has_bytes on: after a line
     * without any, the operands' fields are all there is to clear. */
    memset(op, 0, offsetof(strata_op, has_bytes));
    if (!s->op_cleared) {
        memset(op, 0, sizeof *op);
        s->op_cleared = true;
    } else if (!s->tail_zero) {
        clear_attributes(op);
    }
    s->tail_zero = true;
    op->line = line;
    op->stream = STRATA_DEFAULT_STREAM;
    char *cursor = text;
    char *tok = next_token(&cursor);
    if (!tok)
        return fail_at(&lc, text, err, "expected an op, got an empty line");
    if (!strata_op_kind_from_name(tok, &op->kind)) {
        char *known = join_names(kind_name_u, 0, STRATA_OP__COUNT);
        char *q = strata_quote(tok);
        fail_at(&lc, tok, err, "unknown op '%s': expected one of %s", q, known);
        g_free(q);
        g_free(known);
        return false;
    }
    if (!parse_operands(&lc, op, &cursor, err) || !parse_attrs(&lc, op, cursor, s, err))
        return false;
    if (strata_op_kind_is_collective(op->kind) && !op->axis)
        return missing(&lc, "axis=AXIS (a mesh axis of option mesh=)", err);
    if (op->kind == STRATA_OP_COLLECTIVE_PERMUTE && op->shift == 0)
        return missing(&lc, "shift=+1 or another non-zero shift for collective-permute", err);
    return true;
}

strata_line_scratch *strata_line_scratch_new(void)
{
    return g_new0(strata_line_scratch, 1);
}

void strata_line_scratch_free(strata_line_scratch *s)
{
    if (s == NULL)
        return;
    g_free(s->text);
    g_free(s->ins.names);
    g_free(s->outs.names);
    g_free(s->donates.names);
    g_free(s);
}

strata_line_scratch *strata_parse_op_line(const char *text, const char *origin, uint64_t line, strata_op *op,
                                          GError **err)
{
    strata_line_scratch *s = strata_line_scratch_new();
    s->text = g_strdup(text);
    if (!strata_line_parse(s->text, strlen(s->text), origin ? origin : "<line>", line, s, op, err)) {
        strata_line_scratch_free(s);
        return NULL;
    }
    return s;
}

bool strata_line_parse_version(char *text, const char *origin, uint64_t line, GError **err)
{
    const char *expected = "'strata-trace 1' as the first line";
    char *hash = strchr(text, '#');
    if (hash)
        *hash = '\0';
    line_ctx lc = {origin, line, text, text + strlen(text)};
    char *cursor = text;
    char *magic = next_token(&cursor);
    if (strcmp(magic, "strata-trace") != 0)
        return fail_got(&lc, magic, expected, err);
    char *version = next_token(&cursor);
    if (!version)
        return missing(&lc, "a version number after 'strata-trace'", err);
    if (strcmp(version, "1") != 0)
        return fail_got(&lc, version, "version 1 (the only version this strata reads)", err);
    char *extra = next_token(&cursor);
    if (extra)
        return fail_got(&lc, extra, "end of line after 'strata-trace 1'", err);
    return true;
}

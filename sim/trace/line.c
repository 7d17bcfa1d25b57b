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
 * Which operands each kind takes is in parse_operands(); the attributes,
 * which kinds take them, their syntax and their fields are declared in
 * trace/op_schema.h, and their handling here is generated from it.
 *
 * Invariants:
 *  1. Every error is STRATA_ERROR_INPUT and starts "ORIGIN:LINE:COL: ".
 *  2. An op has stream != NULL (STRATA_DEFAULT_STREAM when absent) and
 *     line set to its 1-based line in the file.
 *  3. Every field of the op is set from the line alone: what an earlier
 *     line set is cleared (the head of the op always, the fields of each
 *     attribute the line before had: only an attribute's syntax writes
 *     them, and the scratch's dirty bits name those it reached).
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

/* The attributes, by their order in trace/op_schema.h. */
typedef enum {
#define ATTR(key, field, aux, store, syntax, kinds, dflt, what) ATTR_##key,
    STRATA_OP_ATTRS(ATTR)
#undef ATTR
    ATTR__COUNT
} attr_id;
_Static_assert(ATTR__COUNT <= 32, "an attribute is a bit of a 32-bit mask (parse_attrs, strata_line_scratch.dirty)");

struct strata_line_scratch {
    char *text;        /* owned copy of the line (strata_parse_op_line only) */
    uint32_t dirty;    /* the attributes (bits by attr_id) whose fields the op last parsed may have set */
    bool op_cleared;   /* the op has been cleared whole once (padding, shape[]) */
    name_list lists[ATTR__COUNT]; /* a list attribute's names into the line (others unused) */
};

typedef struct line_ctx {
    const char *origin;
    uint64_t line;
    const char *start; /* first byte of the line, for columns */
    const char *end;   /* end of the line's content (before any comment) */
} line_ctx;

/* ---- errors ----------------------------------------------------------- */

/* The errors are cold: kept out of line, so that the paths that succeed
 * (every line of a good trace) inline their helpers. */
#define COLD __attribute__((cold, noinline))

G_GNUC_PRINTF(4, 5) COLD
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

COLD static bool fail_got(const line_ctx *lc, const char *at, const char *expected, GError **err)
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

COLD static bool bad_name(const line_ctx *lc, char *tok, const char *what, GError **err)
{
    char *expected = g_strdup_printf("%s (printable, without '=', ',' or '#')", what);
    fail_got(lc, tok, expected, err);
    g_free(expected);
    return false;
}

static inline bool take_name(const line_ctx *lc, char *tok, const char *what, const char **out, GError **err)
{
    if (!valid_name(tok))
        return bad_name(lc, tok, what, err);
    *out = tok;
    return true;
}

COLD static char *join_names(const char *(*name_of)(unsigned), unsigned from, unsigned to)
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

static bool parse_size_value(const line_ctx *lc, const char *text, const char *what, uint64_t *bytes, GError **err)
{
    if (!fast_size(text, bytes) && !strata_parse_size(text, bytes, NULL))
        return fail_got(lc, text, what, err);
    if (*bytes == 0)
        return fail_got(lc, text, "a size above 0", err);
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

/* "expected WHAT (one of NAMES), got 'value'" over the names 1..count. */
COLD static bool fail_enum(const line_ctx *lc, const char *value, const char *what, const char *(*name_of)(unsigned),
                      unsigned count, GError **err)
{
    char *known = join_names(name_of, 1, count);
    char *expected = g_strdup_printf("%s (one of %s)", what, known);
    fail_got(lc, value, expected, err);
    g_free(known);
    g_free(expected);
    return false;
}

/* ---- the syntaxes of attribute values ----------------------------------
 *
 * syntax_NAME() reads a value of SYNTAX NAME (trace/op_schema.h) into its
 * field; `what` is the schema's WHAT, for the message. The arguments after
 * `what` follow the field's store: the field (VAL, STR), the field and its
 * has_ flag (OPT), the scratch's list, the field and its count (LIST), the
 * extents and their count (SHAPE). */

static bool syntax_NAME(const line_ctx *lc, char *value, const char *what, const char **name, GError **err)
{
    return take_name(lc, value, what, name, err);
}

/* axis=data or axis=data,model: mesh axis names [a-z][a-z0-9_]*. */
static bool syntax_AXIS(const line_ctx *lc, char *value, const char *what, const char **axis, GError **err)
{
    bool start = true;
    for (const char *p = value;; p++) {
        bool lower = *p >= 'a' && *p <= 'z';
        bool ok = start ? lower : (lower || (*p >= '0' && *p <= '9') || *p == '_' || *p == ',' || *p == '\0');
        if (!ok)
            return fail_got(lc, value, what, err);
        if (*p == '\0')
            break;
        start = *p == ',';
    }
    *axis = value;
    return true;
}

static bool syntax_TAG(const line_ctx *lc, char *value, const char *what, strata_tag *tag, GError **err)
{
    return strata_tag_from_name(value, tag) || fail_enum(lc, value, what, tag_name_u, STRATA_TAG__COUNT, err);
}

static bool syntax_DTYPE(const line_ctx *lc, char *value, const char *what, strata_dtype *dtype, GError **err)
{
    return strata_dtype_from_name(value, dtype) ||
           fail_enum(lc, value, what, dtype_name_u, STRATA_DTYPE__COUNT, err);
}

/* algo=ring: a word [a-z][a-z0-9-]*; whether an algorithm of that name
 * exists is the algorithms' table's to say (models/collective). */
static bool syntax_ALGO(const line_ctx *lc, char *value, const char *what, const char **algo, GError **err)
{
    bool ok = *value >= 'a' && *value <= 'z';
    for (const char *p = value; ok && *p; p++)
        ok = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-';
    if (!ok)
        return fail_got(lc, value, what, err);
    *algo = value;
    return true;
}

static bool syntax_SHAPE(const line_ctx *lc, char *value, const char *what, uint64_t *shape, uint32_t *n_dims,
                         GError **err)
{
    char *p = value;
    *n_dims = 0;
    for (;;) {
        char *x = strchr(p, 'x');
        if (x)
            *x = '\0';
        uint64_t extent = 0;
        bool digits = *p >= '0' && *p <= '9';
        if (!digits || !strata_parse_u64(p, &extent, NULL) || extent == 0 || *n_dims == STRATA_MAX_DIMS) {
            if (x)
                *x = 'x';
            return fail_got(lc, value, what, err);
        }
        shape[(*n_dims)++] = extent;
        if (!x)
            break;
        *x = 'x';
        p = x + 1;
    }
    return true;
}

static bool syntax_ADDR(const line_ctx *lc, char *value, const char *what, uint64_t *addr, bool *has, GError **err)
{
    if (!strata_parse_u64(value, addr, NULL))
        return fail_got(lc, value, what, err);
    *has = true;
    return true;
}

static bool syntax_SIZE(const line_ctx *lc, char *value, const char *what, uint64_t *bytes, bool *has, GError **err)
{
    *has = true;
    return parse_size_value(lc, value, what, bytes, err);
}

static bool syntax_FLOPS(const line_ctx *lc, char *value, const char *what, double *flops, bool *has, GError **err)
{
    if (!strata_parse_flops(value, flops, NULL))
        return fail_got(lc, value, what, err);
    *has = true;
    return true;
}

static bool syntax_TIME(const line_ctx *lc, char *value, const char *what, double *seconds, bool *has, GError **err)
{
    *has = true;
    if (!strata_parse_time(value, seconds, NULL))
        return fail_got(lc, value, what, err);
    return true;
}

static bool syntax_LIST(const line_ctx *lc, char *value, const char *what, name_list *into,
                        const char *const **names, uint32_t *n, GError **err)
{
    uint32_t count = 0;
    char *p = value;
    for (;;) {
        /* One pass over a name: its bytes up to the ',' or the end. */
        char *q = p;
        while (name_byte((unsigned char)*q))
            q++;
        if (q == p || (*q != ',' && *q != '\0')) {
            char *comma = strchr(p, ',');
            if (comma)
                *comma = '\0';
            return fail_got(lc, p, what, err);
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

/* Decimal digits only, at most INT32_MAX, after an optional sign when
 * `sign`: false when value is not one. */
static bool small_int(const char *value, bool sign, bool *negative, uint64_t *v)
{
    const char *p = value;
    *negative = sign && (*p == '-' || *p == '+') ? *p++ == '-' : false;
    bool ok = *p >= '0' && *p <= '9' && strata_parse_u64(p, v, NULL) && *v <= INT32_MAX;
    for (const char *q = p; ok && *q; q++)
        ok = *q >= '0' && *q <= '9';
    return ok;
}

static bool syntax_SHIFT(const line_ctx *lc, char *value, const char *what, int32_t *shift, GError **err)
{
    bool negative = false;
    uint64_t v = 0;
    if (!small_int(value, true, &negative, &v) || v == 0)
        return fail_got(lc, value, what, err);
    *shift = negative ? -(int32_t)v : (int32_t)v;
    return true;
}

static bool syntax_DEVICE(const line_ctx *lc, char *value, const char *what, uint32_t *device, bool *has,
                          GError **err)
{
    bool negative = false;
    uint64_t v = 0;
    if (!small_int(value, false, &negative, &v))
        return fail_got(lc, value, what, err);
    *has = true;
    *device = (uint32_t)v;
    return true;
}

/* ---- attributes, generated from trace/op_schema.h ----------------------- */

/* The call of an attribute's syntax, by its field's store class. */
#define CALL_VAL(key, syntax, f, aux, what) return syntax_##syntax(lc, value, what, &op->f, err);
#define CALL_STR(key, syntax, f, aux, what) return syntax_##syntax(lc, value, what, &op->f, err);
#define CALL_OPT(key, syntax, f, aux, what) return syntax_##syntax(lc, value, what, &op->f, &op->aux, err);
#define CALL_LIST(key, syntax, f, aux, what)                                                                       \
    return syntax_##syntax(lc, value, what, &s->lists[ATTR_##key], &op->f, &op->aux, err);
#define CALL_SHAPE(key, syntax, f, aux, what) return syntax_##syntax(lc, value, what, op->f, &op->aux, err);

static bool parse_attr(const line_ctx *lc, attr_id id, char *value, strata_op *op, strata_line_scratch *s,
                       GError **err)
{
    switch (id) {
#define ATTR(key, field, aux, store, syntax, kinds, dflt, what)                                                    \
    case ATTR_##key:                                                                                               \
        OP_SCHEMA_BY_CLASS(CALL_, store)(key, syntax, field, aux, what)
        STRATA_OP_ATTRS(ATTR)
#undef ATTR
    case ATTR__COUNT: break;
    }
    return false;
}

static const char *const attr_names[ATTR__COUNT] = {
#define ATTR(key, field, aux, store, syntax, kinds, dflt, what) [ATTR_##key] = #key,
    STRATA_OP_ATTRS(ATTR)
#undef ATTR
};

/* Which kinds take each attribute (STRATA_OPK() bits). */
static const unsigned attr_kinds[ATTR__COUNT] = {
#define ATTR(key, field, aux, store, syntax, kinds, dflt, what) [ATTR_##key] = (kinds),
    STRATA_OP_ATTRS(ATTR)
#undef ATTR
};

static bool kind_takes(strata_op_kind kind, unsigned id)
{
    return (attr_kinds[id] >> kind) & 1u;
}

/* A key of at most 8 bytes as one word, its first byte lowest (the
 * literal padded with NULs, so that every index is in it). */
#define KEY_BYTE(text, i) ((uint64_t)(unsigned char)(text "\0\0\0\0\0\0\0\0")[i] << (8 * (i)))
#define KEY_WORD(text)                                                                                             \
    (KEY_BYTE(text, 0) | KEY_BYTE(text, 1) | KEY_BYTE(text, 2) | KEY_BYTE(text, 3) | KEY_BYTE(text, 4) |           \
     KEY_BYTE(text, 5) | KEY_BYTE(text, 6) | KEY_BYTE(text, 7))
#define ATTR(key, field, aux, store, syntax, kinds, dflt, what)                                                    \
    _Static_assert(sizeof #key - 1 <= 8, "an attribute key has at most 8 bytes (attr_lookup)");
STRATA_OP_ATTRS(ATTR)
#undef ATTR

/* The first n bytes at tok as one word, the first byte lowest. */
static inline uint64_t key_word(const char *tok, size_t n)
{
    uint64_t word = 0;
    for (size_t i = 0; i < n; i++)
        word |= (uint64_t)(unsigned char)tok[i] << (8 * i);
    return word;
}

/* Attribute id of the key tok[0..len), or ATTR__COUNT. By length, then
 * the key's bytes as one word compared with the constant words of the keys
 * of that length (the others drop out at compile time): no call, no loop
 * over the keys. This runs for every attribute of every line. */
static unsigned attr_lookup(const char *tok, size_t len)
{
#define ATTR(key, field, aux, store, syntax, kinds, dflt, what)                                                    \
    if (sizeof #key - 1 == LEN && word == KEY_WORD(#key))                                                          \
        return ATTR_##key;
#define BY_LENGTH(n)                                                                                               \
    case n: {                                                                                                      \
        enum { LEN = n };                                                                                          \
        uint64_t word = key_word(tok, n);                                                                          \
        STRATA_OP_ATTRS(ATTR)                                                                                      \
        return ATTR__COUNT;                                                                                        \
    }
    switch (len) {
        BY_LENGTH(1)
        BY_LENGTH(2)
        BY_LENGTH(3)
        BY_LENGTH(4)
        BY_LENGTH(5)
        BY_LENGTH(6)
        BY_LENGTH(7)
        BY_LENGTH(8)
    default: return ATTR__COUNT;
    }
#undef BY_LENGTH
#undef ATTR
}

/* The attributes a kind takes, "tag=, dtype=, ...", in canonical order. */
COLD static char *known_attrs(strata_op_kind kind)
{
    GString *s = g_string_new(NULL);
    for (unsigned i = 0; i < ATTR__COUNT; i++)
        if (kind_takes(kind, i))
            g_string_append_printf(s, "%s%s=", s->len ? ", " : "", attr_names[i]);
    return g_string_free(s, FALSE);
}

/* Per store class: a field set to its default. */
#define ZERO_VAL(f, aux, d) op->f = 0;
#define ZERO_STR(f, aux, d) op->f = d;
#define ZERO_OPT(f, aux, d)                                                                                        \
    op->aux = false;                                                                                               \
    op->f = 0;
#define ZERO_LIST(f, aux, d)                                                                                       \
    op->f = NULL;                                                                                                  \
    op->aux = 0;
/* shape[] beyond n_dims stays zero, as syntax_SHAPE() is its only writer */
#define ZERO_SHAPE(f, aux, d)                                                                                      \
    if (op->aux)                                                                                                   \
        memset(op->f, 0, sizeof op->f);                                                                            \
    op->aux = 0;

/* The operands' fields at their defaults, one by one (a memset is a
 * string store slow to start, on every line). */
static void clear_operands(strata_op *op)
{
#define OPERAND(field, aux, store, kinds, dflt) OP_SCHEMA_BY_CLASS(ZERO_, store)(field, aux, dflt)
    STRATA_OP_OPERANDS(OPERAND)
#undef OPERAND
}

/* The attributes' fields at their defaults, one by one, as above. */
static void clear_attributes(strata_op *op)
{
#define ATTR(key, field, aux, store, syntax, kinds, dflt, what) OP_SCHEMA_BY_CLASS(ZERO_, store)(field, aux, dflt)
    STRATA_OP_ATTRS(ATTR)
#undef ATTR
}

/* One attribute's fields at their defaults: only an attribute's syntax
 * writes them, so a line clears those of the attributes the line before
 * it had (most lines have one or two of the twenty). */
static void clear_attribute(strata_op *op, unsigned id)
{
    switch ((attr_id)id) {
#define ATTR(key, field, aux, store, syntax, kinds, dflt, what)                                                    \
    case ATTR_##key: OP_SCHEMA_BY_CLASS(ZERO_, store)(field, aux, dflt) break;
        STRATA_OP_ATTRS(ATTR)
#undef ATTR
    case ATTR__COUNT: break;
    }
}

/* ---- one line ---------------------------------------------------------- */

COLD static bool missing(const line_ctx *lc, const char *what, GError **err)
{
    return fail_at(lc, lc->end, err, "expected %s, got end of line", what);
}

/* take_operand() past its common case: a token with other bytes (refused
 * by take_name() with its message), or none. */
COLD static bool take_operand_rest(const line_ctx *lc, char **cursor, const char *what, const strata_op *op,
                                   bool first, const char **out, GError **err)
{
    char *tok = next_token(cursor);
    if (tok)
        return take_name(lc, tok, what, out, err);
    char *m = first ? g_strdup_printf("%s after '%s'", what, strata_op_kind_name(op->kind))
                    : g_strdup_printf("%s after the destination", what);
    missing(lc, m, err);
    g_free(m);
    return false;
}

/* The next operand, a name: `what` says what it is; the message when the
 * line ends says it follows the op's kind (first: true) or the destination.
 * The common case, a token of name bytes only, in one pass and inline. */
static inline bool take_operand(const line_ctx *lc, char **cursor, const char *what, const strata_op *op,
                                bool first, const char **out, GError **err)
{
    char *tok = skip_blanks(*cursor), *p = tok;
    while (name_byte((unsigned char)*p))
        p++;
    if (p > tok && token_end(*p)) {
        cut_token(cursor, p);
        *out = tok;
        return true;
    }
    return take_operand_rest(lc, cursor, what, op, first, out, err);
}

/* The common cases of a size operand: decimal digits, above 0, with no
 * unit or a binary one (B, KiB, MiB, GiB, TiB) that does not overflow, read
 * in the one pass over the token; what fast_size() answers for the same
 * text. False (cursor unmoved) for any other token, which
 * parse_size_value() then reads or refuses. */
static bool plain_size(char **cursor, uint64_t *bytes)
{
    char *tok = skip_blanks(*cursor);
    uint64_t v = 0;
    char *p = (char *)decimal(tok, &v);
    if (!p || v == 0)
        return false;
    unsigned shift = 0;
    switch (p[0]) { /* p[1] and p[2] are read only while the bytes before them are not the NUL */
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    default: break;
    }
    if (p[0] == 'B') {
        p += 1;
    } else if (shift) {
        if (p[1] != 'i' || p[2] != 'B' || v > (UINT64_MAX >> shift))
            return false;
        p += 3;
    }
    if (!token_end(*p))
        return false;
    cut_token(cursor, p);
    *bytes = v << shift;
    return true;
}

/* Positional operands of each kind (strata_op_positionals_of). *cursor is left
 * after the last one. */
static bool parse_operands(const line_ctx *lc, strata_op *op, char **cursor, GError **err)
{
    char *tok = NULL;
    bool ok = true;
    const strata_op_positionals *g = strata_op_positionals_of(op->kind);
    ok = !g->name || take_operand(lc, cursor, g->name, op, true, &op->name, err);
    if (ok && op->kind == STRATA_OP_ALLOC && !plain_size(cursor, &op->size)) {
        if (!(tok = next_token(cursor)))
            ok = missing(lc, "a size such as 4096, 64KiB or 1.5GiB after the buffer name", err);
        ok = ok && parse_size_value(lc, tok, "a size such as 4096, 64KiB or 1.5GiB", &op->size, err);
    }
    ok = ok && (!g->src || take_operand(lc, cursor, g->src, op, false, &op->src, err));
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
        if (id == ATTR__COUNT || !kind_takes(op->kind, id)) {
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
        if (seen & (1u << id))
            return fail_at(lc, tok, err, "duplicate attribute '%s='", attr_names[id]);
        seen |= 1u << id;
        s->dirty |= 1u << id; /* its syntax may write its fields, even when it then fails */
        char *value = eq + 1;
        if (*value == '\0')
            return fail_at(lc, value, err, "expected a value after '%s=', got end of attribute", attr_names[id]);
        if (!parse_attr(lc, (attr_id)id, value, op, s, err))
            return false;
    }
    return true;
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
    /* Only attributes set the attributes' fields: after the first line,
     * those of the attributes the line before had are all there is to
     * clear beside the operands'. */
    if (!s->op_cleared) {
        memset(op, 0, sizeof *op);
        clear_attributes(op);
        s->op_cleared = true;
        s->dirty = 0;
    }
    clear_operands(op);
    for (uint32_t m = s->dirty; m; m &= m - 1)
        clear_attribute(op, (unsigned)__builtin_ctz(m));
    s->dirty = 0;
    op->line = line;
    /* The kind: its token's length from the one scan over it. */
    char *tok = skip_blanks(text), *cursor = tok;
    if (*tok == '\0')
        return fail_at(&lc, text, err, "expected an op, got an empty line");
    while (!token_end(*cursor))
        cursor++;
    size_t kind_len = (size_t)(cursor - tok);
    cut_token(&cursor, cursor);
    if (!strata_op_kind_of_span(tok, kind_len, &op->kind)) {
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
    for (unsigned i = 0; i < ATTR__COUNT; i++)
        g_free(s->lists[i].names);
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

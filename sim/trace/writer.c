/*
 * writer.c: writes ops as canonical `strata-trace 1` text.
 *
 * Canonical form of a line: the kind, its positional operands, then its
 * attributes in the order of trace/op_schema.h (its own, then device=,
 * stream= (only when not "main"), at= and note=), each only when not at
 * its default. The attributes and their checks are generated from the
 * schema; the operands, whose grammar is per kind, are written here.
 * Sizes use strata_format_size_exact() (shortest exact binary unit),
 * times strata_format_time_exact() (parses back to the same double), flops
 * g_ascii_dtostr() (shortest text that parses back to the same double),
 * addresses hex.
 *
 * Invariants:
 *  1. For a well-formed op, strata_parse_op_line(strata_op_to_text(op))
 *     gives an op that is strata_op_equal to it (tests/test_trace.c).
 *  2. strata_trace_writer_write() refuses (STRATA_ERROR_INPUT) an op whose
 *     names could not be read back (blank, '=', ',', '#', control bytes), or
 *     whose line would be longer than STRATA_LINE_MAX (an importer's compute
 *     with a hundred thousand operands), so a written trace always reads back.
 *  3. strata_trace_write_to() feeds every op to the semantic checker
 *     (trace/check.h) before writing it: an importer never writes a trace
 *     that `strata check` refuses (a group past the mesh, a time past the
 *     sane range, a wait before its record).
 */
#include "trace/writer.h"
#include <errno.h>
#include <string.h>
#include "core/error.h"
#include "core/lines.h"
#include "core/outfile.h"
#include "core/units.h"
#include "trace/check.h"

struct strata_trace_writer {
    FILE *out;
    GString *line; /* reused per op */
    uint64_t written;
};

static void append_size(GString *s, const char *key, uint64_t bytes)
{
    char *text = strata_format_size_exact(bytes);
    if (key)
        g_string_append_printf(s, " %s=%s", key, text);
    else
        g_string_append_printf(s, " %s", text);
    g_free(text);
}

/* ---- the syntaxes of attribute values ----------------------------------
 * write_NAME() writes " key=VALUE" for a value of SYNTAX NAME
 * (trace/op_schema.h); its arguments after the key are the field (VAL,
 * STR, OPT), or the field and its count (LIST, SHAPE). */

static void write_NAME(GString *s, const char *key, const char *v) { g_string_append_printf(s, " %s=%s", key, v); }
static void write_AXIS(GString *s, const char *key, const char *v) { write_NAME(s, key, v); }
static void write_TAG(GString *s, const char *key, strata_tag v) { write_NAME(s, key, strata_tag_name(v)); }
static void write_DTYPE(GString *s, const char *key, strata_dtype v) { write_NAME(s, key, strata_dtype_name(v)); }
static void write_ALGO(GString *s, const char *key, const char *v) { write_NAME(s, key, v); }
static void write_SIZE(GString *s, const char *key, uint64_t v) { append_size(s, key, v); }
static void write_SHIFT(GString *s, const char *key, int32_t v) { g_string_append_printf(s, " %s=%+d", key, (int)v); }
static void write_DEVICE(GString *s, const char *key, uint32_t v) { g_string_append_printf(s, " %s=%u", key, v); }

static void write_ADDR(GString *s, const char *key, uint64_t v)
{
    g_string_append_printf(s, " %s=0x%" G_GINT64_MODIFIER "x", key, v);
}

static void write_FLOPS(GString *s, const char *key, double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    write_NAME(s, key, g_ascii_dtostr(buf, sizeof buf, v));
}

static void write_TIME(GString *s, const char *key, double seconds)
{
    char *text = strata_format_time_exact(seconds);
    write_NAME(s, key, text);
    g_free(text);
}

static void write_LIST(GString *s, const char *key, const char *const *names, uint32_t n)
{
    g_string_append_printf(s, " %s=", key);
    for (uint32_t i = 0; i < n; i++)
        g_string_append_printf(s, "%s%s", i ? "," : "", names[i]);
}

static void write_SHAPE(GString *s, const char *key, const uint64_t *shape, uint32_t n)
{
    g_string_append_printf(s, " %s=", key);
    for (uint32_t i = 0; i < n && i < STRATA_MAX_DIMS; i++)
        g_string_append_printf(s, "%s%" G_GUINT64_FORMAT, i ? "x" : "", shape[i]);
}

/* Whether the string v is the default d (a NULL d: no string is). */
static bool is_default(const char *v, const char *d)
{
    return d && strcmp(v, d) == 0;
}

/* Per store class: write the field when it is not at its default. */
#define WRITE_VAL(key, syntax, f, aux, d)                                                                          \
    if (op->f != 0)                                                                                                \
        write_##syntax(s, #key, op->f);
#define WRITE_STR(key, syntax, f, aux, d)                                                                          \
    if (op->f && !is_default(op->f, d))                                                                            \
        write_##syntax(s, #key, op->f);
#define WRITE_OPT(key, syntax, f, aux, d)                                                                          \
    if (op->aux)                                                                                                   \
        write_##syntax(s, #key, op->f);
#define WRITE_LIST(key, syntax, f, aux, d)                                                                         \
    if (op->aux && op->f)                                                                                          \
        write_##syntax(s, #key, op->f, op->aux);
#define WRITE_SHAPE(key, syntax, f, aux, d)                                                                        \
    if (op->aux)                                                                                                   \
        write_##syntax(s, #key, op->f, op->aux);

/* The attributes of op its kind takes, in the schema's (canonical) order. */
static void append_attrs(const strata_op *op, GString *s)
{
    unsigned kind = 1u << op->kind;
#define ATTR(key, field, aux, store, syntax, kinds, dflt, what)                                                    \
    if ((kinds) & kind) {                                                                                          \
        OP_SCHEMA_BY_CLASS(WRITE_, store)(key, syntax, field, aux, dflt)                                           \
    }
    STRATA_OP_ATTRS(ATTR)
#undef ATTR
}

static void op_to_text(const strata_op *op, GString *s)
{
    g_string_assign(s, strata_op_kind_name(op->kind));
    if ((unsigned)op->kind >= STRATA_OP__COUNT) /* no op */
        return;
    if (op->kind == STRATA_OP_OPTION) { /* options take no attributes */
        g_string_append_printf(s, " %s=%s", op->name, op->value);
        return;
    }
    const strata_op_positionals *g = strata_op_positionals_of(op->kind);
    if (g->name)
        g_string_append_printf(s, " %s", op->name);
    if (op->kind == STRATA_OP_ALLOC)
        append_size(s, NULL, op->size);
    if (g->src)
        g_string_append_printf(s, " %s", op->src);
    if ((op->kind == STRATA_OP_ALLOC || op->kind == STRATA_OP_RELEASE) && op->memory)
        g_string_append_printf(s, " %s", op->memory);
    append_attrs(op, s);
}

char *strata_op_to_text(const strata_op *op)
{
    GString *s = g_string_new(NULL);
    op_to_text(op, s);
    return g_string_free(s, FALSE);
}

/* ---- validation: only what can be read back is written ---------------- */

static bool writable_name(const char *s, bool allow_comma_eq)
{
    if (s == NULL || *s == '\0')
        return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x21 || *p == 0x7f || *p == '#' || (!allow_comma_eq && (*p == '=' || *p == ',')))
            return false;
    return true;
}

static bool check_name(const strata_op *op, const char *what, const char *name, bool allow_comma_eq,
                       GError **err)
{
    if (writable_name(name, allow_comma_eq))
        return true;
    char *q = name ? g_strescape(name, NULL) : g_strdup("(none)");
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                "cannot write %s op (line %" G_GUINT64_FORMAT "): %s '%s' is not a name a trace can hold "
                "(printable, without '=', ',' or '#')",
                strata_op_kind_name(op->kind), op->line, what, q);
    g_free(q);
    return false;
}

static bool check_list(const strata_op *op, const char *what, const char *const *names, uint32_t n, GError **err)
{
    for (uint32_t i = 0; i < n; i++)
        if (!check_name(op, what, names ? names[i] : NULL, false, err))
            return false;
    return true;
}

/* Per store class: whether a field's names are ones a trace can hold (an
 * AXIS may hold ','; a value that is not a name has nothing to check). */
#define COMMA_NAME false
#define COMMA_AXIS true
#define COMMA_ALGO false
#define CHECK_VAL(key, syntax, f, aux)
#define CHECK_OPT(key, syntax, f, aux)
#define CHECK_SHAPE(key, syntax, f, aux)
#define CHECK_STR(key, syntax, f, aux)                                                                             \
    if (op->f && !check_name(op, #key, op->f, COMMA_##syntax, err))                                                \
        return false;
#define CHECK_LIST(key, syntax, f, aux)                                                                            \
    if (!check_list(op, #key "=", op->f, op->aux, err))                                                            \
        return false;

static bool check_attrs(const strata_op *op, GError **err)
{
    unsigned kind = 1u << op->kind;
#define ATTR(key, field, aux, store, syntax, kinds, dflt, what)                                                    \
    if ((kinds) & kind) {                                                                                          \
        OP_SCHEMA_BY_CLASS(CHECK_, store)(key, syntax, field, aux)                                                 \
    }
    STRATA_OP_ATTRS(ATTR)
#undef ATTR
    return true;
}

static bool check_writable(const strata_op *op, GError **err)
{
    if ((unsigned)op->kind >= STRATA_OP__COUNT) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "cannot write an op of unknown kind %d", (int)op->kind);
        return false;
    }
    if (!check_attrs(op, err))
        return false;
    switch (op->kind) {
    case STRATA_OP_ALLOC:
        if (op->size == 0) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "cannot write alloc '%s': size 0",
                        op->name ? op->name : "");
            return false;
        }
        return check_name(op, "buffer", op->name, false, err) &&
               (!op->memory || check_name(op, "memory", op->memory, false, err));
    case STRATA_OP_COPY:
        return check_name(op, "destination", op->name, false, err) &&
               check_name(op, "source", op->src, false, err);
    case STRATA_OP_COMPUTE:
        return check_name(op, "label", op->name, false, err);
    case STRATA_OP_RELEASE:
        return !op->memory || check_name(op, "memory", op->memory, false, err);
    case STRATA_OP_OPTION:
        return check_name(op, "option key", op->name, false, err) &&
               check_name(op, "option value", op->value, true, err);
    case STRATA_OP_ALL_REDUCE:
    case STRATA_OP_ALL_GATHER:
    case STRATA_OP_REDUCE_SCATTER:
    case STRATA_OP_ALL_TO_ALL:
    case STRATA_OP_COLLECTIVE_PERMUTE:
        return check_name(op, "buffer", op->name, false, err) &&
               (op->kind == STRATA_OP_ALL_REDUCE || check_name(op, "source", op->src, false, err)) &&
               (op->axis || check_name(op, "axis", op->axis, true, err)) &&
               (op->kind != STRATA_OP_COLLECTIVE_PERMUTE || op->shift != 0 ||
                check_name(op, "shift", NULL, false, err));
    default:
        return check_name(op, "name", op->name, false, err);
    }
}

/* ---- the writer -------------------------------------------------------- */

strata_trace_writer *strata_trace_writer_new(FILE *out, const char *comment)
{
    strata_trace_writer *w = g_new0(strata_trace_writer, 1);
    w->out = out;
    w->line = g_string_sized_new(128);
    fprintf(out, "strata-trace %d\n", STRATA_TRACE_VERSION);
    if (comment && *comment) {
        /* One comment line per line of the comment. */
        char **lines = g_strsplit(comment, "\n", -1);
        for (char **l = lines; *l; l++)
            fprintf(out, "# %s\n", *l);
        g_strfreev(lines);
    }
    return w;
}

bool strata_trace_writer_write(strata_trace_writer *w, const strata_op *op, GError **err)
{
    if (!check_writable(op, err))
        return false;
    op_to_text(op, w->line);
    if (w->line->len > STRATA_LINE_MAX) { /* strata's own reader (core/lines.h) would refuse the trace */
        char where[48] = "";
        if (op->line)
            g_snprintf(where, sizeof where, " (its line %" G_GUINT64_FORMAT ")", op->line);
        char *name = strata_quote(op->name); /* a name may be the long part: never the whole of it */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s %s%s: expected a trace line of at most %d bytes, got %" G_GSIZE_FORMAT
                    " (strata's reader refuses longer lines)", strata_op_kind_name(op->kind), name, where,
                    STRATA_LINE_MAX, w->line->len);
        g_free(name);
        return false;
    }
    g_string_append_c(w->line, '\n');
    if (fwrite(w->line->str, 1, w->line->len, w->out) != w->line->len) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write trace: %s", g_strerror(errno));
        return false;
    }
    w->written++;
    return true;
}

void strata_trace_writer_free(strata_trace_writer *w)
{
    if (w == NULL)
        return;
    fflush(w->out);
    g_string_free(w->line, TRUE);
    g_free(w);
}

int64_t strata_trace_write_to(strata_source *src, FILE *out, const char *comment, GError **err)
{
    strata_trace_writer *w = strata_trace_writer_new(out, comment);
    /* what an importer or a generator writes goes through the checker
     * `check` runs, so no command writes a trace that check refuses */
    strata_checker *checker = strata_checker_new(strata_source_origin(src));
    int64_t n = 0;
    const strata_op *op;
    int got;
    while ((got = strata_source_next(src, &op, err)) == 1) {
        if (!strata_checker_feed(checker, op, NULL, err)) {
            g_prefix_error(err, "would write a trace that check refuses: ");
            got = -1;
            break;
        }
        if (!strata_trace_writer_write(w, op, err)) {
            got = -1;
            break;
        }
        n++;
    }
    strata_checker_free(checker);
    strata_trace_writer_free(w);
    return got < 0 ? -1 : n;
}

int64_t strata_trace_write_source(strata_source *src, const char *path, const char *comment, GError **err)
{
    strata_outfile *out = strata_outfile_open(path, err);
    if (!out)
        return -1;
    int64_t n = strata_trace_write_to(src, strata_outfile_stream(out), comment, err);
    if (n < 0) {
        strata_outfile_abort(out);
        return -1;
    }
    return strata_outfile_commit(out, err) ? n : -1;
}

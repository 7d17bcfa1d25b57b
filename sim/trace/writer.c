/*
 * writer.c: writes ops as canonical `strata-trace 1` text.
 *
 * Canonical form of a line: the kind, its positional operands, its own
 * attributes in a fixed order, then stream= (only when not "main"), at= and
 * note=. Sizes use strata_format_size_exact() (shortest exact binary unit),
 * times strata_format_time_exact() (parses back to the same double), flops
 * g_ascii_dtostr() (shortest text that parses back to the same double),
 * addresses hex.
 *
 * Invariants:
 *  1. For a well-formed op, strata_parse_op_line(strata_op_to_text(op))
 *     gives an op that is strata_op_equal to it (tests/test_trace.c).
 *  2. strata_trace_writer_write() refuses (STRATA_ERROR_INPUT) an op whose
 *     names could not be read back (blank, '=', ',', '#', control bytes), so
 *     a written trace always reads back.
 */
#include "trace/writer.h"
#include <errno.h>
#include <string.h>
#include "core/error.h"
#include "core/outfile.h"
#include "core/units.h"

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

static void append_time(GString *s, const char *key, double seconds)
{
    char *text = strata_format_time_exact(seconds);
    g_string_append_printf(s, " %s=%s", key, text);
    g_free(text);
}

static void append_list(GString *s, const char *key, const char *const *names, uint32_t n)
{
    if (n == 0 || names == NULL)
        return;
    g_string_append_printf(s, " %s=", key);
    for (uint32_t i = 0; i < n; i++)
        g_string_append_printf(s, "%s%s", i ? "," : "", names[i]);
}

static void op_to_text(const strata_op *op, GString *s)
{
    g_string_assign(s, strata_op_kind_name(op->kind));
    switch (op->kind) {
    case STRATA_OP_ALLOC:
        g_string_append_printf(s, " %s", op->name);
        append_size(s, NULL, op->size);
        if (op->memory)
            g_string_append_printf(s, " %s", op->memory);
        if (op->tag != STRATA_TAG_NONE)
            g_string_append_printf(s, " tag=%s", strata_tag_name(op->tag));
        if (op->dtype != STRATA_DTYPE_NONE)
            g_string_append_printf(s, " dtype=%s", strata_dtype_name(op->dtype));
        if (op->n_dims > 0) {
            g_string_append(s, " shape=");
            for (uint32_t i = 0; i < op->n_dims && i < STRATA_MAX_DIMS; i++)
                g_string_append_printf(s, "%s%" G_GUINT64_FORMAT, i ? "x" : "", op->shape[i]);
        }
        if (op->has_addr)
            g_string_append_printf(s, " addr=0x%" G_GINT64_MODIFIER "x", op->addr);
        break;
    case STRATA_OP_FREE:
    case STRATA_OP_RECORD:
    case STRATA_OP_WAIT:
        g_string_append_printf(s, " %s", op->name);
        break;
    case STRATA_OP_COPY:
        g_string_append_printf(s, " %s %s", op->name, op->src);
        if (op->has_bytes)
            append_size(s, "bytes", op->bytes);
        break;
    case STRATA_OP_COMPUTE:
        g_string_append_printf(s, " %s", op->name);
        if (op->has_flops) {
            char buf[G_ASCII_DTOSTR_BUF_SIZE];
            g_string_append_printf(s, " flops=%s", g_ascii_dtostr(buf, sizeof buf, op->flops));
        }
        append_list(s, "in", op->ins, op->n_ins);
        append_list(s, "out", op->outs, op->n_outs);
        append_list(s, "donate", op->donates, op->n_donates);
        if (op->has_bytes)
            append_size(s, "bytes", op->bytes);
        if (op->has_time)
            append_time(s, "time", op->time_s);
        if (op->unit)
            g_string_append_printf(s, " unit=%s", op->unit);
        break;
    case STRATA_OP_RELEASE:
        if (op->memory)
            g_string_append_printf(s, " %s", op->memory);
        break;
    case STRATA_OP_OPTION:
        g_string_append_printf(s, " %s=%s", op->name, op->value);
        return; /* options take no attributes */
    case STRATA_OP_ALL_REDUCE:
    case STRATA_OP_ALL_GATHER:
    case STRATA_OP_REDUCE_SCATTER:
    case STRATA_OP_ALL_TO_ALL:
    case STRATA_OP_COLLECTIVE_PERMUTE:
        g_string_append_printf(s, " %s", op->name);
        if (op->kind != STRATA_OP_ALL_REDUCE)
            g_string_append_printf(s, " %s", op->src);
        if (op->kind == STRATA_OP_COLLECTIVE_PERMUTE)
            g_string_append_printf(s, " shift=%+d", (int)op->shift);
        g_string_append_printf(s, " axis=%s", op->axis);
        if (op->algo != STRATA_ALGO_DEFAULT)
            g_string_append_printf(s, " algo=%s", strata_algo_name(op->algo));
        break;
    case STRATA_OP__COUNT:
        break;
    }
    if (op->has_device)
        g_string_append_printf(s, " device=%u", op->device);
    if (op->stream && strcmp(op->stream, STRATA_DEFAULT_STREAM) != 0)
        g_string_append_printf(s, " stream=%s", op->stream);
    if (op->has_at)
        append_time(s, "at", op->at_s);
    if (op->note)
        g_string_append_printf(s, " note=%s", op->note);
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

static bool check_writable(const strata_op *op, GError **err)
{
    if ((unsigned)op->kind >= STRATA_OP__COUNT) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "cannot write an op of unknown kind %d", (int)op->kind);
        return false;
    }
    if (op->stream && !check_name(op, "stream", op->stream, false, err))
        return false;
    if (op->note && !check_name(op, "note", op->note, false, err))
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
        return check_name(op, "label", op->name, false, err) &&
               (!op->unit || check_name(op, "unit", op->unit, false, err)) &&
               check_list(op, "in=", op->ins, op->n_ins, err) && check_list(op, "out=", op->outs, op->n_outs, err) &&
               check_list(op, "donate=", op->donates, op->n_donates, err);
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
               check_name(op, "axis", op->axis, true, err) &&
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
    int64_t n = 0;
    const strata_op *op;
    int got;
    while ((got = strata_source_next(src, &op, err)) == 1) {
        if (!strata_trace_writer_write(w, op, err)) {
            got = -1;
            break;
        }
        n++;
    }
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

/*
 * reader.c: streaming reader of `strata-trace 1` text (traces/FORMAT.md).
 *
 * Design: one bounded line reader (core/lines.h: it rejects overlong lines
 * and NUL bytes with their line, and skips a UTF-8 BOM) and one reusable
 * scratch; each line is made an op by trace/line.h, in place in the line
 * reader's buffer. Memory is bounded by the longest line, whatever the
 * length of the trace.
 *
 * Invariants:
 *  1. Every error is STRATA_ERROR_INPUT (or STRATA_ERROR_IO for the file)
 *     and names ORIGIN:LINE.
 *  2. rewind() returns to the first line after the version line, so the
 *     ops come out identical on every pass: a file that cannot seek
 *     (standard input, a FIFO, a pipe, /dev/stdin) is read once, into an
 *     unlinked temporary file, and a path naming one of the process' own
 *     descriptors (/dev/stdin, /dev/fd/N) is read through a copy of it,
 *     never opened again.
 */
#include "trace/reader.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/error.h"
#include "core/lines.h"
#include "trace/line.h"

/* ---- the file source --------------------------------------------------- */

typedef struct trace_reader {
    strata_lines *lines;
    char *origin;
    char *buf;          /* the current line, owned by lines */
    size_t len;         /* its length */
    uint64_t line;      /* lines read so far */
    off_t data_offset;  /* just after the version line */
    uint64_t data_line;
    strata_line_scratch *scratch;
    strata_op op;
} trace_reader;

/* Read one line: 1 ok (buf holds it, newline stripped), 0 eof, -1 error. */
static int read_line(trace_reader *r, GError **err)
{
    int got = strata_lines_next(r->lines, &r->buf, &r->len, err);
    r->line = strata_lines_number(r->lines);
    return got;
}

static bool read_version(trace_reader *r, GError **err)
{
    int got;
    while ((got = read_line(r, err)) == 1 && strata_line_is_blank(r->buf))
        ;
    if (got < 0)
        return false;
    if (got == 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s:%" G_GUINT64_FORMAT ":1: expected 'strata-trace 1' as the first line, got end of file",
                    r->origin, r->line + 1);
        return false;
    }
    if (!strata_line_parse_version(r->buf, r->origin, r->line, err))
        return false;
    r->data_offset = strata_lines_tell(r->lines);
    r->data_line = r->line;
    return true;
}

static int reader_next(void *self, const strata_op **op, GError **err)
{
    trace_reader *r = self;
    for (;;) {
        int got = read_line(r, err);
        if (got <= 0)
            return got;
        if (strata_line_is_blank(r->buf))
            continue;
        /* the format's ops are lines, each ending with a newline (traces/FORMAT.md): a last op with none is a
         * file cut short (a copy stopped, a disk full), whose op may read as another ("alloc a 1MiB" cut to
         * "alloc a 1") */
        if (!strata_lines_terminated(r->lines, "a trace", "every line of a strata trace ends with one", err))
            return -1;
        if (!strata_line_parse(r->buf, r->len, r->origin, r->line, r->scratch, &r->op, err))
            return -1;
        *op = &r->op;
        return 1;
    }
}

static bool reader_rewind(void *self, GError **err)
{
    trace_reader *r = self;
    if (!strata_lines_seek(r->lines, r->data_offset, r->data_line, err))
        return false;
    r->line = r->data_line;
    return true;
}

static void reader_destroy(void *self)
{
    trace_reader *r = self;
    strata_lines_free(r->lines);
    strata_line_scratch_free(r->scratch);
    g_free(r->origin);
    g_free(r);
}

static const strata_source_vtable reader_vtable = {
    .next = reader_next,
    .rewind = reader_rewind,
    .destroy = reader_destroy,
};

/* Copies `in` (taken: closed here) to an unlinked temporary file, so that
 * the trace can rewind: standard input, a FIFO, a pipe, a character
 * device, read once. It is copied line by line through the bounded reader,
 * so endless or binary input (a NUL, an overlong line) fails at its line
 * instead of filling the disk. */
static FILE *spool(FILE *in, const char *origin, GError **err)
{
    char *tmp = NULL;
    int fd = g_file_open_tmp("strata-stdin-XXXXXX", &tmp, err);
    if (fd < 0) {
        fclose(in);
        return NULL;
    }
    unlink(tmp);
    g_free(tmp);
    FILE *fp = fdopen(fd, "w+");
    if (!fp) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot spool the trace: %s", origin, g_strerror(errno));
        close(fd);
        fclose(in);
        return NULL;
    }
    strata_lines *lines = strata_lines_new(in, origin); /* takes in */
    char *line = NULL;
    size_t len = 0;
    int got;
    bool ok = true;
    while (ok && (got = strata_lines_next(lines, &line, &len, err)) == 1)
        ok = fwrite(line, 1, len, fp) == len && (strata_lines_unterminated(lines) || fputc('\n', fp) != EOF);
    strata_lines_free(lines);
    if (ok && got < 0) {
        fclose(fp);
        return NULL;
    }
    if (!ok || fflush(fp) != 0 || fseeko(fp, 0, SEEK_SET) != 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot spool the trace: %s", origin, g_strerror(errno));
        fclose(fp);
        return NULL;
    }
    return fp;
}

/* The descriptor a path names that is one of this process' own open
 * descriptors (/dev/stdin, /dev/fd/N, /proc/self/fd/N), else -1. Such a
 * path, when the descriptor is not a regular file, is read through a copy
 * of the descriptor, not opened again: reopening a FIFO whose writer has
 * finished blocks forever. A regular file is opened again (from its start;
 * a copy would share the descriptor's offset). */
static int own_descriptor(const char *path)
{
    if (strcmp(path, "/dev/stdin") == 0)
        return STDIN_FILENO;
    const char *n = g_str_has_prefix(path, "/dev/fd/") ? path + 8
                    : g_str_has_prefix(path, "/proc/self/fd/") ? path + 14 : NULL;
    if (n == NULL || !g_ascii_isdigit(*n))
        return -1;
    char *end = NULL;
    guint64 fd = g_ascii_strtoull(n, &end, 10);
    return *end == '\0' && fd <= INT32_MAX ? (int)fd : -1;
}

/* The trace at path, opened for reading and able to rewind (spooled when
 * the file cannot seek: standard input, a FIFO, a pipe); NULL with err. */
static FILE *open_trace(const char *path, const char *origin, GError **err)
{
    int own = strcmp(path, "-") == 0 ? STDIN_FILENO : own_descriptor(path);
    struct stat st;
    if (own >= 0 && strcmp(path, "-") != 0 && fstat(own, &st) == 0 && S_ISREG(st.st_mode))
        own = -1; /* a file: opened afresh from its start, as before (a copy would share its offset) */
    FILE *in = NULL;
    if (own >= 0) {
        int fd = dup(own);
        in = fd >= 0 ? fdopen(fd, "r") : NULL;
        if (fd >= 0 && !in)
            close(fd);
    } else {
        if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot read a trace: is a directory", path);
            return NULL;
        }
        in = fopen(path, "r");
    }
    if (!in) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot open trace: %s", origin, g_strerror(errno));
        return NULL;
    }
    if (fstat(fileno(in), &st) == 0 && S_ISREG(st.st_mode) && lseek(fileno(in), 0, SEEK_CUR) >= 0)
        return in;
    return spool(in, origin, err);
}

strata_source *strata_trace_open(const char *path, GError **err)
{
    bool is_stdin = strcmp(path, "-") == 0;
    const char *origin = is_stdin ? "<stdin>" : path;
    FILE *fp = open_trace(path, origin, err);
    if (!fp)
        return NULL;
    trace_reader *r = g_new0(trace_reader, 1);
    r->origin = g_strdup(origin);
    r->lines = strata_lines_new(fp, r->origin);
    r->scratch = strata_line_scratch_new();
    if (!read_version(r, err)) {
        reader_destroy(r);
        return NULL;
    }
    return strata_source_new(&reader_vtable, r, origin);
}

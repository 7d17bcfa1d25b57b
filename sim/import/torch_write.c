/*
 * torch_write.c: a fast text writer for the ops `strata import torch` makes
 * (strata_torch_write(), declared in torch.h).
 *
 * A converted snapshot is hundreds of thousands of alloc/free lines, each
 * with an at= time. The general trace writer (trace/writer.c) finds the
 * shortest text of any double that reads back exactly, which costs dozens of
 * printf/strtod rounds per time; here every time is a whole number of
 * microseconds since the first event (`time_us` in the snapshot), so it is
 * written as "Nus" directly, and sizes as the shortest exact binary unit with
 * integer arithmetic, like strata_format_size_exact().
 *
 * Invariants:
 *  1. The syntax is trace/writer.c's, field for field (name, size, addr=,
 *     stream= unless main, at=, note=); reading a written trace back gives
 *     ops equal to the ones written (strata_op_equal), as the writer
 *     promises (tested in tests/test_torch_import.c).
 *  2. An op this writer has no fast path for (another kind, a time that is
 *     not a whole number of microseconds, a memory, a tag) goes through the
 *     general writer, so the output is always a valid trace.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "core/error.h"
#include "core/units.h"
#include "import/torch.h"
#include "trace/writer.h"

typedef struct line {
    char buf[512];
    size_t len;
} line;

static bool put(line *l, const char *s, size_t n)
{
    if (l->len + n >= sizeof l->buf)
        return false;
    memcpy(l->buf + l->len, s, n);
    l->len += n;
    return true;
}

static bool puts_(line *l, const char *s) { return put(l, s, strlen(s)); }

static bool put_u64(line *l, uint64_t v)
{
    char digits[STRATA_U64_DIGITS];
    return put(l, digits, strata_format_u64(digits, v));
}

static bool put_hex(line *l, uint64_t v)
{
    static const char digits[] = "0123456789abcdef";
    char tmp[20];
    size_t n = 0;
    do {
        tmp[sizeof tmp - 1 - n++] = digits[v & 15];
        v >>= 4;
    } while (v);
    return put(l, "0x", 2) && put(l, tmp + sizeof tmp - n, n);
}

/* The shortest exact binary unit, as strata_format_size_exact(). */
static bool put_size(line *l, uint64_t bytes)
{
    static const char *const prefixes[] = {"", "KiB", "MiB", "GiB", "TiB", "PiB"};
    unsigned i = 0;
    uint64_t v = bytes;
    while (v != 0 && v % 1024 == 0 && i < 5) {
        v /= 1024;
        i++;
    }
    return put_u64(l, v) && puts_(l, prefixes[i]);
}

/* at= as whole microseconds when that text reads back to the same double
 * (the reader divides: N / 1e6); false to fall back. */
static bool put_at(line *l, double at)
{
    if (at == 0)
        return puts_(l, " at=0");
    if (!(at > 0) || at > 9e9)
        return false;
    double us = nearbyint(at * 1e6);
    if ((double)(uint64_t)us / 1e6 != at)
        return false;
    return puts_(l, " at=") && put_u64(l, (uint64_t)us) && puts_(l, "us");
}

static bool fast_line(const strata_op *op, line *l)
{
    l->len = 0;
    if (op->has_device)
        return false;
    switch (op->kind) {
    case STRATA_OP_ALLOC:
        if (op->memory || op->tag || op->dtype || op->n_dims)
            return false;
        if (!puts_(l, "alloc ") || !puts_(l, op->name) || !put(l, " ", 1) ||
            !put_size(l, op->size))
            return false;
        if (op->has_addr && !(puts_(l, " addr=") && put_hex(l, op->addr)))
            return false;
        break;
    case STRATA_OP_FREE:
        if (!puts_(l, "free ") || !puts_(l, op->name))
            return false;
        break;
    case STRATA_OP_RELEASE:
        if (op->memory || !puts_(l, "release"))
            return false;
        break;
    default:
        return false;
    }
    if (op->stream && strcmp(op->stream, STRATA_DEFAULT_STREAM) != 0 &&
        !(puts_(l, " stream=") && puts_(l, op->stream)))
        return false;
    if (op->has_at && !put_at(l, op->at_s))
        return false;
    if (op->note && !(puts_(l, " note=") && puts_(l, op->note)))
        return false;
    return put(l, "\n", 1);
}

int64_t strata_torch_write(strata_source *src, FILE *out, const char *comment, GError **err)
{
    strata_trace_writer *w = strata_trace_writer_new(out, comment);
    const strata_op *op;
    int rc;
    int64_t n = 0;
    line l;
    while ((rc = strata_source_next(src, &op, err)) == 1) {
        if (fast_line(op, &l)) {
            if (fwrite(l.buf, 1, l.len, out) != l.len) {
                g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write trace: %s",
                            g_strerror(errno));
                rc = -1;
                break;
            }
        } else {
            if (!strata_trace_writer_write(w, op, err)) {
                rc = -1;
                break;
            }
        }
        n++;
    }
    strata_trace_writer_free(w);
    return rc < 0 ? -1 : n;
}

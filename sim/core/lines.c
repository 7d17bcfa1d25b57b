/*
 * lines.c: the bounded line reader (contract in lines.h).
 *
 * buf[pos, end) holds bytes read but not handed out yet; buf[0] is at file
 * offset file_off. A line is found with memchr; when the buffer holds no
 * newline, the unread tail moves to the front and the next chunk is read
 * behind it, until the tail alone is longer than STRATA_LINE_MAX. The
 * first NUL byte of the data is found once per chunk, not once per line.
 *
 * Invariants:
 *  1. pos <= end < cap: there is always a byte after the data, so the last
 *     line of a file without a final newline can be NUL-terminated in place;
 *  2. cap <= STRATA_LINE_MAX + CHUNK + 1: memory is bounded whatever the input;
 *  3. nul is NO_NUL or the offset of a NUL byte in buf, and no byte of the
 *     input in [pos, min(nul, end)) is a NUL.
 * A line handed out is UTF-8 (not_utf8_column).
 */
#include "core/lines.h"
#include "core/error.h"

#include <assert.h>
#include <errno.h>
#include <string.h>

#define CHUNK (64 * 1024)
#define NO_NUL SIZE_MAX

struct strata_lines {
    FILE *fp;
    char *origin;
    char *buf;
    size_t cap, pos, end;
    size_t nul; /* offset of the first NUL byte from pos on, or NO_NUL */
    off_t file_off;
    uint64_t number;
    bool eof;
    bool unterminated; /* the line last handed out ended at the end of input, with no newline */
};

strata_lines *strata_lines_new(FILE *fp, const char *origin)
{
    strata_lines *l = g_new0(strata_lines, 1);
    l->fp = fp;
    l->origin = g_strdup(origin);
    l->cap = CHUNK + 1;
    l->buf = g_malloc(l->cap);
    l->nul = NO_NUL;
    return l;
}

void strata_lines_free(strata_lines *l)
{
    if (!l)
        return;
    if (l->fp)
        fclose(l->fp);
    g_free(l->buf);
    g_free(l->origin);
    g_free(l);
}

#ifndef NDEBUG
/* Invariants 1 and 2, and the part of 3 that is O(1): nul names a NUL. */
static bool lines_ok(const strata_lines *l)
{
    return l->pos <= l->end && l->end < l->cap                              /* invariant 1 */
        && l->cap <= STRATA_LINE_MAX + CHUNK + 1                           /* invariant 2 */
        && (l->nul == NO_NUL || (l->nul < l->end && l->buf[l->nul] == '\0')); /* invariant 3 */
}
#endif

static bool too_long(const strata_lines *l, GError **err)
{
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                "%s:%" G_GUINT64_FORMAT ": expected a line of at most %d bytes, got a longer one", l->origin,
                l->number + 1, STRATA_LINE_MAX);
    return false;
}

static bool nul_byte(const strata_lines *l, uint64_t line, size_t column, GError **err)
{
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                "%s:%" G_GUINT64_FORMAT ":%zu: expected text, got a NUL byte", l->origin, line, column);
    return false;
}

/* Reads the next chunk behind the unread tail; false with err on a read
 * error or an overlong line. Sets eof at the end of input. */
static bool fill(strata_lines *l, GError **err)
{
    if (l->end - l->pos > STRATA_LINE_MAX)
        return too_long(l, err);
    memmove(l->buf, l->buf + l->pos, l->end - l->pos);
    l->file_off += (off_t)l->pos;
    l->end -= l->pos;
    l->pos = 0;
    if (l->cap < l->end + CHUNK + 1) {
        l->cap = l->end + CHUNK + 1;
        l->buf = g_realloc(l->buf, l->cap);
    }
    errno = 0;
    char *fresh = l->buf + l->end;
    size_t n = fread(fresh, 1, CHUNK, l->fp);
    l->end += n;
    /* A NUL in the line being read fails now, not after STRATA_LINE_MAX bytes. */
    const char *nl = memchr(fresh, '\n', n);
    const char *nul = memchr(fresh, '\0', nl ? (size_t)(nl - fresh) : n);
    if (nul)
        return nul_byte(l, l->number + 1, (size_t)(nul - (l->buf + l->pos)) + 1, err);
    if (n == 0 && ferror(l->fp)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s:%" G_GUINT64_FORMAT ": cannot read: %s", l->origin,
                    l->number + 1, g_strerror(errno ? errno : EIO));
        return false;
    }
    l->eof = n == 0;
    const char *first_nul = memchr(l->buf, '\0', l->end);
    l->nul = first_nul ? (size_t)(first_nul - l->buf) : NO_NUL;
    return true;
}

/* The column of the first NUL byte of the line s[0..n) in buf, or 0. */
static size_t nul_column(strata_lines *l, const char *s, size_t n)
{
    size_t at = (size_t)(s - l->buf);
    if (l->nul != NO_NUL && l->nul < at) {
        /* Past the NUL found last (a line that held it was refused): the
         * next one from here (or this line's terminator). */
        const char *next = memchr(s, '\0', l->end - at);
        l->nul = next ? (size_t)(next - l->buf) : NO_NUL;
    }
    return l->nul != NO_NUL && l->nul < at + n ? l->nul - at + 1 : 0;
}

/* The column of the first byte of s[0..n) that is not UTF-8, or 0: a line
 * of ASCII (most of them) is passed eight bytes at a time, others go to
 * g_utf8_validate_len. Text that is not UTF-8 went on into names, and from
 * them into the JSON results and timelines unescaped (a stream named \xff
 * made --json write a file no JSON parser reads, at exit 0). */
static size_t not_utf8_column(const char *s, size_t n)
{
    size_t i = 0;
    for (uint64_t w; i + 8 <= n; i += 8) {
        memcpy(&w, s + i, 8);
        if (w & UINT64_C(0x8080808080808080))
            break;
    }
    while (i < n && !(s[i] & 0x80))
        i++;
    const char *end = NULL;
    if (i == n || g_utf8_validate_len(s + i, n - i, &end))
        return 0;
    return (size_t)(end - s) + 1;
}

int strata_lines_next(strata_lines *l, char **line, size_t *len, GError **err)
{
    char *nl = NULL;
    while (!(nl = memchr(l->buf + l->pos, '\n', l->end - l->pos)) && !l->eof)
        if (!fill(l, err))
            return -1;
    if (!nl && l->pos == l->end)
        return 0;
    char *s = l->buf + l->pos;
    size_t n = nl ? (size_t)(nl - s) : l->end - l->pos;
    l->pos += nl ? n + 1 : n;
    l->unterminated = !nl;
    if (n > STRATA_LINE_MAX) {
        too_long(l, err);
        return -1;
    }
    l->number++;
    if (n > 0 && s[n - 1] == '\r')
        n--;
    s[n] = '\0';
    if (l->number == 1 && n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
        s += 3;
        n -= 3;
    }
    size_t column = nul_column(l, s, n);
    if (column) {
        nul_byte(l, l->number, column, err);
        return -1;
    }
    if ((column = not_utf8_column(s, n)) != 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s:%" G_GUINT64_FORMAT ": expected UTF-8 text, got "
                    "bytes that are not UTF-8 (0x%02x at column %zu)", l->origin, l->number,
                    (unsigned)(unsigned char)s[column - 1], column);
        return -1;
    }
    assert(lines_ok(l)); /* invariants 1-3 */
    *line = s;
    *len = n;
    return 1;
}

uint64_t strata_lines_number(const strata_lines *l) { return l->number; }

bool strata_lines_unterminated(const strata_lines *l) { return l->unterminated; }

bool strata_lines_terminated(const strata_lines *l, const char *what, const char *rule, GError **err)
{
    if (!l->unterminated)
        return true;
    return strata_fail_at(err, l->origin, l->number, "expected the line to end with a newline, got the end of the "
                          "file inside it (%s cut short?); %s", what, rule);
}

off_t strata_lines_tell(const strata_lines *l) { return l->file_off + (off_t)l->pos; }

bool strata_lines_seek(strata_lines *l, off_t offset, uint64_t line, GError **err)
{
    if (fseeko(l->fp, offset, SEEK_SET) != 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot rewind: %s", l->origin, g_strerror(errno));
        return false;
    }
    clearerr(l->fp);
    l->pos = l->end = 0;
    l->nul = NO_NUL;
    l->file_off = offset;
    l->number = line;
    l->eof = false;
    return true;
}

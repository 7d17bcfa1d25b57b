/* readall.c: a bounded whole-file read (contract in readall.h). */
#include "core/readall.h"
#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define CHUNK (64 * 1024)

/* "PATH:LINE:COLUMN: expected text, got a NUL byte" for the NUL at data[at]. */
static void nul_error(const char *path, const char *data, size_t at, GError **err)
{
    size_t line = 1, column = 1;
    for (size_t i = 0; i < at; i++) {
        if (data[i] == '\n') {
            line++;
            column = 1;
        } else
            column++;
    }
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s:%zu:%zu: expected text, got a NUL byte", path, line,
                column);
}

bool strata_read_all(const char *path, size_t max, bool text, const char *what, char **data, size_t *len,
                     GError **err)
{
    *data = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: cannot read: %s", path, g_strerror(errno));
        return false;
    }
    GString *buf = g_string_sized_new(CHUNK);
    bool ok = true;
    for (;;) {
        size_t at = buf->len;
        g_string_set_size(buf, at + CHUNK);
        ssize_t n = read(fd, buf->str + at, CHUNK);
        if (n < 0 && errno == EINTR) {
            g_string_set_size(buf, at);
            continue;
        }
        g_string_set_size(buf, at + (n > 0 ? (size_t)n : 0));
        if (n < 0) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: cannot read: %s", path, g_strerror(errno));
            ok = false;
        } else if (buf->len > max) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected %s of at most %zu bytes, got more",
                        path, what, max);
            ok = false;
        } else if (text && n > 0 && memchr(buf->str + at, '\0', (size_t)n)) {
            nul_error(path, buf->str, (size_t)((const char *)memchr(buf->str + at, '\0', (size_t)n) - buf->str),
                      err);
            ok = false;
        }
        if (!ok || n == 0)
            break;
    }
    close(fd);
    if (!ok) {
        g_string_free(buf, TRUE);
        return false;
    }
    *len = buf->len;
    *data = g_string_free(buf, FALSE);
    return true;
}

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

int strata_spool_fd(int in, const char *name, off_t max, bool device, GError **err)
{
    char *tmp = NULL;
    int fd = g_file_open_tmp("strata-input-XXXXXX", &tmp, err);
    if (fd < 0)
        return -1;
    unlink(tmp);
    g_free(tmp);
    char buf[1 << 16];
    ssize_t n = 0;
    bool ok = true;
    off_t total = 0;
    while (ok && (max < 0 || total <= max) && ((n = read(in, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))) {
        ok = n < 0 || write(fd, buf, (size_t)n) == n;
        total += n > 0 ? n : 0;
    }
    if (ok && max >= 0 && total > max) {
        if (device)
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: a device that yields more than %lld bytes (an "
                        "endless one, such as /dev/zero?): expected a file, a pipe or a terminal", name,
                        (long long)max);
        else
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: a pipe or FIFO that yields more than %lld "
                        "bytes: expected at most %lld bytes through a pipe (give a larger input as a file)", name,
                        (long long)max, (long long)max);
        close(fd);
        return -1;
    }
    if (!ok || n < 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot read it once: %s", name, g_strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

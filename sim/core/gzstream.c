/*
 * gzstream.c: a stdio stream that gzip-compresses into another (gzstream.h),
 * built with fopencookie() over zlib's deflate.
 *
 * Invariants: every byte handed to the write hook is consumed by deflate
 * before it returns (its output drained into `under`); the hook reports a
 * failed underlying write as an error, and once failed the stream stays
 * failed, so a truncated gzip file is never reported as complete.
 */
#include "core/gzstream.h"
#include <errno.h>
#include <stdint.h>
#include <glib.h>
#include <string.h>
#include <zlib.h>

enum { GZ_CHUNK = 1 << 16 };

typedef struct gz_cookie {
    FILE *under;
    z_stream z;
    bool failed;
    unsigned char out[GZ_CHUNK];
} gz_cookie;

/* Runs deflate with `flush` until it has consumed its input (or, for
 * Z_FINISH, ended the member), writing what it makes to `under`. */
static bool deflate_all(gz_cookie *c, int flush)
{
    int rc;
    do {
        c->z.next_out = c->out;
        c->z.avail_out = sizeof c->out;
        rc = deflate(&c->z, flush);
        if (rc == Z_STREAM_ERROR)
            return false;
        size_t n = sizeof c->out - c->z.avail_out;
        if (n > 0 && fwrite(c->out, 1, n, c->under) != n)
            return false;
    } while (c->z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    return true;
}

static ssize_t gz_write(void *cookie, const char *buf, size_t size)
{
    gz_cookie *c = cookie;
    size_t done = 0;
    while (!c->failed && done < size) {
        size_t n = MIN(size - done, (size_t)G_MAXUINT32 / 2);
        c->z.next_in = (Bytef *)(uintptr_t)(buf + done);
        c->z.avail_in = (uInt)n;
        c->failed = !deflate_all(c, Z_NO_FLUSH);
        done += n;
    }
    if (c->failed) {
        errno = EIO;
        return -1;
    }
    return (ssize_t)size;
}

static int gz_close(void *cookie)
{
    gz_cookie *c = cookie;
    bool ok = !c->failed && deflate_all(c, Z_FINISH);
    deflateEnd(&c->z);
    g_free(c);
    if (!ok) {
        errno = EIO;
        return EOF;
    }
    return 0;
}

FILE *strata_gzip_stream(FILE *under)
{
    gz_cookie *c = g_new0(gz_cookie, 1);
    c->under = under;
    /* windowBits 15 + 16: a gzip header and trailer around the deflate data. */
    if (deflateInit2(&c->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        g_free(c);
        errno = ENOMEM;
        return NULL;
    }
    cookie_io_functions_t io = {.read = NULL, .write = gz_write, .seek = NULL, .close = gz_close};
    FILE *f = fopencookie(c, "w", io);
    if (!f) {
        deflateEnd(&c->z);
        g_free(c);
        return NULL;
    }
    setvbuf(f, NULL, _IOFBF, GZ_CHUNK);
    return f;
}

bool strata_gzip_path(const char *path)
{
    return path && g_str_has_suffix(path, ".gz");
}

/*
 * outfile.c: output files that are complete or absent, never partial
 * (contract in outfile.h).
 *
 * Design: open() creates "DIR/.BASENAME.XXXXXX" beside the target with
 * g_mkstemp_full (mode 0666 minus the umask, like a plain fopen would), so
 * that an unwritable directory is reported before any work starts and the
 * final rename() stays within one file system (atomic on POSIX).
 *
 * Invariants:
 *  1. for a real path, tmp_path names an existing file owned by this object
 *     until commit (renamed) or abort (unlinked);
 *  2. for "-", stream is stdout, tmp_path is NULL and stdout is never closed;
 *  3. the target path is touched only by the final rename().
 */
#include "core/outfile.h"
#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

struct strata_outfile {
    char *path;     /* target as given */
    char *tmp_path; /* NULL for stdout */
    FILE *stream;
};

static bool is_stdout(const char *path) { return strcmp(path, "-") == 0; }

strata_outfile *strata_outfile_open(const char *path, GError **err)
{
    if (path == NULL || *path == '\0') {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "empty output path");
        return NULL;
    }
    strata_outfile *out = g_new0(strata_outfile, 1);
    out->path = g_strdup(path);
    if (is_stdout(path)) {
        out->stream = stdout;
        return out;
    }
    if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write '%s': it is a directory",
                    path);
        strata_outfile_abort(out);
        return NULL;
    }
    char *dir = g_path_get_dirname(path);
    char *base = g_path_get_basename(path);
    char *name = g_strdup_printf(".%s.XXXXXX", base);
    out->tmp_path = g_build_filename(dir, name, NULL);
    g_free(dir);
    g_free(base);
    g_free(name);

    int fd = g_mkstemp_full(out->tmp_path, O_WRONLY | O_CLOEXEC, 0666);
    if (fd < 0) {
        int e = errno;
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write '%s': %s", path,
                    g_strerror(e));
        g_free(out->tmp_path);
        out->tmp_path = NULL; /* nothing was created */
        strata_outfile_abort(out);
        return NULL;
    }
    out->stream = fdopen(fd, "w");
    if (out->stream == NULL) {
        int e = errno;
        close(fd);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write '%s': %s", path,
                    g_strerror(e));
        strata_outfile_abort(out);
        return NULL;
    }
    return out;
}

FILE *strata_outfile_stream(strata_outfile *out) { return out->stream; }

const char *strata_outfile_path(const strata_outfile *out) { return out->path; }

static void outfile_release(strata_outfile *out)
{
    g_free(out->path);
    g_free(out->tmp_path);
    g_free(out);
}

bool strata_outfile_commit(strata_outfile *out, GError **err)
{
    if (out->tmp_path == NULL) { /* stdout */
        bool ok = fflush(out->stream) == 0 && !ferror(out->stream);
        if (!ok)
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write standard output: %s",
                        g_strerror(errno));
        outfile_release(out);
        return ok;
    }
    int e = 0;
    if (fflush(out->stream) != 0 || ferror(out->stream))
        e = errno ? errno : EIO;
    if (e == 0 && fsync(fileno(out->stream)) != 0 && errno != EINVAL)
        e = errno;
    if (fclose(out->stream) != 0 && e == 0)
        e = errno;
    out->stream = NULL;
    if (e == 0 && g_rename(out->tmp_path, out->path) != 0)
        e = errno;
    if (e != 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write '%s': %s", out->path,
                    g_strerror(e));
        g_unlink(out->tmp_path);
        outfile_release(out);
        return false;
    }
    outfile_release(out);
    return true;
}

void strata_outfile_abort(strata_outfile *out)
{
    if (out == NULL)
        return;
    if (out->tmp_path) {
        if (out->stream)
            fclose(out->stream);
        g_unlink(out->tmp_path);
    }
    outfile_release(out);
}

bool strata_write_file_atomic(const char *path, const char *data, gsize len, GError **err)
{
    strata_outfile *out = strata_outfile_open(path, err);
    if (out == NULL)
        return false;
    if (len > 0 && fwrite(data, 1, len, out->stream) != len) {
        int e = errno;
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write '%s': %s", path,
                    g_strerror(e));
        strata_outfile_abort(out);
        return false;
    }
    return strata_outfile_commit(out, err);
}

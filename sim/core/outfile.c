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
 *  3. the target path is touched only by the final rename(), except for an
 *     existing target that is not a regular file (a device such as /dev/null,
 *     a FIFO): it is opened and written in place (`direct`), since renaming
 *     a temporary over it would replace the device with a plain file;
 *  4. an outfile opened in a set is in the set's list from open until
 *     commit or abort; the set's mutex guards that list, the `discarded`
 *     flag and every rename of a member, so a discard and a commit never
 *     interleave: either the file was renamed before, or it never will be.
 */
#include "core/outfile.h"
#include "core/error.h"
#include "core/gzstream.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

struct strata_outfile {
    char *path;     /* target as given (for messages) */
    char *target;   /* path with its symbolic links followed: what is written */
    char *tmp_path; /* NULL for stdout */
    FILE *stream;
    FILE *gz;                /* compresses into stream for a ".gz" path; NULL: none */
    strata_outfile_set *set; /* NULL: none */
    bool direct;             /* written in place: an existing non-regular target */
};

struct strata_outfile_set {
    GMutex lock;
    GPtrArray *open; /* strata_outfile *, borrowed */
    bool discarded;
};

strata_outfile_set *strata_outfile_set_new(void)
{
    strata_outfile_set *set = g_new0(strata_outfile_set, 1);
    g_mutex_init(&set->lock);
    set->open = g_ptr_array_new();
    return set;
}

void strata_outfile_set_free(strata_outfile_set *set)
{
    if (set == NULL)
        return;
    while (set->open->len > 0)
        strata_outfile_abort(g_ptr_array_index(set->open, set->open->len - 1));
    g_ptr_array_unref(set->open);
    g_mutex_clear(&set->lock);
    g_free(set);
}

void strata_outfile_set_discard(strata_outfile_set *set)
{
    g_mutex_lock(&set->lock);
    set->discarded = true;
    for (guint i = 0; i < set->open->len; i++) {
        const strata_outfile *o = g_ptr_array_index(set->open, i);
        if (o->tmp_path)
            unlink(o->tmp_path);
    }
    g_mutex_unlock(&set->lock);
}

static void set_enter(strata_outfile_set *set, strata_outfile *out)
{
    if (set == NULL)
        return;
    g_mutex_lock(&set->lock);
    g_ptr_array_add(set->open, out);
    out->set = set;
    g_mutex_unlock(&set->lock);
}

/* Creates out's temporary; in a set, under its lock and entered in the
 * same step, so that a discard sees every temporary that exists. */
static int make_temp(strata_outfile_set *set, strata_outfile *out)
{
    if (set == NULL)
        return g_mkstemp_full(out->tmp_path, O_WRONLY | O_CLOEXEC, 0666);
    g_mutex_lock(&set->lock);
    int fd = -1;
    if (set->discarded)
        errno = EINTR;
    else
        fd = g_mkstemp_full(out->tmp_path, O_WRONLY | O_CLOEXEC, 0666);
    if (fd >= 0) {
        g_ptr_array_add(set->open, out);
        out->set = set;
    }
    g_mutex_unlock(&set->lock);
    return fd;
}

static void set_leave(strata_outfile *out)
{
    if (out->set == NULL)
        return;
    g_mutex_lock(&out->set->lock);
    g_ptr_array_remove_fast(out->set->open, out);
    g_mutex_unlock(&out->set->lock);
    out->set = NULL;
}

/* rename() under the set's lock, refused once the set was discarded. */
static int commit_rename(strata_outfile *out)
{
    if (out->set == NULL)
        return g_rename(out->tmp_path, out->target) == 0 ? 0 : errno;
    g_mutex_lock(&out->set->lock);
    int e = out->set->discarded ? EINTR : g_rename(out->tmp_path, out->target) == 0 ? 0 : errno;
    g_mutex_unlock(&out->set->lock);
    return e;
}

static bool is_stdout(const char *path) { return strcmp(path, "-") == 0; }

/* An existing target that is not a regular file (a character device, a FIFO). */
static bool is_special(const char *path)
{
    GStatBuf st;
    return g_stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

/* Opens a special target for writing in place; NULL with err set on failure. */
static strata_outfile *open_direct(strata_outfile_set *set, strata_outfile *out, GError **err)
{
    out->stream = fopen(out->target, "w");
    if (out->stream == NULL) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write '%s': %s", out->path,
                    g_strerror(errno));
        strata_outfile_abort(out);
        return NULL;
    }
    out->direct = true;
    set_enter(set, out);
    return out;
}

/* path with every symbolic link along its last component followed (g_free),
 * as an editor writes through a link: a dangling link names the file to
 * create. Links are followed at most 40 times (the kernel's own limit);
 * beyond, path itself (the write then fails as the kernel says). */
static char *follow_links(const char *path)
{
    char *at = g_strdup(path);
    for (int hops = 0; hops < 40; hops++) {
        GStatBuf st;
        if (g_lstat(at, &st) != 0 || !S_ISLNK(st.st_mode))
            return at;
        char *link = g_file_read_link(at, NULL);
        if (link == NULL)
            return at;
        char *next = link;
        if (!g_path_is_absolute(link)) {
            char *dir = g_path_get_dirname(at);
            next = g_build_filename(dir, link, NULL);
            g_free(dir);
            g_free(link);
        }
        g_free(at);
        at = next;
    }
    g_free(at);
    return g_strdup(path);
}

/* A write over a file-size limit (ulimit -f) must fail with EFBIG, to be
 * reported and its temporary removed, instead of killing the process with
 * SIGXFSZ (whose default action leaves the temporary behind). Setting the
 * disposition is idempotent; strata has no handler of its own for it. */
static void write_errors_not_signals(void) { signal(SIGXFSZ, SIG_IGN); }

strata_outfile *strata_outfile_open(const char *path, GError **err)
{
    return strata_outfile_open_in(NULL, path, err);
}

strata_outfile *strata_outfile_open_in(strata_outfile_set *set, const char *path, GError **err)
{
    if (path == NULL || *path == '\0') {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "empty output path");
        return NULL;
    }
    write_errors_not_signals();
    strata_outfile *out = g_new0(strata_outfile, 1);
    out->path = g_strdup(path);
    out->target = is_stdout(path) ? g_strdup(path) : follow_links(path);
    if (is_stdout(path)) {
        out->stream = stdout;
        set_enter(set, out);
        return out;
    }
    if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write '%s': it is a directory",
                    path);
        strata_outfile_abort(out);
        return NULL;
    }
    if (is_special(out->target))
        return open_direct(set, out, err);
    char *dir = g_path_get_dirname(out->target);
    char *base = g_path_get_basename(out->target);
    char *name = g_strdup_printf(".%s.XXXXXX", base);
    out->tmp_path = g_build_filename(dir, name, NULL);
    g_free(dir);
    g_free(base);
    g_free(name);

    int fd = make_temp(set, out);
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

FILE *strata_outfile_stream(strata_outfile *out) { return out->gz ? out->gz : out->stream; }

bool strata_outfile_gzip(strata_outfile *out, GError **err)
{
    if (!strata_gzip_path(out->path) || out->gz)
        return true;
    out->gz = strata_gzip_stream(out->stream);
    if (out->gz == NULL) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write '%s': cannot start gzip: %s", out->path,
                    g_strerror(errno));
        return false;
    }
    return true;
}

/* Ends the gzip stream, if any, into the file; false when a write failed. */
static bool end_gzip(strata_outfile *out)
{
    if (out->gz == NULL)
        return true;
    bool ok = !ferror(out->gz);
    if (fclose(out->gz) != 0)
        ok = false;
    out->gz = NULL;
    return ok;
}

const char *strata_outfile_path(const strata_outfile *out) { return out->path; }

static void outfile_release(strata_outfile *out)
{
    set_leave(out);
    g_free(out->path);
    g_free(out->target);
    g_free(out->tmp_path);
    g_free(out);
}

#ifndef NDEBUG
/* Invariants 1-3 as far as the object knows them (O(1)): "-" is stdout
 * with no temporary; any other path has a temporary or is written in
 * place, never both. */
static bool outfile_ok(const strata_outfile *out)
{
    if (is_stdout(out->path))
        return out->stream == stdout && out->tmp_path == NULL && !out->direct; /* invariant 2 */
    return out->stream != NULL && out->stream != stdout
        && (out->tmp_path != NULL) != out->direct; /* invariants 1, 3 */
}
#endif

bool strata_outfile_commit(strata_outfile *out, GError **err)
{
    assert(outfile_ok(out)); /* invariants 1-3 */
    bool gz_ok = end_gzip(out);
    if (out->tmp_path == NULL) { /* stdout, or a special file written in place */
        bool ok = gz_ok && fflush(out->stream) == 0 && !ferror(out->stream);
        if (out->direct && fclose(out->stream) != 0)
            ok = false;
        if (!ok)
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write %s%s%s: %s",
                        out->direct ? "'" : "", out->direct ? out->path : "standard output",
                        out->direct ? "'" : "", g_strerror(errno));
        outfile_release(out);
        return ok;
    }
    int e = gz_ok ? 0 : EIO;
    if (e == 0 && (fflush(out->stream) != 0 || ferror(out->stream)))
        e = errno ? errno : EIO;
    if (e == 0 && fsync(fileno(out->stream)) != 0 && errno != EINVAL)
        e = errno;
    if (fclose(out->stream) != 0 && e == 0)
        e = errno;
    out->stream = NULL;
    if (e == 0)
        e = commit_rename(out);
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
    set_leave(out);
    end_gzip(out);
    if (out->direct && out->stream)
        fclose(out->stream);
    if (out->tmp_path) {
        if (out->stream)
            fclose(out->stream);
        g_unlink(out->tmp_path);
    }
    outfile_release(out);
}

bool strata_outfile_check_input(const strata_outfile *out, const char *input, GError **err)
{
    GStatBuf in, target;
    if (out == NULL || input == NULL || out->tmp_path == NULL || g_stat(input, &in) != 0 ||
        g_stat(out->target, &target) != 0)
        return true; /* stdout, a device, no input, or a target that does not exist yet */
    if (in.st_dev != target.st_dev || in.st_ino != target.st_ino)
        return true;
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "cannot write '%s': it is the input '%s'; refusing to overwrite an input",
                out->path, input);
    return false;
}

bool strata_write_file_atomic(const char *path, const char *data, gsize len, GError **err)
{
    strata_outfile *out = strata_outfile_open(path, err);
    if (out == NULL)
        return false;
    if (len > 0 && fwrite(data, 1, len, strata_outfile_stream(out)) != len) {
        int e = errno;
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write '%s': %s", path,
                    g_strerror(e));
        strata_outfile_abort(out);
        return false;
    }
    return strata_outfile_commit(out, err);
}

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
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
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
    bool prepared;           /* written whole and closed: commit only renames */
    char *lock_path;         /* the one-writer lock beside the target; NULL: none */
    int lock_fd;
};

/* An input of the set's command: its file (links followed). */
typedef struct input_file {
    dev_t dev;
    ino_t ino;
    char *path;
} input_file;

struct strata_outfile_set {
    GMutex lock;
    GPtrArray *open; /* strata_outfile *, borrowed */
    GArray *inputs;  /* input_file */
    char *lock_path; /* strata_outfile_set_lock's, or NULL */
    int lock_fd;
    bool discarded;
};

strata_outfile_set *strata_outfile_set_new(void)
{
    strata_outfile_set *set = g_new0(strata_outfile_set, 1);
    g_mutex_init(&set->lock);
    set->open = g_ptr_array_new();
    set->inputs = g_array_new(FALSE, FALSE, sizeof(input_file));
    set->lock_fd = -1;
    return set;
}

static void unlock_path(char **path, int *fd);

void strata_outfile_set_free(strata_outfile_set *set)
{
    if (set == NULL)
        return;
    while (set->open->len > 0)
        strata_outfile_abort(g_ptr_array_index(set->open, set->open->len - 1));
    g_ptr_array_unref(set->open);
    for (guint i = 0; i < set->inputs->len; i++)
        g_free(g_array_index(set->inputs, input_file, i).path);
    g_array_unref(set->inputs);
    unlock_path(&set->lock_path, &set->lock_fd);
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
        if (o->lock_path)
            unlink(o->lock_path);
    }
    if (set->lock_path)
        unlink(set->lock_path);
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

/* Takes out's one-writer lock unless its set's covers it (wait_lock, below). */
static bool lock_target(strata_outfile_set *set, strata_outfile *out, GError **err);

/* Takes out's lock and creates its temporary; in a set, under its lock and
 * entered in the same step, so that a discard sees every temporary and
 * lock that exists. -1 with err set on failure (nothing left). */
static int make_temp(strata_outfile_set *set, strata_outfile *out, GError **err)
{
    if (!lock_target(set, out, err)) /* on success, set's mutex is held */
        return -1;
    int fd = g_mkstemp_full(out->tmp_path, O_WRONLY | O_CLOEXEC, 0666);
    if (fd < 0)
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write '%s': %s", out->path, g_strerror(errno));
    if (fd >= 0 && set) {
        g_ptr_array_add(set->open, out);
        out->set = set;
    }
    if (set)
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

/* The name of a file beside `base` in dir: ".BASE" SUFFIX, within the
 * directory's file-name limit (NAME_MAX): a base too long for it is cut
 * and followed by "~" and 8 hex digits of its hash, so that two long names
 * that share a beginning keep apart (g_free). */
static char *side_path(const char *dir, const char *base, const char *suffix)
{
    long max = pathconf(dir, _PC_NAME_MAX);
    size_t limit = max > 0 ? (size_t)max : NAME_MAX;
    size_t need = 1 + strlen(base) + strlen(suffix);
    char *name;
    if (need <= limit)
        name = g_strconcat(".", base, suffix, NULL);
    else {
        size_t keep = limit > strlen(suffix) + 11 ? limit - strlen(suffix) - 11 : 0;
        name = g_strdup_printf(".%.*s~%08x%s", (int)keep, base, g_str_hash(base), suffix);
    }
    char *path = g_build_filename(dir, name, NULL);
    g_free(name);
    return path;
}

/* Tries the one-writer lock of `target` (a file, or the prefix of a set
 * of files): an exclusive flock on ".BASE.lock" beside it, created if need
 * be. 1: taken; 0: another process holds it (err untouched); -1: err set.
 * The lock file is unlinked when released; a process that locked a file
 * just unlinked by its holder finds it no longer at the path and tries
 * again. */
static int try_lock(const char *target, const char *shown, char **lock, int *fd, GError **err)
{
    char *dir = g_path_get_dirname(target), *base = g_path_get_basename(target);
    char *path = side_path(dir, base, ".lock");
    g_free(dir);
    g_free(base);
    for (int tries = 0; tries < 100; tries++) {
        int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (f < 0) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write '%s': %s", shown, g_strerror(errno));
            g_free(path);
            return -1;
        }
        if (flock(f, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            close(f);
            g_free(path);
            if (e == EWOULDBLOCK)
                return 0;
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write '%s': %s", shown, g_strerror(e));
            return -1;
        }
        struct stat held, now;
        if (fstat(f, &held) == 0 && stat(path, &now) == 0 && held.st_dev == now.st_dev &&
            held.st_ino == now.st_ino) {
            *lock = path;
            *fd = f;
            return 1;
        }
        close(f); /* unlinked by the holder in between: take the new one */
    }
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write '%s': its lock '%s' keeps changing", shown, path);
    g_free(path);
    return -1;
}

/* How long a writer waits for another that holds its path's lock (they
 * take turns: the later one's file replaces the earlier's whole). */
#define LOCK_WAIT_MS (10 * 60 * 1000)
#define LOCK_POLL_MS 20

/* try_lock() under set's mutex (none: NULL), retried while another process
 * holds the lock, the mutex let go between tries so that a discard is never
 * kept waiting. With the mutex held on a true return. */
static bool wait_lock(strata_outfile_set *set, const char *target, const char *shown, char **lock, int *fd,
                      GError **err)
{
    for (unsigned waited = 0;; waited += LOCK_POLL_MS) {
        if (set)
            g_mutex_lock(&set->lock);
        if (set && set->discarded) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write '%s': %s", shown, g_strerror(EINTR));
            g_mutex_unlock(&set->lock);
            return false;
        }
        int r = try_lock(target, shown, lock, fd, err);
        if (r != 0) {
            if (r < 0 && set)
                g_mutex_unlock(&set->lock);
            return r > 0;
        }
        if (set)
            g_mutex_unlock(&set->lock);
        if (waited >= LOCK_WAIT_MS) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO,
                        "cannot write '%s': another process has held it for %d minutes (one writer per path)", shown,
                        LOCK_WAIT_MS / 60000);
            return false;
        }
        g_usleep(LOCK_POLL_MS * 1000);
    }
}

static void unlock_path(char **path, int *fd)
{
    if (*path) {
        unlink(*path);
        g_free(*path);
        *path = NULL;
    }
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

void strata_outfile_set_input(strata_outfile_set *set, const char *path)
{
    GStatBuf st;
    if (set == NULL || path == NULL || strcmp(path, "-") == 0 || g_stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return;
    input_file in = {st.st_dev, st.st_ino, g_strdup(path)};
    g_mutex_lock(&set->lock);
    g_array_append_val(set->inputs, in);
    g_mutex_unlock(&set->lock);
}

/* The input of set that out's target is (links followed), or NULL. */
static const char *input_at(strata_outfile_set *set, const char *target)
{
    GStatBuf st;
    if (set == NULL || g_stat(target, &st) != 0)
        return NULL;
    const char *hit = NULL;
    g_mutex_lock(&set->lock);
    for (guint i = 0; i < set->inputs->len && !hit; i++) {
        const input_file *in = &g_array_index(set->inputs, input_file, i);
        if (in->dev == st.st_dev && in->ino == st.st_ino)
            hit = in->path;
    }
    g_mutex_unlock(&set->lock);
    return hit;
}

/* One writer per path: the set's lock covers its members (a set of files
 * under one prefix); any other output takes its own, waiting its turn. On
 * true the set's mutex is held (make_temp registers the temporary under it). */
static bool lock_target(strata_outfile_set *set, strata_outfile *out, GError **err)
{
    if (set) {
        g_mutex_lock(&set->lock);
        if (set->lock_path && !set->discarded)
            return true; /* held */
        if (set->lock_path) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write '%s': %s", out->path, g_strerror(EINTR));
            g_mutex_unlock(&set->lock);
            return false;
        }
        g_mutex_unlock(&set->lock);
    }
    return wait_lock(set, out->target, out->path, &out->lock_path, &out->lock_fd, err);
}

bool strata_outfile_set_lock(strata_outfile_set *set, const char *prefix, GError **err)
{
    if (set->lock_path)
        return true;
    char *target = follow_links(prefix);
    /* under the set's mutex: a discard sees the lock file once it exists */
    bool ok = wait_lock(set, target, prefix, &set->lock_path, &set->lock_fd, err);
    if (ok)
        g_mutex_unlock(&set->lock);
    g_free(target);
    return ok;
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
    out->lock_fd = -1;
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
    const char *input = input_at(set, out->target);
    if (input) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "cannot write '%s': it is the input '%s'; refusing to overwrite an input", path, input);
        strata_outfile_abort(out);
        return NULL;
    }
    if (is_special(out->target))
        return open_direct(set, out, err);
    char *dir = g_path_get_dirname(out->target);
    char *base = g_path_get_basename(out->target);
    out->tmp_path = side_path(dir, base, ".XXXXXX");
    g_free(dir);
    g_free(base);

    int fd = make_temp(set, out, err);
    if (fd < 0) {
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
    unlock_path(&out->lock_path, &out->lock_fd);
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

/* Ends out's temporary: gzip ended, flushed, fsynced, closed. 0 or errno. */
static int finish_temp(strata_outfile *out)
{
    int e = end_gzip(out) ? 0 : EIO;
    if (e == 0 && (fflush(out->stream) != 0 || ferror(out->stream)))
        e = errno ? errno : EIO;
    if (e == 0 && fsync(fileno(out->stream)) != 0 && errno != EINVAL)
        e = errno;
    if (fclose(out->stream) != 0 && e == 0)
        e = errno;
    out->stream = NULL;
    return e;
}

/* out's temporary failed with e: removed, err set, out freed. */
static bool commit_failed(strata_outfile *out, int e, GError **err)
{
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write '%s': %s", out->path, g_strerror(e));
    g_unlink(out->tmp_path);
    outfile_release(out);
    return false;
}

bool strata_outfile_prepare(strata_outfile *out, GError **err)
{
    if (out->tmp_path == NULL || out->prepared)
        return true;
    int e = finish_temp(out);
    if (e != 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write '%s': %s", out->path, g_strerror(e));
        return false; /* the caller aborts: the temporary goes */
    }
    out->prepared = true;
    return true;
}

bool strata_outfile_commit(strata_outfile *out, GError **err)
{
    assert(out->prepared || outfile_ok(out)); /* invariants 1-3 */
    if (out->tmp_path == NULL) { /* stdout, or a special file written in place */
        bool ok = end_gzip(out) && fflush(out->stream) == 0 && !ferror(out->stream);
        if (out->direct && fclose(out->stream) != 0)
            ok = false;
        if (!ok)
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write %s%s%s: %s",
                        out->direct ? "'" : "", out->direct ? out->path : "standard output",
                        out->direct ? "'" : "", g_strerror(errno));
        outfile_release(out);
        return ok;
    }
    int e = out->prepared ? 0 : finish_temp(out);
    if (e == 0)
        e = commit_rename(out);
    if (e != 0)
        return commit_failed(out, e, err);
    outfile_release(out);
    return true;
}

bool strata_outfile_commit_all(strata_outfile **outs, size_t n, GError **err)
{
    strata_outfile_set *set = n > 0 ? outs[0]->set : NULL;
    if (set)
        g_mutex_lock(&set->lock);
    int e = set && set->discarded ? EINTR : 0;
    size_t done = 0; /* renamed */
    for (; e == 0 && done < n; done++) {
        assert(outs[done]->prepared && outs[done]->set == set);
        if (g_rename(outs[done]->tmp_path, outs[done]->target) != 0)
            break;
    }
    if (e == 0 && done < n)
        e = errno;
    if (set)
        g_mutex_unlock(&set->lock);
    if (e != 0) { /* outs[done] failed: it and the rest are removed */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write '%s': %s", outs[done]->path, g_strerror(e));
        for (size_t i = done; i < n; i++)
            strata_outfile_abort(outs[i]);
    }
    for (size_t i = 0; i < done; i++)
        outfile_release(outs[i]);
    return e == 0;
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
    return strata_write_file_atomic_in(NULL, path, data, len, err);
}

bool strata_write_file_atomic_in(strata_outfile_set *set, const char *path, const char *data, gsize len,
                                 GError **err)
{
    strata_outfile *out = strata_outfile_open_in(set, path, err);
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

/*
 * engine_spill.c: the temporary file of records of tapes that keep part of
 * their bytes on disk (engine_spill.h).
 *
 * A record is written in one pwritev() (header and bytes) at the end of
 * the bytes in use; a header's link is set again by a pwrite() of its
 * first eight bytes. After a short write the rest is written on its own,
 * so that a full disk or a file size limit shows as its errno (ENOSPC,
 * EFBIG); an interrupted call is retried.
 *
 * Giving the disk back (engine_spill.h, invariant 4): a record read for
 * the last time (engine_spill_release) has the file system blocks that
 * lie wholly inside it punched out, fallocate(FALLOC_FL_PUNCH_HOLE |
 * FALLOC_FL_KEEP_SIZE), as fallocate(2) documents for freeing a range in
 * the middle of a file; the blocks it shares with its neighbours stay (a
 * neighbour may still be read). The block is the file's st_blksize (the
 * file system's block on ext4, xfs and tmpfs). Where the file system
 * refuses (EOPNOTSUPP, or any failure: no byte is lost by one), punching
 * stops for the file's life, silently. Once every record is let go the
 * file is truncated to 0 (ftruncate), which every file system does.
 */
#include "engine/engine_spill.h"
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

struct engine_spill {
    const char *what; /* what it holds, for its name and messages (static) */
    int fd;           /* the file (unlinked), -1 until the first append */
    uint64_t end;     /* its bytes in use: the next record goes there */
    uint64_t live;    /* records not let go (invariant 2) */
    uint64_t bytes;   /* written in all */
    uint64_t block;   /* the file's st_blksize: what a punch frees is whole ones */
    bool no_punch;    /* the file system refused a punch: none is tried again */
    char *failure;    /* invariant 3: NULL while none */
};

engine_spill *engine_spill_new(const char *what)
{
    engine_spill *s = g_new0(engine_spill, 1);
    s->what = what;
    s->fd = -1;
    return s;
}

void engine_spill_free(engine_spill *s)
{
    if (!s)
        return;
    if (s->fd >= 0)
        close(s->fd);
    g_free(s->failure);
    g_free(s);
}

/* The folder the file goes in: TMPDIR as it is now (GLib's
 * g_get_tmp_dir() reads it once per process), else GLib's choice. */
static const char *spill_folder(void)
{
    const char *dir = g_getenv("TMPDIR");
    return dir && *dir ? dir : g_get_tmp_dir();
}

/* Notes the failure of `doing` (errno's error) and
 * returns false (invariant 3: the first failure is the one kept). */
static bool spill_fail(engine_spill *s, const char *doing, int error)
{
    if (!s->failure)
        s->failure = g_strdup_printf("cannot %s the temporary file of the %s in '%s' (%s)", doing, s->what,
                                     spill_folder(), g_strerror(error));
    return false;
}

/* The file, made and unlinked on the first append. */
static bool spill_open(engine_spill *s)
{
    if (s->fd >= 0)
        return true;
    char *pattern = g_build_filename(spill_folder(), "strata-spill-XXXXXX", NULL);
    s->fd = g_mkstemp_full(pattern, O_RDWR | O_CLOEXEC, 0600);
    int error = errno;
    struct stat st;
    if (s->fd >= 0) {
        g_unlink(pattern);
        s->block = fstat(s->fd, &st) == 0 && st.st_blksize > 0 ? (uint64_t)st.st_blksize : 4096;
    }
    g_free(pattern);
    return s->fd >= 0 || spill_fail(s, "create", error);
}

/* All n bytes at offset off, written (write) or read. */
static bool spill_io(engine_spill *s, bool write, void *buf, size_t n, uint64_t off)
{
    uint8_t *p = buf;
    while (n > 0) {
        ssize_t k = write ? pwrite(s->fd, p, n, (off_t)off) : pread(s->fd, p, n, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) /* 0: a write that takes nothing (a full disk), a read past the end (lost bytes) */
            return spill_fail(s, write ? "write" : "read", k < 0 ? errno : (write ? ENOSPC : EIO));
        p += k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return true;
}

bool engine_spill_append(engine_spill *s, uint64_t link, const void *data, size_t n, uint64_t *off)
{
    if (s->failure || !spill_open(s))
        return false;
    uint64_t head[2] = {link, n};
    struct iovec v[2] = {{head, sizeof(head)}, {(void *)data, n}};
    ssize_t k;
    while ((k = pwritev(s->fd, v, 2, (off_t)s->end)) < 0 && errno == EINTR)
        ;
    if (k < 0)
        return spill_fail(s, "write", errno);
    /* A short write (a full disk, a file size limit): the rest, whose
     * failure says why (errno), or which goes through after all. */
    size_t done = (size_t)k, h = MIN(done, sizeof(head));
    if (done < sizeof(head) + n &&
        (!spill_io(s, true, (uint8_t *)head + h, sizeof(head) - h, s->end + h) ||
         !spill_io(s, true, (uint8_t *)data + (done - h), n - (done - h), s->end + sizeof(head) + (done - h))))
        return false;
    *off = s->end;
    s->end += sizeof(head) + n;
    s->bytes += sizeof(head) + n;
    s->live++;
    return true;
}

bool engine_spill_set_link(engine_spill *s, uint64_t off, uint64_t link)
{
    return !s->failure && spill_io(s, true, &link, sizeof(link), off);
}

bool engine_spill_read_header(engine_spill *s, uint64_t off, uint64_t *link, uint64_t *n)
{
    uint64_t head[2];
    if (s->failure || s->fd < 0 || !spill_io(s, false, head, sizeof(head), off))
        return false;
    *link = head[0];
    *n = head[1];
    return true;
}

bool engine_spill_read_data(engine_spill *s, uint64_t off, void *data, size_t n)
{
    return !s->failure && s->fd >= 0 && spill_io(s, false, data, n, off + 2 * sizeof(uint64_t));
}

void engine_spill_let_go(engine_spill *s, uint64_t n)
{
    s->live -= n;
    if (s->live > 0)
        return;
    s->end = 0; /* invariant 2 */
    if (s->fd >= 0 && ftruncate(s->fd, 0) != 0) {
        /* invariant 4: nothing in it is read any more; a failure loses nothing */
    }
}

/* Punches out the whole blocks of [off, off + len), where the file system
 * can (invariant 4); after one refusal, none is tried again. */
static void spill_punch(engine_spill *s, uint64_t off, uint64_t len)
{
    uint64_t from = (off + s->block - 1) / s->block * s->block, to = (off + len) / s->block * s->block;
    if (s->fd < 0 || s->no_punch || to <= from)
        return;
    int k;
    while ((k = fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)from, (off_t)(to - from))) < 0 &&
           errno == EINTR)
        ;
    s->no_punch = k != 0; /* EOPNOTSUPP (or any failure): the file keeps its blocks, as before */
}

void engine_spill_release(engine_spill *s, uint64_t off, uint64_t n)
{
    if (s->live > 1) /* the last one: the truncation frees the whole file */
        spill_punch(s, off, 2 * sizeof(uint64_t) + n);
    engine_spill_let_go(s, 1);
}

uint64_t engine_spill_allocated(const engine_spill *s)
{
    struct stat st;
    return s->fd >= 0 && fstat(s->fd, &st) == 0 ? (uint64_t)st.st_blocks * 512 : 0;
}

uint64_t engine_spill_bytes(const engine_spill *s)
{
    return s->bytes;
}

const char *engine_spill_failure(const engine_spill *s)
{
    return s->failure;
}

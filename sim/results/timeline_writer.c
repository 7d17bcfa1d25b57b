/*
 * timeline_writer.c: the pending output the timeline's writers share
 * (timeline_writer.h): bytes gathered in a buffer and written out when it
 * is full, so that no event calls into stdio.
 *
 * Into a file (out has a descriptor), a flush writes the whole chunks of
 * the buffer with write(2) and moves the rest to the front for the next
 * (the buffer holds a chunk and a 32nd, so the rest is at most that 32nd
 * while events are smaller), so every write is a multiple of the chunk at
 * an offset that is one:
 * the page cache can then hold the file in large folios (ext4 allocates a
 * folio as large as the write and the offset's alignment allow,
 * mm/filemap.c __filemap_get_folio with fgf_set_order), where stdio's
 * 4 KiB buffer split each hand-over into a 4,096-byte write and a 61,440-
 * byte one at an unaligned offset, each page a folio of its own. Writing
 * 66.6 MB and fsyncing it (this machine, 6.18 kernel, ext4): 40 ms of CPU
 * as stdio wrote it, 36 ms in unaligned write(2)s of about 64 KiB, 26 ms
 * in aligned 64 KiB ones (docs/engine.md, Speed). The stream is flushed
 * first, so what stdio held goes before; nothing else writes to it
 * afterwards until the timeline's finish.
 *
 * Into a regular file whose file system takes O_DIRECT (fcntl F_SETFL;
 * ext4 does), the whole chunks are 1 MiB and go to the disk from the
 * buffer (page-aligned) without the page cache: the kernel neither
 * allocates, charges and copies into the cache's folios nor writes them
 * back at the commit's fsync (mm/filemap.c generic_perform_write against
 * fs/iomap/direct-io.c, which pins the buffer's pages and submits them).
 * Measured on this machine (ext4 on virtio-blk, 6.18), the 66.6 MB
 * Perfetto timeline of `gen transformer layers=3000`: write(2) and fsync
 * 19.2 ms of CPU buffered in 64 KiB chunks, 7.2 ms direct in 1 MiB ones
 * (64 KiB direct writes cost 22 to 40 ms, 256 KiB 14 ms, 4 MiB 11 ms);
 * the wall time of writes and fsync together is the same (about 43 ms),
 * since the buffered bytes wait for the disk at the fsync. The last
 * partial chunk is written after O_DIRECT is cleared, through the cache.
 * Where O_DIRECT is refused (fcntl's EINVAL: file systems without direct
 * I/O; a write's EINVAL: an offset the device cannot take, such as a file
 * stdio had started unaligned), the writes go through the cache in 64 KiB
 * chunks as before, silently. A pipe is never set O_DIRECT (its packet
 * mode).
 *
 * Invariants: the bytes reach out in the order they were taken; after a
 * flush into a file, len < chunk; the descriptor has O_DIRECT only
 * between init and finish (or free), while o->direct.
 */
#include "results/timeline_writer.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *aligned_buffer(size_t cap)
{
    void *p = NULL;
    if (posix_memalign(&p, STRATA_TL_ALIGN, cap) != 0)
        g_error("timeline: out of memory (%zu bytes)", cap);
    return p;
}

/* Sets O_DIRECT on fd, a regular file (a pipe would take the flag as its
 * packet mode): true when the file system took it (tmpfs and some others
 * refuse it with EINVAL, and the writes then go through the page cache). */
static bool set_direct(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    int flags = fcntl(fd, F_GETFL);
    return flags >= 0 && fcntl(fd, F_SETFL, flags | O_DIRECT) == 0;
}

/* Back to the page cache: for the last partial chunk, or because a write
 * with O_DIRECT was refused (EINVAL: an offset, length or memory the file
 * system cannot take directly). Writes go in buffered chunks from then. */
static void clear_direct(strata_tl_out *o)
{
    if (!o->direct)
        return;
    o->direct = false;
    o->chunk = MIN(o->chunk, (size_t)STRATA_TL_CHUNK);
    int flags = fcntl(o->fd, F_GETFL);
    if (flags >= 0)
        (void)fcntl(o->fd, F_SETFL, flags & ~O_DIRECT);
}

void strata_tl_out_init_as(strata_tl_out *o, FILE *out, size_t chunk, bool direct)
{
    g_assert(chunk && (chunk & (chunk - 1)) == 0);
    int fd = fileno(out);
    if (fd >= 0 && fflush(out) != 0)
        fd = -1;
    direct = direct && fd >= 0 && chunk % STRATA_TL_ALIGN == 0 && set_direct(fd);
    size_t cap = chunk + chunk / 32; /* a flush leaves at most the slack to move to the front */
    *o = (strata_tl_out){
        .out = out, .fd = fd, .direct = direct, .buf = aligned_buffer(cap), .cap = cap, .chunk = chunk};
}

void strata_tl_out_init(strata_tl_out *o, FILE *out)
{
    strata_tl_out_init_as(o, out, STRATA_TL_DIRECT_CHUNK, true);
    if (!o->direct && o->chunk != STRATA_TL_CHUNK) {
        strata_tl_out_free(o);
        strata_tl_out_init_as(o, out, STRATA_TL_CHUNK, false);
    }
}

void strata_tl_out_grow(strata_tl_out *o, size_t n)
{
    size_t cap = o->len + n;
    char *buf = aligned_buffer(cap);
    memcpy(buf, o->buf, o->len);
    free(o->buf);
    o->buf = buf;
    o->cap = cap;
}

/* Writes n bytes at p to o's descriptor. A write refused with EINVAL
 * while O_DIRECT is set is tried again through the page cache. When
 * write(2) fails otherwise, these bytes and all later ones go through
 * stdio instead, which meets the same error and marks the stream
 * (ferror), as the engine and core/outfile.c read a failed write. */
static void write_all(strata_tl_out *o, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(o->fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && errno == EINVAL && o->direct) {
            clear_direct(o);
            continue;
        }
        if (k <= 0) {
            clear_direct(o);
            o->fd = -1;
            fwrite(p, 1, n, o->out);
            return;
        }
        p += k;
        n -= (size_t)k;
    }
}

void strata_tl_out_flush(strata_tl_out *o)
{
    if (o->fd < 0) {
        fwrite(o->buf, 1, o->len, o->out);
        o->len = 0;
        return;
    }
    size_t whole = o->len & ~(o->chunk - 1);
    write_all(o, o->buf, whole);
    memmove(o->buf, o->buf + whole, o->len - whole);
    o->len -= whole;
}

bool strata_tl_out_finish(strata_tl_out *o)
{
    if (o->fd >= 0) {
        strata_tl_out_flush(o); /* the whole chunks, as the others */
        if (o->fd >= 0)
            clear_direct(o);
        write_all(o, o->buf, o->len);
        o->len = 0;
    }
    strata_tl_out_flush(o);
    return fflush(o->out) == 0 && !ferror(o->out);
}

void strata_tl_out_free(strata_tl_out *o)
{
    if (o->fd >= 0)
        clear_direct(o);
    free(o->buf);
    o->buf = NULL;
}

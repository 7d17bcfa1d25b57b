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
 * Invariants: the bytes reach out in the order they were taken; after a
 * flush into a file, len < chunk.
 */
#include "results/timeline_writer.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>

void strata_tl_out_init(strata_tl_out *o, FILE *out, size_t chunk)
{
    g_assert(chunk && (chunk & (chunk - 1)) == 0);
    int fd = fileno(out);
    if (fd >= 0 && fflush(out) != 0)
        fd = -1;
    size_t cap = chunk + chunk / 32; /* a flush leaves at most the slack to move to the front */
    *o = (strata_tl_out){.out = out, .fd = fd, .buf = g_malloc(cap), .cap = cap, .chunk = chunk};
}

/* Writes n bytes at p to o's descriptor. When write(2) fails, these bytes
 * and all later ones go through stdio instead, which meets the same error
 * and marks the stream (ferror), as the engine and core/outfile.c read a
 * failed write. */
static void write_all(strata_tl_out *o, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(o->fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
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
        write_all(o, o->buf, o->len);
        o->len = 0;
    }
    strata_tl_out_flush(o);
    return fflush(o->out) == 0 && !ferror(o->out);
}

/*
 * readall.h: a whole file read into memory, bounded: for the readers that
 * parse a file at once (a model's config.json, a MiniMalloc CSV, a file of
 * expert counts, a Chakra or XPlane protobuf).
 *
 * g_file_get_contents reads until the end, so /dev/zero (or any endless
 * device or pipe) was a hang that ended in an allocation failure, and a
 * NUL byte in a text silently ended it there (g_strsplit and json-glib stop
 * at it). This reads through read(2), whatever the file is, and stops:
 *   - past `max` bytes: "FILE: expected WHAT of at most MAX bytes, got more";
 *   - with `text` set, at the first NUL byte, named as the line reader
 *     names it (core/lines.h): "FILE:LINE:COLUMN: expected text, got a NUL
 *     byte", so /dev/zero fails on its first chunk.
 * A file that cannot be opened or read (missing, a directory) is
 * "FILE: cannot read: REASON".
 *
 * strata_spool_fd, for the commands that read an input once (import,
 * validate --against), copies a stream to a temporary with the same kind
 * of bound: pipes and FIFOs were copied without end.
 *
 * Invariants: on success (*data)[*len] == '\0' and *len <= max; with text,
 * no byte of *data before *len is a NUL. Every error is STRATA_ERROR_INPUT.
 */
#ifndef STRATA_READALL_H
#define STRATA_READALL_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* what: the file's kind in the size message ("a config.json"). *data: g_free. */
bool strata_read_all(const char *path, size_t max, bool text, const char *what, char **data, size_t *len,
                     GError **err);

/* A stream read once (standard input, a pipe, a FIFO, a device), copied to
 * an unlinked temporary so that a reader may read it twice: the
 * temporary's descriptor, or -1 with err. At most max bytes (-1: any; a
 * regular file redirected to standard input ends): past it the copy stops,
 * "NAME: a device that yields more than MAX bytes (an endless one, such as
 * /dev/zero?): expected a file, a pipe or a terminal" (device), else
 * "NAME: a pipe or FIFO that yields more than MAX bytes: expected at most
 * MAX through a pipe (give a larger input as a file)", STRATA_ERROR_INPUT.
 * A failed read or write is STRATA_ERROR_IO. */
int strata_spool_fd(int in, const char *name, off_t max, bool device, GError **err);

#endif

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
 * Invariants: on success (*data)[*len] == '\0' and *len <= max; with text,
 * no byte of *data before *len is a NUL. Every error is STRATA_ERROR_INPUT.
 */
#ifndef STRATA_READALL_H
#define STRATA_READALL_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

/* what: the file's kind in the size message ("a config.json"). *data: g_free. */
bool strata_read_all(const char *path, size_t max, bool text, const char *what, char **data, size_t *len,
                     GError **err);

#endif

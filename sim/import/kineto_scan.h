/*
 * kineto_scan.h: streams the events of a Chrome trace JSON file (what
 * torch.profiler writes, plain or gzip) one object at a time.
 *
 * The file is read in fixed-size chunks (through GZlibDecompressor when it
 * starts with the gzip magic bytes). A small scanner follows the JSON
 * nesting and strings byte by byte, finds the top-level `traceEvents`
 * array (or a top-level array: the bare Chrome trace form) and hands the
 * text of each element object to json-glib. Everything else in the file
 * (metadata, deviceProperties) is skipped without being kept.
 *
 * Invariants: memory is bounded by the largest single event (at most
 * STRATA_KINETO_MAX_EVENT bytes, else an error), never by the file; after
 * the events array the scanner reads on to the end of the top-level object
 * (a file cut there is taken: every event was read); a file that ends
 * before the array's end, a file with no events array, a second
 * `traceEvents` key in the top-level object (JSON readers would take the
 * later), an element that is not an object, and an event json-glib
 * rejects are errors naming FILE:LINE. Integer literals
 * of magnitude 2^63 or more are handed to json-glib as floats (it would
 * wrap them into int64), so the decoder sees them as out of range.
 */
#ifndef STRATA_KINETO_SCAN_H
#define STRATA_KINETO_SCAN_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/progress.h"

#define STRATA_KINETO_MAX_EVENT (16u << 20)

typedef struct strata_kineto_scan strata_kineto_scan;

/* Opens `path` (NULL with err when it cannot be read). */
strata_kineto_scan *strata_kineto_scan_open(const char *path, GError **err);

/* The next event: 1 with *event set (valid until the next call), 0 after
 * the last (the top-level object read to its end, or the file ended after
 * the events array), -1 with err. *line is the event's first line. */
int strata_kineto_scan_next(strata_kineto_scan *s, JsonObject **event, uint64_t *line, GError **err);

/* Shows the bytes of the file read so far (compressed bytes for a .gz) on
 * `progress` (borrowed; NULL: none) as "WHAT: [...] 20.0 MiB / 60.0 MiB, NOTE". */
void strata_kineto_scan_set_progress(strata_kineto_scan *s, strata_progress *progress, const char *what,
                                     const char *note);

void strata_kineto_scan_free(strata_kineto_scan *s);

#endif

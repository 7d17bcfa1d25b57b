/*
 * progress.h: one line of progress on a terminal, rewritten in place, for
 * long jobs (the offline planner's height and bound as it searches, a
 * sweep's points, an import's bytes).
 *
 * strata_progress_stream() decides where progress goes: standard error when
 * it is a terminal and the command was not asked to be quiet, else nowhere
 * (NULL). A strata_progress made on NULL prints nothing, so callers need no
 * test of their own. Updates are rate-limited (at most one line every
 * STRATA_PROGRESS_INTERVAL_US), each rewriting the line ("\r", the text,
 * then erase to the end of the line); strata_progress_free() erases the
 * line it left, so what the command prints next starts on a clean line.
 *
 * Invariants: nothing is written when the stream is NULL; the line on the
 * terminal, if any, is the last update shown until the object is freed.
 */
#ifndef STRATA_PROGRESS_H
#define STRATA_PROGRESS_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define STRATA_PROGRESS_INTERVAL_US 200000

typedef struct strata_progress strata_progress;

/* stderr when it is a terminal and !quiet, else NULL. */
FILE *strata_progress_stream(bool quiet);

/* A progress line on `out` (NULL: silent). */
strata_progress *strata_progress_new(FILE *out);
/* Shows the formatted text, unless the last update is too recent. */
void strata_progress_update(strata_progress *p, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* A count against its total, as a bar, the figures and the time left:
 *   "WHAT: [#########.....................] 20.0 MiB / 60.0 MiB (33%), NOTE, ETA 0m04s"
 *   "WHAT: [#######.......................] 6/24 points (25%), NOTE, ETA 1m10s"
 * unit NULL: done and total are bytes, printed as sizes; total 0: unknown
 * (no bar, no percentage, no ETA); note NULL: none. The ETA extrapolates the
 * rate since strata_progress_new(). Cheap when not due: the text is only
 * built when a line is shown. */
void strata_progress_count(strata_progress *p, const char *what, uint64_t done, uint64_t total, const char *unit,
                           const char *note);
/* Erases the line it shows, if any, so that other output starts on a clean
 * line; a later update draws again. */
void strata_progress_clear(strata_progress *p);
/* Erases the line it shows, if any, and frees p (NULL ok). */
void strata_progress_free(strata_progress *p);

#endif

/*
 * timeline.h: a run's spans and memory samples written as a Chrome
 * trace-event / Perfetto JSON timeline, or as a Perfetto protobuf trace,
 * while the run makes them.
 *
 * A timeline is opened on a stream with the results it describes, whose
 * memories, links and streams must already be listed (their names name the
 * tracks); spans and samples are then written one by one as they come, and
 * strata_timeline_finish() ends the file with what only the end knows (the
 * buffers still live, the status and makespan in "otherData"). Memory stays
 * bounded by the live buffers and the tracks' lanes, never by the number of
 * events. strata_results_write_timeline() (results.h) writes finished
 * results the same way.
 *
 * Invariants: the bytes depend only on the sequence of calls; the output is
 * one JSON object once finished, and no valid JSON before (JSON); the
 * formats carry the same slices on the same tracks and lanes, and the same
 * counter values at the same times.
 */
#ifndef STRATA_TIMELINE_H
#define STRATA_TIMELINE_H

#include <stdbool.h>
#include <stdio.h>
#include "results/results.h"

typedef struct strata_timeline strata_timeline;
typedef struct strata_timeline_format strata_timeline_format; /* a row of the table of formats */

/* The format of a timeline written to path, by its extension (a ".gz"
 * after it aside): ".pftrace" and ".perfetto-trace" Perfetto's protobuf
 * trace (TrackEvent packets; timeline_perfetto.c), anything else Chrome
 * trace-event JSON. Never NULL. */
const strata_timeline_format *strata_timeline_format_of(const char *path);
/* The format whose extension path ends in (a ".gz" after it aside), or
 * NULL where it ends in none: the commands refuse such a name (cli/job.h). */
const strata_timeline_format *strata_timeline_format_named(const char *path);
/* The formats' extensions for messages: ".json, .pftrace or
 * .perfetto-trace" (g_free). */
char *strata_timeline_extensions(void);
const char *strata_timeline_format_name(const strata_timeline_format *f); /* "json", "perfetto" */

/* Starts the file on out (borrowed) in format f (NULL: JSON). r (borrowed
 * until finish) names the tracks: one per stream and link when spans will
 * come, one per memory's buffers when samples will. */
strata_timeline *strata_timeline_new_as(const strata_timeline_format *f, FILE *out, const strata_results *r,
                                        bool spans, bool samples);
void strata_timeline_span(strata_timeline *tl, const strata_op_span *s);
void strata_timeline_sample(strata_timeline *tl, const strata_mem_sample *s);
/* Ends the file; false when a write failed (ferror on the stream). */
bool strata_timeline_finish(strata_timeline *tl);
void strata_timeline_free(strata_timeline *tl);
/* strata_results_write_timeline (results.h) onto an open stream, in format f;
 * false when a write failed (ferror). */
bool strata_results_write_timeline_as(const strata_results *r, const strata_timeline_format *f, FILE *out);

#endif

/*
 * timeline.h: a run's spans and memory samples written as a Chrome
 * trace-event / Perfetto JSON timeline while the run makes them.
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
 * one JSON object once finished, and no valid JSON before.
 */
#ifndef STRATA_TIMELINE_H
#define STRATA_TIMELINE_H

#include <stdbool.h>
#include <stdio.h>
#include "results/results.h"

typedef struct strata_timeline strata_timeline;

/* Starts the file on out (borrowed). r (borrowed until finish) names the
 * tracks: one per stream and link when spans will come, one per memory's
 * buffers when samples will. */
strata_timeline *strata_timeline_new(FILE *out, const strata_results *r, bool spans, bool samples);
void strata_timeline_span(strata_timeline *tl, const strata_op_span *s);
void strata_timeline_sample(strata_timeline *tl, const strata_mem_sample *s);
/* Ends the file; false when a write failed (ferror on the stream). */
bool strata_timeline_finish(strata_timeline *tl);
void strata_timeline_free(strata_timeline *tl);

#endif

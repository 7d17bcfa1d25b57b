/*
 * xla_report.h: XLA's memory figures beside strata's for an imported
 * module: XLA's own, summed from the buffer assignment's allocations; the JAX-style accounting of the imported trace (an untimed replay,
 * sim/replay), the live-at-peak totals, and the offline planner's packing of
 * each preallocated-temp allocation against XLA's.
 *
 * Invariant: the text is a function of the figures and the summary only.
 */
#ifndef STRATA_IMPORT_XLA_REPORT_H
#define STRATA_IMPORT_XLA_REPORT_H

#include "import/xla.h"
#include "import/xla_buffers.h"
#include "replay/replay.h"

/* XLA's own figures from the allocations (parameter, live-out, alias,
 * temp, constant, thread-local and total bytes; the largest allocations). */
void strata_xla_allocation_figures(const xla_buffers *b, strata_xla_figures *f);

/* Replays src (rewound) through best-fit on its default memory and fills s. */
bool strata_xla_measure(strata_source *src, strata_replay_summary *s, GError **err);

/* The side-by-side report (g_free). */
char *strata_xla_report(const strata_xla_figures *f, const strata_replay_summary *s);

#endif

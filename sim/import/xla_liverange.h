/*
 * xla_liverange.h: reader of XLA's HloLiveRange::ToString(), the schedule
 * and the live range of every value. XLA appends it to the buffer
 * assignment file (before 2025) or writes it alone to `*-live-range.txt`
 * (with --xla_dump_buffer_assignment_analysis):
 *
 *   HloLiveRange (max 3):
 *     InstructionSequence:
 *       0:paramA
 *       1:paramX
 *       2:multiply
 *     BufferLiveRange:
 *       paramA{}:0-3
 *       multiply{}:2-3
 *     Live ranges at 2 (peak):
 *       multiply{}: 16 bytes (cumulative: 16 bytes)     (older XLA: "multiply: 16 bytes")
 *     Stack trace breakdown for peak usage: 48 bytes
 *       ...                                             (skipped)
 *
 * A range start-end is inclusive: the value is live while the instructions
 * start..end run; `max` is one past the last instruction (entry parameters
 * and outputs live to max). The stated live-at-peak total is the sum of the
 * `Live ranges at T (peak)` entries.
 *
 * Invariants: sequence positions count up from 0; every range satisfies
 * start <= end <= max; a key has one range.
 */
#ifndef STRATA_IMPORT_XLA_LIVERANGE_H
#define STRATA_IMPORT_XLA_LIVERANGE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct xla_liverange xla_liverange;

xla_liverange *xla_liverange_new(void);
void xla_liverange_free(xla_liverange *lr);
/* True once a `HloLiveRange (max T):` header was read. */
bool xla_liverange_started(const xla_liverange *lr);
bool xla_liverange_feed(xla_liverange *lr, const char *file, const char *line, uint64_t lineno,
                        GError **err);

/* At the end of the file holding the live ranges: false (err naming file)
 * when it stops before `BufferLiveRange:`, or holds more instructions than
 * its max. */
bool xla_liverange_finish(const xla_liverange *lr, const char *file, GError **err);
uint64_t xla_liverange_max(const xla_liverange *lr);
uint64_t xla_liverange_n_instructions(const xla_liverange *lr);
const char *xla_liverange_instruction(const xla_liverange *lr, uint64_t i);
/* The range of a value by key NAME{INDEX}; false when the dump has none. */
bool xla_liverange_lookup(const xla_liverange *lr, const char *key, uint64_t *start, uint64_t *end);
/* The stated peak: its time and the sum of its entries; false when absent. */
bool xla_liverange_peak(const xla_liverange *lr, uint64_t *time, uint64_t *bytes);
/* True when the stated entries name values, NAME{INDEX} (with or without
 * `(cumulative: C bytes)`): XLA's newer ToString, which sizes each value by
 * its own shape; false when they name instructions, NAME: the older one,
 * which sized each by its defining instruction's shape (xla_livepeak.h).
 * jaxlib 0.6.0 prints NAME{INDEX} without the cumulative sums, 0.6.2 on
 * with them, 0.5.3 and before NAME. */
bool xla_liverange_peak_by_value(const xla_liverange *lr);
/* Calls fn on every value's range, in no particular order. */
typedef void (*xla_liverange_fn)(void *user, const char *key, uint64_t start, uint64_t end);
void xla_liverange_foreach(const xla_liverange *lr, xla_liverange_fn fn, void *user);

#endif

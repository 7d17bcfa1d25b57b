/*
 * checked.h: a source that passes every op of another source through the
 * trace checker (trace/check.h) on its way, options included.
 *
 * A consumer that only forwards ops (a trace writer, a policy chain) reads
 * through it so that what it forwards is a valid trace: the first op the
 * checker rejects ends the stream with that error, prefixed when a prefix is
 * given (e.g. to say that a policy's output, not the input, is at fault).
 *
 * Invariants: the ops handed out are the inner source's, unchanged; a
 * rewind rewinds the inner source and starts a fresh checker.
 */
#ifndef STRATA_CHECKED_H
#define STRATA_CHECKED_H

#include "trace/check.h"
#include "trace/source.h"

/* Takes `in`. prefix (borrowed, static storage) may be NULL. */
strata_source *strata_checked_source_new(strata_source *in, const char *prefix);
/* The same, its checker told how the names print and what a program
 * refuses (trace/check.h; namer borrowed, static storage; may be NULL). */
strata_source *strata_checked_source_named(strata_source *in, const char *prefix, const strata_namer *namer);

#endif

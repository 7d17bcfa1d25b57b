/*
 * reader.h: streaming reader of `strata-trace 1` text (traces/FORMAT.md).
 *
 * Reads line by line and never holds more than one line and the op made from
 * it. Syntax errors come as STRATA_ERROR_INPUT with "FILE:LINE:COLUMN: what
 * was expected, got 'text'". The reader checks syntax only (one line at a
 * time); the semantic checks that need history (names alive, events
 * recorded) are trace/check.h's.
 *
 * The path "-" reads standard input; it is spooled to a temporary file first
 * so that the source can rewind.
 */
#ifndef STRATA_READER_H
#define STRATA_READER_H

#include "trace/source.h"

/* Opens the trace and reads its version line. */
strata_source *strata_trace_open(const char *path, GError **err);

/* Parse one op line (no comment, not the version line) for tests and tools.
 * Strings in *op point into storage owned by the returned scratch, freed with
 * strata_line_scratch_free(). */
typedef struct strata_line_scratch strata_line_scratch;
strata_line_scratch *strata_parse_op_line(const char *text, const char *origin, uint64_t line,
                                          strata_op *op, GError **err);
void strata_line_scratch_free(strata_line_scratch *s);

#endif

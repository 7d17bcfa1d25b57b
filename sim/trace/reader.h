/*
 * reader.h: streaming reader of `strata-trace 1` text (traces/FORMAT.md).
 *
 * Reads line by line and never holds more than one line and the op made from
 * it. Syntax errors come as STRATA_ERROR_INPUT with "FILE:LINE:COLUMN: what
 * was expected, got 'text'". The reader checks syntax only (one line at a
 * time); the semantic checks that need history (names alive, events
 * recorded) are trace/check.h's. One line's parsing is trace/line.h's
 * (included here for strata_parse_op_line).
 *
 * The path "-" reads standard input; it is spooled to a temporary file first
 * so that the source can rewind.
 */
#ifndef STRATA_READER_H
#define STRATA_READER_H

#include "trace/line.h"
#include "trace/source.h"

/* Opens the trace and reads its version line. */
strata_source *strata_trace_open(const char *path, GError **err);

#endif

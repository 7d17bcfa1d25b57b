/*
 * writer.h: writes ops as `strata-trace 1` text.
 *
 * Invariant (tested): reading back what the writer wrote gives ops equal to
 * the ones written (strata_op_equal), except `line`. Sizes are written in the
 * shortest exact unit, times in a unit that round-trips exactly.
 */
#ifndef STRATA_WRITER_H
#define STRATA_WRITER_H

#include <stdio.h>
#include "trace/source.h"

typedef struct strata_trace_writer strata_trace_writer;

/* Writes the version line, then an optional `# comment` header line. */
strata_trace_writer *strata_trace_writer_new(FILE *out, const char *comment);
bool strata_trace_writer_write(strata_trace_writer *w, const strata_op *op, GError **err);
/* One-line text of an op, without newline (g_free). */
char *strata_op_to_text(const strata_op *op);
void strata_trace_writer_free(strata_trace_writer *w); /* flushes; does not close out */

/* Drain a source onto an open stream (write errors show in ferror(out)).
 * Returns ops written or -1. */
int64_t strata_trace_write_to(strata_source *src, FILE *out, const char *comment, GError **err);
/* Drain a source into a file ("-" = stdout) atomically. Returns ops written or -1. */
int64_t strata_trace_write_source(strata_source *src, const char *path, const char *comment,
                                  GError **err);

#endif

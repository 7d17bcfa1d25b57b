/*
 * line.h: one line of `strata-trace 1` text into a strata_op (the grammar
 * of traces/FORMAT.md): the reader's (trace/reader.h) parser, and the one
 * for tests and tools that parse a single line.
 *
 * A line is parsed in place: the strings of the op point into the line's
 * text (and the scratch's lists), valid until the text or the scratch
 * changes. Errors are STRATA_ERROR_INPUT and start "ORIGIN:LINE:COLUMN: "
 * with what was expected and what the line holds. Syntax only: names alive
 * and events recorded are trace/check.h's.
 */
#ifndef STRATA_LINE_H
#define STRATA_LINE_H

#include <glib.h>
#include "trace/op.h"

/* What parsing keeps between lines: the lists of in=, out= and donate=,
 * and which of the op's fields the last line set. */
typedef struct strata_line_scratch strata_line_scratch;

strata_line_scratch *strata_line_scratch_new(void);
void strata_line_scratch_free(strata_line_scratch *s); /* NULL ok */

/* The op on text, a line of len bytes without its newline (modified in
 * place; a `#` comment is stripped here), into *op: false with err set on
 * a syntax error. op should be the same one on every call with s. */
bool strata_line_parse(char *text, size_t len, const char *origin, uint64_t line, strata_line_scratch *s,
                       strata_op *op, GError **err);
/* Whether text holds nothing but blanks and a comment. Inline: the reader
 * asks it of every line. */
static inline bool strata_line_is_blank(const char *text)
{
    while (*text == ' ' || *text == '\t')
        text++;
    return *text == '\0' || *text == '#';
}
/* Whether text (modified in place) is the version line `strata-trace 1`. */
bool strata_line_parse_version(char *text, const char *origin, uint64_t line, GError **err);

/* Parse one op line (no comment, not the version line) for tests and tools.
 * Strings in *op point into storage owned by the returned scratch, freed with
 * strata_line_scratch_free(). */
strata_line_scratch *strata_parse_op_line(const char *text, const char *origin, uint64_t line,
                                          strata_op *op, GError **err);

#endif

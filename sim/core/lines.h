/*
 * lines.h: a bounded reader of text lines, shared by every text reader of
 * strata (traces, hardware and experiment .ini files).
 *
 * It reads any stream a FILE can read (files, pipes, FIFOs, devices) in
 * chunks and hands out one line at a time, without its newline (and without
 * a CR before it). Input is judged line by line, so a bad file fails at its
 * first bad line whatever its size or kind:
 *   - a line longer than STRATA_LINE_MAX bytes is an error naming its line
 *     (memory stays bounded on /dev/zero or a file without newlines);
 *   - a NUL byte is an error naming its line and column;
 *   - a byte that is not UTF-8 is an error naming its line and column (the
 *     lines go on into names, and names into JSON);
 *   - a UTF-8 byte order mark at the start of line 1 is skipped.
 *
 * Invariants: the line handed out is NUL-terminated, UTF-8, holds no NUL
 * and no newline, and stays valid until the next call; strata_lines_tell() is the
 * file offset of the next unread byte, so seek(tell()) resumes exactly.
 */
#ifndef STRATA_LINES_H
#define STRATA_LINES_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define STRATA_LINE_MAX (1024 * 1024)

typedef struct strata_lines strata_lines;

/* Takes ownership of fp (closed by strata_lines_free). origin names the
 * input in errors. */
strata_lines *strata_lines_new(FILE *fp, const char *origin);
void strata_lines_free(strata_lines *l);

/* 1: *line holds the next line (*len bytes); 0: end of input; -1: err set
 * ("ORIGIN:LINE: ..." STRATA_ERROR_INPUT, or STRATA_ERROR_IO). */
int strata_lines_next(strata_lines *l, char **line, size_t *len, GError **err);
/* 1-based number of the line last handed out (0 before the first). */
uint64_t strata_lines_number(const strata_lines *l);
/* Whether the line last handed out ended at the end of the input with no
 * newline (a file cut inside its last line, or one written without a final
 * newline). */
bool strata_lines_unterminated(const strata_lines *l);
/* The rule of every strata reader whose records are lines (traces, key
 * files, request, series and MiniMalloc CSVs): a record on the last line
 * with no newline after it is refused, for a file cut inside it reads as
 * another ("80GiB" cut to "8"). True when the line last handed out ends
 * with a newline; else false with err (STRATA_ERROR_INPUT) "ORIGIN:LINE:
 * expected the line to end with a newline, got the end of the file inside it
 * (WHAT cut short?); RULE" (what: "a trace"; rule: "every line of a strata
 * trace ends with one"). Call it on records only: a last blank or comment
 * line loses nothing. */
bool strata_lines_terminated(const strata_lines *l, const char *what, const char *rule, GError **err);
off_t strata_lines_tell(const strata_lines *l);
/* Resume at offset (from tell()), counting lines from `line` (the number of
 * the line read just before offset). False with err when the input cannot
 * seek (a pipe). */
bool strata_lines_seek(strata_lines *l, off_t offset, uint64_t line, GError **err);

#endif

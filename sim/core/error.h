/*
 * error.h: strata's error domain and exit statuses.
 *
 * Every fallible function takes a `GError **err` last and returns false (or
 * NULL, or -1) on failure, setting err in the STRATA_ERROR domain. The message
 * names the file, the line (and column where known) and what was expected:
 *   "t.trace:12:7: expected a size such as 4096, 64KiB or 1.5GiB, got '12XB'"
 * The code says how the CLI must exit (strata_exit_for_error()).
 *
 * Invariant: no library function prints or exits; only sim/cli does.
 */
#ifndef STRATA_ERROR_H
#define STRATA_ERROR_H

#include <glib.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#define STRATA_ERROR (strata_error_quark())
GQuark strata_error_quark(void);

typedef enum {
    STRATA_ERROR_INPUT = 1,   /* malformed trace, config, pickle, option: exit 2 */
    STRATA_ERROR_IO,          /* cannot read or write a file: exit 2 */
    STRATA_ERROR_OOM,         /* the simulated program ran out of memory: exit 1 */
    STRATA_ERROR_NO_DEVICE,   /* a real backend has no device: exit 2 */
    STRATA_ERROR_INTERNAL,    /* a bug in strata: exit 3 */
} StrataErrorCode;

/* Exit statuses of the strata binary (contract, see README). */
enum {
    STRATA_EXIT_OK = 0,
    STRATA_EXIT_OOM = 1,
    STRATA_EXIT_USAGE = 2,
    STRATA_EXIT_INTERNAL = 3,
};

int strata_exit_for_error(const GError *err);

/* An input error at a line of a file: sets err (STRATA_ERROR_INPUT) to
 * "ORIGIN:LINE: MESSAGE" (MESSAGE from fmt) and returns false. The one
 * writer of that prefix (a column, "ORIGIN:LINE:COLUMN:", is the trace
 * reader's alone: trace/line.c). */
bool strata_fail_at(GError **err, const char *origin, uint64_t line, const char *fmt, ...) G_GNUC_PRINTF(4, 5);
bool strata_vfail_at(GError **err, const char *origin, uint64_t line, const char *fmt, va_list ap)
    G_GNUC_PRINTF(4, 0);
/* The same at an op: "ORIGIN:LINE: MESSAGE" for an op read at a line
 * (line > 0), else "ORIGIN: op N: MESSAGE" for the Nth op (1-based) of a
 * generated stream, which has no lines. */
bool strata_vfail_at_op(GError **err, const char *origin, uint64_t line, uint64_t op_number, const char *fmt,
                        va_list ap) G_GNUC_PRINTF(5, 0);

/* User text for a message: escaped (non-printable bytes as \NNN), at most
 * STRATA_QUOTE_MAX bytes of it followed by "..." when longer, so a huge bad
 * value never floods the terminal (g_free). */
#define STRATA_QUOTE_MAX 64
char *strata_quote(const char *text);

#endif

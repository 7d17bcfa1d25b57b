/*
 * series.h: a measured series read from a CSV file: one figure per message
 * size, as collective benchmarks (nccl-tests) print them.
 *
 * The file: lines starting with '#' are comments (the source and its
 * licence); the first other line names the columns, comma-separated; every
 * later line is one row. The column named "bytes" holds the size (a whole
 * number of bytes, above 0); the column the caller names holds the figure (a
 * plain number above 0, in the unit the caller knows). Other columns are
 * ignored, but every row has the header's number of cells (one more shifts
 * the columns: a size with digit groups). Blank lines are skipped.
 *
 * Invariants: a read series holds at least one row; every row's line is
 * its line in the file; errors name "FILE:LINE" and what was expected.
 */
#ifndef STRATA_VALIDATE_SERIES_H
#define STRATA_VALIDATE_SERIES_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct strata_series_row {
    uint64_t bytes;
    double value;
    guint line;
} strata_series_row;

/* The rows of path's column `column`: a GArray of strata_series_row
 * (g_array_unref), or NULL with err set. */
GArray *strata_series_read(const char *path, const char *column, GError **err);

#endif

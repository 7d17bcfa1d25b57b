/*
 * series.c: reading a measured series from a CSV file (series.h).
 */
#include "validate/series.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "core/lines.h"
#include "core/units.h"

/* The index of name among the header's cells, -1 when none, -2 when two
 * (the first was read, silently: bytes,busbw,bytes). */
static int column_index(char **cells, const char *name)
{
    int at = -1;
    for (int i = 0; cells[i]; i++)
        if (strcmp(g_strstrip(cells[i]), name) == 0)
            at = at == -1 ? i : -2;
    return at;
}

static bool bad_line(GError **err, const char *path, guint line, const char *what, const char *got)
{
    char *quoted = strata_quote(got);
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s:%u: %s, got %s", path, line, what, quoted);
    g_free(quoted);
    return false;
}

/* One data row into *row; cols[0] is the size column, cols[1] the figure's, n_cols the header's cells. A row
 * of another count is refused, longer as well as shorter: one cell more shifts the figure's column (a size
 * written with digit groups, 8,388,608, read as a case of 8 bytes whose figure was the time column's);
 * empty cells after the header's last are taken (a row ending in a comma). */
static bool read_row(const char *path, guint line, const char *text, const int cols[2], guint n_cols,
                     strata_series_row *row, GError **err)
{
    char **cells = g_strsplit(text, ",", -1);
    guint n = g_strv_length(cells);
    while (n > n_cols && !*g_strstrip(cells[n - 1])) /* trailing empty cells (a row ending in a comma) */
        n--;
    bool ok = n == n_cols;
    if (!ok) {
        char *what = g_strdup_printf("expected %u comma-separated cells, as the header names (a size is a plain "
                                     "number of bytes, without digit groups), not %u", n_cols, n);
        bad_line(err, path, line, what, text);
        g_free(what);
    }
    const char *size = ok ? g_strstrip(cells[cols[0]]) : NULL;
    if (ok && !(strata_parse_u64(size, &row->bytes, NULL) && row->bytes > 0))
        ok = bad_line(err, path, line, "expected the size in bytes, a whole number above 0", size);
    const char *value = ok ? g_strstrip(cells[cols[1]]) : NULL;
    char *end = NULL;
    if (ok) {
        errno = 0;
        row->value = g_ascii_strtod(value, &end);
    }
    if (ok && (!*value || *end || errno || !(row->value > 0) || !isfinite(row->value)))
        ok = bad_line(err, path, line, "expected a number above 0", value);
    row->line = line;
    g_strfreev(cells);
    return ok;
}

GArray *strata_series_read(const char *path, const char *column, GError **err)
{
    FILE *fp = fopen(path, "r");
    if (!fp) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot read (%s)", path, g_strerror(errno));
        return NULL;
    }
    strata_lines *lines = strata_lines_new(fp, path);
    GArray *rows = g_array_new(FALSE, FALSE, sizeof(strata_series_row));
    int cols[2] = {-1, -1};
    guint n_cols = 0;
    bool header = false, ok = true;
    char *text = NULL;
    size_t len = 0;
    int got = 0;
    while (ok && (got = strata_lines_next(lines, &text, &len, err)) == 1) {
        guint line = (guint)strata_lines_number(lines);
        if (text[0] == '#' || !*g_strstrip(text))
            continue;
        if (!header) {
            char **cells = g_strsplit(text, ",", -1);
            cols[0] = column_index(cells, "bytes");
            cols[1] = column_index(cells, column);
            n_cols = g_strv_length(cells);
            g_strfreev(cells);
            header = true;
            if (cols[0] < 0 || cols[1] < 0) {
                char *what = g_strdup_printf("expected a header naming the columns bytes and %s%s", column,
                                             cols[0] == -2 || cols[1] == -2 ? ", each once" : "");
                ok = bad_line(err, path, line, what, text);
                g_free(what);
            }
            continue;
        }
        strata_series_row row = {0};
        /* a row cut inside ("1048576,12.5" cut to "1048576,1") reads as another figure: every row ends with a
         * newline (strata_lines_terminated) */
        ok = strata_lines_terminated(lines, "a measured series", "every row of a series CSV ends with one", err) &&
             read_row(path, line, text, cols, n_cols, &row, err);
        if (ok)
            g_array_append_val(rows, row);
    }
    ok = ok && got == 0;
    if (ok && rows->len == 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: no rows (expected a header line, then one row per size)",
                    path);
        ok = false;
    }
    strata_lines_free(lines);
    if (!ok) {
        g_array_unref(rows);
        return NULL;
    }
    return rows;
}

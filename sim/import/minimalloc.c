/*
 * minimalloc.c: MiniMalloc CSV -> op stream (contract in minimalloc.h).
 *
 * Design: read the whole CSV (benchmarks are small), validate every row,
 * then emit 2n events sorted by (time, free before alloc, row).
 *
 * Invariants: every buffer gets exactly one alloc and one free, the free
 * after the alloc (lower < upper is required); names are unique; every
 * at= is in the trace's sane range (upper at most 10^15 ticks of 1 us).
 */
#include "import/minimalloc.h"
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "core/readall.h"
#include "core/units.h"
#include "trace/check.h"

/* The largest CSV read (MiniMalloc's benchmarks are kilobytes). */
#define MM_MAX_FILE ((size_t)1 << 30)

typedef struct mm_row {
    char *name;
    uint64_t lower, upper, size;
} mm_row;

/* A benchmark time as at=: one tick a microsecond (planners rank buffers by
 * real lifetime length). */
static double mm_at_s(uint64_t ticks) { return (double)ticks * 1e-6; }

typedef struct mm_event {
    uint64_t time;
    int is_alloc; /* frees (0) first */
    size_t row;
} mm_event;

static int mm_cmp_event(const void *a, const void *b)
{
    const mm_event *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    if (x->is_alloc != y->is_alloc)
        return x->is_alloc - y->is_alloc;
    return x->row < y->row ? -1 : x->row > y->row ? 1 : 0;
}

static bool mm_plain_name(const char *s)
{
    if (!(g_ascii_isalpha(s[0]) || s[0] == '_'))
        return false;
    for (const char *p = s; *p; p++)
        if (!(g_ascii_isalnum(*p) || *p == '_' || *p == '.' || *p == '-'))
            return false;
    return true;
}

static bool mm_field_u64(const char *path, guint line, const char *what, const char *text,
                         uint64_t *out, GError **err)
{
    GError *local = NULL;
    /* decimal only, as MiniMalloc's reader takes it (google/minimalloc
     * src/converter.cc, FromCsv: absl::SimpleAtoi, base 10): 0x40 is not 64 */
    bool decimal = *text != '\0' && strspn(text, "0123456789") == strlen(text);
    if (!decimal || !strata_parse_u64(text, out, &local)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s:%u: expected %s as a non-negative decimal integer within 64 bits, got '%s'", path, line,
                    what, text);
        g_clear_error(&local);
        return false;
    }
    return true;
}

static void mm_rows_free(GArray *rows)
{
    for (guint i = 0; i < rows->len; i++)
        g_free(g_array_index(rows, mm_row, i).name);
    g_array_free(rows, TRUE);
}

static GArray *mm_read(const char *path, GError **err)
{
    char *text = NULL;
    size_t len = 0;
    /* bounded, and a NUL byte refused: g_strsplit stopped at it, dropping the rows after */
    if (!strata_read_all(path, MM_MAX_FILE, true, "a MiniMalloc CSV", &text, &len, err))
        return NULL;
    GArray *rows = g_array_new(FALSE, FALSE, sizeof(mm_row));
    GHashTable *names = g_hash_table_new(g_str_hash, g_str_equal);
    /* a UTF-8 byte-order mark (Excel's "CSV UTF-8", pandas' utf-8-sig) is skipped, as the trace, hardware and
     * request readers skip it: the header was refused as '\xEF\xBB\xBFid,...', printed as 'id,...' */
    char **lines = g_strsplit(g_str_has_prefix(text, "\xEF\xBB\xBF") ? text + 3 : text, "\n", -1);
    g_free(text);
    bool ok = true, header = false;
    for (guint i = 0; ok && lines[i]; i++) {
        guint line = i + 1;
        char *l = g_strstrip(lines[i]);
        const char *bad = NULL;
        if (*l == '\0')
            continue;
        if (lines[i + 1] == NULL) { /* MiniMalloc's ToCsv ends every record with std::endl (src/converter.cc) */
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s:%u: expected the line to end with a newline, got "
                        "the end of the file inside it (a MiniMalloc CSV cut short?); every record ends with one",
                        path, line);
            ok = false;
            break;
        }
        if (!g_utf8_validate(l, -1, &bad)) { /* an id went into the trace as bytes its reader refuses */
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s:%u: expected UTF-8 text, got bytes that are not "
                        "UTF-8 (0x%02x at column %zu)", path, line, (unsigned)(unsigned char)*bad,
                        (size_t)(bad - lines[i]) + 1);
            ok = false;
            break;
        }
        char **f = g_strsplit(l, ",", -1);
        guint nf = g_strv_length(f);
        for (guint k = 0; k < nf; k++)
            g_strstrip(f[k]);
        if (!header) {
            if (nf != 4 || strcmp(f[0], "id") || strcmp(f[1], "lower") || strcmp(f[2], "upper") ||
                strcmp(f[3], "size")) {
                g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                            "%s:%u: expected the header 'id,lower,upper,size', got '%s'", path, line, l);
                ok = false;
            }
            header = true;
            g_strfreev(f);
            continue;
        }
        mm_row row = {0};
        if (nf != 4) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s:%u: expected 4 fields id,lower,upper,size, got %u", path, line, nf);
            ok = false;
        } else if (*f[0] == '\0' || strpbrk(f[0], " \t#=\"") != NULL) {
            /* MiniMalloc's FromCsv splits on commas alone and keeps quotes in the id; RFC 4180's quoting is
             * not read, so a quoted id is refused rather than kept with its quotes */
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s:%u: expected an id without blanks, '#', '=' or '\"' (a MiniMalloc CSV is not quoted), "
                        "got '%s'", path, line, f[0]);
            ok = false;
        } else if (!mm_field_u64(path, line, "lower", f[1], &row.lower, err) ||
                   !mm_field_u64(path, line, "upper", f[2], &row.upper, err) ||
                   !mm_field_u64(path, line, "size", f[3], &row.size, err)) {
            ok = false;
        } else if (row.lower >= row.upper) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s:%u: expected lower < upper, got lower %" G_GUINT64_FORMAT
                        " and upper %" G_GUINT64_FORMAT, path, line, row.lower, row.upper);
            ok = false;
        } else if (!strata_trace_at_ok(mm_at_s(row.upper))) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s:%u: expected upper at most %.0f (a tick is a microsecond of at=, which a trace "
                        "holds up to %g s), got %" G_GUINT64_FORMAT,
                        path, line, STRATA_TRACE_MAX_AT_S * 1e6, STRATA_TRACE_MAX_AT_S, row.upper);
            ok = false;
        } else if (row.size == 0) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s:%u: expected a positive size, got 0", path, line);
            ok = false;
        } else {
            row.name = mm_plain_name(f[0]) ? g_strdup(f[0]) : g_strdup_printf("b%s", f[0]);
            if (g_hash_table_contains(names, row.name)) {
                g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                            "%s:%u: expected a unique id, '%s' repeats an earlier one", path, line, f[0]);
                g_free(row.name);
                ok = false;
            } else {
                g_array_append_val(rows, row);
                g_hash_table_add(names, g_array_index(rows, mm_row, rows->len - 1).name);
            }
        }
        g_strfreev(f);
    }
    g_strfreev(lines);
    g_hash_table_destroy(names);
    if (ok && !header) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s:1: expected the header 'id,lower,upper,size', got an empty file", path);
        ok = false;
    } else if (ok && !rows->len) { /* was an empty trace at exit 0: a problem of no buffers, none to place */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s:2: expected at least one buffer row 'id,lower,upper,size' after the header, got none", path);
        ok = false;
    }
    if (!ok) {
        mm_rows_free(rows);
        return NULL;
    }
    return rows;
}

strata_source *strata_minimalloc_source(const char *csv_path, GError **err)
{
    GArray *rows = mm_read(csv_path, err);
    if (!rows)
        return NULL;
    size_t n = rows->len;
    mm_event *ev = g_new(mm_event, 2 * n + 1);
    for (size_t i = 0; i < n; i++) {
        const mm_row *r = &g_array_index(rows, mm_row, i);
        ev[2 * i] = (mm_event){r->lower, 1, i};
        ev[2 * i + 1] = (mm_event){r->upper, 0, i};
    }
    qsort(ev, 2 * n, sizeof *ev, mm_cmp_event);
    strata_op_list *list = strata_op_list_new();
    for (size_t k = 0; k < 2 * n; k++) {
        const mm_row *r = &g_array_index(rows, mm_row, ev[k].row);
        strata_op op = ev[k].is_alloc ? strata_op_make_alloc(NULL, r->name, r->size, NULL, STRATA_TAG_NONE)
                                      : strata_op_make(STRATA_OP_FREE, NULL, r->name);
        op.has_at = true;
        op.at_s = mm_at_s(ev[k].is_alloc ? r->lower : r->upper);
        strata_op_list_append(list, &op);
    }
    g_free(ev);
    mm_rows_free(rows);
    return strata_op_list_to_source(list, csv_path);
}

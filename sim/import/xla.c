/*
 * xla.c: finds a module's files in an XLA dump, streams each through its
 * reader, and hands the readers to the trace emitter (contract in xla.h).
 *
 * Design: the buffer-assignment file is read once; its lines go to the
 * buffer reader until a `HloLiveRange (max T):` header, then to the live
 * range reader. A separate `-live-range.txt` is read when the assignment
 * file holds no live ranges. The memory-usage report only confirms `Total
 * bytes used`.
 */
#include "import/xla.h"
#include <string.h>
#include "core/error.h"
#include "import/xla_buffers.h"
#include "import/xla_emit.h"
#include "import/xla_hlo.h"
#include "import/xla_liverange.h"
#include "import/xla_livepeak.h"

#define BA_SUFFIX "-buffer-assignment.txt"

void strata_xla_figures_clear(strata_xla_figures *f)
{
    g_free(f->module);
    g_free(f->buffer_file);
    g_free(f->live_range_file);
    g_free(f->hlo_file);
    g_free(f->report_file);
    g_free(f->mesh);
    g_free(f->unknown_first);
    g_free(f->element_operand_first);
    if (f->temps)
        g_array_free(f->temps, TRUE);
    memset(f, 0, sizeof *f);
}

static gint cmp_str(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The buffer-assignment file of the one module in dir matching `module`. */
static char *find_in_dir(const char *dir, const char *module, GError **err)
{
    GError *local = NULL;
    GDir *d = g_dir_open(dir, 0, &local);
    if (d == NULL) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot read: %s", dir, local->message);
        g_clear_error(&local);
        return NULL;
    }
    GPtrArray *found = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while ((name = g_dir_read_name(d)) != NULL)
        if (g_str_has_suffix(name, BA_SUFFIX) && (module == NULL || strstr(name, module)))
            g_ptr_array_add(found, g_strdup(name));
    g_dir_close(d);
    g_ptr_array_sort(found, cmp_str);
    char *path = NULL;
    if (found->len == 1) {
        path = g_build_filename(dir, g_ptr_array_index(found, 0), NULL);
    } else if (found->len == 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: expected a module's *%s%s%s%s (dump with XLA_FLAGS=\"--xla_dump_to=%s "
                    "--xla_dump_hlo_as_text\"), found none", dir, BA_SUFFIX,
                    module ? " matching '" : "", module ? module : "", module ? "'" : "", dir);
    } else {
        GString *list = g_string_new(NULL);
        for (guint i = 0; i < found->len && i < 12; i++) {
            char *stem = g_strndup(g_ptr_array_index(found, i),
                                   strlen(g_ptr_array_index(found, i)) - strlen(BA_SUFFIX));
            g_string_append_printf(list, "\n  %s", stem);
            g_free(stem);
        }
        if (found->len > 12)
            g_string_append_printf(list, "\n  ... and %u more", found->len - 12);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: expected one module, found %u%s%s%s; choose one with --module NAME:%s", dir,
                    found->len, module ? " matching '" : "", module ? module : "", module ? "'" : "",
                    list->str);
        g_string_free(list, TRUE);
    }
    g_ptr_array_free(found, TRUE);
    return path;
}

/* The module's file stem (path without BA_SUFFIX), from any of its files. */
static char *find_stem(const char *path, const char *module, GError **err)
{
    char *ba = NULL;
    if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
        ba = find_in_dir(path, module, err);
        if (ba == NULL)
            return NULL;
    } else {
        static const char *const suffixes[] = {BA_SUFFIX, "-live-range.txt", "-memory-usage-report.txt",
                                               "-buffer-assignment-values.txt", ".txt", NULL};
        for (const char *const *s = suffixes; *s; s++)
            if (g_str_has_suffix(path, *s))
                return g_strndup(path, strlen(path) - strlen(*s));
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: expected a dump directory or a module's *%s, *-live-range.txt or "
                    "*after_optimizations.txt", path, BA_SUFFIX);
        return NULL;
    }
    char *stem = g_strndup(ba, strlen(ba) - strlen(BA_SUFFIX));
    g_free(ba);
    return stem;
}

typedef struct ba_reader {
    xla_buffers *buffers;
    xla_liverange *ranges;
} ba_reader;

static bool ba_line(void *self, const char *file, const char *line, uint64_t lineno, GError **err)
{
    ba_reader *r = self;
    if (xla_liverange_started(r->ranges) || xla_skip(line, "HloLiveRange (max ", NULL))
        return xla_liverange_feed(r->ranges, file, line, lineno, err);
    return xla_buffers_feed(r->buffers, file, line, lineno, err);
}

static bool lr_line(void *self, const char *file, const char *line, uint64_t lineno, GError **err)
{
    return xla_liverange_feed(self, file, line, lineno, err);
}

static bool hlo_line(void *self, const char *file, const char *line, uint64_t lineno, GError **err)
{
    return xla_hlo_feed(self, file, line, lineno, err);
}

typedef struct report_reader {
    const xla_buffers *buffers;
    bool seen;
} report_reader;

static bool report_line(void *self, const char *file, const char *line, uint64_t lineno, GError **err)
{
    report_reader *r = self;
    const char *s;
    if (r->seen || !xla_skip(line, "Total bytes used: ", &s))
        return true;
    r->seen = true;
    uint64_t total;
    if (!xla_parse_u64(&s, &total))
        return strata_fail_at(err, file, lineno, "expected 'Total bytes used: N (HUMAN)'");
    uint64_t sum = 0;
    for (uint32_t i = 0; i < xla_buffers_n_allocations(r->buffers); i++)
        sum += xla_buffers_allocation(r->buffers, i)->size;
    if (total != sum)
        return strata_fail_at(err, file, lineno,
                        "expected the buffer assignment's total, %" G_GUINT64_FORMAT " bytes, got %"
                        G_GUINT64_FORMAT " (files of different compilations?)", sum, total);
    return true;
}

static char *existing(const char *stem, const char *suffix)
{
    char *p = g_strconcat(stem, suffix, NULL);
    if (g_file_test(p, G_FILE_TEST_IS_REGULAR))
        return p;
    g_free(p);
    return NULL;
}

static bool read_module(strata_xla_figures *fig, strata_progress *progress, xla_buffers *b, xla_liverange *lr,
                        xla_hlo **h, GError **err)
{
    ba_reader r = {b, lr};
    if (!xla_read_lines(fig->buffer_file, progress, ba_line, &r, err) || !xla_buffers_finish(b, fig->buffer_file, err))
        return false;
    bool ba_has_ranges = xla_liverange_started(lr);
    if (!xla_liverange_started(lr) && fig->live_range_file &&
        !xla_read_lines(fig->live_range_file, progress, lr_line, lr, err))
        return false;
    if (xla_liverange_started(lr) &&
        !xla_liverange_finish(lr, fig->live_range_file && !ba_has_ranges ? fig->live_range_file : fig->buffer_file, err))
        return false;
    if (!xla_liverange_started(lr)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: expected the live ranges ('HloLiveRange (max T):') after the buffer "
                    "assignment or in the module's -live-range.txt (newer XLA writes it with "
                    "--xla_dump_buffer_assignment_analysis), found none", fig->buffer_file);
        return false;
    }
    if (fig->report_file) {
        report_reader rr = {b, false};
        if (!xla_read_lines(fig->report_file, progress, report_line, &rr, err))
            return false;
    }
    if (fig->hlo_file) {
        *h = xla_hlo_new();
        if (!xla_read_lines(fig->hlo_file, progress, hlo_line, *h, err) || !xla_hlo_finish(*h, fig->hlo_file, err))
            return false;
    }
    return true;
}

strata_source *strata_xla_import(const char *path, const char *module, strata_xla_figures *fig,
                                 GError **err)
{
    return strata_xla_import_with(path, module, NULL, fig, err);
}

strata_source *strata_xla_import_with(const char *path, const char *module, strata_progress *progress,
                                      strata_xla_figures *fig, GError **err)
{
    memset(fig, 0, sizeof *fig);
    char *stem = find_stem(path, module, err);
    if (stem == NULL)
        return NULL;
    fig->buffer_file = g_strconcat(stem, BA_SUFFIX, NULL);
    fig->live_range_file = existing(stem, "-live-range.txt");
    fig->report_file = existing(stem, "-memory-usage-report.txt");
    fig->hlo_file = existing(stem, ".txt");
    fig->module = g_path_get_basename(stem);
    g_free(stem);
    fig->temps = g_array_new(FALSE, TRUE, sizeof(strata_xla_temp));
    xla_buffers *b = xla_buffers_new();
    xla_liverange *lr = xla_liverange_new();
    xla_hlo *h = NULL;
    strata_source *src = NULL;
    if (read_module(fig, progress, b, lr, &h, err)) {
        xla_unknown unknown = {0};
        xla_unknown_merge(&unknown, xla_buffers_unknown(b));
        fig->n_unknown = unknown.count;
        fig->unknown_first = unknown.first;
        if (h) {
            const xla_unknown *eo = xla_hlo_element_operands(h);
            fig->n_element_operands = eo->count;
            fig->element_operand_first = g_strdup(eo->first);
        }
        src = xla_emit(b, lr, h, fig, err);
        xla_livepeak lp;
        xla_livepeak_compute(b, lr, &lp);
        fig->xla_accounted_peak_time = lp.time;
        fig->xla_accounted_peak_bytes = lp.bytes;
        fig->xla_accounted_unsized = lp.n_unsized;
    }
    xla_hlo_free(h);
    xla_liverange_free(lr);
    xla_buffers_free(b);
    return src;
}

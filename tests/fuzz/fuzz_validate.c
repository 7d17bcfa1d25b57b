/*
 * fuzz_validate.c: libFuzzer target for `strata validate --published`'s
 * readers: the case file (sim/validate/published.c, through the one
 * key-file reader) and the measured series it names (sim/validate/series.c,
 * a CSV reader).
 *
 * The input is the case file, optionally followed by a line `====` and the
 * CSV file. They are written as case.ini and s.csv in a private directory
 * (on tmpfs, fuzz_input.h) that also holds a valid hardware model (hw.ini,
 * configs/hw/test-simple.ini) and trace (t.trace, the pcie-copy example),
 * so that `hw = hw.ini`, `trace = t.trace` and `data = s.csv` resolve. The
 * case file is loaded (cases are not simulated: the engine has targets of
 * its own), and the CSV is read on its own as the column `busbw`.
 *
 * Oracle: a set that loads holds only what published.h promises (a positive
 * measured figure of a known metric, exactly one of trace and gen, a
 * positive bytes and busbw factor where the metric needs them, a FILE:LINE
 * where), and a series that reads holds rows with positive bytes and
 * figures and increasing lines; anything else aborts.
 */
#include <math.h>
#include <string.h>
#include "fuzz_input.h"
#include "validate/published.h"
#include "validate/series.h"

static void check_case(const strata_published_case *c)
{
    bool ok = c->name && c->where && strchr(c->where, ':') && c->source && c->setup && c->hw &&
              ((c->trace != NULL) != (c->gen != NULL)) && c->measured > 0 && isfinite(c->measured) &&
              isnan(c->simulated);
    switch (c->metric) {
    case STRATA_PUBLISHED_MAKESPAN:
        break;
    case STRATA_PUBLISHED_BUSBW:
        ok = ok && c->busbw_factor > 0 && isfinite(c->busbw_factor);
        /* fall through */
    case STRATA_PUBLISHED_BANDWIDTH:
        ok = ok && c->bytes > 0;
        break;
    default:
        ok = false;
    }
    if (!ok) {
        fprintf(stderr, "a loaded case breaks published.h's invariants: %s at %s\n", c->name ? c->name : "(null)",
                c->where ? c->where : "(null)");
        abort();
    }
}

static void check_series(const GArray *rows)
{
    guint last = 0;
    for (guint i = 0; i < rows->len; i++) {
        const strata_series_row *r = &g_array_index(rows, strata_series_row, i);
        if (r->bytes == 0 || !(r->value > 0) || !isfinite(r->value) || r->line <= last) {
            fprintf(stderr, "a read series breaks series.h's invariants at row %u (line %u)\n", i, r->line);
            abort();
        }
        last = r->line;
    }
    if (rows->len == 0) {
        fprintf(stderr, "a read series holds no row\n");
        abort();
    }
}

/* hw.ini and t.trace in dir, copied once from the source tree. */
static bool put_fixtures(const char *dir)
{
    static bool done;
    if (done)
        return true;
    const char *from[] = {STRATA_SOURCE_DIR "/configs/hw/test-simple.ini",
                          STRATA_SOURCE_DIR "/traces/examples/pcie-copy.trace"};
    const char *to[] = {"hw.ini", "t.trace"};
    for (int i = 0; i < 2; i++) {
        char *text = NULL;
        gsize len = 0;
        char *path = g_build_filename(dir, to[i], NULL);
        bool ok = g_file_get_contents(from[i], &text, &len, NULL) && fuzz_put(path, text, len);
        g_free(path);
        g_free(text);
        if (!ok)
            return false;
    }
    done = true;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *dir = fuzz_dir("fuzz-validate");
    if (dir == NULL || !put_fixtures(dir))
        return 0;
    static const char *const names[] = {"case.ini", "s.csv"};
    bool has_csv = fuzz_put_parts(dir, data, size, names, 2) == 2;
    char *case_path = g_build_filename(dir, names[0], NULL);
    char *csv_path = g_build_filename(dir, names[1], NULL);

    GError *err = NULL;
    strata_published *set = strata_published_new();
    if (strata_published_load(set, case_path, &err)) {
        for (size_t i = 0; i < strata_published_count(set); i++)
            check_case(strata_published_case_at(set, i));
    }
    g_clear_error(&err);
    strata_published_free(set);

    if (has_csv) {
        GArray *rows = strata_series_read(csv_path, "busbw", &err);
        if (rows) {
            check_series(rows);
            g_array_unref(rows);
        }
        g_clear_error(&err);
    }
    g_free(case_path);
    g_free(csv_path);
    return 0;
}

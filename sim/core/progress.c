/*
 * progress.c: a rate-limited progress line on a terminal (see progress.h).
 */
#include "core/progress.h"

#include <stdarg.h>
#include <unistd.h>
#include "core/units.h"

struct strata_progress {
    FILE *out;       /* NULL: silent */
    gint64 start_us; /* monotonic time of creation (for the ETA) */
    gint64 last_us;  /* monotonic time of the last line shown; 0: none yet */
    bool shown;      /* a line is on the terminal */
};

FILE *strata_progress_stream(bool quiet)
{
    return !quiet && isatty(fileno(stderr)) ? stderr : NULL;
}

strata_progress *strata_progress_new(FILE *out)
{
    strata_progress *p = g_new0(strata_progress, 1);
    p->out = out;
    p->start_us = g_get_monotonic_time();
    return p;
}

void strata_progress_update(strata_progress *p, const char *fmt, ...)
{
    if (!p || !p->out)
        return;
    gint64 now = g_get_monotonic_time();
    if (p->shown && now - p->last_us < STRATA_PROGRESS_INTERVAL_US)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputc('\r', p->out);
    vfprintf(p->out, fmt, ap);
    fputs("\033[K", p->out);
    va_end(ap);
    fflush(p->out);
    p->last_us = now;
    p->shown = true;
}

/* "6/24 points" or "20.0 MiB / 60.0 MiB" (total 0: done only). */
static void append_counts(GString *line, uint64_t done, uint64_t total, const char *unit)
{
    if (unit) {
        g_string_append_printf(line, "%" G_GUINT64_FORMAT, done);
        if (total)
            g_string_append_printf(line, "/%" G_GUINT64_FORMAT, total);
        g_string_append_printf(line, " %s", unit);
        return;
    }
    char *d = strata_format_size(done);
    g_string_append(line, d);
    g_free(d);
    if (total) {
        char *t = strata_format_size(total);
        g_string_append_printf(line, " / %s", t);
        g_free(t);
    }
}

void strata_progress_count(strata_progress *p, const char *what, uint64_t done, uint64_t total, const char *unit,
                           const char *note)
{
    if (!p || !p->out)
        return;
    gint64 now = g_get_monotonic_time();
    if (p->shown && now - p->last_us < STRATA_PROGRESS_INTERVAL_US)
        return; /* update() would not show it: do not build it */
    enum { BAR = 30 };
    GString *line = g_string_new(NULL);
    g_string_append_printf(line, "%s: ", what);
    double frac = total ? (done >= total ? 1.0 : (double)done / (double)total) : 0;
    if (total) {
        int fill = (int)(frac * BAR + 0.5);
        g_string_append_c(line, '[');
        for (int i = 0; i < BAR; i++)
            g_string_append_c(line, i < fill ? '#' : '.');
        g_string_append(line, "] ");
    }
    append_counts(line, done, total, unit);
    if (total)
        g_string_append_printf(line, " (%d%%)", (int)(frac * 100));
    if (note && *note)
        g_string_append_printf(line, ", %s", note);
    if (total && done > 0 && done < total) {
        double elapsed = (double)(now - p->start_us) / 1e6, left = elapsed / frac - elapsed;
        g_string_append_printf(line, ", ETA %dm%02ds", (int)(left / 60), (int)left % 60);
    }
    strata_progress_update(p, "%s", line->str);
    g_string_free(line, TRUE);
}

void strata_progress_clear(strata_progress *p)
{
    if (!p || !p->shown)
        return;
    fputs("\r\033[K", p->out);
    fflush(p->out);
    p->shown = false;
}

void strata_progress_free(strata_progress *p)
{
    strata_progress_clear(p);
    g_free(p);
}

/*
 * progress.c: a rate-limited progress line on a terminal (see progress.h).
 */
#include "core/progress.h"

#include <stdarg.h>
#include <unistd.h>

struct strata_progress {
    FILE *out;       /* NULL: silent */
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

void strata_progress_free(strata_progress *p)
{
    if (!p)
        return;
    if (p->shown) {
        fputs("\r\033[K", p->out);
        fflush(p->out);
    }
    g_free(p);
}

/*
 * serve_frontend_queue.c: the API server's serial queue
 * (serve_frontend_queue.h); the figures are serve_frontend.c's rows.
 */
#include "serve/serve_frontend_queue.h"
#include "serve/serve_frontend.h"
#include <glib.h>
#include <math.h>

const strata_serve_frontend *strata_serve_frontend_serial_row(const strata_serve_frontend *f)
{
    if (!f)
        return NULL;
    char *name = g_strconcat(f->name, "-serial", NULL);
    const strata_serve_frontend *s = strata_serve_frontend_find(name);
    g_free(name);
    return s ? s : f;
}

bool strata_serve_frontend_serial(const strata_serve_frontend *f)
{
    return f && (f->intake_s > 0 || f->chunk_s > 0);
}

double strata_serve_frontend_take(const strata_serve_frontend *f, double *free_at, double sent, uint32_t prompt)
{
    if (!strata_serve_frontend_serial(f))
        return sent + strata_serve_frontend_recv(f, prompt);
    double start = fmax(sent, *free_at);
    *free_at = start + f->intake_s;
    return start + strata_serve_frontend_recv(f, prompt);
}

double strata_serve_frontend_chunk(const strata_serve_frontend *f, double *free_at, double ready)
{
    if (!strata_serve_frontend_serial(f))
        return ready;
    double start = fmax(ready, *free_at);
    *free_at = start + f->chunk_s;
    return start;
}

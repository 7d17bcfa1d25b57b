/*
 * serve_frontend_queue.c: the API server's serial queue
 * (serve_frontend_queue.h); the figures are serve_frontend.c's rows.
 */
#include "serve/serve_frontend_queue.h"
#include "serve/serve_frontend.h"
#include <math.h>

double strata_serve_frontend_take(const strata_serve_frontend *f, double *free_at, double sent, uint32_t prompt)
{
    if (!f || f->serial_s <= 0)
        return sent + strata_serve_frontend_recv(f, prompt);
    double start = fmax(sent, *free_at);
    *free_at = start + f->serial_s;
    return start + strata_serve_frontend_recv(f, prompt);
}

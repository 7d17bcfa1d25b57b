/*
 * serve_frontend_queue.c: the API server's serial queue
 * (serve_frontend_queue.h); the figures are serve_frontend.c's rows.
 */
#include "serve/serve_frontend_queue.h"
#include "core/error.h"
#include "serve/serve.h"
#include "serve/serve_engine.h"
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

bool strata_serve_frontend_serial_check(const strata_serve_config *c, GError **err)
{
    if (!c->serial_api_server)
        return true;
    const char *engine = c->engine ? c->engine->name : "vllm-v1 (no --engine)";
    const strata_serve_frontend *f = strata_serve_engine_frontend(c->engine);
    const char *why = c->offline ? "--offline runs no API server (the engine in the client's process)"
                      : !f       ? "the engine prices no front end (no server hops to queue)"
                      : !strata_serve_frontend_serial(strata_serve_frontend_serial_row(f))
                          ? "its front end has no serial figure (only vLLM V1's API server has one, vllm-v1-serial)"
                          : NULL;
    if (why)
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--serial-api-server: not with --engine %s: %s", engine,
                    why);
    return !why;
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
    *free_at = start + f->intake_s; /* the hand-off to the engine is the intake's last piece of work */
    return start + fmax(strata_serve_frontend_recv(f, prompt), f->intake_s);
}

double strata_serve_frontend_chunk(const strata_serve_frontend *f, double *free_at, double ready)
{
    if (!strata_serve_frontend_serial(f))
        return ready;
    double start = fmax(ready, *free_at);
    *free_at = start + f->chunk_s;
    return start;
}

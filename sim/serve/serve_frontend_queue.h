/*
 * serve_frontend_queue.h: the API server as a serial server. An engine's
 * front end (serve_frontend.h) is one process whose event loop does a
 * request's host work one request at a time (vLLM's API server, one
 * asyncio process unless --api-server-count; SGLang's TokenizerManager):
 * a request it takes holds it serial_s (the row's figure, its work for one
 * request, chunks included), so a burst of N requests is taken one after
 * the other, the k-th (from 0) at k * serial_s, whatever the GPU's speed.
 *
 * A request sent at `sent` is taken at start = max(sent, free) and the
 * server is free again at start + serial_s; it reaches the scheduler at
 * start + strata_serve_frontend_recv (its own latency, unchanged at low
 * load). Callers take requests in the order they are sent (arrival order;
 * a closed loop's sends are in time order).
 *
 * Invariants: *free_at never decreases; a row with serial_s 0 (or f NULL)
 * gives sent + recv, the pure delay of serve_frontend.h.
 */
#ifndef STRATA_SERVE_FRONTEND_QUEUE_H
#define STRATA_SERVE_FRONTEND_QUEUE_H

#include <stdint.h>

struct strata_serve_frontend;

/* When a request of `prompt` tokens sent at `sent` reaches the scheduler;
 * *free_at (0 at the run's start) is when the server is next free, moved on. */
double strata_serve_frontend_take(const struct strata_serve_frontend *f, double *free_at, double sent,
                                  uint32_t prompt);

#endif

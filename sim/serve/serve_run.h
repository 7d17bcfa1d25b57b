/*
 * serve_run.h: the state of one serving run, shared by its loop
 * (serve_sched.c) and its setup and accounting (serve_run.c). Private to
 * sim/serve.
 *
 * Invariants: each request id is in at most one of running, waiting and
 * swapped; n_done counts completed and rejected requests.
 */
#ifndef STRATA_SERVE_RUN_H
#define STRATA_SERVE_RUN_H

#include "serve/serve.h"
#include "serve/serve_cost.h"

enum { SERVE_WAITING, SERVE_RUNNING, SERVE_SWAPPED, SERVE_DONE };

typedef struct serve_req {
    uint32_t id, prompt, output;
    uint32_t computed, generated;
    int state;
    double arrival, first_token, finish;
    uint64_t swapped_bytes;
} serve_req;

typedef struct serve_deque {
    uint32_t *a;
    uint32_t head, n, cap;
} serve_deque;

typedef struct serve_state {
    const strata_serve_config *cfg;
    const strata_serve_kv_scheme *scheme;
    void *kv;
    strata_serve_cost *cost;
    strata_serve_result *res;
    serve_req *req;
    uint32_t n_req, next;          /* next: the first request not yet arrived */
    uint32_t *running, n_running;
    serve_deque waiting, swapped;
    strata_serve_chunk *chunks;
    uint32_t n_chunks;
    double now, step_swap_s;
    uint64_t block_bytes, host_used;
    uint32_t kv_tensors;
    uint32_t clients_free;         /* closed loop: clients with no request out */
    uint32_t n_done;
    uint32_t sample_every, sample_count;
    double weight;                 /* accumulated step time for the means */
} serve_state;

/* serve_sched.c: one step; false when no progress is possible. */
bool serve_step(serve_state *st);
/* serve_sched.c: pushes v at d's front or back. */
void serve_deque_push(serve_deque *d, uint32_t v, bool front);
/* serve_run.c */
void serve_arrivals(serve_state *st);
double serve_next_arrival(const serve_state *st);
void serve_client_free(serve_state *st, serve_req *q);
void serve_account(serve_state *st, double t);

#endif

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
#include "serve/serve_clock.h"
#include "serve/serve_frontend.h"

enum { SERVE_WAITING, SERVE_RUNNING, SERVE_SWAPPED, SERVE_DONE };

typedef struct serve_req {
    uint32_t id, prompt, output;
    uint32_t computed, generated;
    int state;
    double arrival, first_token, finish;
    double recv;                   /* when the engine's scheduler can hold it: arrival + its server hops before the
                                    * scheduler (serve_frontend.h) */
    double last_token;             /* when its latest token reached the client (its ITLs) */
    double client_first, client_last; /* a serial server's chunk starts: first, latest token (serve_frontend_queue.h) */
    bool undelivered;              /* tokens sampled in a multi-step run, streamed when the run ends */
    uint64_t swapped_bytes;
    bool draining;                 /* finished, still in the batch for the engine's lagged step (overlap_lag) */
    bool owed;                     /* finished, its client not yet told (async_output: the next step's host work
                                    * first) */
    bool refused;                  /* too long for the engine: rejected on arrival (serve_engine.h) */
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
    /* --clock duty: cost is at the peak clock, cost_sustained at the sustained one, clock the filter
     * (serve_clock.h); NULL otherwise */
    strata_serve_cost *cost_sustained;
    strata_serve_coll *coll;       /* the simulated collectives both share (tp > 1; serve_coll.h), or NULL */
    strata_serve_clock *clock;
    strata_serve_result *res;
    serve_req *req;
    uint32_t n_req, next;          /* next: the first request not yet received (in the waiting queue or done) */
    uint32_t sent;                 /* closed loop: the first request no client has sent yet */
    double recv_by;                /* the engine's loop formed this step's batch with the requests that had arrived
                                    * by then (serve_engine.h recv_lag; INFINITY: by the step's start) */
    uint32_t *running, n_running;
    serve_deque waiting, swapped;
    strata_serve_chunk *chunks;
    uint32_t n_chunks;
    /* TurboMind's passes of a step (serve_turbomind_gpu): its context and decoder passes' chunks and
     * the context passes' first chunks, max_num_seqs + 2 each, made with chunks under an engine with
     * context_passes and freed with the state (they were made and freed on every step); else NULL */
    strata_serve_chunk *tm_ctx, *tm_dec;
    uint32_t *tm_first;
    double now, step_swap_s;
    uint64_t block_bytes, host_used;
    uint32_t max_model_len;        /* the model's (the width of vLLM V1's block table rows: serve_engine.h) */
    /* --preemption swap: a preempted request whose KV the swap space could not hold, where vLLM v0 aborts the
     * engine (serve_sched.c preempt): its id + 1 (0: none) and its bytes; the run stops with an error */
    uint32_t swap_abort;
    uint64_t swap_abort_bytes;
    uint32_t kv_tensors;
    uint32_t kv_window;            /* the pool frees sliding-window layers' blocks: their window (0: none) */
    double kv_window_share;        /* those layers' share of the KV bytes per token */
    uint32_t clients_free;         /* closed loop: clients with no request out */
    uint32_t n_done;
    uint32_t run_left;             /* multi-step: steps the current decode batch still runs after this one */
    bool in_run;                   /* the step is part of a multi-step run (its tokens streamed at its end) */
    uint32_t sample_every, sample_count;
    double weight;                 /* accumulated step time for the means */
    double new_token_ratio;        /* sglang-v0.3's estimate of the outputs still to come (0: not yet set) */
    bool sgl_batch_full;           /* sglang-v0.4's batch_is_full: no prefill tried until the running batch shrinks */
    uint32_t retired;              /* finished requests that have left the batch (serve_retire) */
    uint32_t owed;                 /* finished requests whose clients are not yet told (serve_req owed) */
    uint32_t sgl_retired_seen;     /* retired at sglang-v0.4's last decode batch (its filter_batch) */
    GArray *itl;                   /* serve_itl runs: the inter-token latencies, equal neighbours merged */
    const strata_serve_frontend *front; /* the engine's server hops (serve_frontend.h; NULL: none priced) */
    strata_serve_frontend front_chat;   /* front's row with the chat endpoint's own work, where any (serve_chat.h) */
    double front_free;             /* when its serial API server is next free (serve_frontend_queue.h) */
    uint32_t front_taken;          /* serial server: the first request sent that it has not taken in yet */
    double eager_host_s;           /* the host chain of its eager forward (serve_eager.h) */
    /* the engine's CUDA graph limit by hardware (serve_graph_limit.h; NULL: its row's graph_max) and the
     * largest decode batch a rank replays in a graph under it (cuda_graph_max_bs's captured size) */
    const struct strata_serve_graph_limit *graph_limit;
    uint32_t graph_largest;
    double piecewise_host_s;       /* the host chain of its piecewise-graph forward (serve_piecewise.h; 0: none) */
    double piecewise_eager_host_s; /* ... of a forward above its largest captured size (serve_piecewise.h) */
    uint64_t piecewise_capture;    /* a step of more tokens (summed over the attention-DP ranks) runs no graph:
                                    * its largest captured size x those ranks (strata_serve_piecewise_step_limit) */
    bool past_capture;             /* this decode-only step passes max_seq_len_to_capture (serve_sched.c) */
} serve_state;

static inline uint32_t serve_tokens_of(const serve_req *q)
{
    return q->prompt + q->generated;
}

static inline strata_serve_kv_req serve_kv_req(const serve_req *q)
{
    return (strata_serve_kv_req){q->id, q->prompt, q->output, q->computed};
}

/* A run of n equal inter-token latencies (a step's decodes share one). */
typedef struct serve_itl {
    double gap;
    uint32_t n;
} serve_itl;

/* serve_run.c: records q's token sampled at st->now (its ITL from the
 * previous one, none for the first); inside a multi-step run (in_run) the
 * token is held for serve_token_delivered. */
void serve_token_sampled(serve_state *st, serve_req *q);
/* serve_run.c: q's tokens held in a multi-step run reach the client at
 * st->now, one chunk: one ITL from the previous delivery. */
void serve_token_delivered(serve_state *st, serve_req *q);

/* serve_sched.c: one step; false when no progress is possible. */
bool serve_step(serve_state *st);
/* serve_sched.c: pushes v at d's front or back; the front's id; pops it. */
void serve_deque_push(serve_deque *d, uint32_t v, bool front);
uint32_t serve_deque_peek(const serve_deque *d);
uint32_t serve_deque_pop(serve_deque *d);
/* serve_sched.c, the policies' parts: q computes n tokens this step. */
void serve_add_chunk(serve_state *st, serve_req *q, uint32_t n);
/* Running requests in order, each what it lacks up to the budget (cut to
 * whole multiples of align when the budget cuts it), its KV grown by
 * lookahead tokens more (at most to prompt + output), preempting the most
 * recently admitted when the scheme has no room; true when one was. */
bool serve_schedule_running(serve_state *st, uint32_t *budget, uint32_t lookahead, uint32_t align);
/* Swapped requests back, oldest first (serve_sched.c). */
void serve_schedule_swapped(serve_state *st, uint32_t *budget);
/* The waiting queue's head starts running: hit tokens cached, want
 * computed this step, out of the budget. */
void serve_admit_head(serve_state *st, uint32_t hit, uint32_t want, uint32_t *budget);
/* The waiting queue's head starts running if the scheme can hold its
 * prefix-cache hit and its first chunk (up to the budget); false when not. */
bool serve_admit_waiting(serve_state *st, uint32_t *budget);
/* A finished request leaves the batch: its blocks freed (after its
 * lagged step where the engine has one); counts st->retired. */
void serve_retire(serve_state *st, serve_req *q);
/* Finished requests kept in the batch for a lagged step (draining) that
 * finished before the step that just ran leave it (serve_retire); with
 * keep_owed, not those whose clients are still owed their output. vLLM V0's
 * async output processor frees them once that step's callback ran
 * (free_finished_seq_groups, core/scheduler.py:1664-1682 at 0.7.3, called
 * at the end of _process_model_outputs, engine/llm_engine.py:1148); SGLang
 * 0.4 filters them before its next decode (serve_sched_sglang.c). */
void serve_drop_lagged(serve_state *st, bool keep_owed);
/* q leaves the waiting queue's head unserved (vLLM's ignored request). */
void serve_reject_head(serve_state *st);

/* The policies (serve_scheduler.h's rows): serve_sched.c's and serve_sched_v0.c's. */
void serve_schedule_v1(serve_state *st);
void serve_schedule_v0(serve_state *st);
void serve_schedule_v0_chunked(serve_state *st);
void serve_schedule_trtllm_no_evict(serve_state *st); /* serve_sched_trtllm.c */
void serve_schedule_trtllm_no_evict_unchunked(serve_state *st);
void serve_schedule_sglang(serve_state *st);          /* serve_sched_sglang.c */
uint32_t serve_sglang_budget(uint32_t max_model_len);
void serve_schedule_turbomind(serve_state *st);       /* serve_sched_turbomind.c */
/* TurboMind's passes of a step of n chunks: dec gets the decoder pass (each
 * chunk one token, its context whole), ctx the context passes' chunks (a
 * chunk of t > 1 tokens as t - 1 tokens, no sample), shortest first, pass p
 * being ctx[first[p]] .. ctx[first[p + 1] - 1], cut at max_context tokens
 * (LlamaBatch.cc's sub-batches); ctx, dec and first hold n + 1. Returns the
 * passes. */
uint32_t serve_turbomind_passes(const strata_serve_chunk *chunks, uint32_t n, uint32_t max_context,
                                strata_serve_chunk *ctx, uint32_t *first, strata_serve_chunk *dec);
/* The step's GPU time as TurboMind runs it: its context passes, then its
 * decoder pass, padded by pad dummy decodes (a decode-only step's
 * --cuda-graph-batch-sizes padding; TurboMind 0.1 itself captures none). */
double serve_turbomind_gpu(serve_state *st, strata_serve_cost *cost, uint32_t pad);
/* What differs between SGLang releases' schedulers: serve_sched_sglang.c
 * runs the policy with 0.3.0's, serve_sched_sglang04.c with 0.4.0's. */
typedef struct serve_sgl_rules {
    double init_ratio, min_ratio, ratio_decay; /* new_token_ratio's start, floor and decay a decode step */
    bool retract_one_at_least;                 /* retract_decode retracts one even with room (0.4's first_iter) */
    bool batch_is_full;                        /* after a full batch or a refusal for tokens, no prefill is
                                                * tried until the running batch shrinks (0.4) */
    bool ignore_eos;                           /* without prefix caching, requests admitted as
                                                * add_one_req_ignore_eos admits them (0.4) */
} serve_sgl_rules;
void serve_schedule_sglang_rules(serve_state *st, const serve_sgl_rules *r);
void serve_schedule_sglang04(serve_state *st);        /* serve_sched_sglang04.c */
uint32_t serve_v0_budget(uint32_t max_model_len);
uint32_t serve_v0_chunked_budget(uint32_t max_model_len);
const char *serve_v0_pick(const strata_serve_pick_setup *s, uint32_t *budget);
/* serve_run.c */
void serve_arrivals(serve_state *st);
double serve_next_arrival(serve_state *st);
void serve_client_free(serve_state *st, serve_req *q);
void serve_client_free_at(serve_state *st, double t);
void serve_account(serve_state *st, double t);

#endif

/*
 * serve_frontend_queue.h: the API server as one serial server with both
 * halves of its work. An engine's front end (serve_frontend.h) is one
 * process whose event loop does, one piece of work at a time, in the order
 * the work became ready (asyncio's ready queue is FIFO):
 *   intake  a request's host work when it is sent (HTTP body, validation,
 *           the chat template, tokenization, the hop to the engine), which
 *           holds the server intake_s;
 *   chunk   a streamed token's output work when the engine step that sampled
 *           it ends (vLLM V1: AsyncLLM's output_handler -> OutputProcessor.
 *           process_outputs, incremental detokenization, the request's queue,
 *           serving_chat's stream generator builds and writes one SSE chunk),
 *           which holds the server chunk_s, one per streaming request a step.
 * The engine's GPU steps do not wait for the server (vLLM V1's EngineCore is
 * a separate process): the server's lag moves the client's timestamps, and a
 * request reaches the scheduler late, nothing else.
 *
 * A piece of work ready at `ready` starts at start = max(ready, free) and
 * the server is free again at start + its service time. The latency a row's
 * hops already price (recv, emit: measured at low load) runs from the
 * start, and a piece of work cannot be handed on before the server has done
 * it: a request reaches the scheduler at start + max(recv, intake_s) (the
 * hop to EngineCore is the intake's last piece: vllm-v1-serial's intake,
 * 7.014 ms, is longer than its recv, 5.080 ms + 0.08 us a prompt token, so
 * an idle server hands a prompt under 24,181 tokens on 7.014 ms after its
 * send, 1.93 ms later than the pure delay); a chunk reaches the client at
 * start + emit (emit, 5.080 ms, holds chunk_s, 0.030 ms). Callers give the
 * work in the order it became ready.
 *
 * Invariants: *free_at never decreases; a request is never handed on before
 * its intake ends; a row with intake_s and chunk_s 0 (or f NULL) gives
 * ready + recv and ready, the pure delays.
 */
#ifndef STRATA_SERVE_FRONTEND_QUEUE_H
#define STRATA_SERVE_FRONTEND_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

struct strata_serve_frontend;
struct strata_serve_config;

/* The row a run with --serial-api-server pays: f's serial row (its name + "-serial"), or f where it has none. */
const struct strata_serve_frontend *strata_serve_frontend_serial_row(const struct strata_serve_frontend *f);
/* False with an input error naming the engine and why where c asks for --serial-api-server and it would change
 * nothing: --offline (no API server), an engine pricing no front end, a front end with no serial row (SGLang's). */
bool strata_serve_frontend_serial_check(const struct strata_serve_config *c, GError **err);
/* Whether the row's server is serial (intake_s or chunk_s above 0). */
bool strata_serve_frontend_serial(const struct strata_serve_frontend *f);
/* When a request of `prompt` tokens sent at `sent` reaches the scheduler (not before its intake ends);
 * *free_at (0 at the run's start) is when the server is next free, moved on. */
double strata_serve_frontend_take(const struct strata_serve_frontend *f, double *free_at, double sent,
                                  uint32_t prompt);
/* When the server starts writing a chunk whose step ended at `ready` (the
 * client reads it emit later); *free_at moved on by chunk_s. */
double strata_serve_frontend_chunk(const struct strata_serve_frontend *f, double *free_at, double ready);

#endif

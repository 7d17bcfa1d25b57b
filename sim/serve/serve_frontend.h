/*
 * serve_frontend.h: an engine's server hops, what a request passes outside
 * the forward passes between the benchmark client's send and the client's
 * reading of a streamed token, a row named by the engine row's frontend
 * field (a table of rows in serve_frontend.c, each figure with its source
 * or ESTIMATE).
 *
 * Two parts a request:
 *   recv  from the client's send to the engine's scheduler holding it: the
 *         HTTP request, the tokenizer (a fixed part and a part a prompt
 *         token), the hop to the scheduler's process;
 *   emit  from the end of the step that samples a token to the client's
 *         reading of its chunk: the step's output hop, detokenization and
 *         the HTTP stream's chunk.
 * A request is received at send + recv (it joins no step formed before
 * that); its TTFT is first sampled token + emit - send, its E2E last token
 * + emit - send; TPOT and ITL do not move (every token is delayed alike).
 * A closed-loop client sends its next request when it reads its last token,
 * emit after the step that sampled it.
 *
 * Offline (--offline: no HTTP server, the engine driven in the client's
 * process) a row's offline row takes its place: only the hops between the
 * engine's own processes remain.
 *
 * Invariants: every figure is >= 0 and finite; an offline row's figures
 * are at most its online row's; an engine without a row
 * (`none`; the rows not priced) adds nothing; no --engine is vLLM V1's
 * row, which names "vllm-v1".
 */
#ifndef STRATA_SERVE_FRONTEND_H
#define STRATA_SERVE_FRONTEND_H

#include <stdbool.h>
#include <stdint.h>

typedef struct strata_serve_frontend {
    const char *name;    /* what engine rows name it by (serve_engine.h's frontend) */
    double recv_s;       /* send to the scheduler's receipt, tokenization's per-token part excepted */
    double tokenize_s;   /* the tokenizer's seconds a prompt token */
    double emit_s;       /* the sampling step's end to the client's chunk */
    double intake_s;     /* a request's intake holds the serial server (serve_frontend_queue.h; 0: not serial) */
    double chunk_s;      /* a streamed token's output chunk holds it (serve_frontend_queue.h) */
} strata_serve_frontend;

/* The row called name, or NULL (name NULL or unknown). An engine row names
 * its own (serve_engine.h's frontend; strata_serve_engine_frontend). */
const strata_serve_frontend *strata_serve_frontend_find(const char *name);
/* The hops a run pays: f where a server stands between client and engine; offline (--offline: vLLM's
 * benchmark_latency / benchmark_throughput and LLM class, SGLang's Engine and bench_offline_throughput) f's offline
 * row, its in-process hops alone (NULL where none: vLLM V1's, whose figure is all outside its engine). */
const strata_serve_frontend *strata_serve_frontend_served(const strata_serve_frontend *f, bool offline);
/* Seconds from send to the scheduler's receipt of a prompt of `prompt`
 * tokens (f NULL: 0). */
double strata_serve_frontend_recv(const strata_serve_frontend *f, uint32_t prompt);
/* Seconds from a token's step end to the client's chunk (f NULL: 0). */
double strata_serve_frontend_emit(const strata_serve_frontend *f);

#endif

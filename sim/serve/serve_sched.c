/*
 * serve_sched.c: the serving loop (serve.h), one step at a time, and its
 * default policy, vLLM v1's scheduler (vllm/v1/core/sched/scheduler.py,
 * notes/44-45/serving.md section 1), with the parts the other policies
 * share (serve_run.h; vLLM v0's are serve_sched_v0.c's).
 *
 * A v1 step: token budget max_num_batched_tokens. RUNNING requests first,
 * in admission order, each given what it lacks (tokens - computed: 1 for a
 * decode, the rest of its prompt for a chunked prefill) up to the budget;
 * when the scheme cannot make room, the most recently admitted running
 * request is preempted (recompute: its cache freed, computed = 0, back to
 * the head of the waiting queue; swap: its blocks copied to host memory
 * over the host link, resumed before any waiting request) until the room
 * is made or the request itself was preempted. Then, only when nothing was
 * preempted, swapped requests are swapped back in, then WAITING requests
 * in arrival order while fewer than max_num_seqs run and budget is left:
 * prefix-cache lookup, then their (chunked) prefill; the first that does
 * not fit stops admission. The step takes serve_cost's time; every request
 * whose computed tokens catch up with its tokens samples one.
 *
 * Multi-step (a policy that sets run_left, vLLM v0's): the step's decode
 * batch runs run_left more steps without scheduling, each request one
 * token a step; one that reaches its output mid-run keeps computing (its
 * extra tokens dropped) and completes when the run ends. The run's tokens
 * reach the client together when it ends: vLLM 0.6.0 creates a request's
 * output only for the run's last step ("For multi-step, do not create
 * outputs each iteration", LLMEngine._process_model_outputs,
 * engine/llm_engine.py), and its OpenAI server streams one chunk an output
 * (serving_completion.py): one ITL per request a run, as the benchmark
 * clients count them (sglang 0.3.0 bench_serving.py appends an ITL per
 * chunk that carries text). Not modelled: a request done mid-run gets its
 * output at the step it finishes (finished_now), not at the run's end.
 *
 * vLLM V1's async scheduling (config async_scheduling, --async-scheduling;
 * notes below, docs/serving.md "vLLM V1's async scheduling"): EngineCore's
 * step_with_batch_queue (vllm/v1/engine/core.py; batch queue of 2 under
 * async scheduling) schedules and launches step n+1 before it blocks on
 * step n's output, then, once n's output is processed, receives the
 * requests the API server has sent (_process_input_queue) and forms n+2
 * while the GPU runs n+1. So a request received after step n's start
 * joins step n+2 (the recv_lag rule, the loop's CPU time taken as 0: no
 * --engine prices none). No decode more for a request done at its
 * max_tokens (schedule() skips a running request with output placeholders
 * whose previous step reaches max_tokens, vllm/v1/core/sched/scheduler.py,
 * "Avoid scheduling an extra step", as read on main; the benchmarks'
 * --ignore-eos requests all end so): no overlap_lag. A request's tokens
 * are not delayed: step n's output is processed when n ends. Default on
 * from vLLM 0.14.0
 * (vllm-project/vllm PR #27614, the last item of issue #27679's plan;
 * the tag's vllm/config/vllm.py not read).
 *
 * Invariants: running holds at most max_num_seqs; a step schedules at
 * most max_num_batched_tokens; time never goes back.
 */
#include <math.h>
#include <string.h>
#include "core/error.h"
#include "serve/serve.h"
#include "serve/serve_cost.h"
#include "serve/serve_graph_limit.h"
#include "serve/serve_run.h"

void serve_deque_push(serve_deque *d, uint32_t v, bool front)
{
    if (d->n == d->cap) {
        uint32_t cap = d->cap ? 2 * d->cap : 64, *a = g_new(uint32_t, cap);
        for (uint32_t i = 0; i < d->n; i++)
            a[i] = d->a[(d->head + i) % d->cap];
        g_free(d->a);
        d->a = a, d->cap = cap, d->head = 0;
    }
    if (front) {
        d->head = (d->head + d->cap - 1) % d->cap;
        d->a[d->head] = v;
    } else {
        d->a[(d->head + d->n) % d->cap] = v;
    }
    d->n++;
}

uint32_t serve_deque_pop(serve_deque *d)
{
    uint32_t v = d->a[d->head];
    d->head = (d->head + 1) % d->cap;
    d->n--;
    return v;
}

uint32_t serve_deque_peek(const serve_deque *d)
{
    return d->a[d->head];
}

void serve_retire(serve_state *st, serve_req *q)
{
    if (q->owed) /* async_output: leaving before the step that would tell its client: told now */
        q->owed = false, st->owed--, serve_client_free(st, q);
    st->retired++;
    q->draining = false;
    q->state = SERVE_DONE;
    st->scheme->release(st->kv, q->id);
}

void serve_drop_lagged(serve_state *st, bool keep_owed)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < st->n_running; i++) {
        serve_req *q = &st->req[st->running[i]];
        if (q->draining && !(keep_owed && q->owed) && q->finish < st->now)
            serve_retire(st, q);
        else
            st->running[k++] = st->running[i];
    }
    st->n_running = k;
}

/* Preempts q: by swap when asked and the host has room, else recompute; a
 * draining request (finished) just leaves. A swap that finds no room is
 * recorded (st->swap_abort) and ends the run: vLLM v0's Scheduler._swap_out
 * raises RuntimeError("Aborted due to the lack of CPU swap space. ...")
 * where block_manager.can_swap_out is false (vllm-project/vllm@32e7db25,
 * v0.6.0, vllm/core/scheduler.py), stopping the engine; it recomputed. */
static void preempt(serve_state *st, serve_req *q)
{
    if (q->draining) { /* an owed client is told now (serve_retire), the step it was owed in formed without it */
        serve_retire(st, q);
        return;
    }
    uint64_t held = st->scheme->held(st->kv, q->id);
    st->res->preemptions++;
    if (st->cfg->swap && st->host_used + held <= st->cfg->swap_space && held) {
        double t = strata_serve_cost_swap(st->cost, held / st->block_bytes, st->block_bytes, st->kv_tensors);
        st->step_swap_s += t;
        st->res->host_link_busy_s += t;
        st->res->swapped_bytes += held;
        st->res->swaps_out++;
        st->host_used += held;
        q->swapped_bytes = held;
        st->scheme->release(st->kv, q->id);
        q->state = SERVE_SWAPPED;
        serve_deque_push(&st->swapped, q->id, false);
        return;
    }
    if (st->cfg->swap && held && !st->swap_abort)
        st->swap_abort = q->id + 1, st->swap_abort_bytes = held;
    st->scheme->release(st->kv, q->id);
    q->computed = 0;
    q->state = SERVE_WAITING;
    serve_deque_push(&st->waiting, q->id, true);
}

void serve_add_chunk(serve_state *st, serve_req *q, uint32_t n)
{
    st->chunks[st->n_chunks++] = (strata_serve_chunk){q->id, n, q->computed + n, q->computed + n >= serve_tokens_of(q)};
}

bool serve_schedule_running(serve_state *st, uint32_t *budget, uint32_t lookahead, uint32_t align)
{
    bool preempted = false;
    for (uint32_t i = 0; i < st->n_running && *budget > 0; i++) {
        serve_req *q = &st->req[st->running[i]];
        uint32_t want = serve_tokens_of(q) - q->computed;
        if (want > *budget)
            want = *budget / align * align;
        if (!want)
            break;
        strata_serve_kv_req r = serve_kv_req(q);
        uint32_t grow = q->computed + want + lookahead, most = q->prompt + q->output;
        if (lookahead && grow > most)
            grow = most > q->computed + want ? most : q->computed + want;
        bool self = false;
        while (!st->scheme->grow(st->kv, &r, grow)) {
            serve_req *victim = &st->req[st->running[--st->n_running]];
            preempt(st, victim);
            preempted = true;
            if (victim == q) {
                self = true;
                break;
            }
        }
        if (self)
            break;
        serve_add_chunk(st, q, want);
        *budget -= want;
    }
    return preempted;
}

/* Swapped requests back, oldest first, with room for their next token
 * (vLLM v0's can_swap_in and append_slots), each decoding in this step. */
void serve_schedule_swapped(serve_state *st, uint32_t *budget)
{
    while (st->swapped.n && st->n_running < st->cfg->max_num_seqs && *budget > 0) {
        serve_req *q = &st->req[serve_deque_peek(&st->swapped)];
        strata_serve_kv_req r = serve_kv_req(q);
        uint32_t want = serve_tokens_of(q) - q->computed;
        if (want > *budget)
            want = *budget;
        if (!st->scheme->grow(st->kv, &r, q->computed + want))
            break;
        serve_deque_pop(&st->swapped);
        double t = strata_serve_cost_swap(st->cost, q->swapped_bytes / st->block_bytes, st->block_bytes,
                                          st->kv_tensors);
        st->step_swap_s += t;
        st->res->host_link_busy_s += t;
        st->res->swapped_bytes += q->swapped_bytes;
        st->res->swaps_in++;
        st->host_used -= q->swapped_bytes;
        q->swapped_bytes = 0;
        q->state = SERVE_RUNNING;
        st->running[st->n_running++] = q->id;
        serve_add_chunk(st, q, want);
        *budget -= want;
    }
}

void serve_admit_head(serve_state *st, uint32_t hit, uint32_t want, uint32_t *budget)
{
    serve_req *q = &st->req[serve_deque_pop(&st->waiting)];
    q->computed = hit;
    st->res->prefix_hit_tokens += hit;
    q->state = SERVE_RUNNING;
    st->running[st->n_running++] = q->id;
    serve_add_chunk(st, q, want);
    *budget -= want;
}

bool serve_admit_waiting(serve_state *st, uint32_t *budget)
{
    serve_req *q = &st->req[serve_deque_peek(&st->waiting)];
    strata_serve_kv_req r = serve_kv_req(q);
    uint32_t hit = st->scheme->lookup ? st->scheme->lookup(st->kv, &r, serve_tokens_of(q)) : 0;
    uint32_t want = serve_tokens_of(q) - hit;
    if (want > *budget)
        want = *budget;
    if (!st->scheme->grow(st->kv, &r, hit + want))
        return false;
    serve_admit_head(st, hit, want, budget);
    return true;
}

static void schedule_waiting(serve_state *st, uint32_t *budget)
{
    while (st->waiting.n && st->n_running < st->cfg->max_num_seqs && *budget > 0)
        if (!serve_admit_waiting(st, budget))
            break;
}

void serve_reject_head(serve_state *st)
{
    serve_req *q = &st->req[serve_deque_pop(&st->waiting)];
    q->state = SERVE_DONE;
    st->res->rejected++;
    st->n_done++;
    serve_client_free(st, q);
}

/* A request that cannot fit the empty pool is rejected (vLLM refuses a
 * prompt longer than the KV cache); true when one was. */
static bool reject_unfittable(serve_state *st)
{
    if (st->n_running || !st->waiting.n || st->n_chunks || st->step_swap_s > 0)
        return false;
    serve_reject_head(st);
    return true;
}

void serve_schedule_v1(serve_state *st)
{
    uint32_t budget = st->cfg->max_num_batched_tokens;
    bool preempted = serve_schedule_running(st, &budget, 0, 1);
    if (!preempted && st->cfg->swap)
        serve_schedule_swapped(st, &budget);
    if (!preempted && !st->swapped.n)
        schedule_waiting(st, &budget);
}

/* A multi-step run's next step: the same batch, one more token each; one
 * that has all its output computes a token nobody keeps. */
static void next_run_step(serve_state *st)
{
    st->step_swap_s = 0;
    for (uint32_t i = 0; i < st->n_chunks; i++) {
        const serve_req *q = &st->req[st->chunks[i].id];
        st->chunks[i] = (strata_serve_chunk){q->id, 1, q->computed + 1, q->generated < q->output};
    }
}

/* vLLM V0's async output processor (serve_engine.h async_output), as 0.7.3
 * runs it (vllm-0.7.3 sdist): LLMEngine.step schedules step n+1
 * (engine/llm_engine.py:1337-1341) before step n's outputs are processed,
 * hands the processing to the model runner as async_callback (:1386-1388),
 * which calls it after step n+1's forward and logits are issued, before the
 * sampler (worker/model_runner.py:1778-1779); _process_model_outputs then
 * makes the request outputs and MQLLMEngine's callback sends them to the
 * API server (engine/multiprocessing/engine.py:80-82). So a request done at
 * step n is still running when step n+1 is scheduled ("With async
 * postprocessor, an extra decode run is done to process the final tokens",
 * core/scheduler.py:712-719): overlap_lag's decode more; and step n's
 * tokens leave at step n+1's start + its host work (the forward's issue
 * taken as 0, ESTIMATE: CUDA graphs replay in one call). On unless
 * multi-step (its own output path), pipeline parallel, speculative decoding
 * or eager mode (config.py:669-705; platforms/cuda.py:93-100, rocm.py:
 * 154-161), none of which strata runs with this row but multi-step. */
static bool async_output(const serve_state *st)
{
    const strata_serve_engine *e = st->cfg->engine;
    return e && e->async_output && st->cfg->num_scheduler_steps <= 1;
}

/* The outputs of the step that ended at st->now leave d into this one
 * (async_output): first tokens and finished requests' clients. */
static void emit_late(serve_state *st, double d)
{
    for (uint32_t i = 0; i < st->n_running; i++) {
        serve_req *q = &st->req[st->running[i]];
        if (q->generated == 1 && q->first_token == st->now)
            q->first_token += d;
        if (q->owed) {
            q->owed = false, st->owed--;
            q->finish += d;
            serve_client_free_at(st, st->now + d);
        }
    }
}

/* After a step of time t: tokens computed, tokens sampled, requests done
 * (in a multi-step run, when the run ends). Under an engine with
 * overlap_lag (serve_engine.h) a request done in this step completes now
 * (its finish time, its client) but stays in the batch, draining, for one
 * more decode whose token nobody keeps; its blocks are freed after that
 * step. */
static void finish_step(serve_state *st)
{
    bool late = async_output(st), lag = late || (st->cfg->engine && st->cfg->engine->overlap_lag);
    for (uint32_t i = 0; i < st->n_chunks; i++) {
        serve_req *q = &st->req[st->chunks[i].id];
        if (q->state != SERVE_RUNNING)
            continue;
        q->computed += st->chunks[i].tokens;
        if (q->draining) {
            serve_retire(st, q);
            continue;
        }
        if (st->chunks[i].tokens == 1 && q->generated)
            st->res->decode_tokens++;
        else
            st->res->prefill_tokens += st->chunks[i].tokens;
        if (st->chunks[i].samples)
            serve_token_sampled(st, q);
        if (st->in_run && !st->run_left)
            serve_token_delivered(st, q);
        if (!q->generated || q->generated < q->output || st->run_left)
            continue;
        q->finish = st->now;
        if (lag)
            q->draining = true;
        else
            serve_retire(st, q);
        st->n_done++;
        st->res->completed++;
        if (late)
            q->owed = true, st->owed++; /* its client told inside the next step (emit_late) */
        else
            serve_client_free(st, q);
    }
    if (!st->run_left)
        st->in_run = false;
    uint32_t k = 0;
    for (uint32_t i = 0; i < st->n_running; i++)
        if (st->req[st->running[i]].state == SERVE_RUNNING)
            st->running[k++] = st->running[i];
    st->n_running = k;
}

/* A decode batch of n as a rank's CUDA graph sees it: under attention DP
 * the largest rank's, ceil(n / ranks) (SGLang's can_run and replay read
 * max(global_num_tokens)), else n. */
static uint32_t graph_ranks(const strata_serve_config *c) { return c->attention_dp && c->tp > 1 ? c->tp : 1; }

/* Whether a decode-only step's longest context (prompt + tokens so far: vLLM's seq_data.get_len(), the position
 * the step writes + 1) passes the engine's max_seq_len_to_capture (serve_engine.h seq_capture, or
 * --max-seq-len-to-capture). vLLM V0 then runs the step eagerly and unpadded: 0.4.2's _prepare_decode
 * (worker/model_runner.py:512-517, vllm-0.4.2 wheel) takes a graph only where max(seq_lens) <=
 * max_seq_len_to_capture, 0.6.0's _use_captured_graph the same with max_decode_seq_len (:666-670; 0.6.4 :742-751,
 * 858-861), 0.7.3's alike (:881-884); the default 8192 (engine/arg_utils.py: 0.4.2 :55, 0.6.3 :126, 0.7.3 :137),
 * min'd with max_model_len (config.py _verify_cuda_graph), which no context passes. 0.6.3's wheel passes
 * max_decode_seq_len=max_encoder_seq_len (model_runner.py:833-836, 0 for a decoder-only model), so it graphs every
 * context (the typo vllm-project/vllm PR #9285 fixed, for 0.6.4): a case of that release passes its
 * max_model_len here. Computed once a step (serve_step: st->past_capture), read by engine_graph_pad and step_eager. */
static bool step_past_capture(const serve_state *st)
{
    const strata_serve_engine *e = st->cfg->engine;
    uint32_t limit = st->cfg->max_seq_len_to_capture ? st->cfg->max_seq_len_to_capture : e ? e->seq_capture : 0;
    for (uint32_t i = 0; limit && i < st->n_chunks; i++) {
        const serve_req *q = &st->req[st->chunks[i].id];
        if ((uint64_t)q->prompt + q->generated > limit)
            return true;
    }
    return false;
}

/* The engine's own captured sizes: under a graph limit by hardware
 * (serve_graph_limit.h) its capture list up to st->graph_largest, padded
 * per rank; else (serve_engine.h graph_align) 1, 2, 4, then multiples of
 * a, the largest graph_max, or max_num_seqs rounded up to a multiple of a
 * (vLLM 0.6 _get_max_graph_batch_size). A batch above it runs eagerly,
 * unpadded. */
static uint32_t engine_graph_pad(const serve_state *st, uint32_t n)
{
    const strata_serve_config *c = st->cfg;
    const strata_serve_engine *e = c->engine;
    if (st->graph_limit) {
        uint32_t ranks = graph_ranks(c), size = strata_serve_graph_limit_size(st->graph_limit, st->graph_largest,
                                                                              (n + ranks - 1) / ranks);
        return size ? size * ranks - n : 0;
    }
    if (!e || !e->graph_align || n <= 2 || st->past_capture)
        return 0;
    uint32_t a = e->graph_align, max = e->graph_max ? e->graph_max : (c->max_num_seqs + a - 1) / a * a;
    if (n > max)
        return 0;
    return n <= 4 ? 4 - n : (n + a - 1) / a * a - n;
}

/* A decode-only step's CUDA graph padding (TensorRT-LLM's
 * _get_padded_batch, model_engine.py: under attention DP every rank pads
 * to the largest rank's batch, then to the first captured size that holds
 * it): the dummy decodes added over all ranks, n decodes' batch per rank
 * ceil(n / ranks); 0 above the last size or without sizes. */
static uint32_t graph_pad(const serve_state *st, uint32_t n)
{
    const strata_serve_config *c = st->cfg;
    uint32_t ranks = graph_ranks(c), per = (n + ranks - 1) / ranks;
    for (uint32_t i = 0; n && i < c->n_graph_sizes; i++)
        if (c->graph_sizes[i] >= per)
            return c->graph_sizes[i] * ranks - n;
    return c->n_graph_sizes || !n ? 0 : engine_graph_pad(st, n);
}

static uint64_t step_tokens(const serve_state *st)
{
    uint64_t t = 0;
    for (uint32_t i = 0; i < st->n_chunks; i++)
        t += st->chunks[i].tokens;
    return t;
}

/* Whether the engine runs this step outside a CUDA graph: a step with
 * prefill tokens, or a decode batch above the engine's largest captured
 * one (its graph limit by hardware, serve_graph_limit.h, a rank's batch
 * against st->graph_largest; else serve_engine.h graph_max; vLLM 0.6's
 * _use_captured_graph). */
static bool step_eager(const serve_state *st, bool prefill)
{
    const strata_serve_engine *e = st->cfg->engine;
    uint32_t ranks = graph_ranks(st->cfg), per = (st->n_chunks + ranks - 1) / ranks;
    if (!e || prefill)
        return e != NULL;
    return st->graph_limit ? per > st->graph_largest
                           : (e->graph_max && st->n_chunks > e->graph_max) || st->past_capture;
}

/* The step's requests, their prompts, what they had generated and the
 * prompt tokens it prefills, as the engine row's CPU time counts them. */
static strata_serve_engine_batch engine_batch(const serve_state *st)
{
    strata_serve_engine_batch b = {.requests = st->n_chunks};
    for (uint32_t i = 0; i < st->n_chunks; i++) {
        const serve_req *q = &st->req[st->chunks[i].id];
        b.prompt_tokens += q->prompt;
        b.output_tokens += q->generated;
        if (st->chunks[i].tokens > 1)
            b.prefill_tokens += st->chunks[i].tokens;
    }
    return b;
}

/* The step's forward time on one cost model: one pass of its chunks, or,
 * under an engine with context_passes, TurboMind's context passes then its
 * decoder pass (serve_sched_turbomind.c; --cuda-graph-batch-sizes pads its
 * decoder pass, where pad was computed and dropped). */
static double pass_gpu(serve_state *st, strata_serve_cost *cost, uint32_t pad)
{
    if (st->cfg->engine && st->cfg->engine->context_passes)
        return serve_turbomind_gpu(st, cost, pad);
    return strata_serve_cost_step_padded(cost, st->chunks, st->n_chunks, pad);
}

/* The step's forward pass. Under --clock duty (serve_clock.h) it starts at
 * now, at the clocks the filter gives, from its times at the peak and the
 * sustained clock. */
static double step_gpu(serve_state *st, uint32_t pad)
{
    double peak = pass_gpu(st, st->cost, pad);
    if (!st->clock)
        return peak;
    double sus = pass_gpu(st, st->cost_sustained, pad);
    return strata_serve_clock_step(st->clock, st->now, peak, sus);
}

/* The step's input copies to its device before the forward (vLLM V1's,
 * serve_engine.h input_copies): one rank's, each copying its own requests
 * under --attention-dp (the busiest rank's share), all of them otherwise. */
static double input_copies(const serve_state *st)
{
    uint32_t tp = st->cfg->attention_dp && st->cfg->tp ? st->cfg->tp : 1;
    strata_serve_engine_inputs in = {.requests = (st->n_chunks + tp - 1) / tp,
                                     .tokens = (step_tokens(st) + tp - 1) / tp,
                                     .max_model_len = st->max_model_len,
                                     .block_size = st->cfg->block_size};
    return strata_serve_engine_input_copies(st->cfg->engine, st->cost, in);
}

/* An eager step's host time: its chain (serve_eager.h). Under an overlap loop with a chain (SGLang 0.4-0.5) the
 * chain and the step's CPU work run one after the other on one thread: 0.5.6's event_loop_overlap (sglang 0.5.6
 * wheel, managers/scheduler.py:1004-1047) receives, forms the batch and calls run_batch, which issues the forward
 * from the scheduler's own thread (:1996-2001, model_worker.forward_batch_generation under forward_stream_ctx),
 * then processes the last step's results; 0.4.0's forward thread shares the GIL with it (engine row sglang-v0.4).
 * So the host is busy for chain + cpu; elsewhere the chain alone (the CPU overlapped as the row's mode says). */
static double host_chain(const serve_state *st, double cpu)
{
    const strata_serve_engine *e = st->cfg->engine;
    bool serial = e && e->mode == SERVE_ENGINE_OVERLAP && st->eager_host_s > 0;
    return st->eager_host_s + (serial ? cpu : 0);
}

bool serve_step(serve_state *st)
{
    if (!st->n_running && !st->waiting.n && !st->swapped.n)
        st->recv_by = INFINITY; /* an idle loop receives a request as it comes */
    serve_arrivals(st);
    if (st->n_done >= st->n_req && !st->owed)
        return true; /* the last arrivals were refused */
    if (st->run_left) {
        st->run_left--;
        next_run_step(st);
    } else {
        if (!st->n_running && !st->waiting.n && !st->swapped.n) {
            st->now = fmax(st->now, serve_next_arrival(st));
            return true;
        }
        st->n_chunks = 0;
        st->step_swap_s = 0;
        const strata_serve_scheduler *p = st->cfg->scheduler;
        (p ? p->schedule : serve_schedule_v1)(st);
        if (reject_unfittable(st))
            return true;
        st->in_run = st->run_left > 0;
    }
    bool prefill = false;
    for (uint32_t i = 0; i < st->n_chunks && !prefill; i++)
        prefill = st->chunks[i].tokens > 1;
    st->past_capture = !prefill && step_past_capture(st); /* graph_pad and step_eager read it on a decode step */
    uint32_t pad = prefill ? 0 : graph_pad(st, st->n_chunks);
    double gpu = step_gpu(st, pad);
    bool eager = step_eager(st, prefill);
    if (eager)
        gpu += strata_serve_cost_eager_extra(st->cost, step_tokens(st) + pad);
    const strata_serve_engine *e = st->cfg->engine;
    strata_serve_engine_batch batch = engine_batch(st); /* one pass over the step's requests */
    double cpu = st->n_chunks && e ? strata_serve_engine_cpu(e, batch) : 0;
    if (async_output(st))
        emit_late(st, cpu);
    /* an eager step (prefill tokens, or a decode batch above the graphs): its launches from the host's chain
     * (serve_eager.h) when that is longer; an overlap loop issues them from its own thread after the step's CPU
     * work (host_chain) */
    double fwd = eager ? fmax(gpu, host_chain(st, cpu)) : gpu;
    if (st->n_chunks) /* vLLM V1's piecewise graphs, none above the largest captured size: the host's chain */
        fwd = fmax(fwd, step_tokens(st) > st->piecewise_capture ? st->piecewise_eager_host_s : st->piecewise_host_s);
    double t = fwd + st->step_swap_s + input_copies(st);
    if (st->n_chunks && e)
        t = strata_serve_engine_step(e, t, batch, prefill, st->cfg->num_scheduler_steps);
    if (st->n_chunks)
        t += st->cfg->step_overhead;
    /* recv_lag: the next step's batch is formed once this step's CPU work is done, while its GPU work runs (vLLM
     * V1's async scheduling: at the step's start, no CPU time priced) */
    bool lagged = (e && e->recv_lag && e->mode == SERVE_ENGINE_OVERLAP) || st->cfg->async_scheduling;
    st->recv_by = lagged ? st->now + fmin(cpu, t) : INFINITY;
    *(prefill ? &st->res->prefill_gpu_s : &st->res->decode_gpu_s) += gpu;
    st->res->host_s += t - gpu;
    if (t <= 0 && !st->n_chunks) {
        /* the step rejected every request there was (trtllm-no-evict-unchunked: each prompt over the budget):
         * the next one waits for the next arrival; else nothing could run (every swapped request waits on a
         * full pool): wait for a completion that never comes */
        return !st->n_running && !st->waiting.n && !st->swapped.n;
    }
    serve_account(st, t);
    st->now += t;
    st->res->steps++;
    finish_step(st);
    return true;
}

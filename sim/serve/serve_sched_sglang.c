/*
 * serve_sched_sglang.c: SGLang 0.3's scheduler (serve_scheduler.h's
 * sglang-v0.3 row), as SGLang 0.3.0 runs it, read from its PyPI wheel
 * (sglang-0.3.0-py3-none-any.whl): sglang/srt/managers/tp_worker.py,
 * policy_scheduler.py, schedule_batch.py, sglang/srt/server_args.py,
 * sglang/global_config.py.
 *
 * A step (ModelTpServer.forward_step, tp_worker.py:255-287): a prefill
 * batch when get_new_prefill_batch forms one, run alone ("Run a new prefill
 * batch"; mixed with decodes only under --enable-mixed-chunk, off by
 * default, server_args.py:87); otherwise the running batch's decodes. The
 * decode loop runs up to num_continue_decode_steps (10) steps but breaks
 * after each one whose outputs are streamed (out_pyobjs and has_stream,
 * tp_worker.py:277-278; with stream_interval 1 every decode step has
 * outputs), as the benchmarks' streamed requests are: one decode step per
 * forward_step, so waiting requests are looked at after every step.
 *
 * get_new_prefill_batch (tp_worker.py:398-491): nothing when the running
 * batch holds max_running_requests; else a PrefillAdder
 * (policy_scheduler.py:107-236) with
 *   rem_total_tokens = the pool's free tokens (available_size +
 *     evictable_size) less, for each running request, min(max_new_tokens -
 *     outputs so far, CLIP_MAX_NEW_TOKENS 4096) x new_token_ratio;
 *   rem_input_tokens = max_prefill_tokens (16384, server_args.py:55);
 *   rem_chunk_tokens = chunked_prefill_size (8192, server_args.py:54: the
 *     row's token budget).
 * The request whose prefill was cut last step (current_inflight_req) goes
 * first, cut again to rem_chunk_tokens (add_inflight_req); then waiting
 * requests in queue order (the default policy lpm sorts by cached prefix,
 * a stable sort: queue order when no prompt has a cached prefix; strata
 * keeps queue order), each (add_one_req) refused when its input +
 * min(max_new_tokens, 4096) >= rem_total_tokens, or its input >
 * rem_input_tokens after another was added; taken whole when its input
 * fits rem_chunk_tokens, else cut to it (it becomes the inflight request,
 * sampling nothing); the loop stops after a refusal, when any of the three
 * remainders is <= 0, or when running + taken >= max_running_requests.
 *
 * Decode (forward_decode_batch, tp_worker.py:653-671): when the pool's
 * free tokens are fewer than the batch (check_decode_mem), requests are
 * retracted (retract_decode, schedule_batch.py:475-550): ordered by
 * (outputs, -input) descending, the last retracted first (fewest outputs,
 * then longest input), until the free tokens reach retract_decode_steps
 * (20) per request left or one is left; a retracted request frees its KV
 * and is appended to the waiting queue with its prompt and outputs to
 * prefill again; new_token_ratio becomes min(1, (outputs of those left +
 * 20 x their number) / their max_new_tokens). Otherwise new_token_ratio
 * decays by 0.001 down to 0.1 (global_config.py:19-21; the minimum is
 * base_min_new_token_ratio 0.1 x schedule_conservativeness 1.0). An idle
 * server (no prefill batch, no running batch) resets it to 0.7; the run
 * starts so.
 *
 * strata's pool counts whole blocks of block_size tokens where SGLang's
 * counts tokens (its pages are one token): free tokens are free blocks x
 * block_size. max_running_requests is the run's max_num_seqs. SGLang's
 * radix cache keeping a retracted request's prompt is not modelled: it
 * prefills everything again.
 *
 * The policy's core takes the rules that differ between releases
 * (serve_run.h's serve_sgl_rules): serve_schedule_sglang runs it with
 * 0.3.0's, serve_sched_sglang04.c with 0.4.0's (batch_is_full, a retract
 * of at least one, the ratio's floor and decay, add_one_req_ignore_eos
 * without prefix caching; that file cites them). Under an engine with
 * overlap_lag, a finished request whose lagged step was a prefill leaves
 * before the next step (serve_drop_lagged).
 *
 * Invariants: a step is all prefill chunks or all decodes; at most one
 * running request has a cut prefill; new_token_ratio stays in [min_ratio,
 * 1].
 */
#include "serve/serve_run.h"

enum {
    SGL_CHUNKED_PREFILL = 8192,  /* server_args.py:54 chunked_prefill_size */
    SGL_MAX_PREFILL = 16384,     /* server_args.py:55 max_prefill_tokens */
    SGL_CLIP_NEW = 4096,         /* policy_scheduler.py:32 CLIP_MAX_NEW_TOKENS */
    SGL_RETRACT_STEPS = 20,      /* global_config.py:29 retract_decode_steps */
};
/* global_config.py:19-21: init_new_token_ratio, base_min_new_token_ratio
 * (x schedule_conservativeness 1.0), new_token_ratio_decay; no batch_is_full
 * (tp_worker.py's get_new_prefill_batch has none) and retract_decode's loop
 * stops as soon as the free tokens suffice (schedule_batch.py:489) */
static const serve_sgl_rules sgl_v03 = {0.7, 0.1, 0.001, false, false, false};

uint32_t serve_sglang_budget(uint32_t max_model_len)
{
    (void)max_model_len;
    return SGL_CHUNKED_PREFILL;
}

/* The pool's free tokens (whole free blocks x block_size). */
static int64_t free_tokens(const serve_state *st)
{
    strata_serve_kv_stats ks = {0};
    st->scheme->stats(st->kv, &ks);
    uint64_t bb = st->block_bytes ? st->block_bytes : 1;
    return (int64_t)((ks.capacity - ks.reserved) / bb * st->cfg->block_size);
}

static uint32_t clipped_new(const serve_req *q)
{
    return q->output < SGL_CLIP_NEW ? q->output : SGL_CLIP_NEW;
}

/* min(max_new_tokens - outputs so far, 4096) (remove_running_tokens) */
static uint32_t clipped_left(const serve_req *q)
{
    uint32_t left = q->output > q->generated ? q->output - q->generated : 0;
    return left < SGL_CLIP_NEW ? left : SGL_CLIP_NEW;
}

/* A running request decodes once it has sampled and holds the KV of all
 * its tokens but the last sampled (not the inflight one, nor a retracted
 * request prefilling again). */
static bool decoding(const serve_req *q)
{
    return q->generated > 0 && q->computed + 1 == serve_tokens_of(q);
}

typedef struct sgl_adder {
    double rem_total;
    int64_t rem_input, rem_chunk;
    uint32_t taken;
    double cur_rem;  /* cur_rem_tokens (0.4): the free tokens less the inputs taken */
    GArray *states;  /* add_one_req_ignore_eos's req_states (0.4), built at its first call */
} sgl_adder;

/* One entry of req_states: a request's tokens still to generate and the
 * tokens it holds (prompt and outputs). */
typedef struct sgl_state {
    double left, occupied;
} sgl_state;

/* PrefillAdder's AddReqResult (0.4.0's schedule_policy.py:114-117; 0.3.0's
 * loop breaks on any but CONTINUE alike). */
typedef enum { SGL_CONTINUE, SGL_NO_TOKEN, SGL_OTHER } sgl_result;

/* budget_state: no tokens left, or no input or chunk budget left (0.4.0's
 * cur_rem_tokens, the free tokens less the inputs taken, is >= rem_total:
 * its own check adds nothing) */
static sgl_result budget_state(const sgl_adder *a)
{
    return a->rem_total <= 0 || a->cur_rem <= 0                ? SGL_NO_TOKEN
           : a->rem_input <= 0 || a->rem_chunk <= 0 ? SGL_OTHER
                                                    : SGL_CONTINUE;
}

/* _prefill_one_req: a request's chunk of `want` tokens taken, with its
 * expected outputs when whole. */
static void took(sgl_adder *a, const serve_req *q, uint32_t want, bool cut)
{
    a->rem_total -= want + (cut ? 0 : clipped_new(q));
    a->cur_rem -= want;
    a->rem_input -= want, a->rem_chunk -= want;
    a->taken++;
}

/* add_inflight_req: the cut request's next chunk, up to rem_chunk_tokens. */
static void add_inflight(serve_state *st, sgl_adder *a, serve_req *q)
{
    uint32_t want = serve_tokens_of(q) - q->computed;
    bool cut = want > a->rem_chunk;
    if (cut)
        want = (uint32_t)(a->rem_chunk > 0 ? a->rem_chunk : 0);
    strata_serve_kv_req r = serve_kv_req(q);
    if (!want || !st->scheme->grow(st->kv, &r, q->computed + want))
        return;
    serve_add_chunk(st, q, want);
    took(a, q, want, cut);
}

/* The tail add_one_req and add_one_req_ignore_eos share (_prefill_one_req,
 * or the cut at rem_chunk_tokens): the waiting queue's head q, hit tokens
 * cached, taken whole or cut to the chunk budget; OTHER when no chunk budget
 * is left, NO_TOKEN when the pool cannot hold its chunk, else budget_state. */
static sgl_result take_head(serve_state *st, sgl_adder *a, serve_req *q, uint32_t hit)
{
    uint32_t want = serve_tokens_of(q) - hit;
    bool cut = want > a->rem_chunk;
    if (cut)
        want = (uint32_t)(a->rem_chunk > 0 ? a->rem_chunk : 0);
    strata_serve_kv_req r = serve_kv_req(q);
    if (!want)
        return SGL_OTHER;
    if (!st->scheme->grow(st->kv, &r, hit + want))
        return SGL_NO_TOKEN;
    uint32_t budget = want;
    serve_admit_head(st, hit, want, &budget);
    took(a, q, want, cut);
    return budget_state(a);
}

/* add_one_req for the waiting queue's head: CONTINUE when taken and budget
 * is left; a refusal for tokens (or a pool that cannot hold the chunk) is
 * NO_TOKEN, one for the input or chunk budget OTHER. */
static sgl_result add_one(serve_state *st, sgl_adder *a)
{
    serve_req *q = &st->req[serve_deque_peek(&st->waiting)];
    strata_serve_kv_req r = serve_kv_req(q);
    uint32_t hit = st->scheme->lookup ? st->scheme->lookup(st->kv, &r, serve_tokens_of(q)) : 0;
    uint32_t input = serve_tokens_of(q) - hit;
    if ((double)input + clipped_new(q) >= a->rem_total)
        return SGL_NO_TOKEN;
    if (input > a->rem_input && a->taken)
        return SGL_OTHER;
    return take_head(st, a, q, hit);
}

/* add_req_state: q's entry when it has tokens left to generate (0.4.0's
 * schedule_policy.py:212-232; new_token_ratio 1 for ignore_eos): appended,
 * or placed before the first entry with as many left or more, before the
 * last when none has (its loop leaves i at the last index). */
static void add_state(GArray *states, const serve_req *q, bool insert)
{
    sgl_state e = {(double)q->output - q->generated, (double)serve_tokens_of(q)};
    if (e.left <= 0)
        return;
    guint i = 0;
    if (insert)
        for (i = 0; i < states->len && e.left > g_array_index(states, sgl_state, i).left; i++)
            if (i + 1 == states->len)
                break;
    if (insert)
        g_array_insert_val(states, i, e);
    else
        g_array_append_val(states, e);
}

static gint by_left(gconstpointer x, gconstpointer y)
{
    double a = ((const sgl_state *)x)->left, b = ((const sgl_state *)y)->left;
    return (a > b) - (a < b);
}

/* add_one_req_ignore_eos (0.4.0's schedule_policy.py:207-280, taken when
 * the request has ignore_eos and the radix cache is off): the head admitted
 * only if, running every request with tokens left (the running batch's, the
 * step's and its own) to its end, fewest left first, the free tokens less
 * the inputs taken and its prompt, plus what the finished ones free, stay
 * above the next decode steps of those left (decode_steps the next entry's
 * tokens left, as the source has it). No max_prefill_tokens check. */
static sgl_result add_one_ignore_eos(serve_state *st, sgl_adder *a)
{
    serve_req *q = &st->req[serve_deque_peek(&st->waiting)];
    if (!a->states) {
        a->states = g_array_new(FALSE, FALSE, sizeof(sgl_state));
        add_state(a->states, q, false);
        for (uint32_t i = 0; i < st->n_running; i++)
            if (decoding(&st->req[st->running[i]]))
                add_state(a->states, &st->req[st->running[i]], false);
        for (uint32_t i = 0; i < st->n_chunks; i++)
            add_state(a->states, &st->req[st->chunks[i].id], false);
        g_array_sort(a->states, by_left); /* Python's sort is stable; equal keys are equal entries here */
    } else {
        add_state(a->states, q, true);
    }
    double rem = a->cur_rem - q->prompt, freed = 0;
    for (guint i = 0; i < a->states->len; i++) {
        const sgl_state *e = &g_array_index(a->states, sgl_state, i);
        double steps = i + 1 < a->states->len ? g_array_index(a->states, sgl_state, i + 1).left : e->left;
        if (rem + freed - steps * (double)(a->states->len - i) <= 0)
            return SGL_NO_TOKEN;
        freed += e->occupied;
    }
    return take_head(st, a, q, 0);
}

/* The request whose prefill was cut last step, if any. */
static serve_req *inflight_of(serve_state *st)
{
    for (uint32_t i = 0; i < st->n_running; i++)
        if (!decoding(&st->req[st->running[i]]))
            return &st->req[st->running[i]];
    return NULL;
}

/* get_new_batch_prefill's loop as 0.4.0 runs it (scheduler.py:838-862):
 * the max_running_requests check before each request, a full batch or a
 * refusal for tokens setting batch_is_full; with ignore_eos (the radix
 * cache off: strata's requests always run to their output length, as
 * sglang.bench_serving's ignore_eos requests do) add_one_req_ignore_eos. */
static void take_waiting_v04(serve_state *st, sgl_adder *a, uint32_t running_bs, bool ignore_eos)
{
    while (st->waiting.n) {
        if (running_bs + a->taken >= st->cfg->max_num_seqs) {
            st->sgl_batch_full = true;
            break;
        }
        sgl_result res = ignore_eos ? add_one_ignore_eos(st, a) : add_one(st, a);
        if (res != SGL_CONTINUE) {
            st->sgl_batch_full = st->sgl_batch_full || res == SGL_NO_TOKEN;
            break;
        }
    }
}

/* get_new_prefill_batch: fills the step's prefill chunks, if any. Under
 * batch_is_full (0.4), nothing unless a cut prefill goes on (scheduler.py:
 * 803-810). */
static void prefill_batch(serve_state *st, uint32_t running_bs, const serve_sgl_rules *r)
{
    serve_req *inflight = inflight_of(st);
    if (r->batch_is_full && (st->sgl_batch_full || !st->waiting.n) && !inflight)
        return;
    if (running_bs >= st->cfg->max_num_seqs) {
        st->sgl_batch_full = r->batch_is_full;
        return;
    }
    double avail = (double)free_tokens(st);
    sgl_adder a = {avail, SGL_MAX_PREFILL, st->cfg->max_num_batched_tokens, 0, avail, NULL};
    for (uint32_t i = 0; i < st->n_running; i++) {
        const serve_req *q = &st->req[st->running[i]];
        if (decoding(q))
            a.rem_total -= (double)clipped_left(q) * st->new_token_ratio;
    }
    if (inflight)
        add_inflight(st, &a, inflight);
    if (r->batch_is_full)
        take_waiting_v04(st, &a, running_bs, r->ignore_eos && !st->cfg->prefix_caching);
    else
        while (st->waiting.n)
            if (add_one(st, &a) != SGL_CONTINUE || running_bs + a.taken >= st->cfg->max_num_seqs)
                break;
    if (a.states)
        g_array_free(a.states, TRUE);
}

/* retract_decode's order: the request retracted next among running[0..n),
 * fewest outputs first, then the longest prompt (origin_input_ids), then
 * the latest in the batch (a stable sort, descending, popped from its end). */
static uint32_t next_to_retract(const serve_state *st)
{
    uint32_t best = UINT32_MAX;
    for (uint32_t i = 0; i < st->n_running; i++) {
        const serve_req *q = &st->req[st->running[i]];
        if (!decoding(q) || q->draining) /* a finished request in its lagged decode is not retracted */
            continue;
        if (best == UINT32_MAX)
            best = i;
        const serve_req *b = &st->req[st->running[best]];
        if (q->generated < b->generated || (q->generated == b->generated && q->prompt >= b->prompt))
            best = i;
    }
    return best;
}

/* running[i] retracted: its KV freed, appended to the waiting queue to
 * prefill its prompt and outputs again. */
static void retract_one(serve_state *st, uint32_t i)
{
    serve_req *q = &st->req[st->running[i]];
    for (uint32_t k = i; k + 1 < st->n_running; k++)
        st->running[k] = st->running[k + 1];
    st->n_running--;
    st->scheme->release(st->kv, q->id);
    st->res->preemptions++;
    q->computed = 0;
    q->state = SERVE_WAITING;
    serve_deque_push(&st->waiting, q->id, false);
}

/* retract_decode: retracts until the free tokens reach 20 per request
 * left (or one is left; 0.4 retracts one even with room); new_token_ratio
 * from those left. */
static void retract(serve_state *st, uint32_t bs, const serve_sgl_rules *r)
{
    for (bool first = r->retract_one_at_least; bs > 1 && (first || free_tokens(st) < (int64_t)bs * SGL_RETRACT_STEPS);
         bs--, first = false) {
        uint32_t i = next_to_retract(st);
        if (i == UINT32_MAX)
            break;
        retract_one(st, i);
    }
    st->sgl_batch_full = false; /* the batch shrank (0.4's update_running_batch) */
    double decoded = 0, max_new = 0;
    for (uint32_t i = 0; i < st->n_running; i++) {
        const serve_req *q = &st->req[st->running[i]];
        if (decoding(q))
            decoded += q->generated, max_new += q->output;
    }
    double ratio = max_new > 0 ? (decoded + SGL_RETRACT_STEPS * (double)bs) / max_new : 1.0;
    st->new_token_ratio = ratio < 1.0 ? ratio : 1.0;
}

/* Blocks the decoding requests need for their next token: SGLang's pool
 * is per token, so its check_decode_mem asks for one free token a
 * request; strata's asks for a block for each whose last is full. */
static uint64_t decode_blocks(const serve_state *st)
{
    uint64_t need = 0, bb = st->block_bytes ? st->block_bytes : 1, b = st->cfg->block_size;
    for (uint32_t i = 0; i < st->n_running; i++) {
        const serve_req *q = &st->req[st->running[i]];
        uint64_t want = ((uint64_t)q->computed + 1 + b - 1) / b, held = st->scheme->held(st->kv, q->id) / bb;
        need += decoding(q) && want > held ? want - held : 0;
    }
    return need;
}

/* forward_decode_batch: one token for every decoding request, after
 * retracting when the pool cannot give them; one whose block still does
 * not come (a scheme that rounds) is retracted too. */
static void decode_batch(serve_state *st, uint32_t bs, const serve_sgl_rules *r)
{
    uint64_t b = st->cfg->block_size ? st->cfg->block_size : 1;
    if (st->retired != st->sgl_retired_seen) /* filter_batch dropped finished requests: the batch shrank */
        st->sgl_batch_full = false;
    st->sgl_retired_seen = st->retired;
    if ((uint64_t)free_tokens(st) / b < decode_blocks(st))
        retract(st, bs, r);
    else if (st->new_token_ratio - r->ratio_decay > r->min_ratio)
        st->new_token_ratio -= r->ratio_decay;
    else
        st->new_token_ratio = r->min_ratio;
    for (uint32_t i = 0; i < st->n_running;) {
        serve_req *q = &st->req[st->running[i]];
        strata_serve_kv_req kr = serve_kv_req(q);
        if (!decoding(q)) {
            i++;
        } else if (st->scheme->grow(st->kv, &kr, q->computed + 1)) {
            serve_add_chunk(st, q, 1);
            i++;
        } else if (q->draining) { /* finished: it leaves without its lagged decode */
            serve_retire(st, q);
            for (uint32_t k = i; k + 1 < st->n_running; k++)
                st->running[k] = st->running[k + 1];
            st->n_running--;
        } else {
            retract_one(st, i);
        }
    }
}

/* A finished request still in the batch for the engine's lagged decode
 * (overlap_lag) whose next step was a prefill leaves without that decode:
 * SGLang 0.4 processes step n's results while step n+1 runs and filters
 * the finished ones out of the running batch before its next decode
 * (scheduler.py:911-917), so a request done at step n that step n+1 (a
 * prefill) did not run is gone, its KV freed, by step n+2
 * (serve_drop_lagged, owed clients too). */
void serve_schedule_sglang_rules(serve_state *st, const serve_sgl_rules *r)
{
    if (st->new_token_ratio <= 0) /* the idle server before the first request */
        st->new_token_ratio = r->init_ratio;
    serve_drop_lagged(st, false);
    if (inflight_of(st)) /* the cut request moved out of the last batch (scheduler.py:771-777) */
        st->sgl_batch_full = false;
    uint32_t running_bs = 0;
    for (uint32_t i = 0; i < st->n_running; i++)
        running_bs += decoding(&st->req[st->running[i]]);
    prefill_batch(st, running_bs, r);
    if (st->n_chunks)
        return;
    if (running_bs) {
        decode_batch(st, running_bs, r);
        return;
    }
    if (r->batch_is_full && st->sgl_batch_full) {
        /* 0.4: update_running_batch finds the batch empty and clears batch_is_full (scheduler.py:917-919); the
         * next iteration, at no time between, tries a prefill */
        st->sgl_batch_full = false, st->sgl_retired_seen = st->retired;
        prefill_batch(st, 0, r);
        if (st->n_chunks)
            return;
    }
    if (!st->n_running)
        st->new_token_ratio = r->init_ratio, st->sgl_batch_full = false;
}

void serve_schedule_sglang(serve_state *st) { serve_schedule_sglang_rules(st, &sgl_v03); }

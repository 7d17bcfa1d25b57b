/*
 * serve_run.c: a serving run's setup, arrivals, accounting and results
 * (serve.h); its loop is serve_sched.c's.
 *
 * Arrivals: open loop, a request joins the waiting queue at its arrival
 * time; closed loop (concurrency C), the first C requests arrive at 0 and
 * each completion sends the next one at once (a benchmark client's fixed
 * concurrency). A request the engine refuses for its length (serve_engine.h)
 * is rejected on arrival, its client free again at once. Under an engine
 * with recv_lag (serve_engine.h) a request that has arrived joins the
 * waiting queue only once the loop forms a step after its arrival
 * (recv_by); an idle loop receives it at once.
 * The engine's server hops (serve_frontend.h): a request is received by
 * its scheduler at its send + the hops before it (recv), and the client
 * reads each token the hops after its step (emit) later; a closed-loop
 * client sends its next request when it reads its last token.
 * Figures: TTFT = first token + emit - arrival (the send); TPOT = (finish -
 * first token) / (output - 1) for output > 1 (vLLM's benchmark_serving);
 * E2E = finish + emit - arrival; percentiles by linear interpolation between order statistics
 * (numpy's default). Means over time weigh each step by its duration.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "core/units.h"
#include "serve/serve_chat.h"
#include "serve/serve_eager.h"
#include "serve/serve_frontend_queue.h"
#include "serve/serve_graph_limit.h"
#include "serve/serve_piecewise.h"
#include "serve/serve_fields.h"
#include "serve/serve_links.h"
#include "serve/serve_mla_prefill_v07.h"
#include "serve/serve_mla_prefill_v1.h"
#include "serve/serve_run.h"
#include "serve/serve_sampler.h"

enum { MAX_SAMPLES = 2048 };

void strata_serve_config_default(strata_serve_config *c)
{
    *c = (strata_serve_config){.tp = 1, .max_num_seqs = 1024, .max_num_batched_tokens = 8192, .block_size = 16,
                               .gpu_memory_utilization = 0.9, .prefix_caching = true, .swap = false,
                               .swap_space = 4ull << 30, .num_scheduler_steps = 1};
}

bool strata_serve_memory(const strata_hw *hw, const strata_serve_model *m, const strata_serve_config *c,
                         uint64_t *weights, uint64_t *activations, uint64_t *pool, GError **err)
{
    strata_serve_holdings held;
    return strata_serve_memory_held(hw, m, c, weights, activations, pool, &held, err);
}

bool strata_serve_memory_held(const strata_hw *hw, const strata_serve_model *m, const strata_serve_config *c,
                              uint64_t *weights, uint64_t *activations, uint64_t *pool, strata_serve_holdings *held,
                              GError **err)
{
    const strata_memory_spec *mem = strata_hw_memory(hw, strata_hw_compute(hw, 0)->operands);
    double act = strata_serve_dtype_bytes(m->dtype);
    uint64_t t = c->max_num_batched_tokens, tp = c->tp ? c->tp : 1, at = c->attention_dp ? 1 : tp;
    uint64_t qkv = ((uint64_t)m->heads / at + 2ull * strata_serve_kv_heads_per_rank(m, (uint32_t)at)) * m->head_dim;
    uint64_t seqs = c->max_num_seqs < t ? c->max_num_seqs : t;
    double gathered = c->attention_dp ? (double)tp : 1.0; /* attention dp: the MLP sees every rank's tokens */
    /* the profile run's peak: hidden states in and out, QKV, the MLP's gate/up and activation; fp32 logits and
     * probabilities of the sampled rows (ESTIMATE of vLLM's profile_run peak, from its tensors' shapes) */
    double dense = 3.0 * m->intermediate / (double)tp * gathered, logits = (double)seqs * m->vocab / (double)at * 8.0;
    *activations = (uint64_t)((double)t * (2.0 * m->hidden + (double)qkv + dense) * act + logits);
    if (c->engine && c->engine->pool_of_free) { /* a dense model keeps the estimate above */
        /* TensorRT-LLM's profile run (KvCacheCreator: max_num_tokens a rank, each rank's under attention DP)
         * peaks in the MLP of the larger kind its layers have: a dense MLP's buffers, or the fused MoE's call
         * on every rank's tokens (strata_serve_moe_call_bytes) with, under attention DP, the gathered input,
         * its top_k ids and scales (fused_moe_cutlass.py's allgather) */
        strata_model_shape s;
        strata_serve_model_shape(m, &s);
        double n = (double)t * gathered, moe = (double)strata_serve_moe_call_bytes(m, (uint32_t)tp, (uint64_t)n);
        if (moe > 0) {
            if (c->attention_dp)
                moe += n * ((double)m->hidden * act + 8.0 * m->top_k);
            bool has_dense = (int64_t)s.layers > strata_model_moe_layers(&s);
            double mlp = fmax(has_dense ? dense * (double)t * act : 0, moe);
            *activations = (uint64_t)((double)t * (2.0 * m->hidden + (double)qkv) * act + mlp + logits);
        }
    }
    /* the decoder's buffers for every slot, allocated before the pool is sized (serve_sampler.h; counted
     * with the activations) */
    const strata_serve_sampler *dec = c->engine && c->engine->sampler ? strata_serve_sampler_find(c->engine->sampler,
                                                                                                  NULL)
                                                                      : NULL;
    if (dec)
        *activations += (uint64_t)strata_serve_sampler_buffer_bytes(dec, c->max_num_seqs, m->vocab, (uint32_t)tp);
    *weights = strata_serve_weight_bytes_dp(m, (uint32_t)tp, c->attention_dp);
    /* vLLM: gpu_memory_utilization of the device, less the rest; TensorRT-LLM: its fraction of what the
     * rest leaves free (serve_engine.c, the trtllm row: KvCacheCreator._cal_max_memory) */
    /* vLLM's requested memory is its share of the total torch.cuda.mem_get_info reports (vllm-project/vllm
     * v0.11.0 wheel, vllm/v1/worker/gpu_worker.py:183-184, requested_memory; the pool that less the weights, the
     * profile's torch peak and the non-torch increase, :279-280, vllm/utils/__init__.py:2858-2865; CUDA graphs
     * are captured after the pool and not counted, gpu_worker.py:344-361): the file's reported_capacity where
     * it gives one; vLLM 0.6's V0 worker the same (total_gpu_memory x gpu_memory_utilization). TensorRT-LLM and
     * SGLang read the same driver figures (cudaMemGetInfo, torch.cuda.mem_get_info), so every row takes it: the
     * device's total as its runtime sees it (docs/serving.md, "One GPU's KV pool under vLLM 0.11") */
    double total = (double)(mem->reported_capacity ? mem->reported_capacity : mem->capacity);
    double usable = total * c->gpu_memory_utilization;
    /* SGLang (pool_of_static): mem_fraction_static of the device less what the weights left in use, measured
     * after loading them and before any forward (model_runner.py profile_max_num_token, sglang-0.4.0 wheel) */
    bool no_profile = c->engine && c->engine->pool_of_static;
    /* what the rank holds outside weights, activations and pool, and the part its engine's accounting charges
     * (serve_holdings.h): vLLM's and TensorRT-LLM's with the profile's peak; SGLang's total_gpu_memory is what
     * the distributed init left free, so the pool loses mem_fraction_static of it (model_runner.py
     * profile_max_num_token: available after the weights - total x (1 - mem_fraction_static)) */
    if (!strata_serve_holdings_of(c->engine, hw, (uint32_t)tp, held, err))
        return false;
    double charged = (double)held->counted_bytes;
    double rest = (double)*weights + (no_profile ? 0.0 : (double)*activations + charged) +
                  (double)c->non_kv_overhead;
    double sglang_held = no_profile ? charged * c->gpu_memory_utilization : 0.0;
    double left = c->engine && c->engine->pool_of_free ? (total - rest) * c->gpu_memory_utilization
                                                       : usable - rest - sglang_held;
    if (left < 1) {
        /* --non-kv-overhead is in rest: named where given (the twenty-third hardening pass: the message left it
         * out, so a 1 TiB overhead read as weights and activations too large) */
        char *overhead = c->non_kv_overhead ? g_strdup_printf(", --non-kv-overhead %.3g GB", c->non_kv_overhead / 1e9)
                                            : g_strdup("");
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s on %s with tp %u: no memory left for the KV cache "
                    "(%.3g GB usable at gpu_memory_utilization %.2f, weights %.3g GB, activations %.3g GB, held "
                    "outside them %.3g GB per rank%s)", m->name, strata_hw_name(hw), c->tp, usable / 1e9,
                    c->gpu_memory_utilization, (double)*weights / 1e9, (double)*activations / 1e9, charged / 1e9,
                    overhead);
        g_free(overhead);
        return false;
    }
    *pool = (uint64_t)left;
    if (c->kv_blocks) /* a count of blocks (TurboMind's BlockManager.cc:16-21), the memory's rule aside */
        *pool = (uint64_t)c->kv_blocks * c->block_size *
                strata_serve_kv_bytes_per_token(m, c->attention_dp ? 1 : c->tp);
    return true;
}

#define KNOB(name, type, min) {#name, type, offsetof(strata_serve_config, name), min}
static const serve_field knobs[] = {
    KNOB(max_num_seqs, SERVE_FIELD_OPTION_INT, 1), KNOB(max_num_batched_tokens, SERVE_FIELD_OPTION_INT, 1),
    KNOB(block_size, SERVE_FIELD_OPTION_INT, 1),   KNOB(gpu_memory_utilization, SERVE_FIELD_FRACTION, 0),
    KNOB(tp, SERVE_FIELD_OPTION_INT, 1),           KNOB(concurrency, SERVE_FIELD_OPTION_INT, 0),
    KNOB(step_overhead, SERVE_FIELD_TIME, 0), KNOB(swap_space, SERVE_FIELD_SIZE, 0),
    KNOB(num_scheduler_steps, SERVE_FIELD_OPTION_INT, 1),
    {NULL, SERVE_FIELD_U32, 0, 0},
};
#undef KNOB

char *strata_serve_config_knobs(void)
{
    return serve_field_names(knobs);
}

bool strata_serve_config_knob_same(const strata_serve_config *a, const strata_serve_config *b, const char *knob)
{
    return serve_field_same(knobs, a, b, knob);
}

/* A knob's value, then the ranges the scheduler needs (serve_args.c's). */
bool strata_serve_config_set(strata_serve_config *c, const char *knob, const char *value, GError **err)
{
    strata_serve_config next = *c;
    if (!serve_field_set(knobs, &next, "knob", knob, value, err))
        return false;
    if (next.max_num_batched_tokens > (1u << 20) || next.max_num_seqs > (1u << 20) || next.block_size > 4096 ||
        next.tp > 4096 || next.num_scheduler_steps > 1024) { /* --num-scheduler-steps' 1024 too */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected at most 2^20 (block_size, tp: 4096; "
                    "num_scheduler_steps: 1024), got '%s'", knob, value);
        return false;
    }
    if (strcmp(knob, "swap_space") == 0 && !strata_serve_config_swap_space_read(&next, "swap_space", err))
        return false;
    if (strcmp(knob, "gpu_memory_utilization") == 0 && next.kv_blocks) { /* serve_args.c config_of's rule */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "gpu_memory_utilization: expected no --kv-blocks, which "
                    "sizes the KV pool whatever the memory (the utilization sizes the pool the memory leaves); beside "
                    "it, it changes nothing");
        return false;
    }
    *c = next;
    return true;
}

bool strata_serve_config_swap_space_read(const strata_serve_config *c, const char *named, GError **err)
{
    if (c->swap || !c->swap_space)
        return true;
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected --preemption swap, which reads it (the host "
                "bytes a rank swaps KV blocks to); under recompute preemption it changes nothing", named);
    return false;
}

/* A serial server (serve_frontend_queue.h) takes in the requests sent by t, in the order sent (a closed loop's:
 * those its clients have sent), before the work that becomes ready after them; `one` takes the next one whatever
 * its send (the loop is idle: no chunk can come before it). */
static void front_take(serve_state *st, double t, bool one)
{
    uint32_t sent = st->cfg->concurrency ? st->sent : st->n_req;
    if (!strata_serve_frontend_serial(st->front))
        return; /* every request's recv set when sent */
    for (; st->front_taken < sent && (one || st->req[st->front_taken].arrival <= t); one = false) {
        serve_req *q = &st->req[st->front_taken++];
        q->recv = strata_serve_frontend_take(st->front, &st->front_free, q->arrival, q->prompt);
    }
}

double serve_next_arrival(serve_state *st)
{
    if (st->next >= st->n_req)
        return INFINITY;
    if (st->front_taken <= st->next)
        front_take(st, st->now, true);
    if (!st->cfg->concurrency || st->next < st->sent)
        return st->req[st->next].recv;
    return st->clients_free ? st->now : INFINITY;
}

/* When a request of `prompt` tokens sent at `sent` reaches the scheduler: after the server's hops, or, through a
 * serial server, not known until front_take takes it in (INFINITY until then). */
static double recv_when_sent(const serve_state *st, double sent, uint32_t prompt)
{
    return strata_serve_frontend_serial(st->front) ? INFINITY : sent + strata_serve_frontend_recv(st->front, prompt);
}

/* Closed loop: the next request sent at t, received after the server's hops (a serial server's: when taken). */
static void send_at(serve_state *st, double t)
{
    serve_req *q = &st->req[st->sent++];
    q->arrival = t;
    q->recv = recv_when_sent(st, t, q->prompt);
}

/* Closed loop: each free client sends the next request now. */
static void clients_send(serve_state *st)
{
    for (; st->cfg->concurrency && st->clients_free && st->sent < st->n_req; st->clients_free--)
        send_at(st, st->now);
}

void serve_arrivals(serve_state *st)
{
    double by = fmin(st->now, st->recv_by);
    for (clients_send(st), front_take(st, st->now, false); st->next < st->n_req;
         clients_send(st), front_take(st, st->now, false)) {
        serve_req *q = &st->req[st->next];
        if ((st->cfg->concurrency && st->next >= st->sent) || q->recv > st->now)
            break;
        if (!q->refused && q->recv > by)
            break; /* sent, not yet received: the loop formed this step before it arrived (recv_lag) */
        st->next++;
        if (q->refused) {
            /* refused before the engine schedules it: done, its client free again */
            q->state = SERVE_DONE;
            st->res->rejected++;
            st->n_done++;
            serve_client_free(st, q);
            continue;
        }
        q->state = SERVE_WAITING;
        serve_deque_push(&st->waiting, q->id, false);
    }
}

void serve_client_free(serve_state *st, serve_req *q)
{
    bool serial = strata_serve_frontend_serial(st->front) && q->generated;
    serve_client_free_at(st, serial ? q->client_last : st->now); /* a serial server: its last chunk's start */
}

/* A closed-loop client told at t that its request is done. */
void serve_client_free_at(serve_state *st, double t)
{
    if (!st->cfg->concurrency)
        return;
    if (st->sent < st->n_req)
        send_at(st, t + strata_serve_frontend_emit(st->front)); /* when it reads its last token */
    else
        st->clients_free++;
}

/* KV bytes that `tokens` of a request store which attention still reads:
 * every token of the full layers, the last window of the sliding ones when
 * the pool frees the rest (serve_pool.c). */
static double live_bytes(const serve_state *st, uint32_t tokens)
{
    double per = (double)st->res->kv_bytes_per_token;
    if (!st->kv_window || tokens <= st->kv_window)
        return tokens * per;
    return tokens * per * (1 - st->kv_window_share) + st->kv_window * per * st->kv_window_share;
}

void serve_account(serve_state *st, double t)
{
    strata_serve_result *r = st->res;
    strata_serve_kv_stats ks = {0};
    st->scheme->stats(st->kv, &ks);
    double live = 0, held = 0;
    for (uint32_t i = 0; i < st->n_running; i++) {
        const serve_req *q = &st->req[st->running[i]];
        held += (double)st->scheme->held(st->kv, q->id);
    }
    /* the step's chunks add their tokens to the cache during it: count them */
    for (uint32_t i = 0; i < st->n_chunks; i++)
        st->req[st->chunks[i].id].computed += st->chunks[i].tokens;
    for (uint32_t i = 0; i < st->n_running; i++)
        live += live_bytes(st, st->req[st->running[i]].computed);
    for (uint32_t i = 0; i < st->n_chunks; i++)
        st->req[st->chunks[i].id].computed -= st->chunks[i].tokens;
    double used = held > 0 ? fmin(1.0, live / held) : 1.0;
    double reserved = ks.capacity ? (double)ks.reserved / (double)ks.capacity : 0;
    double free_b = (double)(ks.capacity - ks.reserved);
    double ext = free_b > 0 ? 1.0 - fmin(1.0, (double)ks.largest_free / free_b) : 0;
    r->batch_mean += t * st->n_running;
    r->batch_max = fmax(r->batch_max, st->n_running);
    r->kv_used_mean += t * used;
    r->kv_reserved_mean += t * reserved;
    r->kv_reserved_peak = fmax(r->kv_reserved_peak, reserved);
    r->external_frag_mean += t * ext;
    st->weight += t;
    if (r->steps_log) {
        strata_serve_step step = {st->now, t, 0, 0, 0, st->n_running, st->waiting.n, reserved};
        for (uint32_t i = 0; i < st->n_chunks; i++) {
            step.tokens += st->chunks[i].tokens;
            step.decodes += st->chunks[i].tokens == 1;
        }
        step.prefills = st->n_chunks - step.decodes;
        g_array_append_val(r->steps_log, step);
    }
    if (st->sample_count++ % st->sample_every == 0) {
        strata_serve_sample s = {st->now, st->n_running, st->waiting.n, reserved, used};
        g_array_append_val(r->samples, s);
        if (r->samples->len >= MAX_SAMPLES) { /* keep every other one, sample half as often */
            strata_serve_sample *a = (strata_serve_sample *)(void *)r->samples->data;
            for (guint i = 0; i < r->samples->len / 2; i++)
                a[i] = a[2 * i];
            g_array_set_size(r->samples, r->samples->len / 2);
            st->sample_every *= 2;
        }
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(const double *v, uint32_t n, double q)
{
    if (!n)
        return 0;
    double pos = q * (n - 1);
    uint32_t lo = (uint32_t)floor(pos), hi = lo + 1 < n ? lo + 1 : lo;
    return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

static strata_serve_dist dist_of(double *v, uint32_t n)
{
    strata_serve_dist d = {0};
    if (!n)
        return d;
    qsort(v, n, sizeof *v, cmp_double);
    double sum = 0;
    for (uint32_t i = 0; i < n; i++)
        sum += v[i];
    d.mean = sum / n;
    d.n = n;
    d.p50 = quantile(v, n, 0.5);
    d.p90 = quantile(v, n, 0.9);
    d.p99 = quantile(v, n, 0.99);
    return d;
}

static void itl_add(serve_state *st, double gap)
{
    serve_itl *last = st->itl->len ? &g_array_index(st->itl, serve_itl, st->itl->len - 1) : NULL;
    if (last && last->gap == gap)
        last->n++;
    else
        g_array_append_val(st->itl, ((serve_itl){gap, 1}));
}

void serve_token_sampled(serve_state *st, serve_req *q)
{
    bool serial = strata_serve_frontend_serial(st->front);
    if (serial) { /* the intakes sent before this step's end, then its chunk; ITL the client's: chunk to chunk */
        front_take(st, st->now, false);
        double previous = q->client_last;
        q->client_last = strata_serve_frontend_chunk(st->front, &st->front_free, st->now);
        if (!q->generated)
            q->client_first = q->client_last;
        else
            itl_add(st, q->client_last - previous);
    }
    if (++q->generated == 1)
        q->first_token = st->now;
    else if (st->in_run) {
        q->undelivered = true;
        return;
    } else if (!serial)
        itl_add(st, st->now - q->last_token);
    q->last_token = st->now;
}

void serve_token_delivered(serve_state *st, serve_req *q)
{
    if (!q->undelivered)
        return;
    if (!strata_serve_frontend_serial(st->front)) /* a serial server's ITL taken at its chunk */
        itl_add(st, st->now - q->last_token);
    q->last_token = st->now;
    q->undelivered = false;
}

static int cmp_itl(const void *a, const void *b)
{
    return cmp_double(&((const serve_itl *)a)->gap, &((const serve_itl *)b)->gap);
}

/* The k-th smallest (from 0) of the runs' values, runs sorted. */
static double itl_at(const serve_itl *v, guint n, uint64_t k)
{
    for (guint i = 0; i < n; i++) {
        if (k < v[i].n)
            return v[i].gap;
        k -= v[i].n;
    }
    return n ? v[n - 1].gap : 0;
}

/* dist_of over the runs' values, each counted n times (numpy's linear
 * percentile, as dist_of and vLLM's benchmark). */
static strata_serve_dist itl_dist(GArray *runs)
{
    strata_serve_dist d = {0};
    serve_itl *v = (serve_itl *)(void *)runs->data;
    uint64_t n = 0;
    double sum = 0;
    for (guint i = 0; i < runs->len; i++)
        n += v[i].n, sum += v[i].gap * v[i].n;
    if (!n)
        return d;
    qsort(v, runs->len, sizeof *v, cmp_itl);
    d.mean = sum / (double)n;
    d.n = n;
    const double q[3] = {0.5, 0.9, 0.99};
    double *out[3] = {&d.p50, &d.p90, &d.p99};
    for (int j = 0; j < 3; j++) {
        double pos = q[j] * (double)(n - 1);
        uint64_t lo = (uint64_t)floor(pos);
        double a = itl_at(v, runs->len, lo), b = itl_at(v, runs->len, lo + 1 < n ? lo + 1 : lo);
        *out[j] = a + (b - a) * (pos - (double)lo);
    }
    return d;
}

static void summarise(serve_state *st)
{
    strata_serve_result *r = st->res;
    double *ttft = g_new(double, st->n_req + 1), *tpot = g_new(double, st->n_req + 1),
           *e2e = g_new(double, st->n_req + 1);
    uint32_t n = 0, nt = 0;
    double first = INFINITY, last = 0, out_tokens = 0, all_tokens = 0, emit = strata_serve_frontend_emit(st->front);
    bool serial = strata_serve_frontend_serial(st->front); /* the client's times: its chunks' starts */
    for (uint32_t i = 0; i < st->n_req; i++) {
        const serve_req *q = &st->req[i];
        if (q->finish <= 0 && q->first_token <= 0)
            continue;
        double got_first = serial ? q->client_first : q->first_token, got_last = serial ? q->client_last : q->finish;
        first = fmin(first, q->arrival);
        last = fmax(last, got_last + emit);
        ttft[n] = got_first + emit - q->arrival;
        e2e[n++] = got_last + emit - q->arrival;
        if (q->output > 1)
            tpot[nt++] = (got_last - got_first) / (q->output - 1);
        out_tokens += q->output;
        all_tokens += q->output + q->prompt;
    }
    r->ttft = dist_of(ttft, n);
    r->tpot = dist_of(tpot, nt);
    r->e2e = dist_of(e2e, n);
    r->itl = itl_dist(st->itl);
    r->makespan = n ? last - first : 0;
    if (r->makespan > 0) {
        r->output_tok_s = out_tokens / r->makespan;
        r->total_tok_s = all_tokens / r->makespan;
        r->req_s = n / r->makespan;
    }
    if (st->weight > 0) {
        r->batch_mean /= st->weight;
        r->kv_used_mean /= st->weight;
        r->kv_reserved_mean /= st->weight;
        r->external_frag_mean /= st->weight;
    }
    g_free(ttft);
    g_free(tpot);
    g_free(e2e);
}

/* The run's requests, each as the engine's length rule leaves it
 * (strata_serve_engine_lengths): a request the engine refuses is marked to be
 * rejected on arrival and counted. */
static serve_req *make_requests(const strata_serve_stream *s, const strata_serve_engine *e, uint32_t max_len,
                                uint64_t pool_tokens, strata_serve_result *r)
{
    serve_req *req = g_new0(serve_req, s->n ? s->n : 1);
    r->too_long_first = UINT32_MAX;
    for (uint32_t i = 0; i < s->n; i++) {
        serve_req *q = &req[i];
        q->id = i;
        q->arrival = s->req[i].arrival;
        q->prompt = s->req[i].prompt;
        q->output = s->req[i].output;
        if (!strata_serve_engine_lengths(e, max_len, pool_tokens, &q->prompt, &q->output)) {
            q->refused = true;
            q->prompt = q->output = 1;
            r->rejected_too_long++;
            if (r->too_long_first == UINT32_MAX)
                r->too_long_first = i;
        }
    }
    return req;
}

/* The engine's server hops and eager host chains (serve_frontend.h, serve_eager.h, serve_piecewise.h): each
 * request received its recv hops after its arrival (a closed loop's again when sent); its CUDA graph limit
 * (serve_graph_limit.h), from --cuda-graph-max-bs or the device's memory and tp. */
static void front_and_eager(serve_state *st, const strata_serve_model *m, const strata_hw *hw)
{
    st->front = strata_serve_frontend_served(strata_serve_engine_frontend(st->cfg->engine), st->cfg->offline);
    if (st->cfg->serial_api_server) /* off: the hops as pure delays (docs/serving.md) */
        st->front = strata_serve_frontend_serial_row(st->front);
    st->front = strata_serve_chat_front(st->front, st->cfg, &st->front_chat); /* --chat-endpoint's parse */
    for (uint32_t i = 0; i < st->n_req; i++) /* a serial server takes them in as the run goes */
        st->req[i].recv = recv_when_sent(st, st->req[i].arrival, st->req[i].prompt);
    st->front_taken = strata_serve_frontend_serial(st->front) ? 0 : st->n_req;
    strata_model_shape shape;
    strata_serve_model_shape(m, &shape);
    st->eager_host_s = strata_serve_eager_host(strata_serve_engine_eager(st->cfg->engine), m,
                                               (uint32_t)strata_model_moe_layers(&shape),
                                               st->cfg->tp);
    st->graph_limit = strata_serve_engine_graph_limit(st->cfg->engine);
    uint32_t max_bs = st->cfg->cuda_graph_max_bs;
    if (st->graph_limit && st->cfg->n_graph_sizes) /* a given list is captured as listed: its last size is max */
        st->graph_largest = st->cfg->graph_sizes[st->cfg->n_graph_sizes - 1];
    else if (st->graph_limit)
        st->graph_largest = strata_serve_graph_limit_largest(
            st->graph_limit, max_bs ? max_bs
                                    : strata_serve_graph_limit_default(st->graph_limit, st->res->capacity_bytes,
                                                                       st->cfg->tp));
    if (strata_serve_engine_row(st->cfg->engine)->piecewise) {
        const strata_serve_config *c = st->cfg;
        st->piecewise_host_s = strata_serve_piecewise_host(m, strata_serve_hw_rocm(hw));
        st->piecewise_eager_host_s = strata_serve_piecewise_inductor_host(
            m, (uint32_t)strata_model_moe_layers(&shape), c->tp, strata_serve_hw_rocm(hw));
        uint32_t capture = c->n_graph_sizes ? c->graph_sizes[c->n_graph_sizes - 1]
                                            : strata_serve_piecewise_capture_max(c->max_num_seqs,
                                                                                 c->max_num_batched_tokens);
        /* a rank's own tokens against it, not the step's summed over the attention-DP ranks */
        st->piecewise_capture = strata_serve_piecewise_step_limit(capture, c->attention_dp ? c->tp : 1);
    }
}

/* The step's cost models: at the peak clock, or at the sustained one, or under --clock duty at both
 * (serve_clock.h); each with the engine row's kernels (FlashAttention-3 prefill, decode, around attention,
 * all-reduce; no --engine: vLLM v1's). */
static bool clock_costs(serve_state *st, const strata_hw *hw, const strata_serve_model *m,
                        const strata_serve_config *c, GError **err)
{
    bool duty = c->sustained_hw && c->clock_response > 0;
    if (c->fp8_linear_rocm && !strata_serve_hw_rocm(hw)) {
        g_set_error_literal(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--fp8-linear-rocm: expected AMD hardware (vendor = "
                            "amd or collectives = rccl: vLLM's ROCm build), got hardware with NCCL's collectives");
        return false;
    }
    strata_serve_cost **costs[2] = {&st->cost, &st->cost_sustained};
    for (int i = 0; i < (duty ? 2 : 1); i++) {
        *costs[i] = strata_serve_cost_new(hw, m, c->tp, c->attention_dp, c->max_num_batched_tokens, err);
        if (!*costs[i] ||
            !strata_serve_engine_set_kernels_env(c->engine, hw, *costs[i], c->prefill_decode_attention, err))
            return false;
        bool v1 = strata_serve_engine_row(c->engine)->mla_prefill_v1; /* V1: no release is 0.8.5's rule (v1.h) */
        strata_serve_cost_set_mla_pad_v(*costs[i], v1 ? strata_serve_mla_v1_pads_v(c->release_mla_pad_v, hw)
                                                      : strata_serve_mla_v07_pads_v(c->release_mla_pad_v, hw));
        if (c->fp8_linear_rocm) /* in place of the engine row's ROCm default (serve_engine.c) */
            strata_serve_cost_set_fp8_linear(*costs[i], c->fp8_linear_rocm);
    }
    /* one simulation of each collective size for both (the collectives run on hw's links at either clock) */
    st->coll = c->tp > 1 ? strata_serve_coll_new(hw, c->tp) : NULL;
    for (int i = 0; st->coll && i < (duty ? 2 : 1); i++)
        strata_serve_cost_set_collectives(*costs[i], st->coll);
    if (st->coll && !strata_serve_cost_check_collectives(st->cost, err))
        return false;
    if (c->sustained_hw)
        strata_serve_cost_set_sustained(duty ? st->cost_sustained : st->cost, c->sustained_hw);
    if (duty)
        st->clock = strata_serve_clock_new(c->clock_response, c->clock_free_duty,
                                           strata_hw_compute_clock_ratio(hw, STRATA_SERVE_UNIT));
    return true;
}

static void state_free(serve_state *st)
{
    if (st->kv)
        st->scheme->destroy(st->kv);
    strata_serve_cost_free(st->cost);
    strata_serve_cost_free(st->cost_sustained);
    strata_serve_coll_free(st->coll);
    strata_serve_clock_free(st->clock);
    g_free(st->req);
    g_free(st->running);
    g_free(st->waiting.a);
    g_free(st->swapped.a);
    g_free(st->chunks);
    g_free(st->tm_ctx);
    g_free(st->tm_dec);
    g_free(st->tm_first);
    g_array_free(st->itl, TRUE);
}

/* The TP ranks split the attention heads: vLLM refuses a --tp that does not divide them
 * (vllm/config.py ModelConfig.verify_with_parallel_config: "Total number of attention heads (32) must be
 * divisible by tensor parallel size (3)"), and its QKVParallelLinear divides the KV heads among the ranks or the
 * ranks among them (divide() asserts either); SGLang's ModelConfig, TensorRT-LLM's attention and TurboMind's
 * converter (head_num % tensor_para_size) the same. --tp 3 on llama-3-8b ran 10.67 heads a rank, exit 0. Under
 * --attention-dp each rank runs whole heads; an MLA model's latent KV is not split by heads. */
static bool tp_divides_heads(const strata_serve_model *m, const strata_serve_config *c, GError **err)
{
    if (c->tp <= 1 || c->attention_dp)
        return true;
    bool kv_ok = m->kv_lora_rank || !m->kv_heads ||
                 (m->kv_heads >= c->tp ? m->kv_heads % c->tp == 0 : c->tp % m->kv_heads == 0);
    if (m->heads % c->tp == 0 && kv_ok)
        return true;
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--tp %u: expected a count of ranks that divides the model's "
                "%u attention heads and divides or is divided by its %u KV heads (the ranks split the heads: vLLM "
                "refuses \"Total number of attention heads (%u) must be divisible by tensor parallel size (%u)\"; "
                "SGLang, TensorRT-LLM and TurboMind the same), or --attention-dp", c->tp, m->heads, m->kv_heads,
                m->heads, c->tp);
    return false;
}

/* --swap-space (or a sweep's swap_space) within what the host holds
 * (strata_serve_links_swap_limit): 1EiB was taken at exit 0. */
static bool swap_space_fits(const strata_hw *hw, const strata_serve_config *c, GError **err)
{
    char *what = NULL;
    uint64_t most = strata_serve_links_swap_limit(hw, 0, c->tp, &what);
    if (c->swap_space > most) {
        char *got = strata_format_size(c->swap_space), *limit = strata_format_size(most);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--swap-space: expected at most %" G_GUINT64_FORMAT
                    " B (%s) per rank, %s; got %" G_GUINT64_FORMAT " B (%s)", most, limit, what, c->swap_space, got);
        g_free(got), g_free(limit);
    }
    g_free(what);
    return c->swap_space <= most;
}

/* --preemption swap: pinned host memory the device memory is linked to,
 * and a --swap-space (a sweep's swap_space) of at least one KV block: with
 * none, every preemption would be a recompute, which vLLM v0 never makes
 * of a swap: its Scheduler._swap_out raises RuntimeError("Aborted due to
 * the lack of CPU swap space. Please increase the swap space to avoid this
 * error.") when the block manager cannot swap the group out
 * (vllm-project/vllm@32e7db25, v0.6.0, vllm/core/scheduler.py), so the
 * engine stops at its first preemption. */
static bool swap_reachable(serve_state *st, const strata_hw *hw, GError **err)
{
    double bw = 0, lat = 0;
    strata_serve_cost_host_link(st->cost, &bw, &lat);
    if (bw <= 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--preemption swap: %s has no pinned host memory "
                    "linked to the device memory", strata_hw_origin(hw));
        return false;
    }
    if (st->cfg->swap_space < st->block_bytes) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--preemption swap: --swap-space %" G_GUINT64_FORMAT
                    " B holds no KV block (%" G_GUINT64_FORMAT " B a block a rank), and vLLM v0 aborts at the "
                    "first swap that finds no room (\"Aborted due to the lack of CPU swap space\", "
                    "vllm/core/scheduler.py _swap_out): expected --swap-space of at least one block, or "
                    "--preemption recompute", st->cfg->swap_space, st->block_bytes);
        return false;
    }
    return true;
}

/* A swap that found no room (serve_sched.c preempt): where vLLM v0 aborts. */
static void swap_abort_error(const serve_state *st, const strata_serve_stream *s, GError **err)
{
    uint32_t id = st->swap_abort - 1;
    char *where = s->line ? g_strdup_printf(" (%s:%" G_GUINT64_FORMAT ")", s->origin, s->line[id]) : g_strdup("");
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--preemption swap: at %.3f s request %u%s is preempted "
                "holding %" G_GUINT64_FORMAT " B of KV a rank and --swap-space %" G_GUINT64_FORMAT " B has %"
                G_GUINT64_FORMAT " B free: vLLM v0 aborts the engine there (\"Aborted due to the lack of CPU swap "
                "space\", vllm/core/scheduler.py _swap_out); expected a larger --swap-space, or --preemption "
                "recompute", st->now, id, where, st->swap_abort_bytes, st->cfg->swap_space,
                st->cfg->swap_space - st->host_used);
    g_free(where);
}

/* --warm-prefix N and --prior-run are blocks an earlier run on the same server left in the cache (serve_stream.h,
 * serve_prior.h): its requests as that server ran them. One the engine's length rule refuses (serve_engine.h;
 * vLLM's OpenAI server: prompt + output > max_model_len) left none, and one it cuts left other blocks, yet each
 * was replayed whole at exit 0 (the twenty-eighth pass: --warm-prefix 2147483647 on llama-2-7b's 4096 tokens
 * filled the pool with one request's blocks, evicting the others'). Refused naming the rule: a warm prefix is
 * the earlier prompt (at least N tokens) with at least one token of output, a prior run its prompt= and output=. */
static bool prefixes_ran(const strata_serve_stream *s, const strata_serve_engine *e, const strata_serve_model *m,
                         uint64_t pool_tokens, GError **err)
{
    for (uint32_t k = 0; k <= s->n_prior; k++) {
        bool warm = k == s->n_prior;
        uint32_t prompt = warm ? s->warm_prefix : s->prior[k].prompt, output = warm ? 1 : s->prior[k].output;
        uint32_t p = prompt, o = output;
        if (!prompt)
            continue;
        bool ran = strata_serve_engine_lengths(e, m->max_model_len, pool_tokens, &p, &o);
        if (ran && p == prompt && o == output)
            continue;
        char *what = warm ? g_strdup_printf("--warm-prefix %u", prompt)
                          : g_strdup_printf("--prior-run n=%u,prompt=%u,output=%u", s->prior[k].n, prompt, output);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected an earlier run the server ran as sent (%s; "
                    "%s's max_model_len is %u), got a prompt of %u%s and an output of %s%u tokens: it left %s blocks "
                    "in the cache", what, strata_serve_engine_length_rule(e), m->name, m->max_model_len, prompt,
                    warm ? " or more" : "", warm ? "at least " : "", output, ran ? "other" : "no");
        g_free(what);
        return false;
    }
    return true;
}

strata_serve_result *strata_serve_run(const strata_hw *hw, const strata_serve_model *m,
                                      const strata_serve_config *c, const strata_serve_stream *s,
                                      const strata_serve_kv_scheme *scheme, strata_progress *progress,
                                      GError **err)
{
    strata_serve_result *r = g_new0(strata_serve_result, 1);
    r->scheme = scheme->name;
    r->requests = s->n;
    r->samples = g_array_new(FALSE, FALSE, sizeof(strata_serve_sample));
    if (c->record_steps)
        r->steps_log = g_array_new(FALSE, FALSE, sizeof(strata_serve_step));
    r->capacity_bytes = strata_hw_memory(hw, strata_hw_compute(hw, 0)->operands)->capacity;
    r->kv_bytes_per_token = strata_serve_kv_bytes_per_token(m, c->attention_dp ? 1 : c->tp);
    bool ok = tp_divides_heads(m, c, err) && swap_space_fits(hw, c, err) &&
              strata_serve_memory_held(hw, m, c, &r->weight_bytes, &r->activation_bytes, &r->pool_bytes, &r->held, err);
    /* attention dp: the ranks' schedulers as one, each rank's limits and pool times tp */
    strata_serve_config all = *c;
    uint64_t ranks = c->attention_dp ? c->tp : 1;
    if (ok && ranks * c->max_num_seqs + ranks * c->max_num_batched_tokens > (1ull << 24)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--attention-dp: expected --tp x (--max-num-seqs + "
                    "--max-num-batched-tokens) <= 2^24, got %u x (%u + %u)", c->tp, c->max_num_seqs,
                    c->max_num_batched_tokens);
        ok = false;
    }
    all.max_num_seqs *= (uint32_t)ranks, all.max_num_batched_tokens *= (uint32_t)ranks;
    c = &all;
    serve_state st = {.cfg = c, .scheme = scheme, .res = r, .n_req = s->n, .sample_every = 1,
                      .clients_free = c->concurrency, .recv_by = INFINITY,
                      .itl = g_array_new(FALSE, FALSE, sizeof(serve_itl))};
    st.kv_tensors = m->kv_lora_rank ? m->layers : 2 * m->layers;
    st.block_bytes = (uint64_t)c->block_size * r->kv_bytes_per_token;
    st.max_model_len = m->max_model_len;
    strata_serve_kv_config kc = {r->pool_bytes * ranks, r->kv_bytes_per_token, c->block_size, m->max_model_len, s->n,
                                 c->prefix_caching, s->shared_prefix, s->warm_prefix, st.kv_tensors, c->page_bytes,
                                 c->allocator, m->layers, 0, 0, s->prior, s->n_prior};
    /* vLLM v1 (no --engine, or a row that says so) frees a sliding-window layer's blocks outside its window */
    if (!c->engine || c->engine->window_blocks)
        kc.window_layers = strata_serve_window_layers(m), kc.window = m->sliding_window;
    if (scheme == &strata_serve_kv_paged && strata_serve_pool_windowed(&kc))
        st.kv_window = kc.window, st.kv_window_share = (double)kc.window_layers / m->layers;
    /* a windowed pool finds no prefix cached (serve_pool.c pool_lookup, warm): the prefixes changed nothing */
    uint32_t prefix = s->warm_prefix ? s->warm_prefix : s->shared_prefix;
    if (ok && st.kv_window && (prefix || s->n_prior)) {
        char *what = prefix ? g_strdup_printf("--%s-prefix %u", s->warm_prefix ? "warm" : "shared", prefix)
                            : g_strdup("--prior-run");
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected a run that looks prefixes up in the "
                    "cache, got %s's sliding-window layers in vLLM v1's paged pool, which looks none up "
                    "(docs/serving.md): it changes nothing there", what, m->name);
        g_free(what);
        ok = false;
    }
    ok = ok && prefixes_ran(s, c->engine, m, r->kv_bytes_per_token ? r->pool_bytes / r->kv_bytes_per_token : 0, err);
    ok = ok && clock_costs(&st, hw, m, c, err);
    ok = ok && (st.kv = scheme->create(&kc, err)) != NULL;
    ok = ok && (!c->swap || swap_reachable(&st, hw, err));
    if (ok) {
        r->pool_blocks = scheme == &strata_serve_kv_paged ? strata_serve_pool_blocks(&kc) : 0;
        st.req = make_requests(s, c->engine, m->max_model_len,
                               r->kv_bytes_per_token ? r->pool_bytes / r->kv_bytes_per_token : 0, r);
        front_and_eager(&st, m, hw);
        st.running = g_new(uint32_t, c->max_num_seqs + 1);
        st.chunks = g_new(strata_serve_chunk, c->max_num_seqs + 1);
        if (c->engine && c->engine->context_passes) { /* serve_turbomind_gpu's scratch */
            st.tm_ctx = g_new(strata_serve_chunk, c->max_num_seqs + 2);
            st.tm_dec = g_new(strata_serve_chunk, c->max_num_seqs + 2);
            st.tm_first = g_new(uint32_t, c->max_num_seqs + 2);
        }
    }
    while (ok && (st.n_done < st.n_req || st.owed)) { /* the owed told in one step more (serve_sched.c) */
        if (!serve_step(&st)) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: the scheduler is stuck at %.3f s: swapped "
                        "requests cannot return to a full pool", scheme->name, st.now);
            ok = false;
            break;
        }
        if (st.swap_abort) {
            swap_abort_error(&st, s, err);
            ok = false;
            break;
        }
        if ((r->steps & 255) == 0 && progress) {
            char *note = g_strdup_printf("%s, t=%.1f s, batch %u", scheme->name, st.now, st.n_running);
            strata_progress_count(progress, "serve", st.n_done, st.n_req, "requests", note);
            g_free(note);
        }
    }
    if (ok && st.clock)
        strata_serve_clock_stats(st.clock, &r->clock_mean, &r->clock_min);
    if (ok)
        summarise(&st);
    state_free(&st);
    if (!ok) {
        strata_serve_result_free(r);
        return NULL;
    }
    return r;
}

void strata_serve_result_free(strata_serve_result *r)
{
    if (!r)
        return;
    g_array_free(r->samples, TRUE);
    if (r->steps_log)
        g_array_free(r->steps_log, TRUE);
    g_free(r);
}

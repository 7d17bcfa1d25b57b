/*
 * serve_sched_v0.c: vLLM v0's scheduling policies (serve_scheduler.h's
 * vllm-v0 and vllm-v0-chunked rows), as vLLM 0.6.0 runs them:
 * vllm-project/vllm@32e7db25365415841ebc7c4215851743fbb1bad1 (v0.6.0, read
 * from its PyPI wheel, whose vllm/commit_id.py names that commit):
 * vllm/core/scheduler.py, vllm/config.py, vllm/engine/arg_utils.py,
 * vllm/engine/llm_engine.py, vllm/core/block_manager_v2.py.
 *
 * vllm-v0 (_schedule_default, scheduler.py:885-983): when no request is
 * swapped out, waiting requests are admitted in arrival order
 * (_schedule_prefills, 766-883) while their whole prompts fit the token
 * budget (SchedulingBudget.can_schedule, 51-56: tokens of the step's
 * prefills <= max_num_batched_tokens, running + admitted <= max_num_seqs)
 * and the block manager can allocate all the prompt's blocks leaving its
 * watermark, 1% of the blocks, free (can_allocate, block_manager_v2.py:
 * 110-144; a prompt that could never fit so is ignored). If any was
 * admitted the step is those prefills alone ("Don't schedule decodes if
 * prefills are scheduled", 917-921); otherwise it is the running
 * requests' decodes (_schedule_running, 492-642: preempting the most
 * recent when the cache has no room) and, when none was preempted,
 * swapped requests back in. A request's KV for its whole prompt is taken
 * at admission (_allocate_and_set_running).
 * Multi-step (--num-scheduler-steps N): a decode step allocates N - 1
 * lookahead slots per request (num_lookahead_slots, arg_utils.py:918-922;
 * _can_append_slots) and the engine runs its batch N times before it
 * schedules again (llm_engine.py:1497-1518, _has_remaining_steps); a
 * request whose last token comes early keeps computing, its extra tokens
 * truncated (output_processor/multi_step.py:144-148). A prefill step has
 * no lookahead and runs once (_get_num_lookahead_slots, 1432-1443).
 * Budget: max(max_model_len, 2048) when not given (config.py:973-981);
 * vLLM refuses a budget below max_model_len without chunked prefill
 * (config.py:1016-1024; serve_args.c).
 *
 * vllm-v0-chunked (_schedule_chunked_prefill, 985-1067): running requests
 * in queue order, each its next chunk up to the budget left (a decode 1),
 * then swapped ones back when none was preempted, then waiting requests'
 * chunks, admitted even after a preemption; with prefix caching a chunk
 * the budget cuts is rounded down to whole blocks (_get_num_new_tokens,
 * 1445-1490). The running queue is then rebuilt (1037-1048): requests
 * not reached, swapped-in ones, decodes, partial prefills, new ones.
 * Budget 512 when not given (config.py:974-977). vLLM 0.6.0 refuses it with
 * multi-step (arg_utils.py:911-916).
 *
 * When V0 turns chunked prefill on by itself (EngineArgs.
 * create_engine_config, from 0.8.0 _set_default_args_v0; enable_chunked_
 * prefill not given): max_model_len > 32768 ("use_long_context") on a GPU,
 * the model without a sliding window (nor LoRA, speculative decoding,
 * prompt adapters, pooling: not modelled here), read per release from the
 * PyPI sdists' vllm/engine/arg_utils.py and vllm/config.py and from
 * ROCm/vllm's history (git log -S):
 *   0.5.0-0.5.2  never (enable_chunked_prefill: bool = False).
 *   0.5.3-0.6.0  on CUDA and ROCm alike (is_gpu = device_type == "cuda",
 *                which DeviceConfig sets on ROCm too) and only without
 *                prefix caching (and not self.enable_prefix_caching, #6666,
 *                vllm-project/vllm@729171ae); vLLM's enable_prefix_caching
 *                defaults to False, so on at the defaults. Budget 512.
 *   0.6.1-0.6.4  the prefix-caching condition dropped (#8342, @b1f3e189);
 *                CUDA and ROCm; budget 512.
 *   0.6.5-0.7.3  "and not current_platform.is_rocm()" (#11146, @00c1bde5,
 *                "[ROCm][AMD] Disable auto enabling chunked prefill on
 *                ROCm"; ROCm/vllm @7a292f9b (0.6.6) arg_utils.py:1105,
 *                @b309ea79 (0.7.3) :1264): CUDA only. Budget 2048 (#10544,
 *                @02a43f82: SchedulerConfig's "self.max_num_batched_tokens
 *                = 2048" when chunked, max(max_model_len, 2048) when not).
 *   0.8.0-0.9.2  _set_default_args_v0 (#13726, @d4d93db2): is_gpu =
 *                current_platform.is_cuda(), false on ROCm (RocmPlatform.
 *                _enum = PlatformEnum.ROCM; ROCm/vllm @7bb0618b and
 *                @91a56009 (0.8.5) arg_utils.py:1417): CUDA only; MLA
 *                models never (0.7.3's VllmConfig already forced it off for
 *                them). Budget 2048 (_DEFAULT_MAX_NUM_BATCHED_TOKENS).
 * strata has no vLLM release option; serve_v0_pick follows 0.6.5-0.9.2
 * (the releases of the tree's long-context vllm-v0 rows: 0.7.3, 0.8.5 on
 * ROCm): vllm-v0-chunked with budget 2048 for max_model_len > 32768 off
 * ROCm, no sliding window, not MLA; prefix caching does not enter (it
 * entered 0.5.3-0.6.0 only, as vLLM's flag, off by default there, strata's
 * on). On CUDA the choice is also 0.6.1-0.6.4's (their budget 512) and
 * 0.5.3-0.6.0's at vLLM's defaults; on ROCm 0.5.3-0.6.4 chunked, not here.
 * With --num-scheduler-steps > 1 vLLM 0.6.0-0.6.2 refuse the pair and from
 * 0.6.3 run multi-step prefills through the chunked path (#8378), not
 * modelled: refused (serve_args.c).
 */
#include <string.h>
#include "serve/serve_run.h"

enum { V0_MIN_BUDGET = 2048, V0_CHUNKED_BUDGET = 512, V0_LONG_CONTEXT = 32768, V0_PICKED_CHUNKED_BUDGET = 2048 };

uint32_t serve_v0_budget(uint32_t max_model_len)
{
    return max_model_len > V0_MIN_BUDGET ? max_model_len : V0_MIN_BUDGET;
}

uint32_t serve_v0_chunked_budget(uint32_t max_model_len)
{
    (void)max_model_len;
    return V0_CHUNKED_BUDGET;
}

const char *serve_v0_pick(const strata_serve_pick_setup *s, uint32_t *budget)
{
    if (s->max_model_len <= V0_LONG_CONTEXT || s->rocm || s->sliding_window || s->mla)
        return NULL;
    *budget = V0_PICKED_CHUNKED_BUDGET;
    return "vllm-v0-chunked";
}

typedef enum { V0_FITS, V0_LATER, V0_NEVER } v0_fit;

/* The block manager's can_allocate for `tokens` tokens: whole blocks, the
 * watermark (1% of the pool's blocks, rounded down) left free. */
static v0_fit v0_can_allocate(const serve_state *st, uint32_t tokens)
{
    strata_serve_kv_stats ks = {0};
    st->scheme->stats(st->kv, &ks);
    uint64_t bb = st->block_bytes ? st->block_bytes : 1, total = ks.capacity / bb;
    uint64_t free_blocks = (ks.capacity - ks.reserved) / bb;
    uint64_t need = ((uint64_t)tokens + st->cfg->block_size - 1) / st->cfg->block_size;
    uint64_t watermark = (uint64_t)(0.01 * (double)total);
    if (total < need + watermark)
        return V0_NEVER;
    return free_blocks >= need + watermark ? V0_FITS : V0_LATER;
}

/* Waiting requests' prefills (_schedule_prefills): whole prompts, or
 * chunks of them when chunked (cut to whole multiples of align); the
 * whole prompt's KV taken at admission. */
static void v0_prefills(serve_state *st, uint32_t *budget, bool chunked, uint32_t align)
{
    while (st->waiting.n && st->n_running < st->cfg->max_num_seqs && *budget > 0) {
        serve_req *q = &st->req[serve_deque_peek(&st->waiting)];
        uint32_t tokens = serve_tokens_of(q);
        v0_fit fit = v0_can_allocate(st, tokens);
        if (fit == V0_NEVER) {
            serve_reject_head(st);
            continue;
        }
        if (!chunked && tokens > st->cfg->max_num_batched_tokens) { /* over the prompt limit: ignored */
            serve_reject_head(st);
            continue;
        }
        strata_serve_kv_req r = serve_kv_req(q);
        uint32_t hit = st->scheme->lookup ? st->scheme->lookup(st->kv, &r, tokens) : 0;
        uint32_t want = tokens - hit;
        if (chunked && want > *budget)
            want = *budget / align * align;
        if (fit == V0_LATER || !want || want > *budget || !st->scheme->grow(st->kv, &r, tokens))
            break;
        serve_admit_head(st, hit, want, budget);
    }
}

void serve_schedule_v0(serve_state *st)
{
    serve_drop_lagged(st, true); /* async output: kept until told (serve_run.h) */
    uint32_t budget = st->cfg->max_num_batched_tokens;
    if (!st->swapped.n)
        v0_prefills(st, &budget, false, 1);
    if (st->n_chunks)
        return;
    uint32_t steps = st->cfg->num_scheduler_steps ? st->cfg->num_scheduler_steps : 1;
    bool preempted = serve_schedule_running(st, &budget, steps - 1, 1);
    if (!preempted && st->cfg->swap)
        serve_schedule_swapped(st, &budget);
    if (st->n_chunks)
        st->run_left = steps - 1;
}

/* The running queue as _schedule_chunked_prefill leaves it: those not
 * reached, swapped in, decodes, partial prefills, then the new ones. */
static void v0_requeue(serve_state *st, uint32_t reached, uint32_t swapped_in, uint32_t n_before)
{
    uint32_t n = st->n_running, *order = g_new(uint32_t, n ? n : 1), k = 0;
    for (uint32_t i = reached; i < n_before; i++)
        order[k++] = st->running[i];
    for (uint32_t i = n_before; i < n_before + swapped_in; i++)
        order[k++] = st->running[i];
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < reached; i++) {
            const strata_serve_chunk *c = &st->chunks[i];
            if ((c->tokens == 1 && st->req[c->id].generated) == (pass == 0))
                order[k++] = c->id;
        }
    for (uint32_t i = n_before + swapped_in; i < n; i++)
        order[k++] = st->running[i];
    memcpy(st->running, order, (size_t)n * sizeof *order);
    g_free(order);
}

void serve_schedule_v0_chunked(serve_state *st)
{
    serve_drop_lagged(st, true); /* async output: kept until told (serve_run.h) */
    uint32_t budget = st->cfg->max_num_batched_tokens;
    uint32_t align = st->cfg->prefix_caching ? st->cfg->block_size : 1;
    bool preempted = serve_schedule_running(st, &budget, 0, align);
    uint32_t reached = st->n_chunks, n_before = st->n_running;
    if (!preempted && st->cfg->swap)
        serve_schedule_swapped(st, &budget);
    uint32_t swapped_in = st->n_running - n_before;
    v0_prefills(st, &budget, true, align);
    v0_requeue(st, reached, swapped_in, n_before);
}

/*
 * serve_sched_trtllm.c: TensorRT-LLM's GUARANTEED_NO_EVICT capacity
 * scheduler (serve_scheduler.h's trtllm-no-evict row), the policy
 * trtllm-bench and the LLM API run by default (tensorrt_llm/llmapi/
 * llm_args.py, SchedulerConfig.capacity_scheduler_policy's default;
 * trtllm-bench's get_llm_args names it), read from NVIDIA/TensorRT-LLM@
 * 02a10fed0dbf5db74c7da035be9c5fbef6d2df7a:
 *
 *   cpp/tensorrt_llm/batch_manager/capacityScheduler.cpp,
 *     GuaranteedNoEvictScheduler::impl: every request already generating
 *     is scheduled and its blocks "to drive ... to completion" are taken
 *     off the free blocks (decrementReservedBlocks); then pending context
 *     requests in order, each admitted while enoughAvailableBlocks holds
 *     and the first that does not fit stops admission ("If one requests
 *     fails to be scheduled, break");
 *   cpp/tensorrt_llm/batch_manager/scheduledBlocksManager.h: available
 *     starts at the block manager's free blocks; a request needs
 *     getRemainingBlocksToCompletion;
 *   cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp,
 *     getRemainingBlocksToCompletion: ceil((prompt + max_new_tokens) /
 *     tokens_per_block) minus the blocks the request already holds (beam
 *     width 1, no sliding window, no sink tokens), i.e. a request's whole
 *     KV to its last token is set aside when it is admitted.
 *
 * So a request never runs out of blocks and nothing is ever evicted, at
 * the price of admitting fewer requests than an on-demand pool would: the
 * admitted requests' ceil((P + O) / B) blocks sum to at most the pool.
 * max_new_tokens is the request's output length (trtllm-bench passes each
 * request's output tokens as its max_tokens). The step is then formed as
 * vllm-v1's (running requests first, then the admitted ones' prefill
 * chunks up to the token budget), TensorRT-LLM's micro-batch scheduler's
 * max_num_tokens and max_batch_size playing max_num_batched_tokens and
 * max_num_seqs. Prefix-cache hits are not subtracted from the reservation
 * (a pending request holds no blocks, so its remaining count is whole).
 * Under --attention-dp the pool checked is all ranks' together (one run
 * of all ranks; serve.h), so the admitted count is floor(tp * pool / b)
 * where TensorRT-LLM's ranks each admit floor(pool / b).
 *
 * trtllm-no-evict-unchunked: the same admission with the step formed as
 * TensorRT-LLM's C++ executor forms it when context chunking is off, its
 * default (cpp/include/tensorrt_llm/executor/executor.h, ExecutorConfig's
 * enableChunkedContext = false; the Triton backend's model_instance_state.cc
 * leaves it false unless enable_chunked_context is set), which is what a
 * runtime built on that executor (NIM's TensorRT-LLM profiles) runs unless
 * it says otherwise. cpp/tensorrt_llm/batch_manager/microBatchScheduler.cpp,
 * MicroBatchScheduler::operator(), without mCtxChunkConfig: the requests the
 * capacity scheduler returns are walked in its order (GuaranteedNoEvict
 * lists the generating requests first, then the pending contexts), a
 * generating request adds its one token, and a context request is placed
 * whole, getNumTokens (its whole prompt), only while batchNumTokens +
 * reqNumTokens <= maxNumTokens; the first that does not fit ends the step
 * ("break"). So a step holds the decodes and then as many whole prompts, in
 * arrival order, as the token budget still holds: with 8,192 tokens and
 * 5,000-token prompts one prompt a step, finished in that step, where the
 * chunked form splits the next prompt over two steps. A prompt longer than
 * the whole budget could never be placed; strata rejects it (as vllm-v1
 * rejects a prompt the empty pool cannot hold).
 *
 * Invariants: the admitted requests' blocks to completion never exceed the
 * scheme's free blocks at admission, so a running request's growth always
 * fits and no request is preempted by this policy; the unchunked form never
 * leaves a prompt part-computed at a step's end.
 */
#include "serve/serve_run.h"

/* Blocks a request needs to its last token, ceil((prompt + output) / B). */
static uint64_t blocks_to_completion(const serve_state *st, const serve_req *q)
{
    uint64_t b = st->cfg->block_size ? st->cfg->block_size : 1;
    return ((uint64_t)q->prompt + q->output + b - 1) / b;
}

/* The free blocks less every running request's remaining blocks to
 * completion (NoEvictScheduledBlocksManager after the running requests'
 * decrementReservedBlocks); may be negative on a scheme that rounds. */
static int64_t available_blocks(const serve_state *st)
{
    strata_serve_kv_stats ks = {0};
    st->scheme->stats(st->kv, &ks);
    uint64_t bb = st->block_bytes ? st->block_bytes : 1;
    int64_t avail = (int64_t)((ks.capacity - ks.reserved) / bb);
    for (uint32_t i = 0; i < st->n_running; i++) {
        const serve_req *q = &st->req[st->running[i]];
        uint64_t need = blocks_to_completion(st, q), held = st->scheme->held(st->kv, q->id) / bb;
        avail -= need > held ? (int64_t)(need - held) : 0;
    }
    return avail;
}

/* Pending requests in arrival order while the pool, less every admitted
 * request's blocks to completion, holds theirs; whole: each only if its
 * whole prompt fits what is left of the budget. */
static void admit_no_evict(serve_state *st, int64_t avail, uint32_t *budget, bool whole)
{
    while (st->waiting.n && st->n_running < st->cfg->max_num_seqs && *budget > 0) {
        serve_req *q = &st->req[serve_deque_peek(&st->waiting)];
        int64_t need = (int64_t)blocks_to_completion(st, q);
        if (need > avail)
            break;
        if (whole && serve_tokens_of(q) > *budget)
            break;
        if (!serve_admit_waiting(st, budget))
            break;
        avail -= need;
    }
}

void serve_schedule_trtllm_no_evict(serve_state *st)
{
    uint32_t budget = st->cfg->max_num_batched_tokens;
    int64_t avail = available_blocks(st);
    serve_schedule_running(st, &budget, 0, 1);
    admit_no_evict(st, avail, &budget, false);
}

void serve_schedule_trtllm_no_evict_unchunked(serve_state *st)
{
    uint32_t budget = st->cfg->max_num_batched_tokens;
    while (st->waiting.n && serve_tokens_of(&st->req[serve_deque_peek(&st->waiting)]) > budget)
        serve_reject_head(st);
    int64_t avail = available_blocks(st);
    serve_schedule_running(st, &budget, 0, 1);
    admit_no_evict(st, avail, &budget, true);
}

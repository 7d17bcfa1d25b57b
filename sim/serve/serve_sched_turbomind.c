/*
 * serve_sched_turbomind.c: LMDeploy TurboMind v0.1.0's persistent batch
 * (serve_scheduler.h's lmdeploy-turbomind row) and the composition of its
 * step on the GPU, read at InternLM/lmdeploy tag v0.1.0a1
 * (@9c46b27ce0358b8bc645633442b7810f715997d7), the version
 * serving-heldout-8.ini's measurements name.
 *
 * One iteration of LlamaBatch<T>::InternalThreadEntry (src/turbomind/
 * models/llama/LlamaBatch.cc:1379-1467), in order:
 * - rank 0 dequeues up to max_batch_size - batch new requests (:1400-1408);
 *   a prompt over session_len is refused (RejectInvalidRequests, :73);
 * - Initialize (:327-474) asks SequenceManager::Materialize for blocks:
 *   every sequence of the batch, sorted by priority (arrival), needs
 *   ceil((context + step_length) / cache_block_seq_len) blocks
 *   (SequenceManager.cc:313-321, step_length 1 by default,
 *   LlamaTritonModel.cc:89-92); those that fit are active, the rest are
 *   swapped out (their blocks may be evicted, then recomputed);
 * - ContextDecode (:1041-1193): each newly active sequence's whole missing
 *   context less its last token ("subtract input/context len by 1 to skip
 *   last input token (will process with decoder later)", :1055, :1077), in
 *   sub-batches walked in order: a sequence joins the current one while its
 *   summed input tokens <= max_context_token_num and the longest context x
 *   the sub-batch's size <= max_context_token_num (:1087-1104), else starts
 *   the next; each sub-batch is one contextDecode forward pass (:1153-1169),
 *   no logits; Initialize put the newly active ones last, sorted by missing
 *   length, shortest first (:395-401);
 * - Generate (:1446-1450): one decoder forward of every active sequence,
 *   the new ones' last prompt token included, and sampling: every active
 *   sequence, new ones too, gets a token in the iteration;
 * - Finish (:1242-1377): the stream synchronised, the output ids copied to
 *   the host, finished sequences released.
 * No chunking of a prompt over iterations: max_context_token_num only cuts
 * the context passes of one iteration (strata's --max-num-batched-tokens
 * here; LlamaTritonModel.cc:178-180 multiplies a configured value <=
 * max_batch_size by session_len).
 *
 * In strata: a step is the running requests' decodes (serve_schedule_running;
 * a request the pool cannot grow preempts the latest admitted, recomputed
 * later), then waiting requests in arrival order while max_num_seqs and the
 * pool allow each its whole prompt plus step_length's one token, each as
 * one chunk of its whole prompt that samples. No prefix-cache lookup
 * (TurboMind 0.1 caches no prefixes). The step's GPU time
 * (serve_turbomind_gpu) is the context passes' then the decoder pass's.
 * Not modelled: the swapped-out sequences' slots (they keep their place in
 * the batch and count against max_batch_size), partial eviction.
 *
 * Invariants: a prompt is never split over steps; the decoder pass has one
 * token per chunk; the context passes' tokens sum to the chunks' tokens
 * less one each.
 */
#include <stdlib.h>
#include "serve/serve_run.h"

/* Waiting requests in arrival order, whole prompts, while slots and the
 * pool (prompt + step_length tokens) allow. */
static void admit_whole(serve_state *st, uint32_t *budget)
{
    while (st->waiting.n && st->n_running < st->cfg->max_num_seqs) {
        serve_req *q = &st->req[serve_deque_peek(&st->waiting)];
        strata_serve_kv_req r = serve_kv_req(q);
        uint32_t want = serve_tokens_of(q), most = q->prompt + q->output;
        uint32_t grow = want + 1 <= most ? want + 1 : want; /* step_length 1 (SequenceManager.cc:317) */
        if (!st->scheme->grow(st->kv, &r, grow))
            return;
        serve_admit_head(st, 0, want, budget);
    }
}

void serve_schedule_turbomind(serve_state *st)
{
    uint32_t budget = UINT32_MAX; /* no token cap on an iteration: max_context_token_num cuts passes only */
    if (!serve_schedule_running(st, &budget, 0, 1))
        admit_whole(st, &budget);
}

/* Context chunks by missing length, shortest first (stable: by id). */
static int by_tokens(const void *a, const void *b)
{
    const strata_serve_chunk *x = a, *y = b;
    if (x->tokens != y->tokens)
        return x->tokens < y->tokens ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

uint32_t serve_turbomind_passes(const strata_serve_chunk *chunks, uint32_t n, uint32_t max_context,
                                strata_serve_chunk *ctx, uint32_t *first, strata_serve_chunk *dec)
{
    uint32_t n_ctx = 0;
    for (uint32_t i = 0; i < n; i++) {
        const strata_serve_chunk *c = &chunks[i];
        dec[i] = *c;
        if (c->tokens > 1) {
            ctx[n_ctx++] = (strata_serve_chunk){c->id, c->tokens - 1, c->context - 1, false};
            dec[i].tokens = 1;
        }
    }
    qsort(ctx, n_ctx, sizeof *ctx, by_tokens);
    uint32_t passes = 0;
    uint64_t size = 0, input = 0, longest = 0;
    for (uint32_t i = 0; i < n_ctx; i++) {
        uint64_t in = input + ctx[i].tokens, lg = longest > ctx[i].context ? longest : ctx[i].context;
        if (size && in <= max_context && lg * (size + 1) <= max_context) {
            size++, input = in, longest = lg;
            continue;
        }
        first[passes++] = i;
        size = 1, input = ctx[i].tokens, longest = ctx[i].context;
    }
    first[passes] = n_ctx;
    return passes;
}

double serve_turbomind_gpu(serve_state *st, strata_serve_cost *cost, uint32_t pad)
{
    uint32_t n = st->n_chunks, *first = st->tm_first;
    strata_serve_chunk *ctx = st->tm_ctx, *dec = st->tm_dec; /* the state's scratch: n <= max_num_seqs + 1 */
    uint32_t passes = serve_turbomind_passes(st->chunks, n, st->cfg->max_num_batched_tokens, ctx, first, dec);
    double t = 0;
    for (uint32_t p = 0; p < passes; p++)
        t += strata_serve_cost_step(cost, ctx + first[p], first[p + 1] - first[p]);
    t += strata_serve_cost_step_padded(cost, dec, n, pad); /* --cuda-graph-batch-sizes: a decode-only step's */
    return t;
}

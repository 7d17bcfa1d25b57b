/*
 * serve_scheduler.h: the table of scheduling policies a serving run can
 * use, looked up by name (--scheduler NAME; the default is the engine
 * row's, serve_engine.h): which requests and how many of their tokens go
 * into each step.
 *
 *   vllm-v1          vLLM v1's schedule() (serve_sched.c): running
 *                    requests first, then waiting ones, prefill chunks
 *                    and decodes mixed in one step (the default);
 *   vllm-v0          vLLM v0's _schedule_default (serve_sched_v0.c): a
 *                    step runs whole prefills of waiting requests (FCFS,
 *                    as many as the token budget and max_num_seqs allow)
 *                    or the running requests' decodes, never both; with
 *                    --num-scheduler-steps N a decode batch runs N steps;
 *   vllm-v0-chunked  vLLM v0's _schedule_chunked_prefill: decodes first,
 *                    then prefill chunks up to the token budget;
 *   trtllm-no-evict  TensorRT-LLM's GUARANTEED_NO_EVICT capacity
 *                    scheduler (serve_sched_trtllm.c): a waiting request
 *                    is admitted only when the free blocks, less what the
 *                    running requests still need to finish, hold its
 *                    whole prompt + output; the step as vllm-v1's.
 *   trtllm-no-evict-unchunked  the same admission, context chunking off
 *                    (the C++ executor's default): decodes, then whole
 *                    prompts while each fits the rest of the budget.
 *   sglang-v0.3      SGLang 0.3.0's scheduler (serve_sched_sglang.c): a
 *                    step of prefills (chunked at 8192 tokens) or one of
 *                    decodes, never both; admission against the free pool
 *                    less the running requests' expected outputs; retract
 *                    on a full pool.
 *   sglang-v0.4      SGLang 0.4.0's (serve_sched_sglang04.c): sglang-v0.3's
 *                    steps and admission; after a full batch or a refusal
 *                    for tokens no prefill is tried until the running
 *                    batch shrinks (batch_is_full); its own new_token_ratio
 *                    floor and decay; a retract takes one at least.
 *   lmdeploy-turbomind  LMDeploy TurboMind 0.1's persistent batch
 *                    (serve_sched_turbomind.c): decodes, then whole prompts
 *                    (no chunking, no token cap a step: the budget is
 *                    max_context_token_num, which only cuts the step's
 *                    context passes) while max_num_seqs and the pool allow.
 *
 * A row may give the engine's own defaults (token budget and max_num_seqs
 * when the options leave them out) and pick a sibling row, with its own
 * budget, from the run's setup (vLLM V0 turns chunked prefill on for
 * long-context models on CUDA; serve_sched_v0.c's serve_v0_pick).
 * Adding a policy is one function (serve_run.h's state) and one row in
 * serve_scheduler.c's table; docs/extending.md.
 *
 * Invariants: a policy schedules at most max_num_batched_tokens tokens
 * (lmdeploy-turbomind: that many a context pass) and
 * keeps at most max_num_seqs requests running; it changes the KV scheme
 * only through its grow/release hooks.
 */
#ifndef STRATA_SERVE_SCHEDULER_H
#define STRATA_SERVE_SCHEDULER_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

struct serve_state;

/* What a row's pick reads of a run's setup. */
typedef struct strata_serve_pick_setup {
    uint32_t max_model_len;
    bool rocm;           /* vLLM's ROCm build (strata_serve_hw_rocm: the hw file's device is AMD's) */
    bool sliding_window; /* the model's config gives a sliding window (vLLM's get_sliding_window() not None) */
    bool mla;            /* the model's attention is MLA */
} strata_serve_pick_setup;

typedef struct strata_serve_scheduler {
    const char *name;
    /* Fills the state's chunks for one step (serve_run.h). */
    void (*schedule)(struct serve_state *st);
    /* The engine's token budget for a model of max_model_len when none is
     * given (NULL: strata's 8192). */
    uint32_t (*default_budget)(uint32_t max_model_len);
    uint32_t default_max_seqs;  /* 0: strata's 1024 */
    bool whole_prompts;         /* prefills never chunked: a budget below max_model_len is refused */
    /* vLLM 0.6's chunked-prefill rules: refused with --num-scheduler-steps
     * > 1; with prefix caching the budget must be whole blocks and a chunk
     * cut by the budget is rounded down to whole blocks */
    bool v0_chunk_rules;
    /* The row the engine would run instead for this setup (NULL: none),
     * and that row's token budget when none is given. */
    const char *(*pick)(const strata_serve_pick_setup *s, uint32_t *budget);
    const char *what;           /* one line for --help */
} strata_serve_scheduler;

/* The row called name, or NULL with an error listing the known ones. */
const strata_serve_scheduler *strata_serve_scheduler_find(const char *name, GError **err);
/* Each row's name and line, one a line (g_free), for --help. */
char *strata_serve_scheduler_help(void);

#endif

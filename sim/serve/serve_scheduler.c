/*
 * serve_scheduler.c: the scheduling policies' table (serve_scheduler.h),
 * one row per policy; each row's functions are in its own file
 * (serve_sched.c: vllm-v1; serve_sched_v0.c: vllm-v0 and vllm-v0-chunked;
 * serve_sched_trtllm.c: trtllm-no-evict; serve_sched_sglang.c: sglang-v0.3;
 * serve_sched_sglang04.c: sglang-v0.4; serve_sched_turbomind.c:
 * lmdeploy-turbomind).
 */
#include "serve/serve_scheduler.h"
#include "core/error.h"
#include "serve/serve_names.h"
#include "serve/serve_run.h"

static const strata_serve_scheduler schedulers[] = {
    {"vllm-v1", serve_schedule_v1, NULL, 0, false, false, NULL,
     "vLLM v1: running requests first, then waiting ones; prefill chunks and decodes in one step (default)"},
    {"vllm-v0", serve_schedule_v0, serve_v0_budget, 256, true, false, serve_v0_pick,
     "vLLM v0 (0.5, 0.6): a step of whole prefills or one of decodes, never both; budget max(max_model_len, 2048), "
     "256 sequences; --num-scheduler-steps N: a decode batch runs N steps"},
    {"vllm-v0-chunked", serve_schedule_v0_chunked, serve_v0_chunked_budget, 256, false, true, NULL,
     "vLLM v0 with chunked prefill: decodes first, then prefill chunks; budget 512 (0.6.0's); --engine vllm-v0 "
     "runs it, budget 2048, above max_model_len 32768 off ROCm (V0's default from 0.6.5)"},
    {"trtllm-no-evict", serve_schedule_trtllm_no_evict, NULL, 0, false, false, NULL,
     "TensorRT-LLM's GUARANTEED_NO_EVICT: a request is admitted only when the pool can hold its whole prompt + "
     "output, reserved to completion; never preempts"},
    {"trtllm-no-evict-unchunked", serve_schedule_trtllm_no_evict_unchunked, NULL, 0, false, false, NULL,
     "trtllm-no-evict with context chunking off (TensorRT-LLM's C++ executor default): decodes, then whole "
     "prompts in arrival order while each fits the rest of the token budget"},
    {"sglang-v0.3", serve_schedule_sglang, serve_sglang_budget, 0, false, false, NULL,
     "SGLang 0.3: a step of prefills (cut at 8192 tokens, admitted against the free pool less the running "
     "requests' expected outputs) or one of decodes, never both; retracts on a full pool"},
    {"sglang-v0.4", serve_schedule_sglang04, serve_sglang_budget, 0, false, false, NULL,
     "SGLang 0.4: sglang-v0.3's steps; after a full batch or a refusal for tokens no prefill until a running request "
     "leaves (batch_is_full); new_token_ratio 0.7 down to 0.098"},
    {"lmdeploy-turbomind", serve_schedule_turbomind, NULL, 0, false, false, NULL,
     "LMDeploy TurboMind 0.1: decodes, then whole prompts in arrival order while slots and blocks allow, no token "
     "cap a step (the budget cuts its context passes: serve_sched_turbomind.c)"},
    {NULL, NULL, NULL, 0, false, false, NULL, NULL},
};

char *strata_serve_scheduler_help(void)
{
    GString *s = g_string_new(NULL);
    for (const strata_serve_scheduler *p = schedulers; p->name; p++)
        g_string_append_printf(s, "  %-16s %s\n", p->name, p->what);
    return g_string_free(s, FALSE);
}

const strata_serve_scheduler *strata_serve_scheduler_find(const char *name, GError **err)
{
    return serve_names_lookup(SERVE_NAMES(schedulers, strata_serve_scheduler), name, STRATA_ERROR_INPUT, err,
                              "--scheduler: unknown scheduler '%s' (known: %s)");
}

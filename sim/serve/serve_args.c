/*
 * serve_args.c: a serving run's options and its setup (serve_args.h).
 */
#include "serve/serve_args.h"
#include <math.h>
#include <string.h>
#include "core/error.h"
#include "core/units.h"
#include "serve/serve_chat.h"
#include "serve/serve_cost.h"
#include "serve/serve_fp8_linear.h"
#include "serve/serve_frontend_queue.h"
#include "serve/serve_release.h"
#include "serve/serve_stream.h"
#include "trace/check.h"

GOptionEntry *strata_serve_args_entries(strata_serve_args *a)
{
    a->tp = a->max_seqs = a->max_tokens = a->block = a->limit = a->kv_blocks = STRATA_SERVE_UNSET;
    a->shared_prefix = a->warm_prefix = a->concurrency = a->scheduler_steps = a->graph_max_bs = a->seq_capture =
        STRATA_SERVE_UNSET;
    GOptionEntry entries[] = {
        {"hw", 0, 0, G_OPTION_ARG_FILENAME, &a->hw, "hardware model (its first device's unit and memory)", "HW.ini"},
        {"hw-set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a->hw_sets, "override a hardware key (repeatable)",
         "KIND.NAME.KEY=V"},
        {"clock", 0, 0, G_OPTION_ARG_STRING, &a->clock, "duty (default where the hardware file gives "
         "clock_response): each step's compute-bound ops at the clock its GPU's filtered matrix activity leaves it "
         "(the peak after idle time, sustained_clock when saturated; docs/serving.md, wave 24); sustained (the "
         "default otherwise): compute-bound ops at the clock the power limit holds under continuous work, where the "
         "file gives sustained_clock; peak: every op at the clock the peak rates are quoted at",
         "duty|sustained|peak"},
        {"model", 'm', 0, G_OPTION_ARG_STRING, &a->model, "a preset model (list below)", "NAME"},
        {"model-file", 0, 0, G_OPTION_ARG_FILENAME, &a->model_file, "a model of 'key = value' lines", "FILE"},
        {"config", 0, 0, G_OPTION_ARG_FILENAME, &a->config, "a Hugging Face config.json (configs/models/)",
         "FILE"},
        {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a->sets, "set a model key (repeatable)", "KEY=VALUE"},
        {"requests", 'r', 0, G_OPTION_ARG_FILENAME, &a->requests,
         "request CSV: TIMESTAMP,ContextTokens,GeneratedTokens (Azure) or arrival_s,prompt_tokens,output_tokens",
         "CSV"},
        {"limit", 0, 0, G_OPTION_ARG_INT, &a->limit, "serve the first N requests of --requests", "N"},
        {"poisson", 0, 0, G_OPTION_ARG_STRING, &a->poisson,
         "Poisson arrivals: n=, rate= (req/s, 0: all at once), prompt=, output= (means), dist=fixed|uniform|exp, "
         "spread=, seed=", "SPEC"},
        {"time-scale", 0, 0, G_OPTION_ARG_STRING, &a->time_scale, "multiply the stream's arrival times (0.5: twice "
         "the rate; 0: all at once; default 1; open loop only: not with --concurrency N > 0)", "F"},
        {"shared-prefix", 0, 0, G_OPTION_ARG_INT, &a->shared_prefix, "tokens every prompt shares (prefix caching)",
         "N"},
        {"warm-prefix", 0, 0, G_OPTION_ARG_INT, &a->warm_prefix, "tokens of each prompt already in the prefix "
         "cache when the run starts (an earlier run on the same server sent request i's first N tokens)", "N"},
        {"prior-run", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a->prior_runs, "a run before this one on the same "
         "server with vLLM's random dataset and the same seed (repeatable, in the order they ran): its prompts' "
         "blocks wait in the prefix cache as it freed them (docs/serving.md)", "n=N,prompt=P,output=O"},
        {"concurrency", 0, 0, G_OPTION_ARG_INT, &a->concurrency,
         "closed loop: N clients, each sends its next request when one completes (0, the default: the "
         "stream's own arrival times)", "N"},
        {"tp", 0, 0, G_OPTION_ARG_INT, &a->tp, "tensor-parallel ranks (default 1)", "N"},
        {"attention-dp", 0, 0, G_OPTION_ARG_NONE, &a->attention_dp, "attention data-parallel over the --tp ranks "
         "(2 or more): each runs its own requests' attention with whole weights, the routed experts split "
         "(TensorRT-LLM enable_attention_dp, SGLang --enable-dp-attention; GQA models)", NULL},
        {"kv", 0, 0, G_OPTION_ARG_STRING, &a->kv, "KV allocation scheme(s), comma-separated, or all (default paged)",
         "NAME"},
        {"kv-page", 0, 0, G_OPTION_ARG_STRING, &a->kv_page, "page of vattention/expandable (default 2MiB/20MiB)",
         "SIZE"},
        {"kv-allocator", 0, 0, G_OPTION_ARG_STRING, &a->kv_allocator, "allocator of the contiguous schemes "
         "(default best-fit)", "SPEC"},
        {"max-num-seqs", 0, 0, G_OPTION_ARG_INT, &a->max_seqs, "running requests at most (default 1024; "
         "sglang-v0.4, v0.5: SGLang's max_running_requests from its pool)", "N"},
        {"max-num-batched-tokens", 0, 0, G_OPTION_ARG_INT, &a->max_tokens, "tokens per step (default 8192)", "N"},
        {"block-size", 0, 0, G_OPTION_ARG_INT, &a->block, "tokens per KV block (default 16)", "N"},
        {"gpu-memory-utilization", 0, 0, G_OPTION_ARG_STRING, &a->util, "share of device memory (default 0.9; "
         "sglang-v0.4, v0.5: SGLang's mem_fraction_static by --tp)", "F"},
        {"no-prefix-caching", 0, 0, G_OPTION_ARG_NONE, &a->no_prefix, "turn prefix caching off", NULL},
        {"preemption", 0, 0, G_OPTION_ARG_STRING, &a->preemption, "recompute (default) or swap", "MODE"},
        {"swap-space", 0, 0, G_OPTION_ARG_STRING, &a->swap_space, "host bytes per rank for swap, with --preemption "
         "swap (default 4GiB)", "SIZE"},
        {"engine", 0, 0, G_OPTION_ARG_STRING, &a->engine, "the engine's CPU time per step, its scheduler and its "
         "decode attention kernel: none (default), vllm-v0, vllm-v0.5 (0.5.x's figures), sglang-v0.3, sglang-v0.4, "
         "sglang-v0.5 (0.5.6's DeepSeek kernels), overlap, trtllm (XQA decode "
         "attention; docs/serving.md), trtllm-cpp (TensorRT-LLM's C++ executor, NIM), trtllm-cpp-0.11 (its v0.11 decoder's "
         "buffers), trtllm-cpp-0.9 (its v0.9 decode dispatch; v0.8's too), trtllm-cpp-0.7 (v0.7 with "
         "TRTLLM_ENABLE_XQA=1), trtllm-cpp-0.6 (v0.6.1's masked MHA decode), "
         "lmdeploy-turbomind or turbomind (LMDeploy TurboMind 0.1)", "NAME"},
        {"prefill-decode-attention", 0, 0, G_OPTION_ARG_NONE, &a->prefill_decode, "vLLM V1 on ROCm with "
         "VLLM_V1_USE_PREFILL_DECODE_ATTENTION=1: decodes through paged_attention_rocm, not the Triton unified "
         "attention (no --engine; RCCL hardware)", NULL},
        {"fp8-linear-rocm", 0, 0, G_OPTION_ARG_STRING, &a->fp8_linear_rocm, "vllm-v0 / vllm-v0.5 on AMD hardware: "
         "how a per-tensor FP8 model's Linears run: vllm-rocm-fork (default: AMD's ROCm/vllm 0.7.3+, the norms and "
         "activation write FP8, wvSplitKQ at one row), vllm-rocm-fork-0.6 (its 0.6.3-0.6.6 images: hipBLASLt at one "
         "row too) or vllm-0.6-rocm-scaled-mm (upstream: every Linear quantizes, rows padded to 17; docs/serving.md)",
         "ROW"},
        {"engine-release", 0, 0, G_OPTION_ARG_STRING, &a->engine_release, "the vLLM release the run was (0.4.0-0.19.x, "
         "such as 0.6.6): each release-dependent row that release ran (engine when no --engine, ROCm FP8 Linears, "
         "async scheduling) from a table of boundaries; an option given wins (docs/serving.md)", "X.Y.Z"},
        {"offline", 0, 0, G_OPTION_ARG_NONE, &a->offline, "no server between client and engine (benchmark_latency, "
         "benchmark_throughput, the LLM class): the engine's server hops not charged (docs/serving.md)", NULL},
        {"serial-api-server", 0, 0, G_OPTION_ARG_NONE, &a->serial_api_server, "vLLM V1's one API server process: "
         "intake and output chunks on one queue (off: pure delays; docs/serving.md)", NULL},
        {"chat-endpoint", 0, 0, G_OPTION_ARG_NONE, &a->chat_endpoint, "the client posts to /v1/chat/completions "
         "(vllm bench serve --backend openai-chat): with --engine-release 0.11.0, its chat template parse a request "
         "(docs/serving.md)", NULL},
        {"async-scheduling", 0, 0, G_OPTION_ARG_NONE, &a->async_sched, "vLLM V1's async scheduling (its default "
         "from 0.14): step n+1 formed while step n runs (no --engine; docs/serving.md)", NULL},
        {"num-scheduler-steps", 0, 0, G_OPTION_ARG_INT, &a->scheduler_steps, "vllm-v0: decode steps per scheduling "
         "(vLLM 0.6's multi-step; default 1)", "N"},
        {"scheduler", 0, 0, G_OPTION_ARG_STRING, &a->scheduler, "scheduling policy (list below; default: the "
         "engine's, vllm-v1 for none)", "NAME"},
        {"cuda-graph-batch-sizes", 0, 0, G_OPTION_ARG_STRING, &a->graph_sizes, "pad a decode-only step's batch per "
         "rank to the first of these sizes that holds it (TensorRT-LLM cuda_graph_config, enable_padding)",
         "N1,N2,..."},
        {"cuda-graph-max-bs", 0, 0, G_OPTION_ARG_INT, &a->graph_max_bs, "sglang-v0.4, sglang-v0.5: the largest "
         "decode batch a rank captures in a CUDA graph, 1 to 2^20 (SGLang's --cuda-graph-max-bs; default: the "
         "release's rule by the GPU's memory and --tp); a larger decode batch runs eagerly", "N"},
        {"max-seq-len-to-capture", 0, 0, G_OPTION_ARG_INT, &a->seq_capture, "vllm-v0, vllm-v0.5: a decode step whose "
         "longest context is above N runs eagerly (vLLM V0's --max-seq-len-to-capture; default 8192)", "N"},
        {"step-overhead", 0, 0, G_OPTION_ARG_STRING, &a->step_overhead, "seconds each step adds besides the engine's "
         "(default 0)", "S"},
        {"kv-blocks", 0, 0, G_OPTION_ARG_INT, &a->kv_blocks, "the KV pool as this many blocks of --block-size per "
         "rank, whatever the memory, at most 2^24 (TurboMind's cache_max_entry_count > 1; default: from the memory)",
         "N"},
        {"non-kv-overhead", 0, 0, G_OPTION_ARG_STRING, &a->non_kv, "bytes per rank kept from the KV pool (default 0)",
         "SIZE"},
        {"sweep", 0, 0, G_OPTION_ARG_STRING, &a->sweep, "run every scheme at each value of a knob (list below)",
         "KNOB=V1,V2,..."},
        {"timeline", 0, 0, G_OPTION_ARG_FILENAME, &a->timeline, "write a Perfetto/Chrome timeline: a track of "
         "steps and the pool's occupancy per run (.gz: compressed)", "OUT"},
        {"json", 'j', 0, G_OPTION_ARG_FILENAME, &a->json, "write results JSON here ('-': standard output)", "OUT"},
        {"quiet", 'q', 0, G_OPTION_ARG_NONE, &a->quiet, "no progress line on standard error", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionEntry *copy = g_new(GOptionEntry, G_N_ELEMENTS(entries));
    memcpy(copy, entries, sizeof entries);
    return copy;
}

void strata_serve_args_clear(strata_serve_args *a)
{
    char **strs[] = {&a->hw, &a->model, &a->model_file, &a->config, &a->requests, &a->poisson, &a->kv, &a->kv_page,
                     &a->kv_allocator, &a->swap_space, &a->preemption, &a->non_kv, &a->json, &a->timeline,
                     &a->sweep, &a->time_scale, &a->engine, &a->scheduler, &a->graph_sizes, &a->clock,
                     &a->util, &a->step_overhead, &a->fp8_linear_rocm, &a->engine_release};
    for (size_t i = 0; i < G_N_ELEMENTS(strs); i++)
        g_free(*strs[i]);
    g_strfreev(a->sets);
    g_strfreev(a->hw_sets);
    g_strfreev(a->prior_runs);
}

static bool fail(GError **err, const char *fmt, const char *what)
{
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, fmt, what);
    return false;
}

/* The model: a preset or a file, then --set keys. */
bool strata_serve_args_model(const strata_serve_args *a, strata_serve_model *m, GError **err)
{
    strata_serve_model_init(m);
    if ((a->model != NULL) + (a->model_file != NULL) + (a->config != NULL) != 1)
        return fail(err, "expected one of --model NAME, --model-file FILE and --config CONFIG.json%s", "");
    bool ok = a->model ? strata_serve_model_preset(m, a->model, err)
              : a->config ? strata_serve_model_from_config(m, a->config, err)
                          : strata_serve_model_load(m, a->model_file, err);
    if (!ok)
        return false;
    for (char **s = a->sets; s && *s; s++) {
        char *eq = strchr(*s, '=');
        if (!eq)
            return fail(err, "--set: expected KEY=VALUE, got '%s'", *s);
        for (char **t = a->sets; t < s; t++) /* "--set layers=1 --set layers=2": the later was taken, exit 0 */
            if (strncmp(*t, *s, (size_t)(eq - *s) + 1) == 0) {
                g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--set: key '%.*s' is set twice ('%s', then "
                            "'%s'): expected each key once", (int)(eq - *s), *s, *t, *s);
                return false;
            }
        char *key = g_strndup(*s, (gsize)(eq - *s));
        bool ok = strata_serve_model_set(m, key, eq + 1, err);
        g_free(key);
        if (!ok) {
            g_prefix_error(err, "--set: ");
            return false;
        }
    }
    /* a config.json's derived length (model_max_len.h) bounds max_model_len as vLLM's does: ValueError
     * "User-specified max_model_len (N) is greater than the derived max_model_len (max_position_embeddings=M
     * ...)" (vllm-project/vllm@32e7db25, v0.6.0, vllm/config.py _get_and_verify_max_len; SGLang's
     * ModelConfig the same for its context_length); it was taken. TensorRT-LLM and TurboMind rows keep theirs. */
    bool derived = !a->engine || g_str_has_prefix(a->engine, "vllm") || g_str_has_prefix(a->engine, "sglang");
    if (derived && m->max_positions && m->max_model_len > m->max_positions) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--set max_model_len=%u: %s gives a derived "
                    "max_model_len of %u (its max_position_embeddings and rope_scaling, model_max_len.h), and vLLM "
                    "and SGLang refuse a length above the one they derive from it (\"User-specified max_model_len "
                    "... is greater than the derived max_model_len\", vllm/config.py): expected at most %u",
                    m->max_model_len, a->config, m->max_positions, m->max_positions);
        return false;
    }
    return strata_serve_model_check_sets(m, a->sets, err) && /* a key its parent leaves unread: refused */
           strata_serve_model_check(m, a->model ? a->model : a->config ? a->config : a->model_file, err);
}

/* --cuda-graph-batch-sizes: sizes > 0, increasing, at most
 * STRATA_SERVE_GRAPH_SIZES of them. */
static bool graph_sizes_of(const char *list, strata_serve_config *c, GError **err)
{
    char **v = g_strsplit(list, ",", -1);
    bool ok = *v != NULL; /* '' named no size: padding silently off */
    c->n_graph_sizes = 0;
    for (char **p = v; ok && *p; p++) {
        char *end = NULL;
        guint64 n = g_ascii_strtoull(*p, &end, 10);
        ok = g_ascii_isdigit(**p) && !*end && n > 0 && n <= (1u << 20) && c->n_graph_sizes < STRATA_SERVE_GRAPH_SIZES &&
             (!c->n_graph_sizes || n > c->graph_sizes[c->n_graph_sizes - 1]);
        if (ok)
            c->graph_sizes[c->n_graph_sizes++] = (uint32_t)n;
    }
    g_strfreev(v);
    if (!ok)
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--cuda-graph-batch-sizes: expected up to %d increasing "
                    "sizes from 1 to 2^20, comma-separated, got '%s'", STRATA_SERVE_GRAPH_SIZES, list);
    return ok;
}

/* --max-seq-len-to-capture: vLLM V0's engine argument (arg_utils.py), read by the rows with a context limit
 * (serve_engine.h seq_capture: vllm-v0 and vllm-v0.5, the rows with an eager chain); 1 to 2^31 - 1. */
static bool seq_capture_of(const strata_serve_args *a, strata_serve_config *c, GError **err)
{
    if (a->seq_capture == STRATA_SERVE_UNSET)
        return true;
    if (!c->engine || !c->engine->seq_capture) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--max-seq-len-to-capture: --engine %s has no such "
                    "option here (vLLM V0's engine argument, read where an eager chain is counted); expected --engine "
                    "vllm-v0 or vllm-v0.5",
                    c->engine ? c->engine->name : "none given (vLLM v1)");
        return false;
    }
    if (a->seq_capture < 1) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--max-seq-len-to-capture: expected a whole number from "
                    "1 to 2147483647, got %d", a->seq_capture);
        return false;
    }
    c->max_seq_len_to_capture = (uint32_t)a->seq_capture;
    return true;
}

/* --cuda-graph-max-bs: SGLang 0.4's and 0.5's server argument (server_args.py's cuda_graph_max_bs), read by the
 * rows with a graph limit by hardware (serve_graph_limit.h); 1 to 2^20. The other rows have no such option
 * (vLLM, TensorRT-LLM and TurboMind rows; SGLang 0.3.0's server_args has none): it was not read there. */
static bool graph_max_bs_of(const strata_serve_args *a, strata_serve_config *c, GError **err)
{
    if (a->graph_max_bs == STRATA_SERVE_UNSET)
        return true;
    if (!strata_serve_engine_graph_limit(c->engine)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--cuda-graph-max-bs: --engine %s has no such option "
                    "(SGLang 0.4's and 0.5's server argument); expected --engine sglang-v0.4 or sglang-v0.5, or "
                    "--cuda-graph-batch-sizes for padding alone", c->engine ? c->engine->name : "none given (vLLM v1)");
        return false;
    }
    if (a->graph_sizes) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--cuda-graph-max-bs: expected it or "
                    "--cuda-graph-batch-sizes, not both (a given list is captured as listed; its last size is the "
                    "largest graph)");
        return false;
    }
    if (a->graph_max_bs < 1 || a->graph_max_bs > (1 << 20)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--cuda-graph-max-bs: expected a whole number from 1 to "
                    "2^20 (1048576), got %d", a->graph_max_bs);
        return false;
    }
    c->cuda_graph_max_bs = (uint32_t)a->graph_max_bs;
    return true;
}

/* The block sizes vLLM takes. vLLM 0.6 (the vllm-v0 rows): its CLI's
 * `--block-size` choices=[8, 16, 32] (vllm/engine/arg_utils.py; PR #11259
 * widened them to 8..128, CUDA still at most 32). Later releases: the
 * `BlockSize = Literal[1, 8, 16, 32, 64, 128, 256]` of vllm/config/cache.py;
 * main now takes any size > 0 (vllm-project/vllm@002f10e0
 * vllm/config/cache.py, `Field(gt=0)`) that the attention backend takes,
 * FlashAttention's a multiple of 16 (vllm@5704f34f
 * vllm/v1/attention/backends/flash_attn.py, get_supported_kernel_block_sizes),
 * so no release runs --block-size 3, which strata took at exit 0. */
static bool block_size_ok(const strata_serve_config *c, const char *what, GError **err)
{
    static const uint32_t v0[] = {8, 16, 32, 0}, v1[] = {1, 8, 16, 32, 64, 128, 256, 0};
    const strata_serve_scheduler *p = c->scheduler;
    bool old = p && g_str_has_prefix(p->name, "vllm-v0");
    const uint32_t *allowed = old ? v0 : v1;
    GString *list = g_string_new(NULL);
    for (const uint32_t *b = allowed; *b; b++) {
        if (*b == c->block_size) {
            g_string_free(list, TRUE);
            return true;
        }
        g_string_append_printf(list, "%s%u", b == allowed ? "" : b[1] ? ", " : " or ", *b);
    }
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected %s (vLLM %s's block sizes), got %u", what,
                list->str, old ? "0.6" : "v1", c->block_size);
    g_string_free(list, TRUE);
    return false;
}

/* The first GPU kernel an engine row names (its CUDA or ROCm build's: decode, all-reduce, around attention, MLA,
 * sampler, else its FlashAttention or Triton MoE), NULL where it names none (the none row). */
static const char *gpu_kernel(const strata_serve_engine *e)
{
    const char *named[] = {e->decode, e->decode_rocm, e->allreduce, e->attn_aux, e->mla_kernels, e->sampler};
    for (size_t i = 0; i < G_N_ELEMENTS(named); i++)
        if (named[i])
            return named[i];
    return e->fa3_prefill || e->fa2_attention || e->triton_moe ? "FlashAttention or Triton fused_moe" : NULL;
}

/* --shared-prefix, --warm-prefix and --prior-run, where given (in that
 * order, n of them): each puts blocks in the cache that a prefix-cache
 * lookup alone finds (serve_pool.c block_hash). `text` is the value as the
 * messages print it (the count, or the first --prior-run). */
typedef struct {
    const char *opt, *what, *text;
    char count[16];
} prefix_option;

static size_t prefix_options_given(const strata_serve_args *a, prefix_option out[3])
{
    const struct {
        gint n;
        const char *opt, *what;
    } counts[] = {{a->shared_prefix, "--shared-prefix", "the blocks every prompt shares"},
                  {a->warm_prefix, "--warm-prefix", "the blocks an earlier run left"}};
    size_t n = 0;
    for (size_t k = 0; k < G_N_ELEMENTS(counts); k++)
        if (counts[k].n != STRATA_SERVE_UNSET && counts[k].n > 0) {
            out[n] = (prefix_option){counts[k].opt, counts[k].what, NULL, ""};
            g_snprintf(out[n].count, sizeof out[n].count, "%d", counts[k].n);
            out[n].text = out[n].count;
            n++;
        }
    if (a->prior_runs && a->prior_runs[0])
        out[n++] = (prefix_option){"--prior-run", "the blocks an earlier run left", a->prior_runs[0], ""};
    return n;
}

/* Those options are blocks found by a prefix-cache lookup alone (the
 * paged row's lookup; the other schemes have none, serve_kv.c KV_ROW, nor
 * has TurboMind 0.1's scheduler, serve_sched_turbomind.c): where the run
 * has none, each gave the JSON of the run without it, exit 0. Refused
 * naming `got`, what the run has. */
static bool prefix_options_looked_up(const strata_serve_args *a, bool lookup, const char *got, GError **err)
{
    prefix_option given[3];
    if (lookup || prefix_options_given(a, given) == 0)
        return true;
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s %s: expected a run that looks prefixes up in the cache "
                "(--kv paged, a scheduler other than lmdeploy-turbomind), got %s, which looks none up: it changes "
                "nothing there", given[0].opt, given[0].text, got);
    return false;
}

/* The scheduling policy: --scheduler, else the engine's (or the row it
 * picks for this setup on this hardware, with that row's budget); its
 * defaults where the options leave them, and the setups vLLM refuses or
 * strata does not model (serve_sched_v0.c). */
static bool scheduler_of(const strata_serve_args *a, const strata_serve_model *m, const strata_hw *hw,
                         strata_serve_config *c, GError **err)
{
    /* a row's kernels are GPUs' (vLLM's, SGLang's, TensorRT-LLM's and TurboMind's CUDA or ROCm builds): they
     * were priced on a TPU at exit 0; refused on Google's hardware (vendor = google or collectives = xla) */
    /* no --engine is vLLM v1's row (strata_serve_engine_row), whose kernels are a GPU's too */
    const char *kernel = gpu_kernel(strata_serve_engine_row(c->engine)), *vendor = strata_hw_vendor(hw);
    if (kernel && vendor && strcmp(vendor, "google") == 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--engine %s: its kernels are a GPU's (%s, of its CUDA "
                    "or ROCm build), and this hardware is Google's TPU (vendor = google or collectives = xla): "
                    "expected --engine none there, or a GPU's hardware",
                    c->engine ? c->engine->name : "not given (vLLM v1's row)", kernel);
        return false;
    }
    const char *name = a->scheduler ? a->scheduler : c->engine && c->engine->scheduler ? c->engine->scheduler : NULL;
    const strata_serve_scheduler *p = name ? strata_serve_scheduler_find(name, err) : NULL;
    if (name && !p)
        return false;
    const strata_serve_pick_setup setup = {.max_model_len = m->max_model_len,
                                           .rocm = strata_serve_hw_rocm(hw),
                                           .sliding_window = m->sliding_window != 0,
                                           .mla = m->kv_lora_rank != 0};
    uint32_t budget = 0;
    const char *other = p && !a->scheduler && p->pick ? p->pick(&setup, &budget) : NULL;
    if (other && c->num_scheduler_steps > 1) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--engine %s: max_model_len %u over 32768 off ROCm turns "
                    "vLLM V0's chunked prefill on (%s), which strata does not run with --num-scheduler-steps > 1 "
                    "(vLLM 0.6.0-0.6.2 refuse the pair; later releases run multi-step prefills through the chunked "
                    "path, not modelled); --scheduler %s runs it unchunked (--enable-chunked-prefill=False)",
                    c->engine->name, m->max_model_len, other, p->name);
        return false;
    }
    if (other && !(p = strata_serve_scheduler_find(other, err)))
        return false;
    c->scheduler = p;
    if (p && strcmp(p->name, "lmdeploy-turbomind") == 0 &&
        !prefix_options_looked_up(a, false, "the scheduler lmdeploy-turbomind", err))
        return false;
    /* vLLM V1's loop alone (EngineCore's batch queue); the other engines' rows carry their own (serve_engine.h
     * mode), and the other policies are other engines' */
    if (c->async_scheduling && (c->engine || (p && strcmp(p->name, "vllm-v1")))) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--async-scheduling: expected no --engine and the "
                    "vllm-v1 scheduler (vLLM V1's own loop), got --engine %s%s, --scheduler %s",
                    c->engine ? c->engine->name : "none", c->engine && !a->engine ? " (from --engine-release)" : "",
                    p ? p->name : "vllm-v1");
        return false;
    }
    /* only vLLM v0 swaps: v1's Scheduler._preempt_request frees the blocks and resets num_computed_tokens
     * (recompute; vllm/v1/core/sched/scheduler.py), and the other engines' rows preempt their own way; a swap
     * was modelled under them, exit 0 */
    if (c->swap && !(p && g_str_has_prefix(p->name, "vllm-v0"))) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--preemption swap: the scheduler %s does not swap (only "
                    "vLLM v0's do: v1 preempts by recompute, the other engines their own way); expected --scheduler "
                    "vllm-v0 or vllm-v0-chunked (or --engine vllm-v0), or --preemption recompute",
                    p ? p->name : "vllm-v1");
        return false;
    }
    if (p && a->max_tokens == STRATA_SERVE_UNSET && (other || p->default_budget))
        c->max_num_batched_tokens = other ? budget : p->default_budget(m->max_model_len);
    if (p && a->max_seqs == STRATA_SERVE_UNSET && p->default_max_seqs)
        c->max_num_seqs = p->default_max_seqs;
    strata_serve_config_engine_defaults(c, m, hw, a->util != NULL, a->max_seqs != STRATA_SERVE_UNSET);
    return strata_serve_config_check_scheduler(c, m->max_model_len, "--block-size", err);
}

void strata_serve_config_engine_defaults(strata_serve_config *c, const strata_serve_model *m, const strata_hw *hw,
                                         bool util_given, bool max_seqs_given)
{
    if (!c->engine)
        return;
    if (!util_given && c->engine->default_utilization) /* SGLang's mem_fraction_static by TP */
        c->gpu_memory_utilization = c->engine->default_utilization(c->tp);
    /* SGLang's max_running_requests from its pool, --kv-blocks' where given (a pool that fails is the run's error) */
    uint64_t w, act, pool;
    if (max_seqs_given || !c->engine->default_max_running || !strata_serve_memory(hw, m, c, &w, &act, &pool, NULL))
        return;
    uint64_t per_token = strata_serve_kv_bytes_per_token(m, c->attention_dp ? 1 : c->tp);
    c->max_num_seqs = c->engine->default_max_running(per_token ? pool / per_token : 0, m->max_model_len);
}

/* vLLM refuses a token budget under its sequence count (vllm-project/vllm@01230b40,
 * vllm/config/scheduler.py, SchedulerConfig.verify_max_model_len: "max_num_batched_tokens (...) must be
 * greater than or equal to max_num_seqs"; 0.6.0's SchedulerConfig._verify_args the same): 4 with the
 * default 1024 ran. Another engine's rules are its own. */
static bool vllm_budget_ok(const strata_serve_config *c, const strata_serve_scheduler *p, GError **err)
{
    bool vllm = (!c->engine || g_str_has_prefix(c->engine->name, "vllm")) &&
                (!p || g_str_has_prefix(p->name, "vllm-"));
    if (!vllm || c->max_num_batched_tokens >= c->max_num_seqs)
        return true;
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--max-num-batched-tokens (%u) is below --max-num-seqs "
                "(%u): vLLM (--scheduler %s) refuses a token budget under its sequence count; expected "
                "--max-num-batched-tokens >= --max-num-seqs", c->max_num_batched_tokens, c->max_num_seqs,
                p ? p->name : "vllm-v1");
    return false;
}

bool strata_serve_config_check_scheduler(const strata_serve_config *c, uint32_t max_model_len,
                                         const char *block_size_name, GError **err)
{
    const strata_serve_scheduler *p = c->scheduler;
    if (!block_size_ok(c, block_size_name, err))
        return false;
    /* Multi-step scheduling is vLLM V0's alone (--num-scheduler-steps, vllm-project/vllm PR #7000, merged
     * August 2024 for 0.5.5): SGLang's server_args, TensorRT-LLM's and LMDeploy's have no such option. A row
     * without it (every mode but MULTI_STEP) and a scheduler other than vllm-v0's read it nowhere. */
    bool v0 = p && g_str_has_prefix(p->name, "vllm-v0");
    if (c->num_scheduler_steps > 1 && !v0 && !(c->engine && c->engine->mode == SERVE_ENGINE_MULTI_STEP)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--num-scheduler-steps %u: expected --engine vllm-v0 or "
                    "vllm-v0.5 (vLLM V0's multi-step scheduling) or a vllm-v0 scheduler, which read it; --engine %s "
                    "with --scheduler %s reads neither (its engine has no multi-step scheduling)",
                    c->num_scheduler_steps,
                    c->engine ? c->engine->name : "vllm-v1", p ? p->name : "vllm-v1");
        return false;
    }
    if (!p)
        return vllm_budget_ok(c, p, err);
    if (p->v0_chunk_rules && c->num_scheduler_steps > 1)
        return fail(err, "--scheduler %s: vLLM 0.6 refuses chunked prefill with --num-scheduler-steps > 1 "
                    "(--scheduler vllm-v0 runs without it)", p->name);
    if (p->v0_chunk_rules && c->prefix_caching && c->max_num_batched_tokens % c->block_size)
        return fail(err, "--scheduler %s: with prefix caching vLLM 0.6 expects --max-num-batched-tokens to be whole "
                    "blocks of --block-size", p->name);
    if (p->whole_prompts && c->max_num_batched_tokens < max_model_len) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--scheduler %s: expected --max-num-batched-tokens (%u) >= "
                    "max_model_len (%u): vLLM 0.6 refuses a smaller budget without chunked prefill", p->name,
                    c->max_num_batched_tokens, max_model_len);
        return false;
    }
    return vllm_budget_ok(c, p, err);
}

/* An integer option's value, or def when not given (counts_given_in_range
 * checked it). */
static uint32_t count_or(gint v, uint32_t def) { return v == STRATA_SERVE_UNSET ? def : (uint32_t)v; }

/* An integer option not given, or given at least floor; else err names
 * the option, what it expected and what it got. */
static bool count_given_in_range(gint v, const char *option, gint floor, GError **err)
{
    if (v == STRATA_SERVE_UNSET || v >= floor)
        return true;
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected a whole number >= %d, got %d", option, floor,
                v);
    return false;
}

/* Each integer option given is at least its floor: 1 for a count of ranks,
 * sequences, tokens, blocks, requests or steps (0 was read as "the
 * default": --tp 0 ran on one rank), 0 for --concurrency (0: the stream's
 * own arrivals), --shared-prefix and --warm-prefix. */
static bool counts_given_in_range(const strata_serve_args *a, GError **err)
{
    const struct {
        gint v;
        const char *option;
        gint floor;
    } counts[] = {{a->tp, "--tp", 1},
                  {a->max_seqs, "--max-num-seqs", 1},
                  {a->max_tokens, "--max-num-batched-tokens", 1},
                  {a->block, "--block-size", 1},
                  {a->kv_blocks, "--kv-blocks", 1},
                  {a->limit, "--limit", 1},
                  {a->scheduler_steps, "--num-scheduler-steps", 1},
                  {a->concurrency, "--concurrency", 0},
                  {a->shared_prefix, "--shared-prefix", 0},
                  {a->warm_prefix, "--warm-prefix", 0}};
    for (size_t i = 0; i < G_N_ELEMENTS(counts); i++)
        if (!count_given_in_range(counts[i].v, counts[i].option, counts[i].floor, err))
            return false;
    return true;
}

bool strata_serve_args_tp(const strata_serve_args *a, uint32_t *tp, GError **err)
{
    if (!count_given_in_range(a->tp, "--tp", 1, err))
        return false;
    *tp = count_or(a->tp, 1);
    return true;
}

static bool config_of(const strata_serve_args *a, const strata_serve_model *m, strata_serve_config *c, GError **err)
{
    strata_serve_config_default(c);
    if (!counts_given_in_range(a, err))
        return false;
    c->tp = count_or(a->tp, 1);
    c->attention_dp = a->attention_dp;
    c->prefill_decode_attention = a->prefill_decode;
    c->async_scheduling = a->async_sched;
    if (c->attention_dp && c->tp < 2) /* one rank's attention is whole already: the flag changed nothing, exit 0 */
        return fail(err, "--attention-dp: expected --tp 2 or more (each of the TP ranks runs its own requests' "
                    "attention), got %s, where it changes nothing", "tp 1");
    if (c->attention_dp && m->kv_lora_rank)
        return fail(err, "--attention-dp: expected a GQA/MHA model (%s has MLA, not modelled with attention data "
                    "parallelism)", m->name);
    c->max_num_seqs = count_or(a->max_seqs, c->max_num_seqs);
    c->max_num_batched_tokens = count_or(a->max_tokens, c->max_num_batched_tokens);
    c->block_size = count_or(a->block, c->block_size);
    c->kv_blocks = count_or(a->kv_blocks, 0);
    if (c->kv_blocks > (1u << 24)) { /* 2^31 blocks: the paged pool's free list ran past a minute and 40 GB */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--kv-blocks: expected 1 to 2^24 (16777216) blocks a "
                    "rank, got %u", c->kv_blocks);
        return false;
    }
    /* each named with its value: the message named all three and no value */
    const char *big = c->max_num_batched_tokens > (1u << 20) ? "--max-num-batched-tokens"
                      : c->max_num_seqs > (1u << 20)           ? "--max-num-seqs"
                                                               : NULL;
    if (big) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected at most 2^20 (1048576), got %u", big,
                    c->max_num_batched_tokens > (1u << 20) ? c->max_num_batched_tokens : c->max_num_seqs);
        return false;
    }
    c->concurrency = count_or(a->concurrency, 0);
    if (a->util && !(strata_serve_decimal(a->util, &c->gpu_memory_utilization) &&
                     c->gpu_memory_utilization > 0 && c->gpu_memory_utilization <= 1))
        return fail(err, "--gpu-memory-utilization: expected a fraction in (0, 1], decimal, got '%s'", a->util);
    c->prefix_caching = !a->no_prefix;
    if (a->preemption && strcmp(a->preemption, "swap") != 0 && strcmp(a->preemption, "recompute") != 0)
        return fail(err, "--preemption: expected recompute or swap, got '%s'", a->preemption);
    c->swap = a->preemption && strcmp(a->preemption, "swap") == 0;
    /* seconds as a number, or a time with its unit as the sweep's step_overhead takes it (serve_fields.c): "1ms"
     * was refused here, "0.001" there */
    if (a->step_overhead && !strata_serve_decimal(a->step_overhead, &c->step_overhead) && /* nan, inf, 0x10 */
        !strata_parse_time(a->step_overhead, &c->step_overhead, NULL))
        return fail(err, "--step-overhead: expected a finite number of seconds >= 0 or a time such as 2ms, got %s",
                    a->step_overhead);
    if (!strata_trace_time_ok(c->step_overhead)) /* a trace op's range: 1e300 ran 10^300 s a step, at exit 0 */
        return fail(err, "--step-overhead: expected 0, or from 1e-12 s (a picosecond) to 1e6 s (a trace op's most), "
                    "got %s", a->step_overhead);
    if (a->graph_sizes && !graph_sizes_of(a->graph_sizes, c, err))
        return false;
    if (a->engine && !(c->engine = strata_serve_engine_find(a->engine, err)))
        return false;
    if (!strata_serve_release_apply(a->engine_release, a->engine != NULL, a->scheduler != NULL, c, err))
        return false; /* serve_release.h */
    c->offline = a->offline, c->serial_api_server = a->serial_api_server, c->chat_endpoint = a->chat_endpoint;
    if (!strata_serve_frontend_serial_check(c, err) || !strata_serve_chat_check(c, err)) /* serve_chat.h */
        return false;
    if (a->fp8_linear_rocm && !(c->fp8_linear_rocm = strata_serve_fp8_linear_option(a->fp8_linear_rocm, err)))
        return false;
    if (c->fp8_linear_rocm && (!c->engine || !c->engine->fp8_linear_rocm)) /* the row would change nothing */
        return fail(err, "--fp8-linear-rocm: expected --engine vllm-v0 or vllm-v0.5 (vLLM V0 on ROCm), got %s",
                    a->engine ? a->engine : "no --engine");
    if (!graph_max_bs_of(a, c, err) || !seq_capture_of(a, c, err))
        return false;
    if (a->scheduler_steps != STRATA_SERVE_UNSET && a->scheduler_steps > 1024)
        return fail(err, "--num-scheduler-steps: expected 1 to 1024%s", "");
    c->num_scheduler_steps = count_or(a->scheduler_steps, c->num_scheduler_steps);
    c->allocator = a->kv_allocator;
    const char *bad = a->swap_space && !strata_parse_size(a->swap_space, &c->swap_space, err) ? "--swap-space"
                      : a->kv_page && !strata_parse_size_above_zero(a->kv_page, &c->page_bytes, err) ? "--kv-page"
                      : a->non_kv && !strata_parse_size(a->non_kv, &c->non_kv_overhead, err) ? "--non-kv-overhead"
                      : NULL;
    if (bad) /* the option given, where the message named all three */
        g_prefix_error(err, "%s: ", bad);
    /* --kv-blocks sizes the pool whatever the memory (serve_run.c strata_serve_memory): the overhead kept
     * from the memory's pool was read nowhere, and 1GiB gave the same JSON as none */
    if (!bad && c->kv_blocks && c->non_kv_overhead)
        return fail(err, "--non-kv-overhead %s: expected no --kv-blocks, which sizes the KV pool whatever the memory "
                    "(the overhead is kept from the pool the memory leaves); beside it, it changes nothing", a->non_kv);
    if (!bad && c->kv_blocks && a->util) /* the same rule: 0.5 gave the JSON of 0.9 but for its echo */
        return fail(err, "--gpu-memory-utilization %s: expected no --kv-blocks, which sizes the KV pool whatever "
                    "the memory (the utilization sizes the pool the memory leaves); beside it, it changes nothing",
                    a->util);
    /* the host space is read by swap alone: 1GiB and 4GiB gave the same JSON (0, no space, says recompute too) */
    char *named = a->swap_space ? g_strdup_printf("--swap-space %s", a->swap_space) : NULL;
    bool ok = !bad && (!named || strata_serve_config_swap_space_read(c, named, err));
    g_free(named);
    return ok;
}

/* The latest arrival, after the first request's: 10^7 s (116 days; the
 * week-long Azure traces span 6 x 10^5 s). A double at 10^7 s still resolves
 * 2 ns; at 10^20 s an arrival plus a 6 ms step was the arrival, and a late
 * request's TTFT and TPOT came out 0 (the p50s halved), exit 0. */
#define SERVE_ARRIVAL_MAX_S 1e7

/* Each request's arrival, times scale, a finite time within
 * SERVE_ARRIVAL_MAX_S: an arrival_s near the largest double times
 * --time-scale, or gaps of a rate= so small that they overflow, ran to
 * "inf s" with NaN latencies, exit 0. And 0 or at least a picosecond
 * (trace/check.h's floor): --poisson rate=1e300 (gaps of 1e-300 s) or
 * --time-scale 1e-320 made arrivals no clock ticks, at exit 0. */
static bool arrivals_in_range(const strata_serve_stream *s, double scale, GError **err)
{
    for (uint32_t i = 0; i < s->n; i++) {
        double t = s->req[i].arrival, at = t * scale;
        if (at <= SERVE_ARRIVAL_MAX_S && (at == 0 || at >= STRATA_TRACE_MIN_TIME_S))
            continue;
        const char *expected = at > 0 && at < STRATA_TRACE_MIN_TIME_S
                                   ? "0 or at least 1e-12 s after the first request's (a picosecond, the finest "
                                     "time strata keeps)"
                                   : "a finite time within " G_STRINGIFY(SERVE_ARRIVAL_MAX_S) " s of the first "
                                     "request's (a double then resolves a step's time)";
        if (s->line)
            return strata_fail_at(err, s->origin, s->line[i], "arrival %g s x --time-scale %g: expected %s", t, scale,
                                  expected);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: request %u arrives at %g s x --time-scale %g: "
                    "expected %s (another rate= or --time-scale)", s->origin, i + 1, t, scale, expected);
        return false;
    }
    return true;
}

/* --shared-prefix N is a prefix of every prompt, so each prompt is longer:
 * vLLM's benchmark asserts the same of its sonnet prompts ("input_len >
 * prefix_len", benchmarks/benchmark_serving.py, sample_sonnet_requests).
 * A prompt at or under N was taken whole as the shared prefix, exit 0. */
static bool shared_prefix_fits(const strata_serve_stream *s, GError **err)
{
    for (uint32_t i = 0; s->shared_prefix && i < s->n; i++) {
        uint32_t p = s->req[i].prompt;
        if (p > s->shared_prefix)
            continue;
        if (s->line)
            return strata_fail_at(err, s->origin, s->line[i], "prompt of %u tokens: expected more than "
                                  "--shared-prefix %u (the shared prefix is part of every prompt)", p,
                                  s->shared_prefix);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--shared-prefix %u: expected fewer tokens than every "
                    "prompt (the shared prefix is part of each), got a prompt of %u (request %u of %s)",
                    s->shared_prefix, p, i + 1, s->origin);
        return false;
    }
    return true;
}

bool strata_serve_args_time_scale_read(const strata_serve_args *a, uint32_t concurrency, const char *named,
                                       GError **err)
{
    if (!a->time_scale || !concurrency)
        return true;
    /* a closed loop sends each client's next request when one completes: the arrival times are read nowhere,
     * and --time-scale 2 gave the same JSON as without it */
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--time-scale %s: expected --concurrency 0 (the stream's own "
                "arrival times, which it scales), got %s%u, a closed loop that reads no arrival time", a->time_scale,
                named, concurrency);
    return false;
}

/* --prior-run's runs into s, in the order given (stream_of refuses them
 * without prefix caching, as it does the other prefix options). */
static bool prior_runs_read(const strata_serve_args *a, strata_serve_stream *s, GError **err)
{
    guint n = a->prior_runs ? g_strv_length(a->prior_runs) : 0;
    s->prior = n ? g_new(strata_serve_prior_run, n) : NULL;
    for (guint k = 0; k < n; k++)
        if (!strata_serve_prior_parse(a->prior_runs[k], &s->prior[k], err))
            return false;
    s->n_prior = n;
    return true;
}

static strata_serve_stream *stream_of(const strata_serve_args *a, GError **err)
{
    strata_serve_stream *s = NULL;
    if (!a->requests == !a->poisson) {
        fail(err, "expected one of --requests CSV and --poisson n=N,rate=R,...%s", "");
        return NULL;
    }
    if (a->limit != STRATA_SERVE_UNSET && !a->requests) { /* --poisson's n= was served whole */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--limit %d: expected --requests, whose first rows it "
                    "keeps, got --poisson (give its n=)", a->limit);
        return NULL;
    }
    if (a->requests) {
        s = strata_serve_stream_load(a->requests, count_or(a->limit, 0), err);
        char **notes = s && s->note ? g_strsplit(s->note, "\n", -1) : NULL;
        for (char **n = notes; n && *n; n++)
            g_printerr("strata serve: %s\n", *n);
        g_strfreev(notes);
    } else {
        strata_serve_poisson p;
        if (strata_serve_poisson_parse(a->poisson, &p, err))
            s = strata_serve_stream_poisson(&p);
    }
    double scale = 1.0;
    if (s && !strata_serve_args_time_scale_read(a, a->concurrency > 0 ? (uint32_t)a->concurrency : 0,
                                                "--concurrency ", err)) {
        strata_serve_stream_free(s);
        return NULL;
    }
    if (s && a->time_scale && !strata_serve_decimal(a->time_scale, &scale)) {
        fail(err, "--time-scale: expected a factor >= 0, got '%s'", a->time_scale);
        strata_serve_stream_free(s);
        return NULL;
    }
    if (s && !arrivals_in_range(s, scale, err)) {
        strata_serve_stream_free(s);
        return NULL;
    }
    for (uint32_t i = 0; s && i < s->n; i++)
        s->req[i].arrival *= scale;
    /* the shared, warm and prior runs' blocks are found by prefix caching alone (serve_pool.c block_hash):
     * --no-prefix-caching --shared-prefix 10 gave the same JSON as --no-prefix-caching, and so did the others */
    prefix_option given[3];
    if (s && a->no_prefix && prefix_options_given(a, given) > 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s %s: expected prefix caching on (no "
                    "--no-prefix-caching), which reads it (%s, found in the cache); with it off, it changes nothing",
                    given[0].opt, given[0].text, given[0].what);
        strata_serve_stream_free(s);
        return NULL;
    }
    if (s)
        s->shared_prefix = count_or(a->shared_prefix, 0), s->warm_prefix = count_or(a->warm_prefix, 0);
    if (s && (!prior_runs_read(a, s, err) || !shared_prefix_fits(s, err))) {
        strata_serve_stream_free(s);
        return NULL;
    }
    return s;
}

/* The schemes --kv names: one, a comma list, or all. */
static GPtrArray *schemes_of(const char *kv, GError **err)
{
    GPtrArray *v = g_ptr_array_new();
    if (!kv || strcmp(kv, "all") == 0) {
        for (uint32_t i = 0; strata_serve_kv_at(i) && (kv || i == 0); i++)
            g_ptr_array_add(v, (gpointer)strata_serve_kv_at(i));
        return v;
    }
    char **names = g_strsplit(kv, ",", -1);
    if (!*names) { /* --kv '': no scheme, no run to report */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--kv: expected a scheme, a comma list of them or all, "
                    "got ''");
        g_ptr_array_free(v, TRUE);
        v = NULL;
    }
    for (char **n = names; v && *n; n++) {
        const strata_serve_kv_scheme *s = strata_serve_kv_find(*n);
        if (!s && strcmp(*n, "all") == 0) { /* "all,paged" was "unknown scheme 'all' (known: ..., or all)" */
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--kv: expected all alone (every scheme), not in a "
                        "list, got '%s'", kv);
            g_ptr_array_free(v, TRUE);
            v = NULL;
            break;
        }
        if (!s) {
            char *known = strata_serve_kv_names();
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--kv: unknown scheme '%s' (known: %s, or all)", *n,
                        known);
            g_free(known);
            g_ptr_array_free(v, TRUE);
            v = NULL;
            break;
        }
        if (g_ptr_array_find(v, s, NULL)) { /* "paged,paged" ran paged twice, two equal rows, exit 0 */
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--kv: scheme '%s' appears twice in '%s': expected "
                        "each scheme once (each is one run)", *n, kv);
            g_ptr_array_free(v, TRUE);
            v = NULL;
            break;
        }
        g_ptr_array_add(v, (gpointer)s);
    }
    g_strfreev(names);
    return v;
}

/* --kv-allocator places the contiguous schemes' reservations and --kv-page
 * sizes vattention's and expandable's pages; given where --kv runs none of
 * them, each was never read (--kv paged --kv-allocator bogus: exit 0). */
static bool scheme_options_read(const strata_serve_args *a, const GPtrArray *schemes, GError **err)
{
    bool contiguous = false, paged_vm = false, lookup = false;
    for (guint i = 0; i < schemes->len; i++) {
        const strata_serve_kv_scheme *scheme = g_ptr_array_index(schemes, i);
        contiguous = contiguous || g_str_has_prefix(scheme->name, "contiguous-");
        paged_vm = paged_vm || strcmp(scheme->name, "vattention") == 0 || strcmp(scheme->name, "expandable") == 0;
        lookup = lookup || scheme->lookup;
    }
    char *kv = g_strdup_printf("--kv %s", a->kv ? a->kv : "paged");
    bool looked_up = prefix_options_looked_up(a, lookup, kv, err);
    g_free(kv);
    if (!looked_up)
        return false;
    const char *option = NULL, *readers = NULL;
    if (a->kv_allocator && !contiguous)
        option = "--kv-allocator", readers = "contiguous-max, -pow2 or -oracle";
    else if (a->kv_page && !paged_vm)
        option = "--kv-page", readers = "vattention or expandable";
    if (option)
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected --kv to run a scheme that reads it (%s), "
                    "got --kv %s", option, readers, a->kv ? a->kv : "paged");
    return option == NULL;
}

bool strata_serve_setup_make(strata_serve_setup *s, const strata_serve_args *a, const char *hw_path, GError **err)
{
    memset(s, 0, sizeof *s);
    const char *hw = hw_path ? hw_path : a->hw;
    if (!hw)
        return fail(err, "expected --hw HW.ini%s", "");
    if (!strata_serve_args_model(a, &s->model, err) || !config_of(a, &s->model, &s->config, err))
        return false;
    s->schemes = schemes_of(a->kv, err);
    s->stream = s->schemes && scheme_options_read(a, s->schemes, err) ? stream_of(a, err) : NULL;
    bool peak = a->clock && strcmp(a->clock, "peak") == 0, sustained = a->clock && !strcmp(a->clock, "sustained");
    if (s->stream && a->clock && !peak && !sustained && strcmp(a->clock, "duty") != 0)
        return fail(err, "--clock: expected duty, sustained or peak, not '%s'", a->clock);
    s->hw = s->stream ? strata_hw_load(hw, (const char *const *)a->hw_sets, err) : NULL;
    if (s->hw)
        strata_serve_release_apply_hw(&s->config, s->hw); /* --engine-release's ROCm rows */
    if (s->hw && !scheduler_of(a, &s->model, s->hw, &s->config, err)) /* its pick reads the platform */
        return false;
    /* the unit the steps run on (STRATA_SERVE_UNIT): --clock duty or sustained names a rule it must give the
     * figures of, or the run was the peak's (no sustained_clock) or the sustained one's (no clock_response) at
     * exit 0 (the twenty-third hardening pass; the twenty-fourth: that unit's, not the least over every unit;
     * the twenty-fifth: serve_run.c's duty filter reads its floor on the same unit) */
    if (s->hw && !strata_hw_check_clock_rule(s->hw, hw, a->clock, STRATA_SERVE_UNIT, err))
        return false;
    s->clock_ratio = s->hw && !peak ? strata_hw_compute_clock_ratio(s->hw, STRATA_SERVE_UNIT) : 1.0;
    if (s->clock_ratio < 1.0) { /* loaded once more: the same file, its units at the sustained clock */
        s->hw_sustained = strata_hw_load(hw, (const char *const *)a->hw_sets, err);
        if (!s->hw_sustained)
            return false;
        strata_hw_run_at_sustained_clock(s->hw_sustained);
        s->config.sustained_hw = s->hw_sustained;
        /* the duty rule where the file gives it (on the unit the steps run on) */
        const strata_kernel_spec *k = &strata_hw_compute(s->hw, STRATA_SERVE_UNIT)->kernel;
        if (!sustained && k->clock_response > 0) {
            s->config.clock_response = k->clock_response;
            s->config.clock_free_duty = k->clock_free_duty;
        }
    }
    return s->hw != NULL;
}

void strata_serve_setup_clear(strata_serve_setup *s)
{
    strata_hw_free(s->hw);
    strata_hw_free(s->hw_sustained);
    strata_serve_stream_free(s->stream);
    if (s->schemes)
        g_ptr_array_free(s->schemes, TRUE);
    memset(s, 0, sizeof *s);
}

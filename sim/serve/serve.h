/*
 * serve.h: a serving simulation: a model with tensor parallelism over the
 * devices of a hardware model, a request stream, vLLM's scheduler and a
 * KV-cache allocation scheme (serve_kv.h); its results.
 *
 * It is an iteration-level simulation of its own, not a trace the engine
 * runs: one scheduler step at a time (a policy of serve_scheduler.h: vLLM
 * v1's schedule() by default, serve_sched.c; v0's, serve_sched_v0.c),
 * each step's time from the kernel cost models on the hardware model's
 * unit (serve_cost.c: gemm, flash-attention and elementwise rows of
 * models/kernel, TP all-reduces over the device interconnect's route, swaps
 * over the host link's). A 10,000-request stream is tens of thousands of
 * steps; expanding each into engine ops would cost minutes where the
 * closed-form step takes microseconds, and the steps are serial on one
 * engine anyway (docs/serving.md).
 *
 * Memory (vLLM's determine_available_memory, notes/44-45/serving.md 3.3):
 *   pool = capacity x gpu_memory_utilization - weights - activation peak
 *          - non_kv_overhead (per rank)
 * (TensorRT-LLM's rule, an engine row's pool_of_free: gpu_memory_utilization
 * of what the rest leaves, its activation peak holding the fused MoE's call
 * on every rank's tokens: strata_serve_moe_call_bytes.)
 *
 * Invariants: the run is deterministic (the same inputs give the same
 * results, byte for byte); every request either completes or is counted as
 * rejected (its prompt and output cannot fit the whole pool, or the engine
 * refuses its length on arrival: serve_engine.h's length rules).
 */
#ifndef STRATA_SERVE_H
#define STRATA_SERVE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "core/progress.h"
#include "hw/hw.h"
#include "serve/serve_engine.h"
#include "serve/serve_holdings.h"
#include "serve/serve_kv.h"
#include "serve/serve_model.h"
#include "serve/serve_scheduler.h"
#include "serve/serve_stream.h"

enum { STRATA_SERVE_GRAPH_SIZES = 32 };

typedef struct strata_serve_config {
    uint32_t tp;                      /* ranks of tensor parallelism (devices 0..tp-1) */
    /* attention data parallelism over the tp ranks (--attention-dp): each
     * rank runs the attention of its own requests with whole weights and
     * holds their KV (all heads); the routed experts stay split over the
     * ranks. The run is of all ranks together: max_num_seqs,
     * max_num_batched_tokens and the pool are per rank, times tp. */
    bool attention_dp;
    uint32_t max_num_seqs;            /* running requests at most */
    uint32_t max_num_batched_tokens;  /* tokens per step at most */
    uint32_t block_size;              /* paged: tokens per block */
    double gpu_memory_utilization;
    bool prefix_caching;
    bool swap;                        /* preempt by swap (v0), else by recompute (v1) */
    uint64_t swap_space;              /* host bytes per rank for swapped blocks */
    uint64_t page_bytes;              /* vm schemes' page (0: the row's) */
    const char *allocator;            /* contiguous schemes' allocator (NULL: best-fit) */
    double step_overhead;             /* seconds each step adds (besides the engine's) */
    const strata_serve_engine *engine; /* the engine's CPU time per step (serve_engine.h; NULL: none) */
    const struct strata_serve_fp8_linear *fp8_linear_rocm; /* --fp8-linear-rocm (serve_fp8_linear.h; NULL: the
                                                             * engine's ROCm default) */
    const struct strata_serve_fp8_linear *release_fp8_linear_rocm; /* --engine-release's (serve_release.h; NULL) */
    const char *release_mla_pad_v;    /* --engine-release's mla_pad_v row (serve_release.h; NULL: none given) */
    bool offline;                     /* --offline: no server between client and engine (serve_frontend.h) */
    bool serial_api_server;           /* --serial-api-server: the row's serial server (serve_frontend_queue.h) */
    bool chat_endpoint;               /* --chat-endpoint: the client posts to /v1/chat/completions (serve_chat.h) */
    bool release_chat_parse;          /* --engine-release's: the chat template parsed every request (serve_chat.h) */
    bool prefill_decode_attention;    /* vLLM V1's VLLM_V1_USE_PREFILL_DECODE_ATTENTION=1 (on RCCL hardware
                                       * its decodes run paged_attention_rocm: serve_engine.h) */
    uint32_t num_scheduler_steps;     /* vllm-v0's multi-step N (>= 1) */
    /* vLLM V1's async scheduling (--async-scheduling; its default from 0.14: serve_sched.c): step n+1 is formed
     * while step n runs, so a request received after step n's start joins n+2 (no --engine, the vllm-v1
     * scheduler only) */
    bool async_scheduling;
    const strata_serve_scheduler *scheduler; /* the policy (serve_scheduler.h; NULL: vllm-v1) */
    uint64_t non_kv_overhead;         /* bytes per rank outside weights, activations and KV */
    uint32_t kv_blocks;               /* > 0: the KV pool is this many blocks a rank, whatever the memory
                                       * (--kv-blocks; TurboMind's cache_max_entry_count > 1) */
    uint32_t concurrency;             /* > 0: closed loop, this many clients, arrivals ignored */
    bool record_steps;                /* keep every step in the result's steps_log (--timeline) */
    /* CUDA graph batch sizes, increasing (--cuda-graph-batch-sizes;
     * TensorRT-LLM's cuda_graph_config with enable_padding): a decode-only
     * step's batch per rank is padded with dummy decodes up to the first
     * size that holds it (none above the last); n_graph_sizes 0: no padding */
    uint32_t graph_sizes[STRATA_SERVE_GRAPH_SIZES];
    uint32_t n_graph_sizes;
    /* --cuda-graph-max-bs: the largest decode batch a rank captures, for an engine row with a graph limit
     * (serve_graph_limit.h); 0: the row's rule from the device's memory and tp */
    uint32_t cuda_graph_max_bs;
    /* --max-seq-len-to-capture: vLLM V0's longest context a decode step runs in a CUDA graph (serve_engine.h
     * seq_capture); 0: the row's default */
    uint32_t max_seq_len_to_capture;
    /* the hardware at its sustained clock (serve_args.h --clock; NULL: the peak's everywhere): the step's
     * compute-bound ops run on it (serve_cost.h strata_serve_cost_set_sustained) */
    const strata_hw *sustained_hw;
    /* --clock duty (with sustained_hw): each step at the clock its GPU's filtered matrix activity leaves it
     * (serve_clock.h), clock_response its time constant (> 0), clock_free_duty its d0; 0: every step's
     * compute-bound ops at the sustained clock */
    double clock_response, clock_free_duty;
} strata_serve_config;

/* vLLM's defaults for a GPU of >= 70 GiB (arg_utils.py): max_num_seqs 1024,
 * max_num_batched_tokens 8192 (the OpenAI server's), block 16, 0.9, prefix
 * caching on, recompute, swap space 4 GiB. */
void strata_serve_config_default(strata_serve_config *c);

typedef struct strata_serve_sample {
    double t;
    uint32_t running, waiting;
    double kv_reserved; /* fraction of the pool held */
    double kv_used;     /* live token bytes / bytes held by running requests */
} strata_serve_sample;

/* One scheduler step (the timeline's track per step). */
typedef struct strata_serve_step {
    double t, dt;
    uint32_t tokens, prefills, decodes, running, waiting;
    double kv_reserved;
} strata_serve_step;

/* A latency's distribution over n values (0: none, every figure 0; the
 * report writes null and prints "-"). */
typedef struct strata_serve_dist {
    double mean, p50, p90, p99;
    uint64_t n;
} strata_serve_dist;

typedef struct strata_serve_result {
    const char *scheme;
    uint32_t requests, completed, rejected;
    /* of the rejected, those the engine refuses for their length
     * (serve_engine.h's length rules), and the first of them (its index in
     * the stream; UINT32_MAX: none) */
    uint32_t rejected_too_long, too_long_first;
    double makespan;                   /* first arrival to last completion */
    strata_serve_dist ttft, tpot, e2e; /* seconds */
    /* inter-token latencies: every gap between a request's consecutive
     * tokens, all requests' pooled (vLLM's benchmarks/serve.py: median_itl
     * over all gaps; TPOT is each request's (E2E - TTFT) / (output - 1),
     * so another request's prefill step lengthens every TPOT it overlaps
     * but only one ITL of each request in it). A token counts when its
     * step ends (a multi-step run's tokens reach the client at its end). */
    strata_serve_dist itl;
    double output_tok_s, total_tok_s, req_s;
    uint64_t steps, preemptions, swaps_out, swaps_in;
    uint64_t swapped_bytes;            /* per rank, both ways */
    double host_link_busy_s;
    /* Where the steps' time went: the forward passes of steps with prefill
     * tokens and of decode-only steps (strata_serve_cost_step), and the rest
     * (the engine's CPU time, swaps, --step-overhead); they sum to the
     * steps' time. */
    double prefill_gpu_s, decode_gpu_s, host_s;
    /* --clock duty: the compute-bound ops' clock / peak, time-weighted, and the least (serve_clock.h) */
    double clock_mean, clock_min;
    uint64_t prefill_tokens, decode_tokens, prefix_hit_tokens;
    double batch_mean, batch_max;      /* running requests, time-weighted mean and peak */
    double kv_used_mean;               /* time-weighted: live token bytes / bytes held */
    double kv_reserved_mean, kv_reserved_peak; /* fraction of the pool held */
    double external_frag_mean;         /* 1 - largest free / free, time-weighted */
    uint64_t capacity_bytes, weight_bytes, activation_bytes, pool_bytes, kv_bytes_per_token;
    uint64_t pool_blocks;              /* paged */
    strata_serve_holdings held;        /* what the rank holds outside weights, activations and pool (per rank) */
    GArray *samples;                   /* strata_serve_sample, thinned to at most 2048 */
    GArray *steps_log;                 /* strata_serve_step, with record_steps; else NULL */
    char label[80];                    /* the sweep point ("max_num_seqs=64"), or "" */
} strata_serve_result;

/* One run of the stream on a scheme; NULL with err on bad input (exit 2). */
strata_serve_result *strata_serve_run(const strata_hw *hw, const strata_serve_model *m,
                                      const strata_serve_config *c, const strata_serve_stream *s,
                                      const strata_serve_kv_scheme *scheme, strata_progress *progress,
                                      GError **err);
void strata_serve_result_free(strata_serve_result *r);

/* Sets a knob of c by its option's name without dashes (max_num_seqs,
 * max_num_batched_tokens, block_size, gpu_memory_utilization, tp,
 * concurrency, step_overhead, swap_space): the sweep's axes. */
bool strata_serve_config_set(strata_serve_config *c, const char *knob, const char *value, GError **err);
/* The host space to swap to (swap_space) is read by swap preemption alone:
 * false with err, naming it as `named` (--swap-space 1GiB, the sweep's
 * swap_space), where c sets a space without swap (0 says "none", taken). */
bool strata_serve_config_swap_space_read(const strata_serve_config *c, const char *named, GError **err);
char *strata_serve_config_knobs(void); /* g_free */
/* Whether a and b set knob alike (that field alone; false for an unknown knob). */
bool strata_serve_config_knob_same(const strata_serve_config *a, const strata_serve_config *b, const char *knob);

/* The memory figures alone (per rank): weights, activation peak, pool (with
 * --kv-blocks, that many blocks of block_size tokens, the memory's rule aside,
 * once the memory holds the weights). */
bool strata_serve_memory(const strata_hw *hw, const strata_serve_model *m, const strata_serve_config *c,
                         uint64_t *weights, uint64_t *activations, uint64_t *pool, GError **err);
/* The same, with what the rank holds outside them (serve_holdings.h) in *held: the part the engine's own
 * accounting charges is taken from the pool by its rule (vLLM's: as the profile's; SGLang's: x
 * mem_fraction_static; TensorRT-LLM's: before its fraction), --non-kv-overhead on top. */
bool strata_serve_memory_held(const strata_hw *hw, const strata_serve_model *m, const strata_serve_config *c,
                              uint64_t *weights, uint64_t *activations, uint64_t *pool, strata_serve_holdings *held,
                              GError **err);

#endif

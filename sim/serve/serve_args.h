/*
 * serve_args.h: the options of a serving run (`strata serve`'s, and a
 * published serving case's `serve =` line, validate/published.h) and what
 * they make: the model, the scheduler's configuration, the request stream,
 * the KV schemes and the hardware model.
 *
 * Invariant: a setup that succeeds holds a checked model, a configuration
 * in range, a stream of at least one request, at least one scheme and a
 * loaded hardware model; a failure names the option or FILE:LINE (exit 2).
 */
#ifndef STRATA_SERVE_ARGS_H
#define STRATA_SERVE_ARGS_H

#include <glib.h>
#include "serve/serve.h"

typedef struct strata_serve_args {
    char *hw, *model, *model_file, *config, *requests, *poisson, *kv, *kv_page, *kv_allocator, *swap_space, *preemption;
    char *non_kv, *json, *timeline, *sweep, *time_scale, *engine, *scheduler, *graph_sizes, *clock;
    char *fp8_linear_rocm, *engine_release;
    /* decimal numbers (strata_serve_decimal; GOption's doubles took 0x10); NULL: not given */
    char *util, *step_overhead;
    char **sets, **hw_sets, **prior_runs;
    gint tp, max_seqs, max_tokens, block, limit, shared_prefix, warm_prefix, concurrency, scheduler_steps, kv_blocks,
        graph_max_bs, seq_capture;
    gboolean no_prefix, quiet, attention_dp, prefill_decode, async_sched, offline, serial_api_server,
        chat_endpoint;
} strata_serve_args;

/* An integer option not given (an option given 0 is checked as 0, not
 * read as "the default"). */
#define STRATA_SERVE_UNSET G_MININT
/* The option entries writing into a (NULL-name terminated; g_free); the
 * integer options are first set to "not given" (STRATA_SERVE_UNSET). */
GOptionEntry *strata_serve_args_entries(strata_serve_args *a);
void strata_serve_args_clear(strata_serve_args *a);

/* The model alone (--model, --model-file or --config, then --set keys),
 * checked; what a published moe-layer case needs (validate/published.h). */
bool strata_serve_args_model(const strata_serve_args *a, strata_serve_model *m, GError **err);

/* --tp's ranks (1 when not given), or false with err set when it is given
 * below 1; what a published moe-layer or decode-attention case needs. */
bool strata_serve_args_tp(const strata_serve_args *a, uint32_t *tp, GError **err);

/* --time-scale scales the open loop's arrival times: false with err where
 * it is given beside a closed loop of `concurrency` clients (> 0), named
 * as `named` then the count (--concurrency 2, a sweep's concurrency=2). */
bool strata_serve_args_time_scale_read(const strata_serve_args *a, uint32_t concurrency, const char *named,
                                       GError **err);

typedef struct strata_serve_setup {
    strata_serve_model model;
    strata_serve_config config;
    strata_serve_stream *stream;
    GPtrArray *schemes; /* const strata_serve_kv_scheme * */
    strata_hw *hw;
    strata_hw *hw_sustained; /* hw at its sustained clock (--clock sustained, the default, where a unit gives
                              * one; else NULL): config.sustained_hw */
    double clock_ratio;      /* hw_sustained's rates over hw's (1: none) */
} strata_serve_setup;

/* The setups c's scheduling policy refuses as vLLM 0.6 does (none without
 * a policy), and a block size no vLLM takes: checked on the options and on
 * each --sweep point, which sets a knob past them. block_size_name names
 * the block size in the message ("--block-size", a sweep's "block_size"). */
bool strata_serve_config_check_scheduler(const strata_serve_config *c, uint32_t max_model_len,
                                         const char *block_size_name, GError **err);

/* The engine's defaults that follow the tp and the KV pool, where the
 * options leave them out: its share of device memory by tp (SGLang's
 * mem_fraction_static) and its running requests at most from the pool
 * (SGLang's max_running_requests; the --kv-blocks pool where given).
 * Applied on the options and again on each --sweep point, whose knob may
 * move the tp or the pool. */
void strata_serve_config_engine_defaults(strata_serve_config *c, const strata_serve_model *m, const strata_hw *hw,
                                         bool util_given, bool max_seqs_given);

/* Builds everything the options say; hw_path overrides --hw when set. */
bool strata_serve_setup_make(strata_serve_setup *s, const strata_serve_args *a, const char *hw_path, GError **err);
void strata_serve_setup_clear(strata_serve_setup *s);

#endif

/*
 * serve_report.c: a serving run's results as JSON and as a printed
 * summary (serve_report.h).
 */
#include "serve/serve_report.h"
#include <math.h>
#include "core/jsonout.h"

/* A member: a figure (a JSON real) or a count (an exact integer). */
#define FIG(k, v) STRATA_JSON_REAL(k, v)
#define CNT(k, v) STRATA_JSON_COUNT(k, v)

/* null when no request gave a value (every one rejected; TPOT: no output
 * of 2 tokens or more), never a 0 that reads as a latency */
static void add_dist(JsonBuilder *b, const char *key, const strata_serve_dist *d)
{
    if (!d->n) {
        json_builder_set_member_name(b, key);
        json_builder_add_null_value(b);
        return;
    }
    strata_json_field f[] = {FIG("mean", d->mean), FIG("p50", d->p50), FIG("p90", d->p90), FIG("p99", d->p99)};
    strata_json_add_object(b, key, f, G_N_ELEMENTS(f));
}

static void add_samples(JsonBuilder *b, const GArray *samples)
{
    strata_json_open_array(b, "over_time");
    for (guint i = 0; i < samples->len; i++) {
        const strata_serve_sample *s = &g_array_index(samples, strata_serve_sample, i);
        strata_json_field f[] = {FIG("t_s", s->t), CNT("running", s->running), CNT("waiting", s->waiting),
                                 FIG("kv_reserved", s->kv_reserved), FIG("kv_used", s->kv_used)};
        strata_json_add_object(b, NULL, f, G_N_ELEMENTS(f));
    }
    json_builder_end_array(b);
}

void strata_serve_report_refused(FILE *out, const char *who, const strata_serve_result *r,
                                 const strata_serve_stream *s, const strata_serve_config *c, uint32_t max_model_len)
{
    if (!r->rejected_too_long || r->too_long_first >= s->n)
        return;
    const strata_serve_request *q = &s->req[r->too_long_first];
    char *where = s->line ? g_strdup_printf("%s:%" G_GUINT64_FORMAT, s->origin, s->line[r->too_long_first])
                          : g_strdup_printf("request %u of %s", r->too_long_first + 1, s->origin);
    fprintf(out, "%s: warning: %u of %u requests rejected as too long (%s %u); the first: %s, prompt "
            "%u, output %u tokens\n", who, r->rejected_too_long, r->requests,
            strata_serve_engine_length_rule(c->engine), max_model_len, where, q->prompt, q->output);
    g_free(where);
}

static void add_result(JsonBuilder *b, const strata_serve_result *r)
{
    json_builder_begin_object(b);
    strata_json_add_string(b, "kv_scheme", r->scheme);
    if (r->label[0])
        strata_json_add_string(b, "sweep", r->label);
    strata_json_field counts[] = {
        CNT("requests", r->requests),
        CNT("completed", r->completed),
        CNT("rejected", r->rejected),
        CNT("rejected_too_long", r->rejected_too_long),
        CNT("steps", r->steps),
        CNT("prefill_tokens", r->prefill_tokens),
        CNT("decode_tokens", r->decode_tokens),
        CNT("prefix_hit_tokens", r->prefix_hit_tokens),
        CNT("preemptions", r->preemptions),
        CNT("swaps_out", r->swaps_out),
        CNT("swaps_in", r->swaps_in),
        CNT("swapped_bytes", r->swapped_bytes),
    };
    strata_json_add_fields(b, counts, G_N_ELEMENTS(counts));
    if (r->clock_mean > 0) { /* --clock duty */
        strata_json_add_double(b, "clock_mean", r->clock_mean);
        strata_json_add_double(b, "clock_min", r->clock_min);
    }
    strata_json_field figures[] = {
        FIG("makespan_s", r->makespan),          FIG("output_tokens_per_s", r->output_tok_s),
        FIG("total_tokens_per_s", r->total_tok_s), FIG("requests_per_s", r->req_s),
        FIG("host_link_busy_s", r->host_link_busy_s), FIG("batch_mean", r->batch_mean),
        FIG("batch_max", r->batch_max),          FIG("kv_used_mean", r->kv_used_mean),
        FIG("kv_reserved_mean", r->kv_reserved_mean), FIG("kv_reserved_peak", r->kv_reserved_peak),
        FIG("external_fragmentation_mean", r->external_frag_mean),
        FIG("prefill_gpu_s", r->prefill_gpu_s),  FIG("decode_gpu_s", r->decode_gpu_s),
        FIG("host_s", r->host_s),
    };
    strata_json_add_fields(b, figures, G_N_ELEMENTS(figures));
    add_dist(b, "ttft_s", &r->ttft);
    add_dist(b, "tpot_s", &r->tpot);
    add_dist(b, "itl_s", &r->itl);
    add_dist(b, "e2e_s", &r->e2e);
    strata_json_open_object(b, "memory_per_rank");
    strata_json_field mem[] = {CNT("capacity_bytes", r->capacity_bytes),   CNT("weight_bytes", r->weight_bytes),
                        CNT("activation_bytes", r->activation_bytes), CNT("kv_pool_bytes", r->pool_bytes),
                        CNT("kv_bytes_per_token", r->kv_bytes_per_token)};
    strata_json_add_fields(b, mem, G_N_ELEMENTS(mem));
    if (r->pool_blocks)
        strata_json_add_uint(b, "kv_pool_blocks", r->pool_blocks);
    /* what the rank holds outside weights, activations and pool, by part, and what its engine's rule charged
     * (serve_holdings.h; SGLang's pool loses that x mem_fraction_static, TensorRT-LLM's x its fraction) */
    strata_json_open_object(b, "held_outside_pool");
    strata_json_add_string(b, "rule", strata_serve_hold_rule_name(r->held.rule));
    strata_json_field held[] = {CNT("cuda_context_bytes", r->held.context_bytes),
                                CNT("nccl_bytes", r->held.nccl_bytes),
                                CNT("allreduce_bytes", r->held.allreduce_bytes),
                                CNT("cublas_bytes", r->held.cublas_bytes),
                                CNT("charged_bytes", r->held.counted_bytes),
                                CNT("total_bytes", r->held.total_bytes)};
    strata_json_add_fields(b, held, G_N_ELEMENTS(held));
    json_builder_end_object(b);
    json_builder_end_object(b);
    add_samples(b, r->samples);
    json_builder_end_object(b);
}

JsonNode *strata_serve_report_json(const strata_serve_report *rep)
{
    JsonBuilder *b = strata_json_object_begin();
    strata_json_add_string(b, "tool", "strata serve");
    strata_json_open_object(b, "model");
    strata_json_add_string(b, "name", rep->model->name);
    strata_json_field shape[] = {CNT("layers", rep->model->layers), CNT("hidden", rep->model->hidden),
                          CNT("heads", rep->model->heads), CNT("kv_heads", rep->model->kv_heads)};
    strata_json_add_fields(b, shape, G_N_ELEMENTS(shape));
    strata_json_add_double(b, "params", strata_serve_model_params(rep->model));
    json_builder_end_object(b);
    strata_json_add_string(b, "hardware", rep->hw_name);
    strata_json_add_double(b, "clock_ratio", rep->clock_ratio);
    strata_json_add_string(b, "stream", rep->stream);
    strata_json_open_object(b, "config");
    const strata_serve_config *c = rep->config;
    strata_json_field knobs[] = {CNT("tp", c->tp), CNT("max_num_seqs", c->max_num_seqs),
                          CNT("max_num_batched_tokens", c->max_num_batched_tokens), CNT("block_size", c->block_size),
                          CNT("concurrency", c->concurrency)};
    strata_json_add_fields(b, knobs, G_N_ELEMENTS(knobs));
    strata_json_add_double(b, "gpu_memory_utilization", c->gpu_memory_utilization);
    strata_json_add_string(b, "prefix_caching", c->prefix_caching ? "on" : "off");
    strata_json_add_string(b, "preemption", c->swap ? "swap" : "recompute");
    strata_json_add_string(b, "engine", c->engine ? c->engine->name : "none");
    strata_json_add_double(b, "num_scheduler_steps", c->num_scheduler_steps);
    strata_json_add_string(b, "scheduler", c->scheduler ? c->scheduler->name : "vllm-v1");
    strata_json_add_string(b, "attention_dp", c->attention_dp ? "on" : "off");
    json_builder_end_object(b);
    strata_json_open_array(b, "runs");
    for (uint32_t i = 0; i < rep->n; i++)
        add_result(b, rep->runs[i]);
    json_builder_end_array(b);
    return strata_json_object_end(b);
}

/* A latency's line: its p50, p90 and p99 in unit (seconds times scale,
 * digits after the point), or "-" when no request gave a value. */
static void print_dist(FILE *out, const char *name, const strata_serve_dist *d, double scale, int digits,
                       const char *unit)
{
    if (!d->n) {
        fprintf(out, "  %-15s-\n", name);
        return;
    }
    fprintf(out, "  %-15sp50 %.*f %s, p90 %.*f %s, p99 %.*f %s\n", name, digits, d->p50 * scale, unit, digits,
            d->p90 * scale, unit, digits, d->p99 * scale, unit);
}

void strata_serve_report_print(const strata_serve_report *rep, FILE *out)
{
    const strata_serve_result *r0 = rep->runs[0];
    fprintf(out, "model            %s (%.2f B params), tp %u%s on %s\n", rep->model->name,
            strata_serve_model_params(rep->model) / 1e9, rep->config->tp,
            rep->config->attention_dp ? " (attention data-parallel)" : "", rep->hw_name);
    if (rep->clock_ratio < 1.0 && r0->clock_mean > 0)
        fprintf(out, "clock            duty: compute-bound ops at x %.3f of the peak's rates on average, least %.3f, "
                "sustained %.3f (power limit over %.3g s; --clock sustained|peak)\n", r0->clock_mean, r0->clock_min,
                rep->clock_ratio, rep->config->clock_response);
    else if (rep->clock_ratio < 1.0)
        fprintf(out, "clock            sustained: compute-bound ops at x %.3f of the peak's rates "
                "(power limit; --clock peak)\n", rep->clock_ratio);
    fprintf(out, "stream           %s, %u requests\n", rep->stream, r0->requests);
    if (rep->config->scheduler) /* the default (vllm-v1) prints nothing, as before policies were a choice */
        fprintf(out, "scheduler        %s: %u tokens, %u sequences a step\n", rep->config->scheduler->name,
                rep->config->max_num_batched_tokens, rep->config->max_num_seqs);
    fprintf(out, "memory per rank  %.2f GB: weights %.2f GB, activations %.2f GB, KV pool %.2f GB "
            "(%" G_GUINT64_FORMAT " B/token)\n", r0->capacity_bytes / 1e9, r0->weight_bytes / 1e9,
            r0->activation_bytes / 1e9, r0->pool_bytes / 1e9, r0->kv_bytes_per_token);
    fprintf(out, "outside the pool %.3f GB a rank (%s's accounting charges %.3f GB): CUDA context %.3f GB, "
            "NCCL %.3f GB, all-reduce %.3f GB, cuBLAS %.3f GB\n", r0->held.total_bytes / 1e9,
            strata_serve_hold_rule_name(r0->held.rule),
            r0->held.counted_bytes / 1e9, r0->held.context_bytes / 1e9, r0->held.nccl_bytes / 1e9,
            r0->held.allreduce_bytes / 1e9, r0->held.cublas_bytes / 1e9);
    for (uint32_t i = 0; i < rep->n; i++) {
        const strata_serve_result *r = rep->runs[i];
        fprintf(out, "\n[%s%s%s]\n", r->scheme, r->label[0] ? " " : "", r->label);
        fprintf(out, "  completed      %u of %u (%u rejected", r->completed, r->requests, r->rejected);
        if (r->rejected_too_long)
            fprintf(out, ", %u of them too long for the engine", r->rejected_too_long);
        fprintf(out, ") in %.3f s, %" G_GUINT64_FORMAT " steps\n", r->makespan, r->steps);
        fprintf(out, "  throughput     %.1f output tok/s, %.1f total tok/s, %.3f req/s\n", r->output_tok_s,
                r->total_tok_s, r->req_s);
        print_dist(out, "TTFT", &r->ttft, 1e3, 1, "ms");
        print_dist(out, "TPOT", &r->tpot, 1e3, 2, "ms");
        print_dist(out, "ITL", &r->itl, 1e3, 2, "ms");
        print_dist(out, "E2E", &r->e2e, 1, 3, "s");
        fprintf(out, "  step time      %.3f s prefill forward passes, %.3f s decode-only, %.3f s engine and "
                "swaps\n", r->prefill_gpu_s, r->decode_gpu_s, r->host_s);
        fprintf(out, "  batch          mean %.1f, peak %.0f running\n", r->batch_mean, r->batch_max);
        fprintf(out, "  KV use         %.1f%% of held bytes store tokens; pool held %.1f%% mean, %.1f%% peak; "
                "external fragmentation %.1f%%\n", 100 * r->kv_used_mean, 100 * r->kv_reserved_mean,
                100 * r->kv_reserved_peak, 100 * r->external_frag_mean);
        fprintf(out, "  preemptions    %" G_GUINT64_FORMAT " (swaps out %" G_GUINT64_FORMAT ", in %" G_GUINT64_FORMAT
                ", %.2f GB, host link busy %.3f s); prefix hits %" G_GUINT64_FORMAT " tokens\n", r->preemptions,
                r->swaps_out, r->swaps_in, r->swapped_bytes / 1e9, r->host_link_busy_s, r->prefix_hit_tokens);
    }
    if (rep->n > 1) {
        fprintf(out, "\n%-40s %9s %9s %9s %8s %12s %10s\n", "scheme", "KV used", "held", "ext frag", "batch",
                "out tok/s", "preempt");
        for (uint32_t i = 0; i < rep->n; i++) {
            const strata_serve_result *r = rep->runs[i];
            char *name = g_strdup_printf("%s%s%s", r->scheme, r->label[0] ? " " : "", r->label);
            fprintf(out, "%-40s %8.1f%% %8.1f%% %8.1f%% %8.1f %12.1f %10" G_GUINT64_FORMAT "\n", name,
                    100 * r->kv_used_mean, 100 * r->kv_reserved_mean, 100 * r->external_frag_mean, r->batch_mean,
                    r->output_tok_s, r->preemptions);
            g_free(name);
        }
    }
}

/* One run's process: its name, a track of steps, two counters. */
static void timeline_run(FILE *out, const strata_serve_result *r, uint32_t pid, bool *first)
{
    fprintf(out, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"args\":{\"name\":\"%s%s%s\"}}",
            *first ? "" : ",\n", pid, r->scheme, r->label[0] ? " " : "", r->label);
    fprintf(out, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":1,\"args\":{\"name\":"
            "\"steps\"}}", pid);
    *first = false;
    for (guint i = 0; i < r->steps_log->len; i++) {
        const strata_serve_step *s = &g_array_index(r->steps_log, strata_serve_step, i);
        fprintf(out, ",\n{\"ph\":\"X\",\"name\":\"step\",\"pid\":%u,\"tid\":1,\"ts\":%.3f,\"dur\":%.3f,"
                "\"args\":{\"tokens\":%u,\"prefills\":%u,\"decodes\":%u}}", pid, s->t * 1e6, s->dt * 1e6,
                s->tokens, s->prefills, s->decodes);
        fprintf(out, ",\n{\"ph\":\"C\",\"name\":\"KV pool held %%\",\"pid\":%u,\"ts\":%.3f,\"args\":"
                "{\"held\":%.3f}}", pid, s->t * 1e6, 100 * s->kv_reserved);
        fprintf(out, ",\n{\"ph\":\"C\",\"name\":\"requests\",\"pid\":%u,\"ts\":%.3f,\"args\":"
                "{\"running\":%u,\"waiting\":%u}}", pid, s->t * 1e6, s->running, s->waiting);
    }
}

bool strata_serve_report_timeline(const strata_serve_report *rep, FILE *out)
{
    bool first = true;
    fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", out);
    for (uint32_t i = 0; i < rep->n; i++)
        if (rep->runs[i]->steps_log)
            timeline_run(out, rep->runs[i], i + 1, &first);
    fputs("\n]}\n", out);
    return !ferror(out);
}

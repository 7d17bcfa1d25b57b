/*
 * serve_report.h: the results of one or more serving runs of one stream
 * (one per KV scheme), as a JSON document and as a printed summary.
 *
 * JSON: {"tool", "model": {...}, "hardware", "clock_ratio", "stream", "config": {...},
 * "runs": [{"kv_scheme", throughput, "ttft_s"/"tpot_s"/"itl_s"/"e2e_s" {mean,
 * p50, p90, p99} or null where no request gave a value, steps, preemptions,
 * swaps, KV use and fragmentation,
 * "memory_per_rank", "over_time": [{t_s, running, waiting, kv_reserved,
 * kv_used}]}]} (docs/serving.md lists every field).
 *
 * Invariant: equal results give byte-identical documents.
 */
#ifndef STRATA_SERVE_REPORT_H
#define STRATA_SERVE_REPORT_H

#include <json-glib/json-glib.h>
#include <stdio.h>
#include "serve/serve.h"

typedef struct strata_serve_report {
    const strata_serve_model *model;
    const strata_serve_config *config;
    const char *hw_name;
    const char *stream;
    strata_serve_result *const *runs;
    uint32_t n;
    double clock_ratio; /* the units' rates at sustained / peak clock (1: peak; serve_args.h) */
} strata_serve_report;

JsonNode *strata_serve_report_json(const strata_serve_report *rep);
void strata_serve_report_print(const strata_serve_report *rep, FILE *out);
/* One warning line on out when the run r of stream s refused requests for
 * their length (serve_engine.h): how many, the engine's rule, and the first
 * one's row (FILE:LINE, or its index in a generated stream); who prefixes
 * it. Nothing when none was refused. */
void strata_serve_report_refused(FILE *out, const char *who, const strata_serve_result *r,
                                 const strata_serve_stream *s, const strata_serve_config *c, uint32_t max_model_len);
/* A Chrome trace-event / Perfetto timeline of the runs that kept their
 * steps: a process per run, a track of steps (tokens, prefills, decodes)
 * and counters of the pool held and of running and waiting requests;
 * false when a write failed. */
bool strata_serve_report_timeline(const strata_serve_report *rep, FILE *out);

#endif

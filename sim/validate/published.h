/*
 * published.h: published measurements and what the model says for them.
 *
 * A case file (validation/NAME.ini, read through core/keyfile.h) holds cases:
 *
 *   [case NAME]
 *   source   = where the figure was published (URL and the exact table)
 *   setup    = what was measured, as the source describes it
 *   measured = the published figure with its unit: a time ("3.6s") for
 *              metric makespan, a bandwidth ("9.6GB/s") for the others
 *   metric   = makespan | bandwidth (bytes / makespan) | busbw (a
 *              collective's bus bandwidth as nccl-tests defines it:
 *              bytes / makespan x 2(n-1)/n for all-reduce, (n-1)/n for
 *              all-gather, reduce-scatter and all-to-all, 1 for
 *              collective-permute)
 *   bytes    = the bytes the source counts in its bandwidth (bandwidth and
 *              busbw)
 *   collective, ranks = the collective and its group size n (busbw only)
 *   hw       = hardware model (.ini), relative to the case file's folder
 *   trace    = the strata trace that reproduces the setup, likewise; or
 *   gen      = the workload that does: `strata gen` arguments such as
 *              "collective op=all-reduce bytes=64MiB devices=8 algo=ring"; or
 *   serve    = a serving run that does: `strata serve` options without
 *              --hw (sim/serve/serve_args.h), such as "--model llama-3-8b
 *              --poisson n=500,prompt=202,output=179"; its metric is one of
 *              output-throughput ("6744tok/s"), request-throughput
 *              ("37.03req/s"), tpot-p50, tpot-mean, itl-p50, itl-mean
 *              (all inter-token gaps pooled), ttft-p50, ttft-mean
 *              (times), of its first --kv scheme (published_serve.c);
 *              or metric moe-layer (a time): one MoE layer's fused routed
 *              experts (serve/serve_cost.h's strata_serve_cost_moe_experts)
 *              on `tokens` tokens, for the model, --set keys, --tp and
 *              --attention-dp of serve= (no request stream: --requests and
 *              --poisson are refused), on hw= with --hw-set
 *              or metric decode-attention (a time): one layer's attention
 *              over `tokens` decodes of `context` tokens each (the new
 *              token included) on one rank (serve_cost.h's
 *              strata_serve_cost_attention), the decode kernel that of
 *              serve='s --engine (serve_decode.h), no request stream
 *   tokens   = the tokens of a moe-layer case, the decodes of a
 *              decode-attention case (required there, refused elsewhere;
 *              1 to 2^24)
 *   context  = each decode's context in a decode-attention case (required
 *              there, refused elsewhere; 1 to 2^32 - 1, and at most the
 *              max_model_len the model gives, where it gives one)
 *   set      = optional: overrides of the hardware model, as `--set` takes
 *              them, separated by spaces ("hardware.devices=32
 *              interconnect.nvlink.nccl_algo=Ring"): a run's configuration
 *              (its size, NCCL_ALGO) over a shipped file
 *   note     = optional: why the model is off, when it is
 *   group    = optional: the group its error is summarised in (a word of
 *              letters, digits and '-', such as host-link, device-memory,
 *              collectives); default collectives for metric busbw, else
 *              other
 *
 * A file may also hold series: one case per row of a measured CSV file
 * (validate/series.h), such as an nccl-tests sweep:
 *
 *   [series NAME]
 *   source, setup, metric, hw, set, gen, collective, ranks, note, group: as for a case,
 *              gen without bytes= (each row adds bytes=ROW)
 *   data     = the CSV file, relative to the case file's folder
 *   column   = the column holding the measured figure
 *   unit     = that column's unit ("GB/s", "us")
 *
 * Row R gives the case "NAME SIZE" (SIZE the row's bytes, as "64MiB") with
 * bytes = R's bytes and measured = R's figure in unit.
 *
 * Each case is simulated with the engine as the model stands (no option,
 * no override), in its own child process (SimGrid: one engine per
 * process), exactly as `strata run --hw HW --trace TRACE` would (for gen,
 * on the trace `strata gen` writes).
 *
 * Invariants: a loaded set holds only cases whose every key was checked
 * (known keys, a measured value of the metric's kind within its range: a
 * time of at least 1 ns, a bandwidth from 1 kB/s to 10 PB/s, a serving rate
 * of at least 0.001 a second, each a series' row too; readable
 * paths, exactly one of trace, gen and serve); errors name "FILE:LINE"; error = (simulated - measured) / measured.
 */
#ifndef STRATA_VALIDATE_PUBLISHED_H
#define STRATA_VALIDATE_PUBLISHED_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef enum {
    STRATA_PUBLISHED_MAKESPAN,  /* seconds */
    STRATA_PUBLISHED_BANDWIDTH, /* bytes / makespan, bytes per second */
    STRATA_PUBLISHED_BUSBW,     /* bytes / makespan x busbw_factor */
    STRATA_PUBLISHED_SERVE_OUTPUT_TOK_S, /* serve: output tokens per second */
    STRATA_PUBLISHED_SERVE_REQ_S,        /* serve: requests per second */
    STRATA_PUBLISHED_SERVE_TPOT_P50,     /* serve: seconds */
    STRATA_PUBLISHED_SERVE_TPOT_MEAN,
    STRATA_PUBLISHED_SERVE_ITL_P50,      /* serve: the median of all inter-token gaps, seconds */
    STRATA_PUBLISHED_SERVE_ITL_MEAN,
    STRATA_PUBLISHED_SERVE_TTFT_P50,
    STRATA_PUBLISHED_SERVE_TTFT_MEAN,
    STRATA_PUBLISHED_MOE_LAYER,          /* serve: one MoE layer's routed experts, seconds */
    STRATA_PUBLISHED_DECODE_ATTENTION,   /* serve: one layer's attention over decodes, seconds */
} strata_published_metric;

typedef struct strata_published_case {
    char *name, *where;          /* where: "FILE:LINE" of the group */
    char *source, *setup, *note; /* note may be NULL */
    char *group;                 /* never NULL: the summary group */
    char *hw, *trace;            /* resolved paths; trace NULL when gen */
    char *gen;                   /* `strata gen` arguments, or NULL */
    char **set;                  /* hardware overrides (NULL-terminated), or NULL */
    char *set_where;             /* "FILE:LINE" of set=, or NULL */
    char *serve;                 /* `strata serve` options, or NULL */
    char *serve_where;           /* "FILE:LINE" of serve=, or NULL: its errors name it */
    strata_published_metric metric;
    uint64_t bytes;              /* bandwidth and busbw */
    double busbw_factor;         /* busbw only: nccl-tests' factor for the collective */
    uint64_t tokens;             /* moe-layer: the layer's tokens; decode-attention: its decodes */
    uint64_t context;            /* decode-attention only: each decode's context */
    char *context_where;         /* "FILE:LINE" of context=, or NULL: the model's bound on it names it */
    double measured;             /* SI: seconds or bytes per second */
    double simulated;            /* same unit; NAN until simulated (and when out of memory) */
    bool out_of_memory;          /* the model ran out of memory: a result, no error figure */
} strata_published_case;

typedef struct strata_published strata_published;

strata_published *strata_published_new(void);
void strata_published_free(strata_published *set);

/* Appends the cases of one file. */
bool strata_published_load(strata_published *set, const char *path, GError **err);
/* The default case folder: ./validation when it is a folder, else the
 * source tree's (STRATA_SOURCE_DIR/validation) (g_free). */
char *strata_published_default_dir(void);
/* Appends the cases of every .ini file in dir, in name order. */
bool strata_published_load_dir(strata_published *set, const char *dir, GError **err);

size_t strata_published_count(const strata_published *set);
const strata_published_case *strata_published_case_at(const strata_published *set, size_t i);

/* published_serve.c: metric= NAME of a serve case (false: not one); a
 * measured figure of it from text; a value as text (g_free); in the child,
 * a serve case's value as "ok VALUE" or "error MESSAGE" (g_free). */
bool strata_published_serve_metric(const char *name, strata_published_metric *m);
bool strata_published_serve_measured(strata_published_metric m, const char *text, double *value);
char *strata_published_serve_format(strata_published_metric m, double v);
char *strata_published_serve_child(const strata_published_case *c);

/* Simulates one case in a child process; *value in the metric's unit. */
bool strata_published_simulate(const strata_published_case *c, double *value, GError **err);
/* Simulates every case, filling `simulated`. A case that runs out of
 * memory is a result (out_of_memory set, simulated NAN) and the others go
 * on; any other failure stops the run (false, err). */
bool strata_published_run(strata_published *set, GError **err);

/* (simulated - measured) / measured. */
double strata_published_error(const strata_published_case *c);
/* Median of |error| over the simulated cases (NAN when none). */
double strata_published_median_error(const strata_published *set);

/* Median of |error| over the simulated cases of one group (NAN when none). */
double strata_published_group_median_error(const strata_published *set, const char *group);

/* The table: case, group, measured, simulated, error; then the median of
 * each group (in order of first appearance) and over all cases. */
void strata_published_print(const strata_published *set, FILE *out);

#endif

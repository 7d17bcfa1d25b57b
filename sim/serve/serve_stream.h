/*
 * serve_stream.h: a stream of requests to serve: each an arrival time, a
 * prompt length and an output length, sorted by arrival.
 *
 * Sources:
 *   a CSV file with a header naming its columns: the Azure LLM inference
 *     traces as they ship (TIMESTAMP,ContextTokens,GeneratedTokens; the
 *     2023 files' "2023-11-16 18:17:03.9799600" and the 2024 files'
 *     "2024-05-10 00:00:00.009930+00:00", fraction optional), or
 *     arrival_s,prompt_tokens,output_tokens (seconds from the start).
 *     Other columns are ignored (noted once). Times are taken relative to
 *     the first row's. A bad field: FILE:LINE and what was expected.
 *   Poisson arrivals (strata_serve_stream_poisson): exponential gaps at a
 *     rate (or all at time 0 with rate 0: "QPS inf"), lengths fixed,
 *     uniform within +-spread of the mean, or exponential, from a seeded
 *     generator (GLib's Mersenne Twister): the same seed, the same stream.
 *
 * Prefix sharing: every request's first shared_prefix tokens are the same
 * tokens (a system prompt), so its full blocks hash alike; the rest of a
 * request's tokens are its own.
 *
 * Warm prefix: request i's first warm_prefix tokens were sent by an earlier
 * run against the same server (vLLM's random dataset draws the same
 * per-request offsets from the same seed, and a longer prompt extends the
 * shorter one's token run), so they sit in the prefix cache, freed, when
 * this run starts.
 *
 * Prior runs: the runs before this one on the same server, each replayed
 * into the prefix cache (serve_prior.h, serve_pool.c).
 *
 * Invariants: arrivals are >= 0 and non-decreasing; prompt >= 1, output >= 1.
 */
#ifndef STRATA_SERVE_STREAM_H
#define STRATA_SERVE_STREAM_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "core/params.h"
#include "serve/serve_prior.h"

typedef struct strata_serve_request {
    double arrival;   /* seconds from the stream's start */
    uint32_t prompt;  /* prompt tokens */
    uint32_t output;  /* tokens to generate */
} strata_serve_request;

typedef struct strata_serve_stream {
    strata_serve_request *req;
    uint32_t n;
    uint32_t shared_prefix; /* tokens every prompt starts with */
    uint32_t warm_prefix;   /* tokens of request i's own prompt cached before the run starts */
    strata_serve_prior_run *prior; /* the runs before this one on the same server, in order (serve_prior.h) */
    uint32_t n_prior;
    char *origin;           /* file, or "poisson(...)" */
    uint64_t *line;         /* each request's line in the file (NULL: generated) */
    char *note;             /* what the reader passed over (columns it does not read, a --limit past the rows), or NULL */
} strata_serve_stream;

typedef enum { STRATA_SERVE_LEN_FIXED, STRATA_SERVE_LEN_UNIFORM, STRATA_SERVE_LEN_EXP } strata_serve_len_dist;

typedef struct strata_serve_poisson {
    uint32_t n;
    double rate;            /* requests/s; 0: all at once */
    double prompt_mean, output_mean;
    strata_serve_len_dist dist;
    double spread;          /* uniform: +- this fraction of the mean */
    uint64_t seed;
} strata_serve_poisson;

/* A finite number >= 0 written in decimal (digits, '.', an exponent):
 * false for hex ("0x10", which strtod reads as 16), inf, nan, a nonzero
 * figure below the least double (1e-400, which strtod reads as 0) and any
 * other text; the one rule of arrival_s, --poisson's values and
 * --time-scale. */
bool strata_serve_decimal(const char *text, double *x);
/* Reads path; limit > 0 keeps its first limit rows. */
strata_serve_stream *strata_serve_stream_load(const char *path, uint32_t limit, GError **err);
strata_serve_stream *strata_serve_stream_poisson(const strata_serve_poisson *p);
/* "n=1000,rate=10,prompt=512,output=128,dist=exp,spread=0.15,seed=1" into p. */
bool strata_serve_poisson_parse(const char *spec, strata_serve_poisson *p, GError **err);
void strata_serve_stream_free(strata_serve_stream *s);

#endif

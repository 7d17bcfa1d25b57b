/*
 * compare.h: a simulation against a real replay of the same trace, op by op
 * (`strata validate`, bench/bench_validate).
 *
 * Ops are matched by trace line (by op index when a span has no line). The
 * error of an op is (simulated duration - measured duration) / measured
 * duration, for copies and computes whose measured duration is positive;
 * the makespan error likewise. Percentiles are of the absolute per-op
 * errors (nearest rank).
 *
 * Invariant: a pure function of the two results (no clock, no I/O).
 */
#ifndef STRATA_BACKEND_COMPARE_H
#define STRATA_BACKEND_COMPARE_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include "results/results.h"

typedef struct strata_op_error {
    uint64_t op_index, line;
    strata_op_kind kind;
    const char *label;   /* borrowed from the real results' spans */
    const char *stream;  /* borrowed */
    double sim_s, real_s;
    double error;        /* (sim - real) / real */
} strata_op_error;

typedef struct strata_comparison {
    double makespan_sim_s, makespan_real_s;
    double makespan_error;        /* |sim - real| / real */
    double makespan_error_signed; /* (sim - real) / real */
    GArray *ops;                  /* strata_op_error, in the real run's op order */
    double p50, p90, p99, max;    /* of |error| over ops; 0 when none */
    uint64_t unmatched;           /* real spans without a simulated one */
} strata_comparison;

/* Both results must have spans. */
strata_comparison *strata_compare_results(const strata_results *sim, const strata_results *real);
void strata_comparison_free(strata_comparison *c);

/* Nearest-rank percentile (q in (0,1]) of sorted values; 0 when n == 0. */
double strata_percentile(const double *sorted, size_t n, double q);

/* The table of `strata validate`: one line per op, then the makespans. */
void strata_comparison_print(const strata_comparison *c, FILE *out);
/* JSON: makespan_sim_s, makespan_real_s, makespan_error, makespan_error_signed,
 * per_op_error {count, p50, p90, p99, max}, ops [...]. */
JsonNode *strata_comparison_to_json(const strata_comparison *c);

#endif

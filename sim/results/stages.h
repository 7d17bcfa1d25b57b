/*
 * stages.h: the pipeline part of the results: with a mesh that has a
 * `pipe` axis, one row per pipeline stage (the devices whose coordinate on
 * that axis is the stage): busy (the longest compute-unit busy time of its
 * devices), bubble (the makespan less that busy time: the time its
 * compute idles, waiting for its neighbours or its communication), the
 * bubble's share of the makespan, and peak allocated device memory (the
 * highest of its devices').
 *
 * Invariant: without a pipe axis (or with one device) nothing is written,
 * so other results are unchanged.
 */
#ifndef STRATA_RESULTS_STAGES_H
#define STRATA_RESULTS_STAGES_H

#include "results/results.h"

/* JSON: pipeline.{axis, stages: [{stage, devices, busy_s, bubble_s,
 * bubble_fraction, peak_allocated_bytes}]}. */
void strata_results_json_stages(JsonBuilder *b, const strata_results *r);
/* Summary: the table of stages. */
void strata_results_print_stages(const strata_results *r, FILE *out);

#endif

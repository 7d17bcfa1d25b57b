/*
 * collectives.h: the multi-device part of the results: the device count,
 * the mesh, one record per collective (nccl-tests' algorithm and bus
 * bandwidth), and which rows a summary of many devices shows.
 *
 * Definitions (nccl-tests, doc/PERFORMANCE.md): bytes is the per-device
 * size it counts (all-reduce: the buffer; all-gather: OUT; reduce-scatter,
 * all-to-all, collective-permute: IN); algbw = bytes / time; busbw = algbw
 * x 2(n-1)/n for all-reduce, (n-1)/n for all-gather, reduce-scatter and
 * all-to-all, 1 for collective-permute. time is from the start of the
 * collective's first step to the end of its last, on any device.
 *
 * Invariant: with one device (devices <= 1) nothing here is written, so
 * one-device results are unchanged.
 */
#ifndef STRATA_RESULTS_COLLECTIVES_H
#define STRATA_RESULTS_COLLECTIVES_H

#include "results/results.h"

/* The record of collective `index`, made (zeroed, start_s = -1) when new. */
strata_collective_result *strata_results_collective(strata_results *r, uint32_t index);
/* Frees the mesh and the collectives (strata_results_free). */
void strata_results_clear_devices(strata_results *r);
/* Notes a step of collective `index` that ran from t0 to t1. */
void strata_collective_note(strata_collective_result *c, double t0, double t1);
double strata_collective_busbw_factor(strata_op_kind kind, uint32_t n);

/* JSON: devices, mesh, collectives (only with several devices). */
void strata_results_json_devices(JsonBuilder *b, const strata_results *r);
/* Summary: a line on the devices and the table of collectives. */
void strata_results_print_devices(const strata_results *r, FILE *out);
/* Whether a summary row named `name` (of kind `kind`: "memory", "link",
 * or NULL for streams and units) belongs to the device the summary shows:
 * the one with the highest device-memory peak; host memories always. */
bool strata_results_row_shown(const strata_results *r, const char *name, const char *mem_kind);

#endif

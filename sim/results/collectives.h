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
/* The device a summary shows: the one with the highest device-memory peak
 * (the lowest on a tie), from the memories' places; STRATA_NO_DEVICE when
 * no memory of kind device has a device. */
uint32_t strata_results_shown_device(const strata_results *r);
/* Whether a summary row at `place` (mem_kind: a memory's kind, or NULL for
 * links, streams and units) is shown when the summary shows device
 * `shown`: with one device, host memories and shown == NO_DEVICE, always;
 * else when one of its devices, or one of its hosts, is `shown` (a host
 * index compared with a device's: as the summary has always matched a
 * host row NAME@H or NAME:I-J by its numbers). */
bool strata_results_row_shown(const strata_results *r, uint32_t shown, const strata_place *place,
                              const char *mem_kind);

#endif

/*
 * cuda_backend.h: extras of the `cuda` backend beyond the backend table:
 * printing the plan of CUDA calls for a trace (works without a GPU).
 */
#ifndef STRATA_CUDA_BACKEND_H
#define STRATA_CUDA_BACKEND_H

#include <stdio.h>
#include "hw/hw.h"
#include "trace/source.h"

/* Writes one line per planned CUDA call (cuda_plan.h) to out. mode: "malloc",
 * "arena" or "async" (else STRATA_ERROR_INPUT listing them). */
bool strata_cuda_print_plan(const strata_hw *hw, strata_source *src, const char *mode, FILE *out,
                            GError **err);

/* What `strata calibrate --backend cuda` measured of pageable copies at its
 * largest size, and the pinned link the driver stages them over. */
typedef struct strata_cuda_pageable {
    uint64_t bytes;        /* the largest copy */
    double h2d, d2h;       /* bytes/s of one pageable copy each way at that size */
    double dma_rate;       /* bytes/s of the calibrated [link pcie] (pinned copies) */
    double dma_latency;    /* seconds of its latency: each staged chunk's DMA setup */
    double host_bandwidth; /* bytes/s of the calibrated [memory host] */
    bool full;             /* pcie's duplex */
} strata_cuda_pageable;

/* The 2 MiB staging buffer of the shipped files (configs/hw/h200.ini): an
 * ESTIMATE, the driver's buffer having no published size. */
#define STRATA_CUDA_STAGING_BUFFER (UINT64_C(2) << 20)

/* Appends the calibrated file's [link staging] (between pageable host,
 * hw/staging.h) to ini: per direction the CPU copy's rate at which the
 * staging pipeline over [link pcie] takes the measured pageable copy's time
 * (strata_staging_cpu_rate_for), so that the file reproduces each measured
 * direction at the largest size; a direction no rate reproduces (measured
 * no slower than the DMAs alone) copies at the host's bandwidth, said in a
 * comment and on log (when not NULL). Needs no device: the test runs it. */
void strata_cuda_write_staging(GString *ini, const strata_cuda_pageable *m, FILE *log);

/* The calibrated [link pcie]'s copy_engines (engine_copy_queue.h) from two
 * pinned H2D copies issued at once on two streams: first_share is the first
 * copy's end over the pair's end. Copies given to one engine run in order,
 * so one engine a direction ends the first at half the pair's time (0.5)
 * and two or more let them share the link (near 1). Returns 1 below 0.75,
 * midway, else 0 (no queue: the copies share the link, whatever the count
 * of engines, which this pair cannot tell apart). */
int strata_cuda_copy_engines_of(double first_share);

/* True when strata was built with the CUDA toolkit. */
bool strata_cuda_built(void);

#endif

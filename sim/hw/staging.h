/*
 * staging.h: pageable copies as the CUDA runtime makes them.
 *
 * A copy between pageable host memory and a device cannot be a DMA: the
 * pages may move. The driver copies the data with the CPU into a pinned
 * staging buffer of fixed size and DMAs it from there (host to device), or
 * DMAs into the buffer and copies out with the CPU (device to host), one
 * chunk at a time, the CPU filling one half of the buffer while the copy
 * engine drains the other (NVIDIA, "How to Optimize Data Transfers in CUDA
 * C/C++": "the CUDA driver must first allocate a temporary page-locked, or
 * pinned, host array, copy the host data to the pinned array, and then
 * transfer the data from the pinned array to device memory"; CUDA Runtime
 * API, "API synchronization behavior": a pageable host-to-device copy
 * returns "once the pageable buffer has been copied to the staging memory
 * for DMA transfer").
 *
 * In a hardware file the CPU copy is a link with `staging_buffer =` between
 * a pageable and a pinned host memory (its bandwidth the CPU copy's rate);
 * the next link on the route is the DMA. The CPU copy may run at another
 * rate in each direction (`cpu_copy_in`: pageable into the staging buffer,
 * a copy toward the device; `cpu_copy_out`: out of it into pageable memory,
 * a copy from the device): one driver thread's copy, which a memcpy
 * benchmark of one thread measures, while `bandwidth` stays what all the
 * CPU copies of a host share. The engine runs the copy over the whole
 * route (bytes / the slowest link, shared with other transfers) and then
 * waits strata_staging_route_extra(): what the chunked pipeline at the
 * direction's rate costs beyond that (the first chunk's fill, every
 * chunk's DMA setup, and a CPU copy slower than the link's bandwidth).
 *
 * Invariants: the pipeline time is at least bytes / each stage's rate and
 * the extra is never negative; a route without a staging link costs no extra.
 */
#ifndef STRATA_HW_STAGING_H
#define STRATA_HW_STAGING_H

#include <stdbool.h>
#include <stdint.h>
#include "hw/hw.h"

typedef struct strata_staging_path {
    uint64_t buffer;    /* bytes of the pinned staging buffer (two halves) */
    double cpu_rate;    /* bytes/s of the CPU copy into or out of it (this copy's direction) */
    double link_rate;   /* bytes/s the engine's flow crossed the staging link at (its bandwidth);
                         * 0: cpu_rate */
    double dma_rate;    /* bytes/s of the DMA link */
    double dma_latency; /* seconds of setup per DMA (one per chunk) */
    bool serial;        /* no overlap: chunks of the whole buffer, each DMAed then copied in turn */
} strata_staging_path;

/* Seconds the two-stage pipeline takes for bytes: chunks of buffer / 2,
 * the CPU copying chunk i+1 while the DMA moves chunk i, a half reused once
 * its DMA is done. A serial path (XLA's GPU transfer manager: one staging
 * buffer, each chunk's DMA and the host callback's memcpy in turn on one
 * stream) takes chunks of the whole buffer and adds both stages' times. */
double strata_staging_pipeline_time(const strata_staging_path *p, uint64_t bytes);
/* Chunks the pipeline follows one by one; past them it is in its steady
 * state and the rest of a copy's full chunks are taken in one step (work
 * bounded whatever the copy's size and the buffer's). */
#define STRATA_STAGING_EXACT_CHUNKS 65536u
/* The smallest staging buffer a hardware file may give: a page (the
 * driver's pinned buffers are pages; CUDA's is 2 MiB). */
#define STRATA_STAGING_MIN_BUFFER 4096u

/* The pipeline time less what a transfer over both links takes alone
 * (dma_latency + bytes / the slower of link_rate and dma_rate), at least 0. */
double strata_staging_extra(const strata_staging_path *p, uint64_t bytes);

/* The inverse of strata_staging_pipeline_time in the CPU copy's rate: the
 * cpu_rate at which the pipeline of p (its other fields as given) takes
 * seconds for bytes; 0 where none does, the copy being no slower than the
 * DMA stage alone makes it (seconds at most the pipeline's time with a CPU
 * copy that takes no time). What `strata calibrate --backend cuda` writes
 * per direction from a measured pageable copy (cuda_backend.h).
 *
 * Chunks c = buffer / 2, bytes = n c, each chunk's DMA d = dma_latency +
 * c / dma_rate, the CPU copy of a chunk x = c / cpu_rate:
 *   CPU bound (x >= d): the DMA of each chunk waits for its copy, the last
 *     DMA ends one d after the last copy: T = n x + d, so
 *     cpu_rate = n c / (T - d), where T >= (n + 1) d;
 *   DMA bound (x <= d): after the first copy the DMAs run back to back:
 *     T = x + n d, so cpu_rate = c / (T - n d), where n d < T <= (n + 1) d;
 *   T <= n d: no rate (the DMAs alone take that long).
 * The function inverts the model itself (any size, a last partial chunk, the
 * serial path): the time rises strictly with x, the first chunk's copy being
 * on every path, so it bisects x between 0 and seconds / bytes (where the
 * time is at least bytes x = seconds) to the last bit of a double. */
double strata_staging_cpu_rate_for(const strata_staging_path *p, uint64_t bytes, double seconds);

/* When the route (hops from strata_hw_route) crosses a staging link next to
 * another link: that path in *p and true, its cpu_rate the link's
 * cpu_copy_in where the route crosses it from the pageable memory, its
 * cpu_copy_out the other way (either, when 0: its bandwidth). */
bool strata_staging_on_route(const strata_hw *hw, const strata_hop *hops, uint32_t n, strata_staging_path *p);

/* strata_staging_extra for the route's staging path; 0 when it has none. */
double strata_staging_route_extra(const strata_hw *hw, const strata_hop *hops, uint32_t n, uint64_t bytes);

#endif

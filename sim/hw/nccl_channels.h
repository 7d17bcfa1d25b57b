/*
 * nccl_channels.h: how NCCL divides one collective's bytes among the
 * channels its tuning gave it (nccl_tuning.h's channel count), by release.
 *
 * v2.19 (NVIDIA/nccl v2.19.3-1 src/enqueue.cc scheduleCollTasksToPlan and
 * computeColl, one collective, nAggOps = 1): every one of the nc channels
 * runs, and the kernel's loops give each the even share (runRing's
 * realChunkSize; nccl_tuning.h ring_grain_bytes for LL and LL128).
 *
 * v2.25 on (src/enqueue.cc scheduleCollTasksToPlan, the non-CollNet branch:
 * v2.25.1-1 l. 491-620, v2.27.7-1 l. 536-645, v2.30.7-1 l. 585-700): the
 * host cuts the buffer (task->count elements: an all-reduce's buffer, an
 * all-gather's or reduce-scatter's per-rank part) into cells of
 * MinTrafficPerChannel traffic (ncclFuncTrafficPerByte: 2 for all-reduce,
 * nRanks for all-gather and reduce-scatter, x 4 on LL from v2.26), and fills
 * each channel in turn with ceil(trafficPerChannel / trafficPerCell) cells,
 * trafficPerChannel being the collective's traffic over its nc channels
 * (at least MinTrafficPerChannel to v2.28; rounded up to 16 bytes from
 * v2.29). The first channels carry whole shares (countLo, countMid), the
 * last the rest (countHi), and channels past the buffer carry nothing, so
 * fewer than nc may run: 1 MiB of Simple all-reduce on 24 channels runs
 * 22, 21 of 48 KiB and one of 16 KiB; or more, up to the communicator's
 * channels (nMaxChannels[kind]), where the cells outnumber nc: the last
 * takes what the others leave once they are all used.
 *
 * Invariant: lo + n_mid x mid + hi is the buffer; channels = (lo > 0) +
 * n_mid + (hi > 0), at most max_channels; pure functions.
 */
#ifndef STRATA_HW_NCCL_CHANNELS_H
#define STRATA_HW_NCCL_CHANNELS_H

#include <stdbool.h>
#include <stdint.h>
#include "hw/nccl_versions.h"
#include "hw/nccl_tuning.h"
#include "trace/op.h"

typedef struct strata_nccl_split {
    uint32_t channels; /* channels that carry bytes */
    uint64_t lo;       /* bytes of the first channel (countLo) */
    uint64_t mid;      /* bytes of each middle channel (countMid; 0: none) */
    uint32_t n_mid;    /* middle channels */
    uint64_t hi;       /* bytes of the last channel (countHi; 0: none) */
} strata_nccl_split;

/* The split of `count_bytes` (task->count x the element size: the whole
 * buffer of an all-reduce, a rank's part of an all-gather or
 * reduce-scatter) of collective `kind` over `ranks` ranks on protocol p,
 * one collective in the plan: nc is topoGetAlgoInfo's channels
 * (task->nMaxChannels, after its cut), max_channels the communicator's
 * for the kind (nMaxChannels[kind]: comm->nChannels, or nvlsChannels for
 * NVLS and NVLS_TREE). nc sets the traffic per channel; the cells fill
 * channels up to max_channels, so more than nc may run. Where v has no
 * cells (v2.19) the even split over nc: lo = mid = 0, channels = nc. */
strata_nccl_split strata_nccl_channel_split(const strata_nccl_version *v, strata_op_kind kind, strata_nccl_proto p,
                                            uint32_t ranks, uint64_t count_bytes, uint32_t nc, uint32_t max_channels);

#endif

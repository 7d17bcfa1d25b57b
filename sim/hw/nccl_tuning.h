/*
 * nccl_tuning.h: NCCL's own tuning model, as NCCL uses it to pick the
 * algorithm, the protocol and the channel count of a collective on one
 * node (NVIDIA/nccl @5067397, src/graph/tuning.cc ncclTopoTuneModel and
 * ncclTopoGetAlgoTime, src/enqueue.cc's channel/thread tuning).
 *
 * For every (algorithm, protocol) NCCL computes a latency (base latency +
 * per-step hardware latency x steps) and a bandwidth (the ring graph's
 * channels x per-channel bandwidth, capped per protocol and GPU
 * architecture, converted from bus to algorithm bandwidth); a collective
 * of B bytes is estimated at lat + B / (1000 bw) microseconds and NCCL runs
 * the pair with the lowest estimate. Then it lowers the channel count
 * while B < channels x threads x threadThreshold.
 *
 * Scope: one node (nNodes = 1, so NVLink latencies and the "N1" columns),
 * the ring, tree and NVLS algorithms (CollNet and PAT need a network),
 * numPipeOps = 1, LL128 enabled (NVLink paths, same compute capability),
 * no NCCL_ALGO/NCCL_PROTO overrides. Pure functions; no state.
 */
#ifndef STRATA_HW_NCCL_TUNING_H
#define STRATA_HW_NCCL_TUNING_H

#include <stdbool.h>
#include <stdint.h>
#include "trace/op.h"

typedef enum { STRATA_NCCL_VOLTA = 0, STRATA_NCCL_AMPERE, STRATA_NCCL_HOPPER, STRATA_NCCL_BLACKWELL } strata_nccl_arch;
typedef enum { STRATA_NCCL_LL = 0, STRATA_NCCL_LL128, STRATA_NCCL_SIMPLE, STRATA_NCCL__PROTOS } strata_nccl_proto;
typedef enum { STRATA_NCCL_TREE = 0, STRATA_NCCL_RING, STRATA_NCCL_NVLS, STRATA_NCCL__ALGOS } strata_nccl_algo;

/* One communicator on one node. The NVLS graph is not a field: on one
 * node NCCL's search gives it one channel per GPU (search.cc: minChannels =
 * maxChannels = the GPUs, NCCL_MAX_NVLS_ARITY 32), each at the fastest speed
 * of the architecture's speed array whose traffic fits a GPU's NVLinks:
 * channel g loads every GPU's link to the switch with its speed, twice on
 * head g (ncclTopoSearchTryNvls), so (n + 1) x speed per direction; the
 * GPU's NVLink bandwidth is taken as the ring graph's (channels x
 * per-channel), which NCCL's search fit into it (ESTIMATE: a lower bound of
 * links x SMxx_NVLINK_BW; on the H100, 360 against 18 x 20.6 = 370.8 GB/s,
 * both give 40 GB/s). */
typedef struct strata_nccl_comm {
    strata_nccl_arch arch;
    uint32_t ranks;
    /* NCCL's ring (and tree) graph: channels x per-channel bandwidth, as
     * its topology search builds it (graphs[RING]->nChannels, ->bwIntra,
     * GB/s); comm->nChannels is twice the graph's (ncclTopoPostset
     * duplicates the rings), at most 32 (MAXCHANNELS) */
    uint32_t graph_channels;
    double channel_gbs;
    bool nvls; /* the NVSwitch supports NVLink SHARP (multicast objects) */
} strata_nccl_comm;

typedef struct strata_nccl_choice {
    strata_nccl_algo algo;
    strata_nccl_proto proto;
    uint32_t channels;  /* after enqueue.cc's tuning */
    uint32_t threads;   /* per channel, before the Simple sync warp */
    double time_us;     /* NCCL's estimate */
    double base_us;     /* the base latency: NCCL's fixed cost per collective */
    /* NVLS: the chunk per channel and head after enqueue.cc's
     * calcCollChunking (nvls.cc NCCL_NVLS_CHUNKSIZE 128 KiB, halved for
     * small buffers), and the fraction of NVLink's data rate NVLS's
     * multimem traffic reaches (tuning.cc nvlsEfficiency); 0 otherwise */
    uint64_t chunk_bytes;
    double nvls_efficiency;
} strata_nccl_choice;

/* NCCL's names (ncclAlgoStr, ncclProtoStr): "Tree", "Ring", "NVLS";
 * "LL", "LL128", "Simple". */
const char *strata_nccl_algo_name(strata_nccl_algo a);
const char *strata_nccl_proto_name(strata_nccl_proto p);
/* "volta", "ampere", "hopper", "blackwell" (the nccl row's nccl_arch,
 * coll_impl_nccl.c). */
bool strata_nccl_arch_from_name(const char *name, strata_nccl_arch *out);

/* NCCL's latency (us) and algorithm bandwidth (GB/s) for a collective of
 * `kind` (all-reduce, all-gather or reduce-scatter); false when NCCL does
 * not run that pair (bandwidth 0 in NCCL). */
bool strata_nccl_model(const strata_nccl_comm *c, strata_op_kind kind, strata_nccl_algo a, strata_nccl_proto p,
                       double *lat_us, double *bw_gbs);
/* ncclTopoGetAlgoTime: the estimate in us, or -1 when not run. */
double strata_nccl_time_us(const strata_nccl_comm *c, strata_op_kind kind, strata_nccl_algo a, strata_nccl_proto p,
                           uint64_t bytes);
/* The pair NCCL picks for `bytes` (nccl-tests' size: the per-rank buffer
 * of an all-reduce, the gathered OUT of an all-gather, the scattered IN
 * of a reduce-scatter), with its channels. False when nothing applies
 * (a kind NCCL runs otherwise, or one rank). */
bool strata_nccl_choose(const strata_nccl_comm *c, strata_op_kind kind, uint64_t bytes, strata_nccl_choice *out);
/* NCCL's NVLS graph on one node (above): its channels and GB/s per
 * channel; false where the architecture or the switch has no NVLS, or no
 * speed of the array fits. */
bool strata_nccl_nvls_graph(const strata_nccl_comm *c, uint32_t *channels, double *channel_gbs);

#endif

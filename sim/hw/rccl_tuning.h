/*
 * rccl_tuning.h: RCCL's tuning model, as RCCL uses it to pick the
 * algorithm, the protocol and the channel count of a collective on AMD
 * Instinct GPUs joined by xGMI, on one node or several (ROCm/rccl @0cbce2a,
 * the NCCL 2.21.5 line: src/graph/tuning.cc ncclTopoTuneModel and
 * ncclTopoGetAlgoTime with tuning_model_5, the model its MI300X topologies
 * name (src/graph/rome_models.cc rome_model_79 and _81: `tuning=5`),
 * src/enqueue.cc topoGetAlgoInfo and getChannnelThreadInfo), and the MSCCL
 * algorithms RCCL runs instead on one node where its topology enables them
 * (src/misc/msccl/msccl_lifecycle.cc, tools/msccl-algorithms).
 *
 * RCCL keeps NCCL's form (an estimate of lat + B / (1000 bw) per
 * algorithm and protocol, the smallest run) with its own constants: base
 * latencies {12, 12, 17} us for LL, LL128, Simple; per-step latencies on
 * xGMI and the network from tuning_model_5; bandwidth = the graph's
 * channels x per-channel bandwidth x the model's bwRatio (no per-channel
 * caps); correction factors by size for the tree, and for the ring across
 * nodes; on gfx94x no Tree on Simple inside one node. LL128: @0cbce2a
 * enables it on gfx90a only; from 2.22.3 (ROCm 6.4.2: gfx942) and 2.26.6
 * (ROCm 7.0: gfx950) tuning.cc ncclTopoTuneModel enables it where RCCL was
 * built with ENABLE_LL128 (CMakeLists.txt: HIP >= 6.1.33591), the GPUs are
 * gfx90a, gfx942 or gfx950, the graph's paths are xGMI inside a node and
 * at most PXB to the NIC, and comm->topo->ll128Enabled: the matched
 * topology model's `ll128Enabled=1` (rome_models.cc options, as
 * rome_model_81's from then) or RCCL_LL128_FORCE_ENABLE=1 (init.cc).
 * That is comm->ll128 here; its LL128 constants are LL's (tuning_model_5),
 * so LL128 never beats LL in the model's argmin: it runs through the
 * ranges below. The rings of a matched topology are
 * the model's (rome_model_79: 28 rings over the 8-GPU xGMI mesh, each
 * directed link carrying 4 of them).
 *
 * RCCL 2.22 (ROCm 6.4) adds, across nodes, rcclUpdateCollectiveProtocol
 * (src/rccl_wrap.cc): where NCCL_PROTO is not set, an all-reduce,
 * all-gather or reduce-scatter over 2 nodes or more takes its protocol not
 * from the model's argmin but from tuning_model_5's llProtoRanges by size
 * per rank (the all-reduce's whole buffer; the all-gather's send, the
 * reduce-scatter's receive): LL up to 1 MiB (all-reduce), 96 KiB
 * (all-gather), 640 KiB (reduce-scatter), Simple above; the algorithm stays
 * the model's. Where LL128 is enabled its range overrides: (1, 9] MiB on
 * an all-reduce over 2 nodes, (96 KiB, 4.8 MiB] per rank on an all-gather,
 * (128 KiB, 3.06 MiB] on a reduce-scatter (the all-reduce's stretched with
 * the nodes: 2.22 adds 3 MiB per doubling past 2, 2.26 takes x3.8 above
 * 2).
 * rcclUpdateThreadThreshold: an LL all-gather or reduce-scatter across
 * nodes lowers its channels while bytes < channels x 256 x 16 x ranks.
 *
 * Channels: comm->nChannels is the graph's rings times init.cc's nc (2,
 * and 4 on gfx950: ring_copies), at most 128 on one node and 64 across
 * nodes (connect.cc ncclTopoPostset), before getChannnelThreadInfo lowers
 * it by size.
 *
 * On gfx950 RCCL takes tuning_model_6 instead (rome_models.cc sets
 * tuning 6 on gfx950 wherever a topology model matched; its table as
 * stored at ROCm/rccl 9e22c79): the same latencies and bwRatio, other
 * correction rows (the tree's Simple 0.1 from 8 to 32 MiB, 0.9 at 64 and
 * 128 MiB, 0.7 at 256 MiB; the ring's Simple 1.0 from 256 MiB), so across
 * nodes the ring takes the all-reduce from 256 MiB where tuning_model_5
 * keeps the tree to 256 MiB; and its own ranges across nodes: an
 * all-reduce LL to 128 KiB (131,071 B), LL128 to 17,660,227 B; an
 * all-gather LL to 7 B per rank, LL128 to 8 MiB; a reduce-scatter LL to
 * 131,071 B per rank, LL128 to 4 MiB.
 *
 * RCCL 2.20 (ROCm 6.2, the rocm-6.2.2 tag: 2.20.5) has the same form with
 * its own tuning_model_5 (tuning5): per-step latencies {0.8, -, 2.5}
 * (tree) and {0.8, -, 3.6} (ring) on xGMI, bwRatio 0.41 on LL and 1.0 on
 * Simple, other correction rows; so its rings stay on LL to some 6 MB on
 * one node where 2.21's leave it near 400 KB. 2.21.5 (ROCm 6.3: the
 * release-staging/rocm-rel-6.3 branch @99b8561, tuning.cc byte-identical
 * to @0cbce2a) has LL128 columns of 0. 2.22.3 (ROCm 6.4; its tag not
 * reachable) is taken as 2.21.5's tables with the LL128 columns LL's (as
 * stored at 9e22c79): its CHANGELOG names no tuning change but LL128 on
 * gfx942 (6.4.2). 2.26.6 (ROCm 7.0) is tuning_model_5 as stored at
 * 9e22c79 (NCCL 2.23+'s PAT column: after 2.22), whose CHANGELOG lists
 * "Suboptimal algorithmic switching point for AllReduce on MI300x": the
 * tree's Simple correction 0.7, 0.7, 0.5, 0.6, 0.6, 0.6 from 128 MiB
 * (log2(bytes / 64) 21-26, 2.21's 1.0 to 0.8) and the ring's Simple 1.0 at
 * 256 MiB (22, 2.21's 0.1): across 2 x 8 ranks the ring takes the
 * all-reduce from 128 MiB where 2.21 and 2.22 keep the tree.
 *
 * MSCCL on one node of 8 ranks (mscclEnabled=1 in rome_model_79) where
 * the communicator may run it (coll_impl_rccl.c: before RCCL 2.21 not
 * where two of its ranks share a process): an
 * all-reduce whose size falls in an installed algorithm's range and whose
 * element count is a multiple of its chunks per loop runs it
 * (mscclInternalSchedulerSelectAlgo: the first that matches): the
 * "allpairs" algorithms, LL up to 524,287 bytes, Simple from 524,288 to 16
 * MiB (out-of-place, as nccl-tests' first columns; float elements). An
 * all-to-all likewise runs MSCCL's alltoall algorithms up to 43 MiB (LL to
 * 512 KiB on 1, 2, 4 channels, Simple on 32 then 8); RCCL's tuning model
 * has none for it, so strata_rccl_choose refuses an all-to-all MSCCL does
 * not run (the caller plans RCCL's grouped p2p, nccl_p2p.h). The
 * @0cbce2a algorithms are taken for every release.
 *
 * MSCCL++ (RCCL 2.21.5 on, "MSCCL++ integration for specific contexts",
 * CHANGELOG.md @0cbce2a) comes first where the communicator may run it
 * (comm->mscclpp): mscclEnqueueCheck (src/misc/msccl/msccl_lifecycle.cc l.
 * 515-540, the same in a group l. 556-581: l. 524, 530) hands an all-reduce to
 * mscclpp_ncclAllReduce where the call is captured into a graph
 * (captureStatus != mscclNoCapture), its bytes are above 0 and a multiple
 * of 32, at most comm->mscclpp_threshold (RCCL_MSCCLPP_THRESHOLD, default
 * 1 MiB: src/init.cc l. 105) and its type and op supported (sum of fp16,
 * bf16, fp32, int32 or uint32: isMscclppAllReduceSupported l. 481-492; strata's
 * collectives carry no element type, so the 28/56-block switch below counts
 * 4-byte elements, nccl-tests' float: an ESTIMATE for 2-byte types, which
 * switch at half the bytes; merge review). MSCCL++'s NCCL shim (microsoft/mscclpp @1e82dd4, the
 * submodule ext-src/mscclpp pins; apps/nccl/src/nccl.cu ncclAllReduce l.
 * 485-495: without the ALLREDUCE_*_JSON_FILE plans, its fallback) runs
 * allreduce7 from 4 x 8 bytes to 1 MiB (apps/nccl/src/allreduce.hpp
 * allreduce l. 390-420, l. 406): 28 blocks of 1024 threads, 56 from 8192
 * elements, a block group a peer; each rank puts its peers' 1/8 shares
 * into their scratch as LL8 packets (4 bytes of data, 4 of flag), reduces
 * its own share from the 7 it receives and writes the sum to every peer
 * as packets: MSCCL's allpairs form on an LL-like protocol, in one kernel
 * that is not RCCL's (no RCCL base latency). allreduce7 runs only on one
 * node of NRANKS_PER_NODE = 8 ranks (l. 207: worldSize == nRanksPerNode;
 * apps/nccl/src/common.hpp l. 14).
 *
 * Pure functions; no state.
 */
#ifndef STRATA_HW_RCCL_TUNING_H
#define STRATA_HW_RCCL_TUNING_H

#include <stdbool.h>
#include <stdint.h>
#include "hw/nccl_tuning.h"
#include "trace/op.h"

/* The RCCL release whose tuning_model_5 (src/graph/tuning.cc) applies: a
 * row per release where the tables differ (rccl_tuning.c tuning_models).
 * The zero value is 2.22's, so a comm built without it keeps that row. */
typedef enum strata_rccl_tuning5 {
    STRATA_RCCL_TUNING5_2_22 = 0, /* 2.22.3 (ROCm 6.4): 2.21.5's tables and the LL128 columns */
    STRATA_RCCL_TUNING5_2_20,     /* 2.20.5 (ROCm 6.2, tag rocm-6.2.2) */
    STRATA_RCCL_TUNING5_2_21,     /* 2.21.5 (ROCm 6.3, @0cbce2a): LL128 columns 0 */
    STRATA_RCCL_TUNING5_2_26,     /* 2.26.6 (ROCm 7.0, as stored at 9e22c79): other Simple corrections */
} strata_rccl_tuning5;

typedef struct strata_rccl_comm {
    uint32_t ranks;
    uint32_t nodes;            /* 0 or 1: one node */
    uint32_t graph_channels;   /* the topology model's rings (channels) */
    double channel_gbs;        /* bandwidth of one (totalBw / nChannels) */
    bool msccl;                /* the topology enables MSCCL (one node) and the communicator runs it */
    strata_nccl_cpu cpu;       /* the network's post overhead across nodes */
    uint32_t algos, protos;    /* NCCL_ALGO, NCCL_PROTO (0: all) */
    bool net_ranges;           /* RCCL 2.22+: rcclUpdateCollectiveProtocol across nodes */
    bool ll128;                /* comm->topo->ll128Enabled, on a release and arch that run it */
    bool ll128_x38;            /* 2.26's stretch of LL128's all-reduce range (else 2.22's) */
    strata_rccl_tuning5 tuning5; /* the release whose tuning_model_5 row applies (0: 2.22's) */
    bool model_6;              /* tuning_model_6: gfx950 with a matched topology model (rome_models.cc) */
    uint32_t ring_copies;      /* compute channels per graph ring on the GPUs' arch (init.cc nc); 0: 2 */
    bool mscclpp;              /* MSCCL++'s all-reduce may run: built and enabled, the topology's MSCCL on, gfx942,
                                * one process a GPU, the call captured into a graph (coll_impl_rccl.c) */
} strata_rccl_comm;

typedef struct strata_rccl_choice {
    strata_nccl_algo algo;     /* Tree or Ring */
    strata_nccl_proto proto;
    bool msccl;                /* an MSCCL allpairs algorithm instead (algo meaningless) */
    bool mscclpp;              /* MSCCL++'s allreduce7 instead (msccl also set: the same allpairs form) */
    uint32_t channels;         /* after getChannnelThreadInfo (MSCCL: the algorithm's) */
    double time_us;            /* RCCL's estimate (MSCCL: none, 0) */
    double base_us;            /* the base latency of the pair */
    double net_step_us;        /* across nodes: the network latency of a step (tuning_model_5) */
} strata_rccl_choice;

/* RCCL's latency (us) and algorithm bandwidth (GB/s) of the pair; false
 * where RCCL does not run it. */
bool strata_rccl_model(const strata_rccl_comm *c, strata_op_kind kind, strata_nccl_algo a, strata_nccl_proto p,
                       double *lat_us, double *bw_gbs);
/* What RCCL runs for `bytes` (nccl-tests' size, as strata_nccl_choose's);
 * false when nothing applies. */
bool strata_rccl_choose(const strata_rccl_comm *c, strata_op_kind kind, uint64_t bytes, strata_rccl_choice *out);
/* RCCL's time (us) for a Simple step across the network of a point-to-
 * point send (its grouped sends and receives: the all-to-all), which its
 * tuning model has no entry for: the release's tuning_model_5 network
 * latency of a Simple step that the model charges as time, the tree's
 * (hwLat[NET][Tree][SIMPLE], 25.0 us; 2.20: 22.4), paid at each of the
 * tree's 2 log2(nNodes) network levels (tuning.cc l. 455-456). The ring's
 * entry (320 us on 2.21, l. 231) is not a step's time but keeps RCCL's
 * ring off Simple across nodes (2.20 had 19.8 there). Across the network
 * RCCL's p2p runs Simple whatever its size (coll_impl_rccl.c a2a_tune). */
double strata_rccl_p2p_net_step_us(const strata_rccl_comm *c);

#endif

/*
 * nccl_mesh.h: the ring graph NCCL's topology search builds on one node
 * whose GPUs are joined pairwise by direct NVLink, with no NVSwitch and no
 * NIC in the search (a `topology = full` NVLink domain: a 4-GPU HGX H100
 * or A100 board, SURF Snellius's H100 nodes): which GPUs each of the
 * graph's channels visits, in ring order, and how many channels at what
 * bandwidth.
 *
 * The mechanism is ncclTopoCompute's (NVIDIA/nccl v2.22.3-1
 * src/graph/search.cc; v2.19.3-1 the same for this case but for
 * sm90SpeedArrayIntra's 11.0, below any speed a mesh of NVLink reaches),
 * run for the ring pattern (NCCL_TOPO_PATTERN_RING) on GPUs alone:
 *  - NCCL's link between two GPUs carries nvlinks x the architecture's
 *    NVLink figure a direction (src/graph/topo.cc ncclTopoAddNvLinks l.
 *    568-571: count x ncclTopoNVLinkBw; topo.h l. 14-18 SM70 20.0, SM80
 *    20.0, SM90 20.6 GB/s), the count NVML reports for the pair;
 *  - the search tries the speeds of speedArrayIntra, or sm90SpeedArrayIntra
 *    from compute capability 9.0 (search.cc l. 909-916; Blackwell's own
 *    sm100 table of v2.25.1-1 is not ported: cc 100 gets no mesh), from the first not
 *    above the best path's bandwidth (maxBw) nor above the GPU's NVLink
 *    total (totalBw, getTotalBw l. 29-37); each channel's ring takes the
 *    speed from every directed link it crosses (followPath l. 79-113,
 *    SUB_ROUND to a thousandth), so a link of 6 x 20.6 = 123.6 GB/s holds
 *    two channels at 60;
 *  - depth first (ncclTopoSearchRec l. 720-746, ncclTopoSearchRecGpu l.
 *    499-600, ncclTopoSearchTryGpu l. 320-330): the first channel in PCI
 *    order, each next one first replaying the last, then (sameChannels 0)
 *    every start and next GPU in index order after the current one
 *    (ncclTopoSearchNextGpuSort l. 238-306: on a uniform mesh every score
 *    ties but the start index), a graph kept when channels x speed grows
 *    (ncclTopoCompareGraphs l. 416-437), within NCCL's search timeouts
 *    (l. 310-314: 2^8 steps with sameChannels, 2^14 without, 2^19 in all);
 *  - ncclTopoCompute's passes (l. 919-1080): sameChannels 1 then 0, lower
 *    speeds while they reach 0.49 of the best, then ncclTopoDupChannels
 *    (l. 894-907: the channels doubled, up to maxChannels, at half the
 *    speed, unless the speed is below 25 GB/s, or below 50 with more than
 *    4 channels from compute capability 8.x above 80), then higher speeds
 *    for at least that many channels. maxChannels is MAXCHANNELS / 2 = 16
 *    (src/init.cc l. 851-852, device.h MAXCHANNELS 32).
 * On 4 H100s with 6 NVLinks a pair this gives 6 channels at 60 GB/s, the
 * six directed rings of 4 GPUs (0 1 2 3, 0 1 3 2, 0 2 3 1, 0 2 1 3, 0 3 1
 * 2, 0 3 2 1: each ordered pair in two), doubled to 12 at 30 GB/s, as
 * odissei-benchmarks/nccl-tests' Snellius log prints them
 * (tests/test_nccl_mesh.c). NCCL's communicator then copies the graph's
 * channels once more (src/graph/connect.cc ncclTopoPostset l. 452): its
 * channel c runs graph channel c mod channels.
 *
 * Invariants: pure functions of their arguments; every ring is a
 * permutation of 0 .. gpus - 1 starting at 0's channel order as NCCL
 * prints it; channels is 1 .. STRATA_NCCL_MESH_MAX_CHANNELS.
 */
#ifndef STRATA_HW_NCCL_MESH_H
#define STRATA_HW_NCCL_MESH_H

#include <stdbool.h>
#include <stdint.h>

#define STRATA_NCCL_MESH_MAX_GPUS 16u
#define STRATA_NCCL_MESH_MAX_CHANNELS 16u /* MAXCHANNELS / 2, ringGraph->maxChannels */

typedef struct strata_nccl_mesh_graph {
    uint32_t gpus;
    uint32_t channels; /* graph->nChannels */
    float bw;          /* graph->bwIntra: GB/s a channel */
    /* channel c's GPU at ring position i: rings[c * gpus + i] */
    uint8_t rings[STRATA_NCCL_MESH_MAX_CHANNELS * STRATA_NCCL_MESH_MAX_GPUS];
} strata_nccl_mesh_graph;

/* NCCL's ring graph on `gpus` GPUs (2 .. STRATA_NCCL_MESH_MAX_GPUS), each
 * pair joined by `nvlinks` links of link_gbs GB/s a direction as NCCL
 * counts one (its ncclTopoNVLinkBw), the GPUs of compute capability
 * `cc` (70, 80, 90, 100: the speed table and the doubling rule); false
 * where gpus or nvlinks are out of range. */
bool strata_nccl_mesh_rings(uint32_t gpus, uint32_t nvlinks, float link_gbs, uint32_t cc,
                            strata_nccl_mesh_graph *out);

#endif

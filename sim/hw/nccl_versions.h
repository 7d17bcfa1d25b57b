/*
 * nccl_versions.h: NCCL's tuning constants, one table per release whose
 * src/graph/tuning.cc differs in what the tuning model (nccl_tuning.h)
 * reads: the base and per-step latencies, the per-channel bandwidth caps,
 * NVLS's efficiency and the rules that changed with them. Each table cites
 * the tag and file it is read from (NVIDIA/nccl).
 *
 * Releases: 2.8 and 2.9 (v2.8.4-1 and v2.9.9-1, whose tuning.cc reads
 * the same constants; one node of Volta or Ampere GPUs: one_node,
 * pre_hopper below), 2.19 (v2.19.3-1, for one node of Volta, Ampere or
 * Hopper GPUs: one_node below), 2.22 (v2.22.3-1, likewise), 2.25 and 2.26 (v2.25.1-1 and v2.26.6-1 have the
 * same tuning constants and rules; they differ in enqueue.cc's cells,
 * cell_ll_quad), 2.27, 2.28, 2.29 and 2.30
 * (the newest, the default; master @5067397 has v2.30.7-1's tuning.cc). A
 * release is named 2.MINOR or 2.MINOR.PATCH; the patch does not choose a
 * table.
 *
 * Invariant: the tables are constant; every lookup returns one of them.
 */
#ifndef STRATA_HW_NCCL_VERSIONS_H
#define STRATA_HW_NCCL_VERSIONS_H

#include <stdbool.h>

/* How tuning.cc prices NVLS and NVLS_TREE (ncclTopoTuneModel). */
typedef enum {
    /* v2.19-v2.26: bw = min(bwIntra, bwInter) (NVLS_TREE: bwInter / 2
     * beyond 2 nodes), bus to algorithm bandwidth x 5/6 */
    STRATA_NCCL_NVLS_MIN = 0,
    /* v2.27: as above, but an NVLS all-gather or reduce-scatter gets
     * min(bwIntra x (ppn - 1) / ppn, bwInter x 0.9) */
    STRATA_NCCL_NVLS_MIN_PPN,
    /* v2.28 on: bwIntra x nvlsEfficiency x (nCh - 1) / nCh, x 2 for an
     * all-reduce, (ppn - 1) / ppn otherwise; NVLS_TREE's bwInter x 2 on 2
     * nodes and capped per channel by perChMaxNVLSTreeBws; the ring's
     * nRanks / nsteps as the bus to algorithm ratio */
    STRATA_NCCL_NVLS_EFFICIENCY,
} strata_nccl_nvls_rule;

/* One release's constants. Rows: NCCL's algorithms in strata_nccl_algo's
 * order (Tree, Ring, NVLS, NVLS_TREE, PAT) and protocols (LL, LL128,
 * Simple); the per-architecture tables have rows Volta, Ampere, Hopper,
 * Blackwell and columns N1 (one node), N2 (two), N4 (more). */
/* The release's rules for grouped sends and receives (nccl_p2p.h):
 * v2.27.7-1's (and v2.25, v2.26's); v2.28.7-1's schedule by groups of
 * p2pSchedGroupSize ranks with local deltas in order and its bit-reversed
 * channel base (init.cc ncclP2pSchedule l. 768-836, channel.h l. 19-31,
 * device.h ncclP2pChannelForPart: base + part); v2.29.7-1's on top, LL by
 * the parts (enqueue.cc l. 884-905: parts counted on Simple's step, LL
 * where bytes <= parts x NCCL_P2P_LL_THRESHOLD; v2.30.7-1 the same). */
/* v2.19.3-1's (and v2.18's): chunks of calcP2pChunkSize, LL by the chunk, the
 * schedule of node deltas 0, +1, -1, ... with local steps in order, the
 * channel by the peer's step, nChannelsMax halved on one node (nccl_p2p.h). */
typedef enum {
    STRATA_NCCL_P2P_219 = -1,
    STRATA_NCCL_P2P_227 = 0,
    STRATA_NCCL_P2P_228,
    STRATA_NCCL_P2P_229
} strata_nccl_p2p_rules;

typedef struct strata_nccl_version {
    const char *name;   /* "2.27" */
    const char *source; /* the tag and file */
    double base_lat[5][3];
    double nvlink_lat[5][3]; /* hwLatencies[NCCL_HW_NVLINK] */
    double net_lat[5][3];    /* hwLatencies[NCCL_HW_NET] */
    double ll_max_bw[4][3];  /* rows: the GPU on one node, the CPU (0 Intel, 1 AMD) across */
    double ring_ll128_bw[4][3];
    double tree_ll128_bw[4][3];
    double tree_bw[4][3];
    /* perChMaxNVLSTreeBws; all 0 where the release has none */
    double nvls_tree_bw[4][3];
    double nvls_efficiency[4]; /* 0 where the release has none */
    strata_nccl_nvls_rule nvls_rule;
    /* treeCorrectionFactor also corrects NVLS_TREE all-reduce on
     * Blackwell with x86 hosts (v2.29 on) */
    bool nvls_tree_correction;
    /* src/transport/nvls.cc: Blackwell's NVLS channels (comm->nvlsChannels)
     * on one node and across nodes (NVLS_NCHANNELS_SM100 32,
     * NVLS_NCHANNELS_SM100_NVL 24); Hopper's are 16 in every release */
    unsigned nvls_channels_sm100[2];
    /* src/transport/nvls.cc ncclNvlsInit: NVLS only where the node's
     * topology holds at least this many GPUs (gpuCount, the communicator's
     * GPUs in the node): "gpuCount <= 2" returns without NVLS to v2.28.3-1
     * (v2.26.6-1 l. 157, v2.27.7-1 l. 160), 3; "gpuCount < 2" from
     * v2.28.7-1 (l. 161; v2.30.7-1 l. 262), 2. Without NVLS,
     * comm->nvlsChannels is 0 and raises no communicator's channels. */
    unsigned nvls_min_gpus;
    /* src/graph/connect.cc ncclTopoPostset raises the rings' and trees'
     * channels (comm->nChannels) to comm->nvlsChannels where NVLS runs,
     * after NCCL_MAX_NCHANNELS: "if (comm->nChannels <
     * comm->nvlsChannels) nChannels = comm->nChannels =
     * copyChannels(...)" (v2.25.1-1, v2.26.6-1, v2.27.7-1 l. 493-495).
     * v2.19.3-1 has no such line (l. 396-426), and v2.28.3-1 removed it
     * (l. 494-500 keep only the shared communicator's cap; v2.28.7-1,
     * v2.29.7-1 l. 495-501 the same): NVLS still runs on its own
     * nvlsChannels (enqueue.cc nMaxChannels), the rings keep theirs. */
    bool nvls_raises_ring;
    strata_nccl_p2p_rules p2p_rules;
    /* src/graph/search.cc's Blackwell speed arrays (GB/s per channel,
     * fastest first), which change between releases:
     * sm100SpeedArrayIntra (the NVLS graph's) and sm100SpeedArrayInter
     * (the ring graph's through the NICs); NULL where the release has none
     * (v2.19.3-1, whose search reads Hopper's for compute capability 9.0
     * and up). Volta to Hopper's arrays are the same in every release from
     * v2.25.1-1 (v2.19.3-1's sm90SpeedArrayIntra lacks 11.0: one node, not
     * modelled). */
    const double *sm100_intra, *sm100_inter;
    unsigned n_sm100_intra, n_sm100_inter;
    /* ncclNvlsTreeSm100Tuning (v2.30 on): across nodes the NVLS channels of
     * a Blackwell communicator follow the nodes, the GPUs per node and the
     * NICs' bandwidth (nccl_tuning.c nvls_tuning) */
    bool nvls_sm100_tuning;
    /* v2.19.3-1 has neither NCCL_NVLS_CHUNKSIZE nor
     * NCCL_NVLSTREE_MAX_CHUNKSIZE: enqueue.cc computeColl caps NVLS's chunk
     * at a fixed 131072 and takes NVLS_TREE's from the Simple step (64 KiB
     * from 4 nodes); from v2.25.1-1 both come from comm->nvlsChunkSize
     * (nccl_tuning.c nvls_chunk) */
    bool nvls_chunk_fixed;
    /* tuning.cc to v2.19.3-1: the ring's LL bus bandwidth is a quarter of
     * the graph's for an all-reduce or across nodes, a third for one
     * node's all-gather or reduce-scatter (from v2.21.5-1: a half) */
    bool ring_ll_quarter;
    /* PAT (all-gather and reduce-scatter at one GPU per node), from
     * v2.23.4-1 */
    bool pat;
    /* PATH_P2C (a GPU on NVLink-C2C, the NIC on its CPU's PCIe), from
     * v2.27.3-1 (src/graph/paths.cc, topo.h); before it that path is PHB */
    bool p2c_path;
    /* src/device/all_reduce.h (src/collectives/device/ to v2.18) runRing
     * to v2.19.3-1: an LL or LL128 chunk is the buffer's share of a
     * channel and rank rounded up to whole minChunkSize (the kernel's
     * threads x 8 bytes on LL, threads x 60 / 2 on LL128), so the last
     * ranks' chunks hold less or nothing while every ring step still takes
     * a whole one; v2.20.3-1 rewrote runRing (the host sets each
     * channel's count and chunk), which this model takes as the even
     * share */
    bool ring_chunk_grain;
    /* the table holds what one node of Volta, Ampere or Hopper GPUs reads
     * (v2.19.3-1 predates Blackwell, and its rules across nodes, the ring's
     * plateau and the network's overheads, are not in this model): other
     * uses are an input error (coll_impl_nccl.c) */
    bool one_node;
    /* with one_node: the table also holds what the release's tuning reads
     * across nodes for Volta and Ampere GPUs (v2.19.3-1: its
     * tuning.cc's rules across nodes are read, below; Hopper's NVLS
     * across nodes is not): one_node then refuses Hopper and Blackwell
     * across nodes only */
    bool nodes_pre_hopper;
    /* tuning.cc to v2.19.3-1 (l. 161-163): an all-reduce ring's steps
     * across nodes are nInterSteps = 2 x nNodes; from v2.25.1-1 (l. 322)
     * 2 x (nNodes - 1) */
    bool ring_inter_steps_all;
    /* tuning.cc to v2.19.3-1: interLat is every algorithm's own network
     * row (l. 208), where v2.25.1-1 takes Tree's at one GPU a node ("With
     * ppn=1 latencies are fully exposed", l. 299-300); and the ring's
     * LL128 bus bandwidth x .7 below two GPUs a node, x .92 at two and
     * more (l. 181; v2.25.1-1 l. 256: x .92 always) */
    bool ppn1_old_rules;
    /* src/enqueue.cc scheduleCollTasksToPlan's cells (nccl_channels.h):
     * MinTrafficPerChannel, 16 KiB v2.25 to v2.28, 32 KiB from v2.29; 0:
     * no cells, every channel the even share (v2.19's computeColl) */
    unsigned cell_traffic;
    /* tuning.cc from v2.26.2-1 (v2.26.6-1 l. 261, v2.30.7-1 l. 336):
     * "if (a == NCCL_ALGO_TREE && comm->maxTreePattern ==
     * NCCL_TOPO_PATTERN_TREE) busBw *= .85"; v2.19.3-1 (l. 185) and
     * v2.25.1-1 (l. 260) read the tree graph's own pattern
     * ("graphs[a]->pattern"), the same on a communicator whose nodes hold
     * one GPU each; the tree graph has that pattern with one GPU a node
     * (search.cc ncclTopoCompute, v2.25.1-1 l. 995: "if (ngpus == 1) if
     * (graph->pattern != NCCL_TOPO_PATTERN_RING) graph->pattern =
     * NCCL_TOPO_PATTERN_TREE"). Every table from v2.19 has it */
    bool tree_pattern_cut;
    /* LL's traffic per byte x 4 in the cell's size (from v2.26.2-1) */
    bool cell_ll_quad;
    /* trafficPerChannel = divUp(traffic / nChannels, 16) x 16 (from
     * v2.29), else max(MinTrafficPerChannel, traffic / nChannels) */
    bool cell_round16;
    /* tuning.cc to v2.22.3-1 converts NVLS's all-gather and reduce-scatter
     * bus bandwidth to algorithm bandwidth (x 5/6) as its all-reduce's:
     * v2.19.3-1 l. 196-201 converts every algorithm, v2.22.3-1 l. 210-217
     * all but CollNet Direct's all-gather and reduce-scatter; from
     * v2.25.1-1 (l. 288-289) only the ring's all-gather and reduce-scatter
     * are converted */
    bool nvls_gather_ratio;
    /* v2.22.3-1's cells (src/enqueue.cc scheduleCollTasksToPlan l.
     * 614-671): a fixed cellSize of 16 bytes, the plan's traffic
     * task->trafficBytes without v2.25's max(MinTrafficPerChannel, .), and
     * the first channel's cellsLo rounded down, min(cells,
     * trafficPerChannel / trafficPerCell), where v2.25 rounds it up */
    bool cell_fixed16;
    /* tuning.cc v2.8.4-1 l. 124 (the same to v2.17.1-1 l. 153): "if
     * (compCap80) busBw = std::min(busBw, 235.0f)", every algorithm and
     * protocol, before the protocols' factors, on sm80 (nccl_arch = ampere
     * is taken as the A100's sm80); 0 where the release has no such cap */
    double sm80_bus_cap;
    /* v2.8.4-1 / v2.9.9-1 tuning.cc l. 74, ll128MaxBwPerCh[coll]: LL128's
     * cap per channel by collective (all-reduce 16.9, all-gather 18.3,
     * reduce-scatter 15.2 GB/s), on every architecture, for the ring and
     * the tree alike; all 0 where the release has the per-architecture
     * tables (ring_ll128_bw, tree_ll128_bw: 20 GB/s on Ampere from
     * v2.10.3-1) */
    double ll128_coll_bw[3];
    /* treeCorrectionFactor's LL128 row where the release's differs from
     * the one nccl_tuning.c holds (v2.8.4-1 l. 267); NULL otherwise */
    const double *tree_ll128_correction;
    /* the release predates Hopper: its tables have Volta and Ampere rows
     * only (v2.8.4-1 llMaxBws[2][3], l. 75), so Hopper and Blackwell GPUs
     * are an input error (coll_impl_nccl.c) */
    bool pre_hopper;
} strata_nccl_version;

/* The release named `name` (2.MINOR or 2.MINOR.PATCH), or NULL. */
const strata_nccl_version *strata_nccl_version_find(const char *name);
/* The newest release: what a model without nccl_version runs. */
const strata_nccl_version *strata_nccl_version_default(void);
/* The releases that have a table, as an error message lists them:
 * "2.19, 2.22, 2.25, 2.26, 2.27, 2.28, 2.29, 2.30" (g_free). */
char *strata_nccl_version_list(void);
/* The release whose NVLS efficiency (nvlsEfficiency) and NVLS_TREE
 * per-channel rate (perChMaxNVLSTreeBws) describe the kernels `v` runs:
 * `v` itself from v2.28, else v2.28.7-1's, the first with those figures.
 * They describe the hardware's multimem traffic and the NVLS_TREE kernel,
 * which is the same code from v2.26.2-1 to v2.28.7-1
 * (src/device/all_reduce.h differs in one call's arguments). */
const strata_nccl_version *strata_nccl_version_kernels(const strata_nccl_version *v);

#endif

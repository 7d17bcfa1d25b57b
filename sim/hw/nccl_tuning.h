/*
 * nccl_tuning.h: NCCL's own tuning model, as NCCL uses it to pick the
 * algorithm, the protocol and the channel count of a collective, on one
 * node or several (NVIDIA/nccl @5067397, src/graph/tuning.cc
 * ncclTopoTuneModel and ncclTopoGetAlgoTime, src/enqueue.cc
 * topoGetAlgoInfo's channel/thread tuning, src/graph/search.cc's speeds),
 * with the tuning constants and NVLS rules of the release the
 * communicator names (nccl_versions.h; default the newest).
 *
 * For every (algorithm, protocol) NCCL computes a latency (base latency +
 * per-step hardware latency x steps, NVLink's inside a node and the
 * network's between nodes) and a bandwidth (the graph's channels x
 * per-channel bandwidth, capped per protocol, GPU architecture and node
 * count, converted from bus to algorithm bandwidth); a collective of B
 * bytes is estimated at lat + B / (1000 bw) microseconds and NCCL runs the
 * pair with the lowest estimate. Then it lowers the channel count while
 * B < channels x threads x threadThreshold.
 *
 * Nodes: NCCL's nNodes, the scale-up domains the communicator spans, each
 * with ranks / nodes GPUs (ppn). With more than one, the tables' N2 (two
 * nodes) or N4 (more) columns apply, LL's cap follows the host CPU's
 * vendor, the ring's inter-node steps and the trees' levels pay the
 * network's latencies (hwLatencies[NET]), and the algorithms are those NCCL
 * enables without a CollNet (SHARP) plugin: Ring, Tree (all-reduce),
 * NVLS_TREE (all-reduce, with NVLS), PAT (all-gather and reduce-scatter at
 * one GPU per node); NVLS alone runs on one node only.
 *
 * The network plugin's latency (ncclNetProperties.latency: 0 on IB,
 * net_ib.cc, aws-ofi-nccl's platform figure on EFA) is the graph's
 * latencyInter, added to every step between nodes in the estimate, twice
 * on Simple (tuning.cc: the data and the flush).
 *
 * Scope: numPipeOps = 1, NVLink paths inside a node (LL128's typeIntra
 * rule holds), LL128 across nodes by the GPUs' path to the NICs
 * (net_path), no CollNet. Pure functions; no state.
 */
#ifndef STRATA_HW_NCCL_TUNING_H
#define STRATA_HW_NCCL_TUNING_H

/* NCCL_STEPS: the steps of a connection's buffer (src/include/device.h) */
#define STRATA_NCCL_STEPS 8u

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include "hw/nccl_versions.h"
#include "trace/op.h"

typedef enum { STRATA_NCCL_VOLTA = 0, STRATA_NCCL_AMPERE, STRATA_NCCL_HOPPER, STRATA_NCCL_BLACKWELL } strata_nccl_arch;
typedef enum { STRATA_NCCL_LL = 0, STRATA_NCCL_LL128, STRATA_NCCL_SIMPLE, STRATA_NCCL__PROTOS } strata_nccl_proto;
/* NCCL's order (ncclAlgoStr, less the CollNets): the selection keeps the
 * first minimum in this order. */
typedef enum {
    STRATA_NCCL_TREE = 0,
    STRATA_NCCL_RING,
    STRATA_NCCL_NVLS,
    STRATA_NCCL_NVLS_TREE,
    STRATA_NCCL_PAT,
    STRATA_NCCL__ALGOS
} strata_nccl_algo;
/* The host CPU (comm->cpuVendor, cpuArch): LL's cap across nodes and the
 * network's post overhead follow it. */
typedef enum { STRATA_NCCL_INTEL = 0, STRATA_NCCL_AMD, STRATA_NCCL_ARM } strata_nccl_cpu;
/* The path type by which NCCL's ring and tree graphs reach the NICs
 * (graphs[a]->typeInter), in the order of NCCL's PATH_* from v2.27.5-1
 * (src/graph/topo.h: PIX 4, PXB 5, P2C 6, PXN 7, PHB 8, SYS 9). v2.27.3-1
 * numbers P2C 7 after PXN 6, its rule reading `<= PATH_P2C` where later
 * ones read `<= PATH_PXN`: the same paths pass. v2.26.x: PATH_C2C 3, PIX 4
 * to SYS 8, no P2C; v2.25.1-1 and before: PIX 3, PXB 4, PXN 5, PHB 6, SYS
 * 7. Only the order matters here. C2C is a GPU joined to its CPU by
 * NVLink-C2C with the NIC on that CPU's PCIe: PATH_P2C from v2.27.3-1
 * (paths.cc "update the GPU -> NIC path in the case of C2C + PHB"), PHB
 * before (v2.25.1-1 paths.cc l. 96-97: a PCI link at a CPU makes the path
 * PHB). It gates LL128 across nodes (nccl_tuning.c ll128_net_path). */
typedef enum {
    STRATA_NCCL_PATH_PIX = 0,
    STRATA_NCCL_PATH_PXB,
    STRATA_NCCL_PATH_C2C,
    STRATA_NCCL_PATH_PXN,
    STRATA_NCCL_PATH_PHB,
    STRATA_NCCL_PATH_SYS
} strata_nccl_net_path;

/* One communicator. The NVLS graph is not a field: on one node NCCL's
 * search gives it one channel per GPU (search.cc: minChannels =
 * maxChannels = the GPUs, NCCL_MAX_NVLS_ARITY 32), each at the fastest speed
 * of the architecture's speed array whose traffic fits a GPU's NVLinks:
 * channel g loads every GPU's link to the switch with its speed, twice on
 * head g (ncclTopoSearchTryNvls), so (n + 1) x speed per direction; the
 * GPU's NVLink bandwidth is taken as the ring graph's (channels x
 * per-channel), which NCCL's search fit into it (ESTIMATE: a lower bound of
 * links x SMxx_NVLINK_BW; on the H100, 360 against 18 x 20.6 = 370.8 GB/s,
 * both give 40 GB/s). Across nodes its heads are the GPUs with a NIC
 * (search.cc: "NVLS search only tries to find NIC:GPU combinations to
 * compute the heads"), at the same intra-node speed. */
/* A tuner plugin's row (nccl_plugin.h). */
typedef struct strata_nccl_plugin strata_nccl_plugin;

typedef struct strata_nccl_comm {
    strata_nccl_arch arch;
    uint32_t ranks;
    /* NCCL's ring (and tree) graph inside a node: channels x per-channel
     * bandwidth, as its topology search builds it (graphs[RING]->nChannels,
     * ->bwIntra, GB/s); comm->nChannels is twice the graph's (ncclTopoPostset
     * duplicates the rings), at most 32 (MAXCHANNELS) */
    uint32_t graph_channels;
    double channel_gbs;
    bool nvls; /* the NVSwitch supports NVLink SHARP (multicast objects) */
    /* Across nodes (nodes > 1; 0 or 1: one node): the NICs of one node and
     * one NIC's bandwidth (GB/s, NCCL's net.bw = speed / 8000), the GPUs
     * that have one (the NVLS heads), the host CPU */
    uint32_t nodes;
    uint32_t nics;
    /* the bandwidth of a GPU's path to one NIC as NCCL's search sees it
     * (paths[NET].bw: the lowest link on the way, the NIC's net.bw or the
     * PCIe link it sits on, strata_nccl_pci_gbs) */
    double nic_gbs;
    uint32_t nic_gpus;
    strata_nccl_cpu cpu;
    /* the GPUs' path to their NICs as NCCL's graphs take it (typeInter;
     * 0, PIX: on the GPUs' PCIe switches, LL128 allowed) */
    strata_nccl_net_path net_path;
    /* NCCL_ALGO, NCCL_PROTO: bit a (p) set allows algorithm a (protocol
     * p); 0: every one NCCL enables */
    uint32_t algos, protos;
    /* the release whose tuning constants NCCL runs (nccl_versions.h);
     * NULL: the newest */
    const strata_nccl_version *version;
    /* NCCL_MIN_CTAS (config.minCTAs): the least channels of the
     * communicator, rings and NVLS alike; 0: unset */
    uint32_t min_ctas;
    /* NCCL_MAX_NCHANNELS (ncclMaxNchannels()): the most channels of the
     * rings and trees, before NVLS raises them (connect.cc
     * ncclTopoPostset); NCCL_MAX_CTAS (config.maxCTAs): that and the NVLS
     * channels' most (nvls.cc ncclNvlsInit); 0: unset */
    uint32_t max_nchannels, max_ctas;
    /* NCCL_TUNER_PLUGIN: the plugin whose choice NCCL takes where it makes
     * one (nccl_plugin.h); NULL: none, NCCL's own model */
    const strata_nccl_plugin *plugin;
    /* the network plugin's latency property (us; ncclNetProperties.latency,
     * which ncclTopoSearch copies into graph->latencyInter, search.cc
     * l. 685 at v2.28.7-1): 0 on IB (net_ib.cc: "Not set") */
    double net_latency_us;
    /* NCCL_NVLS_CHUNKSIZE and NCCL_NVLSTREE_MAX_CHUNKSIZE as a run sets
     * them (bytes; 0: unset, NCCL's defaults), which take priority over
     * NCCL's own NVLS tuning (v2.30.7-1 transport/nvls.cc ncclNvlsTuning:
     * "User overrides take priority over tuning"; v2.28.7-1 reads the same
     * parameters, nvls.cc l. 153 and enqueue.cc l. 1977) */
    uint64_t nvls_chunk_bytes, nvlstree_max_bytes;
    /* NCCL_BUFFSIZE as a run sets it (comm->buffSizes[NCCL_PROTO_SIMPLE],
     * bytes; 0: unset, init.cc DEFAULT_BUFFSIZE 4 MiB): NVLS's chunk is at
     * most one step of it (nccl_tuning.c nvls_chunk) */
    uint64_t simple_buff_bytes;
    /* NCCL_P2P_NET_CHUNKSIZE as a run (or its net plugin) sets it (bytes;
     * 0: unset, init.cc's 128 KiB): a p2p step across nodes (nccl_p2p.c) */
    uint64_t p2p_net_chunk_bytes;
} strata_nccl_comm;

typedef struct strata_nccl_choice {
    strata_nccl_algo algo;
    strata_nccl_proto proto;
    uint32_t channels;  /* after enqueue.cc's tuning */
    uint32_t threads;   /* per channel, before the Simple sync warp */
    /* Ring on LL or LL128 in a release whose kernel rounds a chunk up
     * (strata_nccl_version ring_chunk_grain, to v2.19): runRing's
     * minChunkSize in bytes, threads x 8 on LL (8 data bytes a 16-byte
     * line and thread), threads x 30 on LL128 (60 data bytes a grain,
     * halved: "makes performance much, much smoother"), for 4-byte
     * elements (2-byte ones give the same; a trace's collective has no
     * element type); from v2.25 the Ring's last loop's chunk rounded up to
     * 16 bytes (alignUp(divUp(remCount, nranks), 16/sizeof(T))): 16 on LL
     * and LL128 (Simple's even cut into slices is not NCCL's: nccl_tuning.c
     * tune_channels); 0 otherwise */
    uint64_t ring_grain_bytes;
    /* enqueue.cc's cells (nccl_channels.h, from v2.25): the channels that
     * carry bytes (at most channels), the bytes of the first and of each
     * after it but the last, which takes the rest; lo and mid 0: every
     * channel the even share (v2.19) */
    uint32_t run_channels;
    uint64_t chan_lo_bytes, chan_mid_bytes;
    double time_us;     /* NCCL's estimate */
    double base_us;     /* the base latency: NCCL's fixed cost per collective */
    /* NVLS and NVLS_TREE: the chunk per channel and head after enqueue.cc's
     * calcCollChunking (nvls.cc NCCL_NVLS_CHUNKSIZE 128 KiB, halved for
     * small buffers), and the fraction of NVLink's data rate NVLS's
     * multimem traffic reaches (tuning.cc nvlsEfficiency, v2.28's for an
     * older release: strata_nccl_version_kernels); 0 otherwise */
    uint64_t chunk_bytes;
    double nvls_efficiency;
    /* NVLS and NVLS_TREE: the NVLS intra-node latency (hwLatencies[NVLINK],
     * 25 us), which NCCL charges once as the algorithm's whole fixed cost
     * (its base latency is 0); 0 otherwise */
    double nvls_us;
    /* Across nodes: NCCL's latency of one step over the network for the
     * pair (hwLatencies[NET], the Tree row with one GPU per node; without
     * the network plugin's latency, which moves the choice only), and its
     * heads (NVLS_TREE: the GPUs with a NIC) */
    double net_step_us;
    uint32_t heads;
    /* NVLS_TREE across nodes: the algorithm bandwidth (GB/s) of NCCL's
     * per-channel cap (tuning.cc perChMaxNVLSTreeBw, v2.28's for an older
     * release: strata_nccl_version_kernels, x the NVLS graph's
     * channels, as bus bandwidth, x nRanks / nsteps): the rate of the
     * kernel's warps, a role each (scatter, reduce and send, receive and
     * broadcast, gather), at which every stage of its pipeline runs even
     * while the links have room (algo_nccl_nvls_tree.c); 0 otherwise */
    double stage_gbs;
} strata_nccl_choice;

/* NCCL's names (ncclAlgoStr, ncclProtoStr): "Tree", "Ring", "NVLS",
 * "NVLS_TREE", "PAT"; "LL", "LL128", "Simple". */
const char *strata_nccl_algo_name(strata_nccl_algo a);
const char *strata_nccl_proto_name(strata_nccl_proto p);
/* The nccl row's nccl_arch as its files write it: "volta", "ampere", "hopper", "blackwell". */
const char *strata_nccl_arch_name(strata_nccl_arch a);
/* The names of the algorithms a mask (1 << strata_nccl_algo) holds, comma-separated ("" for none; g_free). */
char *strata_nccl_algo_mask_names(uint32_t mask);
/* Sets err where the library `lib` ("nccl", "rccl": the trace's algo=) runs
 * no algorithm for a kind over `ranks`: naming the trace's pin where
 * `pinned` (a mask, 1 << strata_nccl_algo) holds one (nccl-nvls-tree on an
 * A100), else the kinds and counts it runs (coll_impl_nccl.c, coll_impl_rccl.c). */
void strata_nccl_unrun_error(GError **err, const char *lib, uint32_t pinned, strata_op_kind kind, uint64_t ranks);
/* "volta", "ampere", "hopper", "blackwell" (the nccl row's nccl_arch,
 * coll_impl_nccl.c). */
bool strata_nccl_arch_from_name(const char *name, strata_nccl_arch *out);
/* A name as NCCL_ALGO / NCCL_PROTO write it (case-insensitive). */
bool strata_nccl_algo_from_name(const char *name, strata_nccl_algo *out);
bool strata_nccl_proto_from_name(const char *name, strata_nccl_proto *out);

/* NCCL's log2i (src/include/utils.h): floor(log2(x)), -1 for 0; RCCL's
 * tuning and NCCL's chunking use it too. */
int strata_nccl_log2i(uint64_t x);

/* NCCL's network post overhead (us; tuning.cc getNetOverhead, v2.27.7-1
 * l. 204-209): 1 on Intel x86, 2 on AMD x86, 1 otherwise (NET_OVERHEAD
 * unset); three times that on Simple (l. 351). */
double strata_nccl_net_overhead_us(const strata_nccl_comm *c, strata_nccl_proto p);

/* NCCL's latency (us) and algorithm bandwidth (GB/s) for a collective of
 * `kind` (all-reduce, all-gather or reduce-scatter); false when NCCL does
 * not run that pair (bandwidth 0 in NCCL, or disabled). */
bool strata_nccl_model(const strata_nccl_comm *c, strata_op_kind kind, strata_nccl_algo a, strata_nccl_proto p,
                       double *lat_us, double *bw_gbs);
/* ncclTopoGetAlgoTime: the estimate in us, or -1 when not run. */
double strata_nccl_time_us(const strata_nccl_comm *c, strata_op_kind kind, strata_nccl_algo a, strata_nccl_proto p,
                           uint64_t bytes);
/* A library's tuning model (NCCL's, RCCL's), as ncclTopoGetAlgoTime runs
 * it; comm is the library's communicator. model: the pair's latency (us)
 * and algorithm bandwidth (GB/s), false when the library does not run the
 * pair; correct: the library's corrections of both by the size (bytes). */
typedef struct strata_nccl_tuner {
    bool (*model)(const void *comm, strata_op_kind kind, strata_nccl_algo a, strata_nccl_proto p, double *lat_us,
                  double *bw_gbs);
    void (*correct)(const void *comm, strata_op_kind kind, strata_nccl_algo a, strata_nccl_proto p, uint64_t bytes,
                    double *lat_us, double *bw_gbs);
} strata_nccl_tuner;
/* ncclTopoGetAlgoTime: the corrected latency plus bytes at the corrected
 * bandwidth, in us; -1 when the model does not run the pair or a
 * correction leaves it no bandwidth. */
double strata_nccl_tuner_time_us(const strata_nccl_tuner *t, const void *comm, strata_op_kind kind, strata_nccl_algo a,
                                 strata_nccl_proto p, uint64_t bytes);
/* The first minimum of the tuner's time over algorithms 0..n_algos-1,
 * then protocols, as NCCL and RCCL walk them (enqueue.cc topoGetAlgoInfo:
 * `if (time >= 0 && time < minTime)`): its time in us and the pair, or -1
 * when none runs. */
double strata_nccl_argmin(const strata_nccl_tuner *t, const void *comm, strata_op_kind kind, uint64_t bytes,
                          unsigned n_algos, strata_nccl_algo *algo, strata_nccl_proto *proto);
/* The pair NCCL picks for `bytes` (nccl-tests' size: the per-rank buffer
 * of an all-reduce, the gathered OUT of an all-gather, the scattered IN
 * of a reduce-scatter), with its channels: its model's, or c's tuner
 * plugin's where that makes a choice (nccl_plugin.h). False when nothing applies
 * (a kind NCCL runs otherwise, or one rank). */
bool strata_nccl_choose(const strata_nccl_comm *c, strata_op_kind kind, uint64_t bytes, strata_nccl_choice *out);
/* NCCL's NVLS graph (above): its channels and GB/s per channel; false
 * where the architecture or the switch has no NVLS, where a node has fewer
 * GPUs than the release runs NVLS on (nvls.cc ncclNvlsInit: 3 to v2.27, 2
 * from v2.28; one GPU a node never), or where no speed of the array
 * fits. */
bool strata_nccl_nvls_graph(const strata_nccl_comm *c, uint32_t *channels, double *channel_gbs);
/* NCCL's ring graph through the NICs (nodes > 1): search.cc starts at the
 * fastest speed of the inter-node array a NIC carries and lowers it while
 * the next speed is above .49 of the best found, keeping the most
 * channels x speed, each NIC carrying floor(NIC / speed) channels and the
 * GPU's NVLink (the one-node graph's channels x speed) the rest, at most
 * MAXCHANNELS / 2; ncclTopoDupChannels doubles them at half the speed when
 * the speed is 25 or more, but not on SM90 or later below 50 with more
 * than 4 channels. */
/* A PCIe link's bandwidth in NCCL's topology (GB/s): NVIDIA/nccl
 * v2.25.1-1 src/graph/topo.cc ncclTopoAddPci l. 466-472, width x speed /
 * 80 with the speed per lane of kvDictPciGen (l. 403-406: 2.5, 5, 8, 16,
 * 32, 64 GT/s are 15, 30, 60, 120, 240, 480 x 100 Mb/s) for generations
 * 1 to 6: Gen4 x16 is 24, Gen5 x16 48; the same in v2.18.3-1 (l. 375,
 * 438), v2.19.3-1 (l. 378, 441) and master @5067397 (l. 555, 657). 0 for
 * a generation outside 1 to 6. */
double strata_nccl_pci_gbs(uint32_t generation, uint32_t lanes);
void strata_nccl_net_graph(const strata_nccl_comm *c, uint32_t *channels, double *channel_gbs);
/* NCCL's tree graph through the NICs (nodes > 1), whose channels x bwIntra
 * (two nodes) or x bwInter (more) is the tree's bandwidth in tuning.cc
 * ("float bw = nNodes <= 2 || collnet ? graphs[a]->bwIntra :
 * graphs[a]->bwInter", v2.19.3-1 l. 174 to v2.30.7-1). init.cc asks the
 * search for exactly the ring graph's channels (treeGraph->minChannels =
 * maxChannels = ringGraph->nChannels, v2.25.1-1 l. 846-847). search.cc
 * ncclTopoCompute (v2.25.1-1 l. 1005-1135, the same in v2.19.3-1 to
 * v2.30.7-1), pass 1: the fastest speed of the inter-node array at most
 * the NIC's path (maxBw) with speed x channels at most totalBw x ppn /
 * (ppn - 1), whose NICs carry the channels (ncclTopoSearchRecNet takes
 * bwInter off a NIC per channel) and whose chain the GPU's NVLink carries
 * (bwIntra per channel): bwIntra = bwInter = that speed (the tree's
 * ncclTopoDupChannels cannot add channels past maxChannels). Pass 2
 * ("increase bwIntra for trees (2 nodes or collnet)"): bwIntra steps up
 * the array while it is under twice bwInter and the NVLink chain carries
 * channels x the next speed; the NIC paths are charged bwInter (search.cc
 * ncclTopoFollowPath: bwIntra only from GPU to GPU), so the NICs bound
 * bwInter only. With one GPU a node there is no GPU-to-GPU step: NVLink
 * bounds neither pass. Only the balanced tree is modelled (Hopper's
 * search may fall back to NCCL_TOPO_PATTERN_TREE where the balanced one
 * fits no channel; not modelled beyond one GPU a node). */
void strata_nccl_tree_graph(const strata_nccl_comm *c, uint32_t *channels, double *bw_inter, double *bw_intra);
/* comm->nChannels, the most channels a ring or tree collective runs on
 * (connect.cc ncclTopoPostset): the ring graph's (one node: the model's;
 * across nodes: strata_nccl_net_graph's) doubled; across nodes on SM90 or
 * later doubled again below 16 when that graph's per-channel speed is
 * above 45 GB/s; at least NCCL_MIN_CTAS; at least the NVLS channels where
 * NVLS runs (strata_nccl_nvls_graph: not with fewer GPUs a node than the
 * release's nvls_min_gpus); at most MAXCHANNELS (32). */
uint32_t strata_nccl_comm_channels(const strata_nccl_comm *c);

#endif

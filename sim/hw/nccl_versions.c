/*
 * nccl_versions.c: NCCL's tuning constants per release (contract in
 * nccl_versions.h). Every figure is NCCL's, read from src/graph/tuning.cc
 * at the tag each table names (NVIDIA/nccl); nothing here is fitted.
 * Invariant: the tables are constant and sorted oldest first; the last is
 * the default.
 */
#include "hw/nccl_versions.h"
#include <string.h>
#include "core/named_rows.h"

/* Shared rows. tuning.cc baseLat / baseLatencies {LL, LL128, Simple}:
 * Tree, Ring, NVLS, NVLS_TREE, PAT (before v2.28 PAT's 8 us is written
 * in its latency formula, "8 // Base time"). */
#define BASE_LAT {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {8.0, 8.0, 8.0}}
/* hwLat[NCCL_HW_NVLINK]; PAT's column is new in v2.28 (its latency formula
 * reads no NVLink latency). */
#define NVLINK_LAT_OLD {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 25}, {0, 0, 25}, {0, 0, 0}}
#define NVLINK_LAT {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}}
/* hwLat[NCCL_HW_NET]: NVLSTree's Simple step is 14 us to v2.28, 20.9 from
 * v2.29; PAT (one GPU per node) reads Tree's row ("With ppn=1 latencies
 * are fully exposed"). */
#define NET_LAT_OLD {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 18}, {0, 0, 14}, {0, 0, 0}}
#define NET_LAT_228 {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 18}, {0, 0, 14}, {0, 0, 14}}
#define NET_LAT_229 {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}}
/* llMaxBws: unchanged from v2.25 to v2.30 (Blackwell's row is twice
 * Hopper's) */
#define LL_MAX_BW {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {2 * 141.0, 2 * 45.0, 2 * 35.0}}
#define VA_RING_LL128 {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}
#define VA_TREE_LL128 {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}
#define VA_TREE {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}
#define VA_NVLS_TREE {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}
#define NVLS_EFFICIENCY {0.0, 0.0, 0.85, 0.74}
/* nvls.cc ncclNvlsInit: v2.25.1-1 and v2.26.6-1 give every Blackwell
 * communicator NVLS_NCHANNELS_SM100 (32); from v2.27.3-1 a communicator on
 * one node (or one MNNVL clique) gets NVLS_NCHANNELS_SM100_NVL (24) and one
 * across nodes 32 ("Use a reduced number of channels for single node/MNNVL
 * domain on Blackwell"); v2.30.7-1's ncclNvlsTuning keeps the rule and
 * lets ncclNvlsTreeSm100Tuning change it across nodes */
#define NVLS_SM100_OLD {32, 32}
#define NVLS_SM100 {24, 32}
/* v2.25-v2.27: Blackwell's rows are twice Hopper's; no NVLS efficiency
 * and no per-channel NVLS_TREE cap; NVLS from 3 GPUs a node; NVLS's
 * channels raise the rings' (connect.cc l. 493-495: nvls_raises_ring) */
#define OLD_TABLES                                                                                                   \
    .pat = true, .nvls_min_gpus = 3, .nvls_raises_ring = true, .base_lat = BASE_LAT, .nvlink_lat = NVLINK_LAT_OLD, .net_lat = NET_LAT_OLD,     \
    .ll_max_bw = LL_MAX_BW,                                                                                          \
    .ring_ll128_bw = {VA_RING_LL128, {2 * 36.7, 2 * 36.7, 2 * 36.7}},                                                \
    .tree_ll128_bw = {VA_TREE_LL128, {2 * 36.7, 2 * 36.7, 2 * 29.0}},                                                \
    .tree_bw = {VA_TREE, {2 * 38.7, 2 * 41.4, 2 * 36.0}}
/* v2.28 on: Blackwell's own rows, NVLS from 2 GPUs a node; what differs
 * between releases is the network step (net), Blackwell's Ring LL128 N2
 * cap (ll128_n2; N1 and N4 are ll128_n14) and its NVLSTree N4 cap
 * (nvls_tree_n4) */
#define NEW_TABLES(net, ll128_n2, nvls_tree_n4, ll128_n14)                                                          \
    .pat = true, .nvls_min_gpus = 2, .base_lat = BASE_LAT, .nvlink_lat = NVLINK_LAT, .net_lat = net,                \
    .ll_max_bw = LL_MAX_BW,                                                                                          \
    .ring_ll128_bw = {VA_RING_LL128, {ll128_n14, ll128_n2, ll128_n14}},                                              \
    .tree_ll128_bw = {VA_TREE_LL128, {55.6, 31.67, 20.0}}, .tree_bw = {VA_TREE, {70.0, 42.8, 24.0}},                 \
    .nvls_tree_bw = {VA_NVLS_TREE, {0.0, 96.0, nvls_tree_n4}}, .nvls_efficiency = NVLS_EFFICIENCY,                   \
    .nvls_rule = STRATA_NCCL_NVLS_EFFICIENCY

/* search.cc's Blackwell speed arrays (strata_nccl_version sm100_intra,
 * sm100_inter): sm100SpeedArrayIntra v2.25.1-1 and v2.26.6-1 (l. 923),
 * then 18 added (v2.27.7-1, v2.28.7-1), then 45 (v2.29.7-1, v2.30.7-1);
 * sm100SpeedArrayInter v2.25.1-1 and v2.26.6-1 (l. 924, Hopper's),
 * v2.27.7-1 and v2.28.7-1 (96, 45.1 for 45), v2.29.7-1 (80), v2.30.7-1
 * (86: l. 1064 at master @5067397) */
#define INTER_TAIL 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12
static const double intra_225[] = {90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0};
static const double intra_227[] = {90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
static const double intra_229[] = {90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
static const double inter_225[] = {48.0, 45.0, INTER_TAIL};
static const double inter_227[] = {96.0, 48.0, 45.1, INTER_TAIL};
static const double inter_229[] = {96.0, 80.0, 48.0, 45.1, INTER_TAIL};
static const double inter_230[] = {96.0, 86.0, 80.0, 48.0, 45.1, INTER_TAIL};
#define SM100_SPEEDS(intra, inter)                                                                                  \
    .sm100_intra = intra, .n_sm100_intra = sizeof intra / sizeof intra[0], .sm100_inter = inter,                      \
    .n_sm100_inter = sizeof inter / sizeof inter[0]

/* src/enqueue.cc scheduleCollTasksToPlan's cells (nccl_channels.h):
 * MinTrafficPerChannel 16 << 10 with LL's traffic x 4 (v2.26.6-1 l. 499,
 * 570; v2.27.7-1 l. 536, 607; v2.28.9-1 l. 529, 600); 32 << 10 with
 * trafficPerChannel rounded to 16 bytes (v2.29.7-1 l. 581, 614; v2.30.7-1
 * l. 585, 618) */
#define CELLS_16K .cell_traffic = 16u << 10, .cell_ll_quad = true
#define CELLS_32K .cell_traffic = 32u << 10, .cell_ll_quad = true, .cell_round16 = true

/* v2.8.4-1 (2021-02) and v2.9.9-1 (2021-05): their tuning.cc reads the same
 * constants (they differ in CollNet only, which strata does not run). baseLat
 * Tree {4.4, 4.4, 0}, Ring {3.6, 10.0, 8.4} (l. 56); hwLat NVLink Tree {.52,
 * 1.25, 28}, Ring {.47, 1.9, 3.4}, network Ring Simple 9.6 (l. 63-70); LL128
 * capped per channel by collective (ll128_coll_bw, l. 74); llMaxBws and
 * perChMaxTreeBws with Volta and Ampere rows only (l. 75-76; the Hopper and
 * Blackwell rows here repeat Ampere's, never read: pre_hopper); any busBw on
 * sm80 at most 235 (sm80_bus_cap, l. 124); the ring's LL at a quarter (l.
 * 125); treeCorrectionFactor's LL128 row its own (l. 265-269). Their
 * ring kernel rounds an LL chunk to threads x 8 bytes and an LL128 chunk to
 * threads x 30 (src/collectives/device/all_reduce.h l. 273, 471: v2.19's
 * minChunkSize, ring_chunk_grain); enqueue.cc getAlgoInfo cuts the channels
 * as v2.19 does (l. 307-311); no NVLS, no PAT. One node only (one_node). */
static const double tree_ll128_correction_28[23] = {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6,
                                                    .6,  .5,  .6,  .6,  .7,  .7, .8, .9, .9, .92, .92};
#define RELEASE_28(minor, tag)                                                                                     \
    {.name = minor, .source = "NVIDIA/nccl " tag " src/graph/tuning.cc, src/collectives/device/all_reduce.h",       \
     .base_lat = {{4.4, 4.4, 0}, {3.6, 10.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},                               \
     .nvlink_lat = {{0.52, 1.25, 28}, {0.47, 1.9, 3.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},                          \
     .net_lat = {{5.0, 8.5, 28}, {2.7, 4.0, 9.6}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},                                \
     .ll_max_bw = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}},                \
     .tree_bw = {{26.5, 18.5, 10.0}, {24.0, 22.5, 16.0}, {24.0, 22.5, 16.0}, {24.0, 22.5, 16.0}},                  \
     .nvls_rule = STRATA_NCCL_NVLS_MIN, .nvls_channels_sm100 = NVLS_SM100_OLD, .nvls_min_gpus = 3,                 \
     .ring_ll_quarter = true, .ring_chunk_grain = true, .one_node = true, .nvls_chunk_fixed = true,                \
     .sm80_bus_cap = 235.0, .ll128_coll_bw = {16.9, 18.3, 15.2}, .tree_ll128_correction = tree_ll128_correction_28, \
     .pre_hopper = true}

static const strata_nccl_version versions[] = {
    RELEASE_28("2.8", "v2.8.4-1"),
    RELEASE_28("2.9", "v2.9.9-1"),
    /* v2.19.3-1 (2023-09-26), the last release before v2.20.3-1's
     * rewrite of the ring kernel (ring_chunk_grain) and the last with the
     * ring's LL at a quarter of the graph (ring_ll_quarter): Tree's
     * Simple step 28 us on NVLink and the network with no base, NVLS's and
     * NVLS_TREE's 23 us on NVLink, Hopper's llMaxBws row Ampere's; Volta,
     * Ampere and Hopper rows only (Blackwell's are Hopper's doubled, never
     * read: one_node). Across nodes (Volta and Ampere, nodes_pre_hopper;
     * wave 39) its tuning.cc reads what v2.25.1-1's does (hwLat[NET] l.
     * 74-77, getNetOverhead l. 111-118, llMaxBws' AMD rows l. 86-90, the
     * ring's plateau l. 419-422, the tree's latency l. 231-233) but for
     * the ring's nInterSteps (l. 161), the ppn-1 rules (l. 181, 208) and
     * the tree pattern's x .85 (l. 185) */
    {.name = "2.19",
     .source = "NVIDIA/nccl v2.19.3-1 src/graph/tuning.cc, src/device/all_reduce.h (runRing's realChunkSize)",
     .base_lat = {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
     .nvlink_lat = {{0.6, 1.25, 28}, {0.6, 1.9, 3.4}, {0, 0, 23}, {0, 0, 23}, {0, 0, 0}},
     .net_lat = {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}, {0, 0, 18}, {0, 0, 14}, {0, 0, 0}},
     .ll_max_bw = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}},
     .ring_ll128_bw = {VA_RING_LL128, {2 * 36.7, 2 * 36.7, 2 * 36.7}},
     .tree_ll128_bw = {VA_TREE_LL128, {2 * 36.7, 2 * 36.7, 2 * 29.0}},
     .tree_bw = {VA_TREE, {2 * 38.7, 2 * 41.4, 2 * 36.0}},
     .nvls_rule = STRATA_NCCL_NVLS_MIN, .nvls_channels_sm100 = NVLS_SM100_OLD, .nvls_min_gpus = 3, .ring_ll_quarter = true,
     .ring_chunk_grain = true, .one_node = true, .nodes_pre_hopper = true,
     .ring_inter_steps_all = true, .ppn1_old_rules = true, .tree_pattern_cut = true, .nvls_chunk_fixed = true,
     .nvls_gather_ratio = true,
     /* its grouped sends and receives: src/enqueue.cc scheduleP2pTasksToPlan l. 602-705 (nccl_p2p.h) */
     .p2p_rules = STRATA_NCCL_P2P_219},
    /* v2.22.3-1 (2024-06-25; the release held-out set 30's Perlmutter
     * runs print): tuning.cc keeps v2.19.3-1's Tree Simple step, 28 us on
     * NVLink and the network with no base (l. 55-76; v2.25.1-1 has a base
     * of 8.4 and 4.0 / 14 us), its rules across nodes (nInterSteps 2 x
     * nNodes l. 159, the ppn < 2 rules l. 179 and 225, the tree pattern's x
     * .85 l. 183, getNetOverhead l. 109-115, the plateau, LL128 to PXB l.
     * 306) and v2.25's per-channel tables for Volta, Ampere and Hopper (l.
     * 86-106); from v2.21.5-1 the ring's LL at half the graph (l. 178) and
     * Hopper's llMaxBws row 141 / 45 / 35; no PAT (v2.23.4-1), no
     * Blackwell rows. Its ring kernel is v2.20's (no ring_chunk_grain); its
     * cells are v2.22's (cell_fixed16, MinTrafficPerChannel 512, enqueue.cc
     * l. 614); NVLS on one node as v2.25's (nvls.cc l. 139, 147: 128 KiB
     * chunks, more than 2 GPUs; connect.cc l. 493-494; enqueue.cc l.
     * 1775-1789); its grouped sends and receives v2.25's (enqueue.cc
     * addP2pToPlan l. 805-933 differs only in buffer registration). Across
     * nodes the table holds what Volta and Ampere read (nodes_pre_hopper):
     * Hopper's NVLS_TREE and all-to-all across nodes were not read. */
    {.name = "2.22",
     .source = "NVIDIA/nccl v2.22.3-1 src/graph/tuning.cc, src/enqueue.cc (scheduleCollTasksToPlan's cells)",
     .base_lat = {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
     .nvlink_lat = {{0.6, 1.25, 28}, {0.6, 1.9, 3.4}, {0, 0, 25}, {0, 0, 25}, {0, 0, 0}},
     .net_lat = {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}, {0, 0, 18}, {0, 0, 14}, {0, 0, 0}},
     .ll_max_bw = LL_MAX_BW,
     .ring_ll128_bw = {VA_RING_LL128, {2 * 36.7, 2 * 36.7, 2 * 36.7}},
     .tree_ll128_bw = {VA_TREE_LL128, {2 * 36.7, 2 * 36.7, 2 * 29.0}},
     .tree_bw = {VA_TREE, {2 * 38.7, 2 * 41.4, 2 * 36.0}},
     .nvls_rule = STRATA_NCCL_NVLS_MIN, .nvls_channels_sm100 = NVLS_SM100_OLD, .nvls_min_gpus = 3,
     .nvls_raises_ring = true, .one_node = true, .nodes_pre_hopper = true, .ring_inter_steps_all = true,
     .ppn1_old_rules = true, .tree_pattern_cut = true, .cell_traffic = 512, .cell_fixed16 = true,
     .nvls_gather_ratio = true},
    /* v2.25.1-1: v2.26's tuning tables; its enqueue.cc sizes LL's cells
     * without v2.26's x 4 (l. 557). The tree's x .85 with one GPU a node
     * is its tuning.cc l. 260 ("if (a == NCCL_ALGO_TREE &&
     * graphs[a]->pattern == NCCL_TOPO_PATTERN_TREE) busBw *= .85"), the
     * pattern search.cc l. 995 gives the tree graph at ngpus == 1 */
    {.name = "2.25",
     .source = "NVIDIA/nccl v2.25.1-1 src/graph/tuning.cc (v2.26.6-1's constants and rules), src/enqueue.cc",
     OLD_TABLES,
     .nvls_rule = STRATA_NCCL_NVLS_MIN, .nvls_channels_sm100 = NVLS_SM100_OLD, .cell_traffic = 16u << 10,
     .tree_pattern_cut = true, SM100_SPEEDS(intra_225, inter_225)},
    {.name = "2.26",
     .source = "NVIDIA/nccl v2.26.6-1 src/graph/tuning.cc (v2.25.1-1's constants and rules are the same)",
     OLD_TABLES,
     .nvls_rule = STRATA_NCCL_NVLS_MIN, .nvls_channels_sm100 = NVLS_SM100_OLD, CELLS_16K, .tree_pattern_cut = true,
     SM100_SPEEDS(intra_225, inter_225)},
    {.name = "2.27", .source = "NVIDIA/nccl v2.27.7-1 src/graph/tuning.cc", OLD_TABLES,
     .nvls_rule = STRATA_NCCL_NVLS_MIN_PPN, .nvls_channels_sm100 = NVLS_SM100, CELLS_16K, .tree_pattern_cut = true,
     .p2c_path = true, SM100_SPEEDS(intra_227, inter_227)},
    {.name = "2.28",
     .source = "NVIDIA/nccl v2.28.7-1 src/graph/tuning.cc (ncclTunerConstantsDefaults, nvlsEfficiency)",
     NEW_TABLES(NET_LAT_228, 34.6, 43.1, 2 * 36.7), .nvls_tree_correction = false, .p2p_rules = STRATA_NCCL_P2P_228,
     .nvls_channels_sm100 = NVLS_SM100, CELLS_16K, .tree_pattern_cut = true,
     .p2c_path = true, SM100_SPEEDS(intra_227, inter_227)},
    {.name = "2.29",
     .source = "NVIDIA/nccl v2.29.7-1 src/graph/tuning.cc (ncclTunerConstantsDefaults, nvlsEfficiency)",
     NEW_TABLES(NET_LAT_229, 40.0, 43.8, 40.0), .nvls_tree_correction = true, .p2p_rules = STRATA_NCCL_P2P_229,
     .nvls_channels_sm100 = NVLS_SM100, CELLS_32K, .tree_pattern_cut = true,
     .p2c_path = true, SM100_SPEEDS(intra_229, inter_229)},
    {.name = "2.30",
     .source = "NVIDIA/nccl v2.30.7-1 src/graph/tuning.cc (= master @5067397)",
     NEW_TABLES(NET_LAT_229, 40.0, 80.0, 40.0), .nvls_tree_correction = true, .p2p_rules = STRATA_NCCL_P2P_229,
     .nvls_channels_sm100 = NVLS_SM100, .nvls_sm100_tuning = true, CELLS_32K, .tree_pattern_cut = true,
     .p2c_path = true, SM100_SPEEDS(intra_229, inter_230)},
};
#define N_VERSIONS (sizeof versions / sizeof versions[0])

const strata_nccl_version *strata_nccl_version_find(const char *name)
{
    /* 2.MINOR or 2.MINOR.PATCH, digits only */
    static const char digits[] = "0123456789";
    if (strncmp(name, "2.", 2) != 0)
        return NULL;
    const char *minor = name + 2;
    size_t mlen = strspn(minor, digits);
    const char *rest = minor + mlen;
    if (mlen == 0 || (*rest && (rest[0] != '.' || !rest[1] || rest[1 + strspn(rest + 1, digits)])))
        return NULL;
    for (size_t i = 0; i < N_VERSIONS; i++)
        if (strlen(versions[i].name + 2) == mlen && strncmp(versions[i].name + 2, minor, mlen) == 0)
            return &versions[i];
    return NULL;
}

const strata_nccl_version *strata_nccl_version_default(void) { return &versions[N_VERSIONS - 1]; }

char *strata_nccl_version_list(void) { return strata_rows_names(versions, N_VERSIONS, sizeof versions[0]); }

/* The first table with NVLS_EFFICIENCY (v2.28.7-1, the first release with perChMaxNVLSTreeBws), found by its
 * rule, not its index: a row added before it (2.22 in wave 49) moves the index. */
const strata_nccl_version *strata_nccl_version_kernels(const strata_nccl_version *v)
{
    if (v->nvls_rule == STRATA_NCCL_NVLS_EFFICIENCY)
        return v;
    size_t i = 0;
    while (i + 1 < N_VERSIONS && versions[i].nvls_rule != STRATA_NCCL_NVLS_EFFICIENCY)
        i++;
    return &versions[i];
}

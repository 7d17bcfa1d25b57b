/*
 * rccl_tuning.c: RCCL's tuning model on MI300X-class nodes, and its MSCCL
 * choice (contract in rccl_tuning.h). Every constant is RCCL's, from
 * ROCm/rccl @0cbce2a: src/graph/tuning.cc (baseLat, tuning_model_5),
 * src/include/device.h (NCCL_MAX_NTHREADS 256, MAXCHANNELS 128),
 * src/include/comm.h (thread thresholds), src/graph/connect.cc (channels
 * doubled, at most 64 across nodes; gfx950's 4 x: ROCm/rocm-systems
 * @006a440 projects/rccl/src/init.cc), tools/msccl-algorithms (the allpairs
 * algorithms' ranges, chunks per loop and channels). RCCL 2.22's protocol
 * ranges across nodes: src/rccl_wrap.cc rcclUpdateCollectiveProtocol and
 * rcclUpdateThreadThreshold, src/include/rccl_common.h rcclGetSizePerRank,
 * src/graph/tuning.cc tuning_model_5 llProtoRanges (ROCm/rccl, as stored
 * at 9e22c79 and its 2025 rccl_wrap.cc; the 2.22.3 tag itself was not
 * reachable: its values are assumed the same). LL128 (comm->ll128): that
 * tuning_model_5's LL128 columns (hwLat, bwRatio and correction rows, each
 * the LL one's) and its LL128 ranges; 2.26's rccl_wrap.cc (ROCm/rccl
 * @00c78b7) stretches the all-reduce's above 2 nodes by 3.8. RCCL 2.20
 * (comm->tuning5): tuning_model_5 as the rocm-6.2.2 tag has it (2.20.5:
 * other per-step latencies, bwRatio 0.41 on LL, other correction rows;
 * baseLat, thresholds and channels as 2.21's). MSCCL++'s all-reduce
 * (mscclpp_choose): ROCm/rccl @0cbce2a src/misc/msccl/msccl_lifecycle.cc,
 * src/init.cc, and microsoft/mscclpp @1e82dd4 (its submodule)
 * apps/nccl/src/nccl.cu and allreduce.hpp. tuning_model_6 (comm->model_6):
 * src/graph/tuning.cc as stored at 9e22c79, which RCCL takes on gfx950
 * (ROCm/rccl @008c53d src/graph/rome_models.cc parseA2a8P and
 * parseRome4P2H: after a topology model's options, `if (IsArchMatch(gcn,
 * "gfx950")) system->tuning = 6`; tuning.cc then reads
 * rcclTuningModel[comm->topo->tuning] for the tables and llProtoRanges).
 * Invariant: the functions read only their arguments.
 */
#include "hw/rccl_tuning.h"
#include <glib.h>

#define PROTOS STRATA_NCCL__PROTOS
/* tuning.cc baseLat (us), {LL, LL128, Simple}, for Tree and Ring. */
static const double base_lat[PROTOS] = {12.0, 12.0, 17.0};
/* tuning_model_5 as a release has it, and tuning_model_6: hwLat (us per step) on xGMI
 * (RCCL's NVLINK row) and NET, for Tree and Ring; bwRatio for up to 2
 * nodes and for more; the correction factors by log2(bytes / 64), 0 to 26
 * (and beyond): the tree's always, the ring's across nodes. */
typedef struct tuning_model {
    double xgmi_lat[2][PROTOS], net_lat[2][PROTOS], bw_ratio[2][2][PROTOS];
    double tree_correction[PROTOS][27], ring_correction[PROTOS][27];
} tuning_model;
/* tuning_model_5 a row per release (strata_rccl_tuning5), as its tag or
 * branch has it (rccl_tuning.h): where two releases' tables are the same
 * they still get a row each, as nccl_versions does for NCCL. */
static const tuning_model tuning_models[] = {
    /* RCCL 2.20.5 (ROCm 6.2, tag rocm-6.2.2): LL128 off (its columns 0) */
    [STRATA_RCCL_TUNING5_2_20] =
    {.xgmi_lat = {{0.8, 0.0, 2.5}, {0.8, 0.0, 3.6}},
     .net_lat = {{12.5, 0.0, 22.4}, {9.5, 0.0, 19.8}},
     .bw_ratio = {{{0.41, 0.00, 1.00}, {0.41, 0.00, 1.00}}, {{0.41, 0.00, 0.86}, {0.41, 0.00, 1.00}}},
     .tree_correction = {{0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 0.8, 0.1, 0.4, 0.5, 1.0, 0.6, 0.4, 0.6, 0.1, 0.3, 0.4, 0.4,
                          0.3, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2},
                         {0},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 0.4, 1.0, 1.0, 1.0, 0.2, 0.7, 1.0, 1.0,
                          1.0, 0.8, 0.7, 0.7, 0.8, 0.8, 0.8, 0.9}},
     .ring_correction = {{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 0.1, 0.2, 0.2, 0.1, 0.5, 0.8, 1.0, 0.2, 0.4, 0.5, 0.4,
                          0.4, 0.3, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2},
                         {0},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.7, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 0.9,
                          1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0}}},
    /* RCCL 2.21.5 (ROCm 6.3: release-staging/rocm-rel-6.3 @99b8561,
     * tuning.cc byte-identical to @0cbce2a): LL128 columns 0 (LL128 off
     * on gfx94x at 2.21) */
    [STRATA_RCCL_TUNING5_2_21] =
    {.xgmi_lat = {{0.9, 0.0, 2.3}, {0.8, 0.0, 2.1}},
     .net_lat = {{10.5, 0.0, 25.0}, {9.5, 0.0, 320.0}},
     .bw_ratio = {{{0.06, 0.00, 0.11}, {0.08, 0.00, 1.00}}, {{0.06, 0.00, 0.59}, {0.08, 0.00, 1.00}}},
     .tree_correction = {{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 1.0, 0.9, 1.0, 1.0, 0.1, 0.1, 0.1,
                          0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
                         {0},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.7, 1.0, 1.0, 1.0,
                          1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.8}},
     .ring_correction = {{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 0.2, 1.0, 0.4, 0.4, 0.1, 0.2, 0.2,
                          0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
                         {0},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1,
                          0.1, 0.1, 0.1, 0.1, 0.8, 1.0, 1.0, 1.0}}},
    /* RCCL 2.22.3 (ROCm 6.4; the tag not reachable): 2.21.5's tables with
     * the LL128 columns LL's, as stored at 9e22c79 (2.22.3 for ROCm 6.4.2
     * "Added support for the LL128 protocol on gfx942", CHANGELOG.md @
     * cb829d6, which names no other tuning change for 2.22): an ESTIMATE
     * of 2.22.3's Simple rows, 2.21.5's */
    [STRATA_RCCL_TUNING5_2_22] =
    {.xgmi_lat = {{0.9, 0.9, 2.3}, {0.8, 0.8, 2.1}},
     .net_lat = {{10.5, 10.5, 25.0}, {9.5, 9.5, 320.0}},
     .bw_ratio = {{{0.06, 0.06, 0.11}, {0.08, 0.08, 1.00}}, {{0.06, 0.06, 0.59}, {0.08, 0.08, 1.00}}},
     .tree_correction = {{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 1.0, 0.9, 1.0, 1.0, 0.1, 0.1, 0.1,
                          0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 1.0, 0.9, 1.0, 1.0, 0.1, 0.1, 0.1,
                          0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.7, 1.0, 1.0, 1.0,
                          1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.8}},
     .ring_correction = {{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 0.2, 1.0, 0.4, 0.4, 0.1, 0.2, 0.2,
                          0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 0.2, 1.0, 0.4, 0.4, 0.1, 0.2, 0.2,
                          0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1,
                          0.1, 0.1, 0.1, 0.1, 0.8, 1.0, 1.0, 1.0}}},
    /* RCCL 2.26.6 (ROCm 7.0): tuning_model_5 as stored at 9e22c79 (after
     * NCCL 2.23's PAT column; CHANGELOG.md @cb829d6 for 2.26.6: "Suboptimal
     * algorithmic switching point for AllReduce on MI300x"): 2.22's but
     * the tree's Simple correction at 21-26 (0.7, 0.7, 0.5, 0.6, 0.6, 0.6)
     * and the ring's Simple at 22 (1.0) */
    [STRATA_RCCL_TUNING5_2_26] =
    {.xgmi_lat = {{0.9, 0.9, 2.3}, {0.8, 0.8, 2.1}},
     .net_lat = {{10.5, 10.5, 25.0}, {9.5, 9.5, 320.0}},
     .bw_ratio = {{{0.06, 0.06, 0.11}, {0.08, 0.08, 1.00}}, {{0.06, 0.06, 0.59}, {0.08, 0.08, 1.00}}},
     .tree_correction = {{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 1.0, 0.9, 1.0, 1.0, 0.1, 0.1, 0.1,
                          0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 1.0, 0.9, 1.0, 1.0, 0.1, 0.1, 0.1,
                          0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.7, 1.0, 1.0, 1.0,
                          1.0, 1.0, 0.7, 0.7, 0.5, 0.6, 0.6, 0.6}},
     .ring_correction = {{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 0.2, 1.0, 0.4, 0.4, 0.1, 0.2, 0.2,
                          0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 0.2, 1.0, 0.4, 0.4, 0.1, 0.2, 0.2,
                          0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1,
                          0.1, 0.1, 0.1, 1.0, 0.8, 1.0, 1.0, 1.0}}},
};
/* tuning_model_6 (9e22c79), which RCCL takes on gfx950 where a topology
 * model matched (comm->model_6): latencies and bwRatio tuning_model_5's;
 * its corrections differ on the tree's LL128 (16-19) and Simple (17-26),
 * the ring's LL128 (18) and Simple (22, 24) */
static const tuning_model tuning_model_6 =
    {.xgmi_lat = {{0.9, 0.9, 2.3}, {0.8, 0.8, 2.1}},
     .net_lat = {{10.5, 10.5, 25.0}, {9.5, 9.5, 320.0}},
     .bw_ratio = {{{0.06, 0.06, 0.11}, {0.08, 0.08, 1.00}}, {{0.06, 0.06, 0.59}, {0.08, 0.08, 1.00}}},
     .tree_correction = {{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 1.0, 0.9, 1.0, 1.0, 0.1, 0.1, 0.1,
                          0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 1.0, 0.9, 1.0, 1.0, 1.0, 1.0, 1.0,
                          2.0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.7, 1.0, 0.1, 0.1,
                          0.1, 0.9, 0.9, 0.7, 0.8, 0.6, 0.6, 0.6}},
     .ring_correction = {{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 0.2, 1.0, 0.4, 0.4, 0.1, 0.2, 0.2,
                          0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 0.2, 1.0, 0.4, 0.4, 0.1, 0.2, 0.1,
                          0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1,
                          0.1, 0.1, 0.1, 1.0, 0.8, 0.8, 1.0, 1.0}}};
#define RCCL_MAX_NTHREADS 256u
static const uint32_t thread_threshold[PROTOS] = {8, 8, 64};
/* MSCCL's algorithms for 8 ranks, out-of-place: the allpairs all-reduces
 * (allreduce-allpairs-8n-ll-32tb-op.xml, -ll-64tb-op.xml, -simple-op.xml)
 * and the all-to-alls (alltoall-8n-0-9kb.xml, -9kb-190kb, -190kb-512kb,
 * -512kb-7mb, -7mb-43mb, each l. 3: a direct copy of every peer's chunk
 * in one step, a thread block per peer and channel): kind, byte range
 * (the all-to-all's the whole send buffer, count x nRanks: msccl_parser.cc
 * l. 765 sizeMultiplier), chunks per loop, channels, protocol. */
static const struct {
    strata_op_kind kind;
    uint64_t lo, hi;
    uint32_t chunks, channels;
    strata_nccl_proto proto;
} msccl_algos[] = {
    {STRATA_OP_ALL_REDUCE, 0, 65536, 256, 4, STRATA_NCCL_LL},
    {STRATA_OP_ALL_REDUCE, 65537, 524287, 512, 8, STRATA_NCCL_LL},
    {STRATA_OP_ALL_REDUCE, 524288, 16777216, 512, 8, STRATA_NCCL_SIMPLE},
    {STRATA_OP_ALL_TO_ALL, 0, 9216, 8, 1, STRATA_NCCL_LL},
    {STRATA_OP_ALL_TO_ALL, 9217, 194560, 16, 2, STRATA_NCCL_LL},
    {STRATA_OP_ALL_TO_ALL, 194561, 524288, 32, 4, STRATA_NCCL_LL},
    {STRATA_OP_ALL_TO_ALL, 524289, 7340032, 32, 32, STRATA_NCCL_SIMPLE},
    {STRATA_OP_ALL_TO_ALL, 7340033, 45088768, 64, 8, STRATA_NCCL_SIMPLE},
};

/* llProtoRanges (9e22c79), by RcclTunableColls (reduce-scatter,
 * all-gather, all-reduce): LL's and LL128's (min, max] of the size per
 * rank and thread thresholds (0: none; rcclUpdateThreadThreshold scales
 * them by the ranks), and LL128's factor (2.22's stretch of the
 * all-reduce's range per doubling of the nodes); tuning_model_5's
 * (net_ranges[0]) and tuning_model_6's (net_ranges[1], comm->model_6). */
typedef struct net_range {
    strata_op_kind kind;
    uint64_t ll_min, ll_max;
    uint32_t ll_threshold;
    uint64_t ll128_min, ll128_max;
    uint32_t ll128_threshold;
    uint64_t ll128_factor;
} net_range;
static const net_range net_ranges[2][3] = {
    {{STRATA_OP_REDUCE_SCATTER, 0, 655360, 16, 131072, 3211264, 64, 1},
     {STRATA_OP_ALL_GATHER, 0, 98304, 16, 98304, 5046272, 64, 1},
     {STRATA_OP_ALL_REDUCE, 0, 1048576, 0, 1048576, 9437184, 0, 3145728}},
    {{STRATA_OP_REDUCE_SCATTER, 0, 131071, 16, 131071, 4194304, 64, 1},
     {STRATA_OP_ALL_GATHER, 0, 7, 16, 7, 8388608, 64, 1},
     {STRATA_OP_ALL_REDUCE, 0, 131071, 0, 131071, 17660227, 0, 3145728}},
};

static uint32_t nodes_of(const strata_rccl_comm *c) { return c->nodes > 1 ? c->nodes : 1; }

static const tuning_model *model_of(const strata_rccl_comm *c)
{
    return c->model_6 ? &tuning_model_6 : &tuning_models[c->tuning5];
}

bool strata_rccl_model(const strata_rccl_comm *c, strata_op_kind kind, strata_nccl_algo a, strata_nccl_proto p,
                       double *lat_us, double *bw_gbs)
{
    uint32_t n = c->ranks, nodes = nodes_of(c);
    bool ar = kind == STRATA_OP_ALL_REDUCE, ring = a == STRATA_NCCL_RING;
    if ((kind != STRATA_OP_ALL_REDUCE && kind != STRATA_OP_ALL_GATHER && kind != STRATA_OP_REDUCE_SCATTER) || n < 2 ||
        p >= PROTOS || (a != STRATA_NCCL_RING && a != STRATA_NCCL_TREE) || (!ar && !ring) ||
        (c->algos && !(c->algos >> a & 1u)) || (c->protos && !(c->protos >> p & 1u)) ||
        (a == STRATA_NCCL_TREE && p == STRATA_NCCL_SIMPLE && nodes == 1) || (p == STRATA_NCCL_LL128 && !c->ll128))
        return false;
    double nsteps = ar ? 2.0 * (n - 1) : n - 1.0;
    const tuning_model *m = model_of(c);
    double bus = c->graph_channels * c->channel_gbs * m->bw_ratio[nodes > 2][ring][p];
    bus *= ring ? n / nsteps : .5;
    double lat = base_lat[p], intra = m->xgmi_lat[ring][p], inter = m->net_lat[ring][p];
    if (ring) {
        /* tuning.cc: the 2.18 form, 2 nNodes network steps for an all-reduce */
        double overhead = nodes > 1 ? (c->cpu == STRATA_NCCL_AMD ? 2.0 : 1.0) * (p == STRATA_NCCL_SIMPLE ? 3 : 1) : 0;
        double inter_steps = nodes == 1 ? 0 : ar ? 2.0 * nodes : nodes - 1.0;
        lat += (nsteps - inter_steps) * (intra > overhead ? intra : overhead) + inter_steps * inter;
    } else {
        lat += 2 * ((n / nodes - 1.0) * intra + strata_nccl_log2i(nodes) * inter);
    }
    *lat_us = lat;
    *bw_gbs = bus;
    return bus > 0;
}

static bool rccl_model(const void *comm, strata_op_kind kind, strata_nccl_algo a, strata_nccl_proto p, double *lat_us,
                       double *bw_gbs)
{
    return strata_rccl_model(comm, kind, a, p, lat_us, bw_gbs);
}

/* tuning_model_5's correction of the bandwidth by log2(bytes / 64): the
 * tree's always, the ring's across nodes. */
static void rccl_correct(const void *comm, strata_op_kind kind, strata_nccl_algo a, strata_nccl_proto p,
                         uint64_t bytes, double *lat_us, double *bw_gbs)
{
    (void)kind, (void)lat_us;
    int log_size = strata_nccl_log2i(bytes >> 6);
    log_size = log_size < 0 ? 0 : log_size > 26 ? 26 : log_size;
    const tuning_model *m = model_of(comm);
    if (a == STRATA_NCCL_TREE)
        *bw_gbs *= m->tree_correction[p][log_size];
    else if (nodes_of(comm) > 1)
        *bw_gbs *= m->ring_correction[p][log_size];
}

double strata_rccl_p2p_net_step_us(const strata_rccl_comm *c)
{
    return model_of(c)->net_lat[0][STRATA_NCCL_SIMPLE]; /* [0]: the tree's row */
}

static const strata_nccl_tuner rccl_tuner = {.model = rccl_model, .correct = rccl_correct};

/* mscclInternalSchedulerSelectAlgo (msccl_lifecycle.cc l. 328-341): the
 * first algorithm of the kind whose range holds the size and whose chunks
 * per loop divide the float count. */
static bool msccl_choose(const strata_rccl_comm *c, strata_op_kind kind, uint64_t bytes, strata_rccl_choice *out)
{
    if (!c->msccl || nodes_of(c) > 1 || c->ranks != 8 || c->algos || c->protos)
        return false;
    for (size_t i = 0; i < G_N_ELEMENTS(msccl_algos); i++)
        if (msccl_algos[i].kind == kind && bytes >= msccl_algos[i].lo && bytes <= msccl_algos[i].hi && (bytes / 4) % msccl_algos[i].chunks == 0 &&
            bytes % 4 == 0) {
            *out = (strata_rccl_choice){.msccl = true, .proto = msccl_algos[i].proto,
                                        .channels = msccl_algos[i].channels,
                                        .base_us = base_lat[msccl_algos[i].proto]};
            return true;
        }
    return false;
}

/* MSCCL++'s all-reduce (rccl_tuning.h): before MSCCL's scheduler
 * (msccl_lifecycle.cc l. 524-540), where comm->mscclpp, on one node of 8
 * ranks, its bytes above 0, a multiple of 32 and at most RCCL_MSCCLPP_
 * THRESHOLD (1 MiB, init.cc l. 105); allreduce7's blocks (28, 56 from 8192
 * floats: allreduce.hpp l. 402-407) a block group a peer: 4 or 8 a peer.
 * No NCCL_ALGO / NCCL_PROTO pin, as msccl_choose (a pin asks for RCCL's
 * own kernels). */
#define MSCCLPP_THRESHOLD (1u << 20)
static bool mscclpp_choose(const strata_rccl_comm *c, strata_op_kind kind, uint64_t bytes, strata_rccl_choice *out)
{
    if (!c->mscclpp || kind != STRATA_OP_ALL_REDUCE || nodes_of(c) > 1 || c->ranks != 8 || c->algos || c->protos ||
        bytes == 0 || bytes % 32 != 0 || bytes > MSCCLPP_THRESHOLD)
        return false;
    uint32_t blocks = bytes / 4 >= 8192 ? 56 : 28; /* elements of 4 bytes (rccl_tuning.h: an ESTIMATE for 2-byte) */
    *out = (strata_rccl_choice){.msccl = true, .mscclpp = true, .proto = STRATA_NCCL_LL,
                                .channels = blocks / (c->ranks - 1)};
    return true;
}

/* rcclUpdateCollectiveProtocol (RCCL 2.22+): across nodes, without
 * NCCL_PROTO, the protocol by size per rank (rcclGetSizePerRank: an
 * all-reduce's bytes, an all-gather's or reduce-scatter's bytes / ranks):
 * LL in (ll_min, ll_max], else Simple; where LL128 is enabled
 * (comm->topo->ll128Enabled, built with ENABLE_LL128) LL128 in (ll128_min,
 * ll128_max] over either, the all-reduce's ll128_max stretched with the
 * nodes (2.22: + (log2i(nodes) - 1) x factor; 2.26: x 3.8 above 2 nodes);
 * the model's algorithm kept, its estimate recomputed for the pair (-1 if
 * RCCL's model has none). Returns the protocol's thread threshold
 * (rcclUpdateThreadThreshold), 0 for none. */
static uint32_t net_protocol(const strata_rccl_comm *c, strata_op_kind kind, uint64_t bytes, strata_rccl_choice *out)
{
    if (!c->net_ranges || nodes_of(c) < 2 || c->protos)
        return 0;
    const net_range *r = net_ranges[c->model_6];
    for (size_t i = 0; i < G_N_ELEMENTS(net_ranges[0]); i++) {
        if (r[i].kind != kind)
            continue;
        uint64_t per_rank = kind == STRATA_OP_ALL_REDUCE ? bytes : bytes / c->ranks;
        uint64_t ll128_max = r[i].ll128_max;
        if (kind == STRATA_OP_ALL_REDUCE && c->ll128_x38)
            ll128_max = nodes_of(c) > 2 ? (uint64_t)(ll128_max * 3.8) : ll128_max;
        else if (kind == STRATA_OP_ALL_REDUCE)
            ll128_max += (uint64_t)(strata_nccl_log2i(nodes_of(c)) - 1) * r[i].ll128_factor;
        bool ll = per_rank <= r[i].ll_max && per_rank > r[i].ll_min;
        bool ll128 = c->ll128 && per_rank <= ll128_max && per_rank > r[i].ll128_min;
        out->proto = ll128 ? STRATA_NCCL_LL128 : ll ? STRATA_NCCL_LL : STRATA_NCCL_SIMPLE;
        out->time_us = strata_nccl_tuner_time_us(&rccl_tuner, c, kind, out->algo, out->proto, bytes);
        return ll128 ? r[i].ll128_threshold : ll ? r[i].ll_threshold : 0;
    }
    return 0;
}

bool strata_rccl_choose(const strata_rccl_comm *c, strata_op_kind kind, uint64_t bytes, strata_rccl_choice *out)
{
    if (mscclpp_choose(c, kind, bytes, out) || msccl_choose(c, kind, bytes, out))
        return true;
    if (kind == STRATA_OP_ALL_TO_ALL) /* grouped p2p: no tuning model (nccl_p2p.h) */
        return false;
    /* Tree, then Ring: topoGetAlgoInfo's order */
    double best = strata_nccl_argmin(&rccl_tuner, c, kind, bytes, STRATA_NCCL_RING + 1, &out->algo, &out->proto);
    if (best < 0)
        return false;
    out->time_us = best;
    uint32_t tuned_threshold = net_protocol(c, kind, bytes, out);
    out->msccl = out->mscclpp = false;
    out->base_us = base_lat[out->proto];
    out->net_step_us = nodes_of(c) > 1 ? model_of(c)->net_lat[out->algo == STRATA_NCCL_RING][out->proto] : 0;
    /* getChannnelThreadInfo: comm->nChannels (the graph's rings times
     * init.cc's nc: 2, or 4 on gfx950; at most 64 across nodes), lowered
     * while bytes < channels x threads x threshold */
    uint32_t nc = MIN((c->ring_copies ? c->ring_copies : 2u) * c->graph_channels, nodes_of(c) > 1 ? 64u : 128u);
    uint64_t threshold = tuned_threshold ? (uint64_t)tuned_threshold * c->ranks
                         : thread_threshold[out->proto] *
                               (out->algo == STRATA_NCCL_RING && out->proto == STRATA_NCCL_LL ? c->ranks : 1);
    while (bytes < (uint64_t)nc * RCCL_MAX_NTHREADS * threshold && nc >= 2)
        nc--;
    out->channels = nc;
    return true;
}

/*
 * test_nccl_tree_graph.c: NCCL's tree graph across nodes and the choice
 * between Ring and Tree it makes (sim/hw/nccl_tuning.h
 * strata_nccl_tree_graph), derived by hand from NVIDIA/nccl's sources:
 *   - src/graph/tuning.cc ncclTopoTuneModel (v2.25.1-1 l. 249-257, the
 *     same rule v2.19.3-1 to v2.30.7-1): "float bw = nNodes <= 2 ||
 *     collnet ? graphs[a]->bwIntra : graphs[a]->bwInter", busBw =
 *     nChannels x bw, Tree's "busBw*.92" capped by nChannels x
 *     perChMaxTreeBw (Ampere N2 23.6, N4 17.8; Hopper N2 41.4), LL128's
 *     x 120/128 capped by nChannels x perChMaxTreeLL128Bw (Ampere 20),
 *     Tree's algorithm bandwidth .5 of the bus's, the ring's nRanks /
 *     nsteps; from v2.26.2-1 "busBw *= .85" where the tree graph's pattern
 *     is NCCL_TOPO_PATTERN_TREE (one GPU a node);
 *   - src/init.cc (v2.25.1-1 l. 843-848): the tree graph is searched for
 *     exactly the ring graph's channels;
 *   - src/graph/search.cc ncclTopoCompute (v2.25.1-1 l. 1005-1135): pass 1
 *     finds bwIntra = bwInter, pass 2 raises bwIntra ("increase bwIntra
 *     for trees (2 nodes or collnet)") while it is under twice bwInter and
 *     the NVLink chain carries it; ncclTopoFollowPath charges bwIntra only
 *     from GPU to GPU.
 * The ring graph through the NICs is strata_nccl_net_graph's (tested in
 * test_nccl_net_channels.c). Latencies (v2.25 tables): Tree base {6.8,
 * 14.0, 8.4}, NVLink {0.6, 1.25, 4.0}, network {5.0, 8.5, 14}; Ring base
 * {6.6, 14.0, 8.4}, NVLink {0.6, 1.9, 3.4}, network {2.7, 4.0, 14.0};
 * Intel hosts: network overhead 1 us, 3 on Simple.
 *
 * The shape: two AWS p4d.24xlarge (8 A100 a node, NVLink 12 x 20 = 240
 * GB/s a GPU, 4 EFA NICs of 100 Gb/s = 12.5 GB/s, two GPUs a NIC).
 * Ring graph: 12 is the fastest inter-node speed a NIC carries (one
 * channel each): 4 x 12; 10, 9, 7 give less, 6 gives 8 x 6 (no better),
 * 5 / 12 < .49 ends it; no duplication (12 < 25). comm->nChannels 8.
 * Tree graph: 4 channels; pass 1 at 12 (12 x 4 <= 240 x 8/7; a NIC each;
 * 48 of NVLink): bwInter 12; pass 2: 15, 18, 20, 24 (each 4 x speed <= 240;
 * at 24 it is no longer under 2 x 12): bwIntra 24.
 * 2 nodes, all-reduce:
 *   Tree Simple  8.4 + 2 x (7 x 4.0 + 1 x 14) = 92.4 us;
 *                min(4 x 24 x .92 = 88.32, 4 x 23.6 = 94.4) x .5 = 44.16 GB/s
 *   Tree LL128   14.0 + 2 x (7 x 1.25 + 8.5) = 48.5 us;
 *                min(88.32 x 120/128 = 82.8, 4 x 20) x .5 = 40 GB/s
 *   Ring Simple  8.4 + 28 x max(3.4, 3) + 2 x 14 = 131.6 us (x 1.4, the
 *                ring's plateau, from 64 B a channel and rank);
 *                4 x 12 x 16/30 = 25.6 GB/s
 *   Ring LL128   14.0 + 28 x max(1.9, 1) + 2 x 4.0 = 75.2 us;
 *                min(48 x .92, 4 x 20) x 16/30 = 23.552 GB/s
 * 1 GiB (log2(2^30 / 64) = 24: no tree correction): Tree Simple 92.4 +
 * 2^30 / 44160 = 24407.2 us; Tree LL128 48.5 + 2^30 / 40000 = 26892.0;
 * Ring Simple 184.24 + 2^30 / 25600 = 42127.28: NCCL runs Tree/Simple, a
 * bus bandwidth of 44.16 x 30/16 = 82.8 GB/s in its estimate, above the
 * ring's 48 (the NICs' 4 x 12). Before the tree graph was modelled the
 * tree ran at the ring graph's 4 x 12 (22.08 GB/s) and Ring won.
 * 64 MiB (log 20: treeCorrectionFactor Simple .8, LL128 .9): Tree LL128
 * 48.5 + 2^26 / 36000 = 1912.64 us; Tree Simple 92.4 + 2^26 / 35328 =
 * 1991.99; Ring Simple 184.24 + 2^26 / 25600 = 2805.68; Ring LL128 75.2 +
 * 2^26 / 23552 = 2924.6: Tree/LL128.
 * 4 nodes (32 ranks): the tree's bw is bwInter: min(4 x 12 x .92, 4 x
 * 17.8) x .5 = 22.08 GB/s, lat 8.4 + 2 x (7 x 4 + 2 x 14) = 120.4 us;
 * Ring Simple 8.4 + 56 x 3.4 + 6 x 14 = 282.8 us (x 1.4), 48 x 32/62 GB/s:
 * at 1 GiB Ring 395.92 + 2^30 x 62 / 1536000 = 43737.0 us against Tree
 * 120.4 + 2^30 / 22080 = 48749.9: Ring.
 */
#include <check.h>
#include "hw/nccl_tuning.h"
#include "testutil.h"

/* two (or `nodes`) p4d.24xlarge, NCCL 2.25, Intel hosts */
static strata_nccl_comm p4d(uint32_t nodes)
{
    strata_nccl_comm c = {.arch = STRATA_NCCL_AMPERE, .ranks = 8 * nodes, .graph_channels = 12,
                          .channel_gbs = 20.0, .nodes = nodes, .nics = 4, .nic_gbs = 12.5, .nic_gpus = 8,
                          .version = strata_nccl_version_find("2.25")};
    ck_assert_ptr_nonnull(c.version);
    return c;
}

static void expect_graph(const strata_nccl_comm *c, uint32_t channels, double inter, double intra)
{
    uint32_t ch;
    double bw_inter, bw_intra;
    strata_nccl_tree_graph(c, &ch, &bw_inter, &bw_intra);
    ck_assert_uint_eq(ch, channels);
    ck_assert_double_eq_tol(bw_inter, inter, 1e-12);
    ck_assert_double_eq_tol(bw_intra, intra, 1e-12);
}

static void expect_model(const strata_nccl_comm *c, strata_nccl_algo a, strata_nccl_proto p, double lat, double bw)
{
    double l, b;
    ck_assert(strata_nccl_model(c, STRATA_OP_ALL_REDUCE, a, p, &l, &b));
    ck_assert_double_eq_tol(l, lat, 1e-9);
    ck_assert_double_eq_tol(b, bw, 1e-9);
}

START_TEST(two_p4d_run_the_tree_above_the_rings_nic_bound)
{
    strata_nccl_comm c = p4d(2);
    expect_graph(&c, 4, 12.0, 24.0);
    expect_model(&c, STRATA_NCCL_TREE, STRATA_NCCL_SIMPLE, 92.4, 44.16);
    expect_model(&c, STRATA_NCCL_TREE, STRATA_NCCL_LL128, 48.5, 40.0);
    expect_model(&c, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, 131.6, 25.6);
    expect_model(&c, STRATA_NCCL_RING, STRATA_NCCL_LL128, 75.2, 23.552);
    strata_nccl_choice ch;
    ck_assert(strata_nccl_choose(&c, STRATA_OP_ALL_REDUCE, 1ull << 30, &ch));
    ck_assert(ch.algo == STRATA_NCCL_TREE && ch.proto == STRATA_NCCL_SIMPLE);
    ck_assert_double_eq_tol(ch.time_us, 92.4 + (double)(1ull << 30) / 44160, 1e-6);
    ck_assert_double_eq_tol(
        strata_nccl_time_us(&c, STRATA_OP_ALL_REDUCE, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, 1ull << 30), 42127.28,
        1e-6);
    ck_assert(strata_nccl_choose(&c, STRATA_OP_ALL_REDUCE, 64ull << 20, &ch));
    ck_assert(ch.algo == STRATA_NCCL_TREE && ch.proto == STRATA_NCCL_LL128);
    ck_assert_double_eq_tol(ch.time_us, 48.5 + (double)(64ull << 20) / 36000, 1e-6);
    /* NCCL_ALGO=Ring keeps the ring */
    c.algos = 1u << STRATA_NCCL_RING;
    ck_assert(strata_nccl_choose(&c, STRATA_OP_ALL_REDUCE, 1ull << 30, &ch) && ch.algo == STRATA_NCCL_RING);
}
END_TEST

START_TEST(four_p4d_keep_the_ring_at_a_gib)
{
    strata_nccl_comm c = p4d(4);
    expect_graph(&c, 4, 12.0, 24.0);
    expect_model(&c, STRATA_NCCL_TREE, STRATA_NCCL_SIMPLE, 120.4, 22.08);
    expect_model(&c, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, 282.8, 48.0 * 32 / 62);
    strata_nccl_choice ch;
    ck_assert(strata_nccl_choose(&c, STRATA_OP_ALL_REDUCE, 1ull << 30, &ch));
    ck_assert(ch.algo == STRATA_NCCL_RING && ch.proto == STRATA_NCCL_SIMPLE);
    ck_assert_double_eq_tol(ch.time_us, 282.8 * 1.4 + (double)(1ull << 30) * 62 / 1536000, 1e-6);
}
END_TEST

/* Other shapes' tree graphs:
 * - 8 A100 and 8 HDR NICs (25 GB/s) a node: the ring graph is 8 x 24
 *   (a NIC each; 192 of 240; no duplication below 25); the tree's pass 1
 *   at 24, pass 2 to 28 (224) and 30 (240 = the NVLink), not 48 (384):
 *   bwIntra 30. Tree Simple on 2 nodes min(8 x 30 x .92 = 220.8, 8 x
 *   23.6 = 188.8) x .5 = 94.4 GB/s against the ring's 192 x 16/30 = 102.4.
 * - 8 H100 and 8 400 Gb/s NICs (NVLink 12 x 30 = 360): ring 8 x 45
 *   (test_nccl_net_channels.c); the tree at 48 needs 384 of NVLink, so
 *   45, and pass 2 cannot reach 48: bwIntra = bwInter = 45.
 * - one H100 and one 400 Gb/s NIC a node: ring 1 x 48 duplicated to 2 x
 *   24; the tree needs 2 channels: 48 to 30 carry one, 24 two: bwInter
 *   24; no GPU-to-GPU step, so pass 2 climbs to 48 (45 < 48): bwIntra 48.
 *   Tree Simple min(2 x 48 x .92 = 88.32, 2 x 41.4 = 82.8) x .5 = 41.4
 *   GB/s, x .85 for the pattern TREE: 35.19 in v2.25 (tuning.cc l. 260,
 *   the graph's own pattern) and v2.26 (l. 261, comm->maxTreePattern). */
START_TEST(tree_graphs_of_other_shapes)
{
    strata_nccl_comm hdr = p4d(2);
    hdr.nics = 8;
    hdr.nic_gbs = 25.0;
    expect_graph(&hdr, 8, 24.0, 30.0);
    double lat, bw;
    ck_assert(strata_nccl_model(&hdr, STRATA_OP_ALL_REDUCE, STRATA_NCCL_TREE, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert_double_eq_tol(bw, 94.4, 1e-9);
    strata_nccl_comm h100 = {.arch = STRATA_NCCL_HOPPER, .ranks = 16, .graph_channels = 12, .channel_gbs = 30.0,
                             .nodes = 2, .nics = 8, .nic_gbs = 50.0, .nic_gpus = 8};
    expect_graph(&h100, 8, 45.0, 45.0);
    strata_nccl_comm one = {.arch = STRATA_NCCL_HOPPER, .ranks = 2, .graph_channels = 12, .channel_gbs = 30.0,
                            .nodes = 2, .nics = 1, .nic_gbs = 50.0, .nic_gpus = 1,
                            .version = strata_nccl_version_find("2.25")};
    expect_graph(&one, 2, 24.0, 48.0);
    expect_model(&one, STRATA_NCCL_TREE, STRATA_NCCL_SIMPLE, 8.4 + 2 * 14.0, 82.8 * .85 * .5);
    one.version = strata_nccl_version_find("2.26");
    expect_model(&one, STRATA_NCCL_TREE, STRATA_NCCL_SIMPLE, 8.4 + 2 * 14.0, 82.8 * .85 * .5);
}
END_TEST

static Suite *nccl_tree_graph_suite(void)
{
    Suite *s = suite_create("nccl_tree_graph");
    TCase *tc = tcase_create("shapes");
    tcase_add_test(tc, two_p4d_run_the_tree_above_the_rings_nic_bound);
    tcase_add_test(tc, four_p4d_keep_the_ring_at_a_gib);
    tcase_add_test(tc, tree_graphs_of_other_shapes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(nccl_tree_graph_suite()); }

/*
 * test_nccl_versions.c: NCCL's tuning tables per release (sim/hw/
 * nccl_versions.h) and the hardware key that names one (nccl_version):
 * the choice and estimate of one all-reduce under v2.27 and v2.30, derived
 * by hand from the two releases' src/graph/tuning.cc; the NVLS rule on one
 * node; NVLS's channels and chunks by release, nodes and NCCL_MIN_CTAS;
 * names accepted and refused.
 *
 * Two DGX H100 nodes, 16 ranks (hopper; ring graph in a node 12 x 30 GB/s
 * = 360; 8 NICs of 50 GB/s, one per GPU; Intel hosts). NCCL's graphs:
 *   ring through the NICs: sm90 inter speeds {48, 45, ...}: 48 gives
 *     min(8 NICs x 1, 360 / 48 = 7) = 7 channels (336), 45 gives 8 (360,
 *     the NVLink's whole): 8 x 45, not duplicated (Hopper, < 50, > 4)
 *   NVLS: (8 + 1) x speed <= 360 at 40 GB/s; 8 heads (the NIC GPUs)
 * Latencies (us), N2, log2i(2) = 1, 16 / 2 - 1 = 7 NVLink steps:
 *   Tree LL128   14 + 2 (7 x 1.25 + 8.5) = 48.5 (both releases)
 *   NVLS_TREE    0 + 25 + 2 x NET: v2.30 2 x 20.9 -> 66.8; v2.27 2 x 14 -> 53.0
 * Algorithm bandwidths (GB/s):
 *   Tree LL128   min(360 x .92, 8 x 41.4) = 331.2, then
 *                min(331.2 x 120/128, 8 x 36.7) = 293.6, x .5 = 146.8
 *   NVLS_TREE    v2.30: min(40 x .85 x 7/8 x 2 = 59.5, 45 x 2, 57.7) = 57.7
 *                per channel, x 8 = 461.6 bus, x 16/30 = 246.1867
 *                v2.27: min(bwIntra 40, bwInter 45) = 40, x 8 = 320 bus,
 *                x 5/6 = 266.6667
 * At 2 MiB (treeCorrectionFactor index log2i(2 MiB / 64) = 15, LL128 .6):
 *   Tree LL128   48.5 + 2097152 / (146.8 x .6 x 1000) = 72.3096 us
 *   NVLS_TREE    v2.30: 66.8 + 2097152 / 246186.7 = 75.3184 us
 *                v2.27: 53.0 + 2097152 / 266666.7 = 60.8643 us
 * The other pairs are slower at 2 MiB in both (Ring LL128 75.2 + 13.4,
 * Tree LL 25.2 + 179.3, Tree Simple 92.4 + 21.1): v2.30 runs Tree/LL128,
 * v2.27 NVLS_TREE/Simple.
 */
#include "testutil.h"
#include "hw/coll_impl.h"
#include "hw/hw.h"
#include "hw/nccl_tuning.h"
#include "collective/coll_algo.h"
#include "collective/coll_sched.h"

static strata_nccl_comm two_nodes(const char *version)
{
    strata_nccl_comm c = {.arch = STRATA_NCCL_HOPPER, .ranks = 16, .graph_channels = 12, .channel_gbs = 30.0,
                          .nvls = true, .nodes = 2, .nics = 8, .nic_gbs = 50.0, .nic_gpus = 8,
                          .cpu = STRATA_NCCL_INTEL};
    c.version = version ? strata_nccl_version_find(version) : NULL;
    ck_assert(!version || c.version);
    return c;
}

START_TEST(a_2_mib_all_reduce_under_two_releases)
{
    const uint64_t bytes = 2u << 20;
    strata_nccl_comm v230 = two_nodes("2.30"), v227 = two_nodes("2.27");
    double lat, bw;
    ck_assert(strata_nccl_model(&v227, STRATA_OP_ALL_REDUCE, STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert_double_eq_tol(lat, 53.0, 1e-9);
    ck_assert_double_eq_tol(bw, 320.0 * 5 / 6, 1e-9);
    ck_assert(strata_nccl_model(&v230, STRATA_OP_ALL_REDUCE, STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert_double_eq_tol(lat, 66.8, 1e-9);
    ck_assert_double_eq_tol(bw, 461.6 * 16 / 30, 1e-9);
    ck_assert(strata_nccl_model(&v227, STRATA_OP_ALL_REDUCE, STRATA_NCCL_TREE, STRATA_NCCL_LL128, &lat, &bw));
    ck_assert_double_eq_tol(lat, 48.5, 1e-9);
    ck_assert_double_eq_tol(bw, 146.8, 1e-9);

    strata_nccl_choice ch;
    ck_assert(strata_nccl_choose(&v230, STRATA_OP_ALL_REDUCE, bytes, &ch));
    ck_assert(ch.algo == STRATA_NCCL_TREE && ch.proto == STRATA_NCCL_LL128);
    ck_assert_double_eq_tol(ch.time_us, 48.5 + 2097152 / (146.8 * .6 * 1000), 1e-6);
    ck_assert_double_eq_tol(ch.net_step_us, 8.5, 1e-12);
    ck_assert(strata_nccl_choose(&v227, STRATA_OP_ALL_REDUCE, bytes, &ch));
    ck_assert(ch.algo == STRATA_NCCL_NVLS_TREE && ch.proto == STRATA_NCCL_SIMPLE);
    ck_assert_double_eq_tol(ch.time_us, 53.0 + 2097152 / (320.0 * 5 / 6 * 1000), 1e-6);
    ck_assert_double_eq_tol(ch.time_us, 60.86432, 1e-5);
    /* the step over the network the schedule charges is the release's */
    ck_assert_double_eq_tol(ch.net_step_us, 14.0, 1e-12);
    /* v2.30's NVLS_TREE estimate at 2 MiB, slower than its Tree/LL128 */
    ck_assert_double_eq_tol(strata_nccl_time_us(&v230, STRATA_OP_ALL_REDUCE, STRATA_NCCL_NVLS_TREE,
                                                STRATA_NCCL_SIMPLE, bytes),
                            66.8 + 2097152 / (461.6 * 16 / 30 * 1000), 1e-6);
    /* the kernels' figures (NVLS's efficiency, NVLS_TREE's pace: 57.7 x 8
     * heads x 16/30) are v2.28's for a release without them */
    ck_assert_double_eq_tol(ch.nvls_efficiency, 0.85, 1e-12);
    ck_assert_double_eq_tol(ch.stage_gbs, 57.7 * 8 * 16 / 30, 1e-9);
    /* no version is the newest */
    strata_nccl_comm dflt = two_nodes(NULL);
    strata_nccl_choice d;
    ck_assert(strata_nccl_choose(&dflt, STRATA_OP_ALL_REDUCE, bytes, &d));
    ck_assert(strata_nccl_choose(&v230, STRATA_OP_ALL_REDUCE, bytes, &ch));
    ck_assert(d.algo == ch.algo && d.proto == ch.proto);
    ck_assert_double_eq(d.time_us, ch.time_us);
}
END_TEST

/* One H100 node, 8 ranks, NVLS on 8 channels at 40 GB/s: v2.27 prices NVLS
 * at min(bwIntra, bwInter) = 40 per channel, 320 bus, x 5/6 = 266.667 GB/s;
 * v2.28 at 40 x .85 x 7/8 x 2 = 59.5, 476 bus, x 8/14 = 272 GB/s; its
 * all-gather (bus, not converted) v2.27: min(40 x 7/8, 40 x .9) x 8 = 280,
 * v2.26 min(40, 40) x 8 = 320. */
START_TEST(nvls_on_one_node_by_release)
{
    strata_nccl_comm c = {.arch = STRATA_NCCL_HOPPER, .ranks = 8, .graph_channels = 12, .channel_gbs = 30.0,
                          .nvls = true};
    double lat, bw;
    c.version = strata_nccl_version_find("2.27.7");
    ck_assert(strata_nccl_model(&c, STRATA_OP_ALL_REDUCE, STRATA_NCCL_NVLS, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert_double_eq_tol(lat, 25.0, 1e-12);
    ck_assert_double_eq_tol(bw, 320.0 * 5 / 6, 1e-9);
    ck_assert(strata_nccl_model(&c, STRATA_OP_ALL_GATHER, STRATA_NCCL_NVLS, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert_double_eq_tol(bw, 280.0, 1e-9);
    c.version = strata_nccl_version_find("2.26");
    ck_assert(strata_nccl_model(&c, STRATA_OP_ALL_GATHER, STRATA_NCCL_NVLS, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert_double_eq_tol(bw, 320.0, 1e-9);
    c.version = strata_nccl_version_find("2.28");
    ck_assert(strata_nccl_model(&c, STRATA_OP_ALL_REDUCE, STRATA_NCCL_NVLS, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert_double_eq_tol(bw, 272.0, 1e-9);
    /* v2.19.3-1 (tuning.cc l. 196-201) and v2.22.3-1 (l. 210-217) convert NVLS's all-gather and reduce-scatter
     * too: 320 x 5/6 = 266.667 GB/s, where v2.25 on leave the bus figure (320 above) */
    static const char *const old_ratio[] = {"2.19", "2.22"};
    static const strata_op_kind gathers[] = {STRATA_OP_ALL_GATHER, STRATA_OP_REDUCE_SCATTER};
    for (size_t i = 0; i < G_N_ELEMENTS(old_ratio); i++)
        for (size_t k = 0; k < G_N_ELEMENTS(gathers); k++) {
            c.version = strata_nccl_version_find(old_ratio[i]);
            ck_assert(strata_nccl_model(&c, gathers[k], STRATA_NCCL_NVLS, STRATA_NCCL_SIMPLE, &lat, &bw));
            ck_assert_double_eq_tol(bw, 320.0 * 5 / 6, 1e-9);
        }
}
END_TEST

/* One HGX B200 node at issue 39's mid sizes under 2.27 (NVIDIA/nccl
 * v2.27.7-1), what NCCL picks and predicts; hgx-b200.ini's figures:
 *   ring graph: search.cc l. 962 sm100SpeedArrayIntra {90, 80, ...}, the
 *     GPU's 18 x SM100_NVLINK_BW 40.1 (topo.h l. 21) = 721.8 GB/s: 8 x 90
 *     = 720 fits, ncclTopoDupChannels (90 >= 50) -> 16 x 45
 *   NVLS graph: ncclTopoSearchTryNvls charges the head 2 x speed and the
 *     other 7 ranks 1 x on each GPU's NVLink, 9 x speed for 8 heads:
 *     9 x 90 = 810 > 721.8, 9 x 80 = 720 fits -> 8 heads x 80
 * tuning.cc l. 134-189, 211-362, N1, nsteps 2 x 7 = 14 (us, GB/s):
 *   NVLS         lat hwLat[NVLINK][NVLS] 25 (base 0); bw 8 x min(80, 80)
 *                = 640 bus, x 5/6 = 533.333
 *   Ring LL128   14 + 14 x 1.9 = 40.6; min(720 x .92, 16 x 2 x 36.7) =
 *                662.4, x 8/14 = 378.514
 *   Ring Simple  8.4 + 14 x 3.4 = 56; 720 x 8/14 = 411.429
 *   Ring LL      6.6 + 14 x .6 = 15; min(llMaxBws 2 x 141, 720 x .5) =
 *                282, x 8/14 = 161.143
 *   Tree Simple  8.4 + 2 x 7 x 4 = 64.4; NCCL's tree graph (init.cc l.
 *                857-859: the ring's 16 channels exactly; search.cc from
 *                the first speed with 16 x speed <= 721.8 x 8/7, 50, which
 *                overfills the NVLink, to 40) is 16 x 40: min(640 x .92,
 *                16 x 2 x 38.7) x .5 = 294.4, x treeCorrectionFactor .7
 *                at 32 MiB (331.2 before wave 33, on the ring's 16 x 45)
 * At 32 MiB (33554432 B): NVLS 25 + 62.9146 = 87.9146 us; Ring LL128
 * 40.6 + 88.6475 = 129.2475; Ring Simple 56 + 81.5561 = 137.5561; Ring LL
 * 15 + 208.23; Tree Simple 64.4 + 162.8: NVLS/Simple wins, and at 8 and
 * 64 MiB too (8 MiB: NVLS 40.73, Ring LL128 62.76, Ring LL 67.06). It runs
 * on nvlsChannels 24 (nvls.cc l. 180-193, NVLS_NCHANNELS_SM100_NVL). The
 * chunk (enqueue.cc calcCollChunking l. 2003-2017) with the p6's and A4's
 * NCCL_NVLS_CHUNKSIZE of 512 KiB: min(4 MiB / 8, 512 KiB) = 512 KiB, then
 * 64 KiB below 64 x 24 x 8 x 512 KiB = 6 GiB, 32 KiB below 8 x 192 x 64
 * KiB = 96 MiB, 16 KiB below 2 x 192 x 32 KiB = 12 MiB: 16 KiB at 8 MiB,
 * 32 KiB at 32 and 64 MiB, 64 KiB at 128 MiB, 512 KiB at 8 GiB. */
START_TEST(a_b200_node_at_mid_sizes)
{
    strata_nccl_comm c = {.arch = STRATA_NCCL_BLACKWELL, .ranks = 8, .graph_channels = 16, .channel_gbs = 45.0,
                          .nvls = true, .nvls_chunk_bytes = 512u << 10};
    c.version = strata_nccl_version_find("2.27");
    const uint64_t mib32 = 32u << 20;
    ck_assert_double_eq_tol(strata_nccl_time_us(&c, STRATA_OP_ALL_REDUCE, STRATA_NCCL_NVLS, STRATA_NCCL_SIMPLE, mib32),
                            25.0 + mib32 / (640.0 * 5 / 6 * 1000), 1e-6);
    ck_assert_double_eq_tol(strata_nccl_time_us(&c, STRATA_OP_ALL_REDUCE, STRATA_NCCL_RING, STRATA_NCCL_LL128, mib32),
                            40.6 + mib32 / (662.4 * 8 / 14 * 1000), 1e-6);
    ck_assert_double_eq_tol(strata_nccl_time_us(&c, STRATA_OP_ALL_REDUCE, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, mib32),
                            56.0 + mib32 / (720.0 * 8 / 14 * 1000), 1e-6);
    ck_assert_double_eq_tol(strata_nccl_time_us(&c, STRATA_OP_ALL_REDUCE, STRATA_NCCL_TREE, STRATA_NCCL_SIMPLE, mib32),
                            64.4 + mib32 / (294.4 * .7 * 1000), 1e-6);
    static const uint64_t sizes[] = {8u << 20, 32u << 20, 64u << 20, 128u << 20, 8ull << 30};
    static const uint64_t chunks[] = {16384, 32768, 32768, 65536, 524288};
    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
        strata_nccl_choice ch;
        ck_assert(strata_nccl_choose(&c, STRATA_OP_ALL_REDUCE, sizes[i], &ch));
        ck_assert_int_eq(ch.algo, STRATA_NCCL_NVLS);
        ck_assert_int_eq(ch.proto, STRATA_NCCL_SIMPLE);
        ck_assert_uint_eq(ch.channels, 24);
        ck_assert_uint_eq(ch.heads, 8);
        ck_assert_uint_eq(ch.chunk_bytes, chunks[i]);
    }
}
END_TEST

/* NVLS's copy warps on one B200 node at 64 MiB (p6-b200.ini as
 * clusters.ini's b200-1node runs it: 8 ranks, NCCL 2.27, aws-ofi-nccl's
 * NCCL_NVLS_CHUNKSIZE of 512 KiB): NVLS/Simple on 24 channels, 32 KiB
 * chunks (a_b200_node_at_mid_sizes), pieces of 24 x 8 x 32 KiB = 6 MiB:
 * 11 (the last 4 MiB: 4 MiB / 192 = 21,846 bytes a head, rounded up to
 * 16 KiB, 32 KiB again), 14 rounds. The loads the file gives the warps
 * (coll_impl_nccl.c nvls_load_latencies): the gather's from the L2, 150
 * ns (295 cycles on a B200 by pointer chase, markdewing/AI_kernels, at
 * 1.98 GHz), the scatter's from HBM, 500 ns (the H100 base's ESTIMATE).
 * A step takes heads x ceil(hunks / warps) loads (algo_nccl.c nvls_pace:
 * 4 KiB hunks, 8 scatter warps, 7 gather): the scatter 8 x ceil(8 / 8)
 * x 500 ns = 4 us in rounds 0-10 (lane 3 x 7 + 2 = 23), the gather 8 x
 * ceil(8 / 7) x 150 ns = 2.4 us in rounds 3-13 (lane 24), a step per
 * rank. Both below the round at NVLink's rate (13.0 us, docs/clusters.md
 * wave 34): at the sources' idle latencies neither paces the round. */
START_TEST(b200_copy_warps_pace_at_32k)
{
    static const char *const set[] = {"hardware.devices=8", "interconnect.nvlink.nccl_version=2.27", NULL};
    strata_hw *hw = strata_test_load_hw_file("validation/hw/p6-b200.ini", set);
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 8, 64u << 20, 0, &t, NULL));
    ck_assert_int_eq(t.algo, STRATA_NCCL_NVLS);
    ck_assert_uint_eq(t.channels, 24);
    ck_assert_uint_eq(t.chunk_bytes, 32768);
    ck_assert_double_eq_tol(t.nvls_gather_lat_s, 150e-9, 1e-18);
    ck_assert_double_eq_tol(t.nvls_scatter_lat_s, 500e-9, 1e-18);
    strata_coll_shape sh = {.kind = STRATA_OP_ALL_REDUCE, .algo = strata_coll_algo_find("nccl"), .n_dims = 1,
                            .dims = {8}, .in_bytes = 64u << 20, .channels = t.channels,
                            .chunk_bytes = t.chunk_bytes, .tuned = true, .tune = t};
    GArray *steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
    ck_assert_uint_eq(strata_coll_schedule(&sh, steps), 14);
    uint32_t count[14][2] = {{0}};
    for (guint i = 0; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        if (st->delay_s == 0)
            continue;
        bool gather = st->lane == 24;
        ck_assert(gather || st->lane == 23);
        ck_assert_uint_eq(st->src, st->dst);
        ck_assert_double_eq_tol(st->delay_s, gather ? 2.4e-6 : 4e-6, 1e-15);
        count[st->round][gather]++;
    }
    for (uint32_t r = 0; r < 14; r++) {
        ck_assert_uint_eq(count[r][0], r <= 10 ? 8 : 0);
        ck_assert_uint_eq(count[r][1], r >= 3 ? 8 : 0);
    }
    g_array_free(steps, TRUE);
    strata_hw_free(hw);
}
END_TEST

/* NVLS's channels and chunks (nvls.cc, enqueue.cc calcCollChunking) on
 * B200 nodes (blackwell; ring graph 16 x 45 GB/s: the NVLS graph's 8 heads
 * at 80 GB/s, 9 x 80 <= 720), NCCL's NVLS or NVLS_TREE forced, 2 GiB
 * (no halving: 2 GiB >= 32 x concurrentOps x chunk at every row below):
 *   one node: 32 channels under 2.26 (NVLS_NCHANNELS_SM100 for all), 24
 *     from 2.27 (NVLS_NCHANNELS_SM100_NVL), 24 under 2.30
 *   4 nodes, 8 NICs of 50 GB/s: 2.27 32 channels (multiNode), tree chunk
 *     min(128 KiB, 64 KiB from 4 nodes) = 64 KiB; 2.30's
 *     ncclNvlsTreeSm100Tuning (nicBw 50 >= 48, not 2 nodes): 24, 64 KiB
 *     (PXB); NICs of 100 GB/s (>= 96, ppn 8): 24 channels, 256 KiB
 *   2 nodes, 50 GB/s: 2.27 32 and 128 KiB; 2.30 32 and 64 KiB (ppn 8, PXB,
 *     nicBw < 96)
 * NCCL_MIN_CTAS = 24 on the two H100 nodes above (connect.cc copyChannels
 * to minCTAs; nvls.cc max(minCTAs, ..)): Ring 16 -> 24 channels at 1 GiB
 * (1 GiB >= 24 x 512 x 64: no lowering), NVLS_TREE 16 -> 24. */
static strata_nccl_choice forced(strata_nccl_comm c, const char *version, strata_nccl_algo a, uint64_t bytes)
{
    c.version = strata_nccl_version_find(version);
    c.algos = 1u << a;
    strata_nccl_choice ch;
    ck_assert(c.version && strata_nccl_choose(&c, STRATA_OP_ALL_REDUCE, bytes, &ch));
    ck_assert_int_eq(ch.algo, a);
    return ch;
}

START_TEST(nvls_channels_by_release_and_nodes)
{
    const uint64_t gib2 = 2ull << 30;
    strata_nccl_comm one = {.arch = STRATA_NCCL_BLACKWELL, .ranks = 8, .graph_channels = 16, .channel_gbs = 45.0,
                            .nvls = true};
    ck_assert_uint_eq(forced(one, "2.26", STRATA_NCCL_NVLS, gib2).channels, 32);
    ck_assert_uint_eq(forced(one, "2.27", STRATA_NCCL_NVLS, gib2).channels, 24);
    ck_assert_uint_eq(forced(one, "2.30", STRATA_NCCL_NVLS, gib2).channels, 24);
    strata_nccl_comm four = one;
    four.ranks = 32, four.nodes = 4, four.nics = 8, four.nic_gbs = 50.0, four.nic_gpus = 8;
    strata_nccl_choice ch = forced(four, "2.27", STRATA_NCCL_NVLS_TREE, gib2);
    ck_assert_uint_eq(ch.channels, 32);
    ck_assert_uint_eq(ch.chunk_bytes, 65536);
    ch = forced(four, "2.30", STRATA_NCCL_NVLS_TREE, gib2);
    ck_assert_uint_eq(ch.channels, 24);
    ck_assert_uint_eq(ch.chunk_bytes, 65536);
    four.nic_gbs = 100.0;
    ch = forced(four, "2.30", STRATA_NCCL_NVLS_TREE, gib2);
    ck_assert_uint_eq(ch.channels, 24);
    ck_assert_uint_eq(ch.chunk_bytes, 256u << 10);
    strata_nccl_comm two = four;
    two.ranks = 16, two.nodes = 2, two.nic_gbs = 50.0;
    ch = forced(two, "2.27", STRATA_NCCL_NVLS_TREE, gib2);
    ck_assert_uint_eq(ch.channels, 32);
    ck_assert_uint_eq(ch.chunk_bytes, 128u << 10);
    ch = forced(two, "2.30", STRATA_NCCL_NVLS_TREE, gib2);
    ck_assert_uint_eq(ch.channels, 32);
    ck_assert_uint_eq(ch.chunk_bytes, 65536);
    strata_nccl_comm h100 = two_nodes(NULL);
    ck_assert_uint_eq(forced(h100, "2.27", STRATA_NCCL_RING, 1ull << 30).channels, 16);
    ck_assert_uint_eq(forced(h100, "2.27", STRATA_NCCL_NVLS_TREE, 1ull << 30).channels, 16);
    h100.min_ctas = 24;
    ck_assert_uint_eq(forced(h100, "2.27", STRATA_NCCL_RING, 1ull << 30).channels, 24);
    ck_assert_uint_eq(forced(h100, "2.27", STRATA_NCCL_NVLS_TREE, 1ull << 30).channels, 24);
}
END_TEST

/* NCCL_MAX_NCHANNELS and NCCL_MAX_CTAS on the two H100 nodes above
 * (connect.cc ncclTopoPostset v2.25.1-1 l. 477-495; nvls.cc ncclNvlsInit
 * l. 178), 1 GiB (>= 16 x 512 x 64: no lowering):
 *   NCCL_MAX_NCHANNELS=8: the rings cut to 8, then raised back to
 *     nvlsChannels 16 (l. 493-495, after the maximum): Ring 16, NVLS_TREE
 *     16 (ncclNvlsInit reads config.maxCTAs only);
 *   NCCL_MAX_CTAS=8: nvlsChannels max(minCTAs, min(8, 16)) = 8, the rings
 *     8: Ring 8, NVLS_TREE 8;
 *   without NVLS (nvls = false): the rings' 16 cut to 8 by
 *     NCCL_MAX_NCHANNELS=8; with NCCL_MIN_CTAS=12 too, "max, then min":
 *     copyChannels back up to 12. */
START_TEST(max_channels_by_variable)
{
    strata_nccl_comm h100 = two_nodes(NULL);
    h100.max_nchannels = 8;
    ck_assert_uint_eq(forced(h100, "2.25", STRATA_NCCL_RING, 1ull << 30).channels, 16);
    ck_assert_uint_eq(forced(h100, "2.25", STRATA_NCCL_NVLS_TREE, 1ull << 30).channels, 16);
    h100.max_nchannels = 0;
    h100.max_ctas = 8;
    ck_assert_uint_eq(forced(h100, "2.25", STRATA_NCCL_RING, 1ull << 30).channels, 8);
    ck_assert_uint_eq(forced(h100, "2.25", STRATA_NCCL_NVLS_TREE, 1ull << 30).channels, 8);
    strata_nccl_comm flat = two_nodes(NULL);
    flat.nvls = false;
    ck_assert_uint_eq(forced(flat, "2.25", STRATA_NCCL_RING, 1ull << 30).channels, 16);
    flat.max_nchannels = 8;
    ck_assert_uint_eq(forced(flat, "2.25", STRATA_NCCL_RING, 1ull << 30).channels, 8);
    ck_assert_uint_eq(forced(flat, "2.25", STRATA_NCCL_TREE, 1ull << 30).channels, 8);
    flat.min_ctas = 12;
    ck_assert_uint_eq(forced(flat, "2.25", STRATA_NCCL_RING, 1ull << 30).channels, 12);
}
END_TEST

START_TEST(release_names)
{
    ck_assert_str_eq(strata_nccl_version_default()->name, "2.30");
    ck_assert_ptr_eq(strata_nccl_version_find("2.27"), strata_nccl_version_find("2.27.7"));
    /* v2.25 has v2.26's tuning tables, its own table for enqueue.cc's
     * cells (no x 4 on LL: nccl_channels.h) */
    ck_assert_str_eq(strata_nccl_version_find("2.25.1")->name, "2.25");
    ck_assert_mem_eq(strata_nccl_version_find("2.25")->base_lat, strata_nccl_version_find("2.26")->base_lat,
                     sizeof strata_nccl_version_find("2.26")->base_lat);
    ck_assert(!strata_nccl_version_find("2.25")->cell_ll_quad && strata_nccl_version_find("2.26")->cell_ll_quad);
    ck_assert_str_eq(strata_nccl_version_find("2.29.2")->name, "2.29");
    /* NVLSTree's network step: 14 us to v2.28, 20.9 from v2.29 */
    ck_assert_double_eq(strata_nccl_version_find("2.28")->net_lat[STRATA_NCCL_NVLS_TREE][STRATA_NCCL_SIMPLE], 14);
    ck_assert_double_eq(strata_nccl_version_find("2.29")->net_lat[STRATA_NCCL_NVLS_TREE][STRATA_NCCL_SIMPLE], 20.9);
    static const char *const bad[] = {"2.24", "2.31", "2.10", "2.7", "3.0", "2", "2.", "2.27.", "2.27.x", "v2.27", "2.27-1", ""};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
        ck_assert_msg(!strata_nccl_version_find(bad[i]), "'%s' accepted", bad[i]);
    /* every release the message lists is found */
    char *list = strata_nccl_version_list(); /* the table's rows, in order */
    ck_assert_str_eq(list, "2.8, 2.9, 2.19, 2.22, 2.25, 2.26, 2.27, 2.28, 2.29, 2.30");
    gchar **names = g_strsplit(list, ", ", -1);
    for (gchar **n = names; *n; n++)
        ck_assert_msg(strata_nccl_version_find(*n), "%s", *n);
    g_strfreev(names);
    g_free(list);
    /* the kernels' figures (nvlsEfficiency, perChMaxNVLSTreeBws): v2.28.7-1's for every older table (found by its
     * rule, so the 2.22 row, added before it, does not move it), each release's own from 2.28 */
    static const char *const older[] = {"2.8", "2.19", "2.22", "2.25", "2.26", "2.27"};
    for (size_t i = 0; i < G_N_ELEMENTS(older); i++)
        ck_assert_str_eq(strata_nccl_version_kernels(strata_nccl_version_find(older[i]))->name, "2.28");
    ck_assert_ptr_eq(strata_nccl_version_kernels(strata_nccl_version_find("2.30")), strata_nccl_version_find("2.30"));
}
END_TEST

/* The hardware key: the release reaches NCCL's choice (two H100 nodes at
 * 2 MiB, as above), and a bad value is refused at its line. */
START_TEST(hw_key_names_the_release)
{
    const char *set27[] = {"interconnect.nvlink.nccl_version=2.27", NULL};
    strata_hw *hw = strata_test_load_hw("h100-2x8-ib", set27);
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 16, 8, 2u << 20, 0, &t, NULL));
    ck_assert_int_eq(t.algo, STRATA_NCCL_NVLS_TREE);
    strata_hw_free(hw);
    hw = strata_test_load_hw("h100-2x8-ib", NULL);
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 16, 8, 2u << 20, 0, &t, NULL));
    ck_assert_int_eq(t.algo, STRATA_NCCL_TREE);
    ck_assert_int_eq(t.proto, STRATA_NCCL_LL128);
    strata_hw_free(hw);
    static const char head[] = STRATA_TEST_NCCL_HW_HEAD;
    strata_test_hw_text_refused(head, "nccl_version = 2.31\n",
                                "t.ini:15: [interconnect x] nccl_version: expected an NCCL release with tuning "
                                "tables: 2.8, 2.9, 2.19, 2.22, 2.25, 2.26, 2.27, 2.28, 2.29, 2.30 (2.MINOR or 2.MINOR.PATCH), got "
                                "'2.31'");
}
END_TEST

/* nccl_min_ctas reaches NCCL's channels (two H100 nodes, Ring forced, 1
 * GiB: 16 -> 24, as nvls_channels_by_release_and_nodes derives), and a
 * value outside 1 to 32 is refused at its line. */
START_TEST(hw_key_sets_min_ctas)
{
    const char *set[] = {"interconnect.nvlink.nccl_version=2.27", "interconnect.nvlink.nccl_algo=Ring",
                         "interconnect.nvlink.nccl_min_ctas=24", NULL};
    strata_hw *hw = strata_test_load_hw("h100-2x8-ib", set);
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 16, 8, 1u << 30, 0, &t, NULL));
    ck_assert_int_eq(t.algo, STRATA_NCCL_RING);
    ck_assert_uint_eq(t.channels, 24);
    strata_hw_free(hw);
    static const char head[] = STRATA_TEST_NCCL_HW_HEAD;
    strata_test_hw_text_refused(head, "nccl_min_ctas = 33\n",
                                "t.ini:15: [interconnect x] nccl_min_ctas: expected a whole number from 1 to 32, "
                                "got '33'");
}
END_TEST

/* nccl_max_nchannels and nccl_max_ctas reach NCCL's channels (two H100
 * nodes, Ring forced, 1 GiB, as max_channels_by_variable derives: 16 and
 * 8); 0 is refused at its line. */
START_TEST(hw_keys_set_max_channels)
{
    const char *set_n[] = {"interconnect.nvlink.nccl_version=2.25", "interconnect.nvlink.nccl_algo=Ring",
                           "interconnect.nvlink.nccl_max_nchannels=8", NULL};
    const char *set_c[] = {"interconnect.nvlink.nccl_version=2.25", "interconnect.nvlink.nccl_algo=Ring",
                           "interconnect.nvlink.nccl_max_ctas=8", NULL};
    const char *const *sets[] = {set_n, set_c};
    const uint32_t want[] = {16, 8};
    for (int i = 0; i < 2; i++) {
        strata_hw *hw = strata_test_load_hw("h100-2x8-ib", sets[i]);
        strata_coll_tuning t;
        ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 16, 8, 1u << 30, 0, &t, NULL));
        ck_assert_int_eq(t.algo, STRATA_NCCL_RING);
        ck_assert_uint_eq(t.channels, want[i]);
        strata_hw_free(hw);
    }
    static const char head[] = STRATA_TEST_NCCL_HW_HEAD;
    strata_test_hw_text_refused(head, "nccl_max_nchannels = 0\n",
                                "t.ini:15: [interconnect x] nccl_max_nchannels: expected a whole number from 1 to "
                                "32, got '0'");
}
END_TEST

/* NCCL 2.19 (v2.19.3-1) on one 8x A100 node (a100-8.ini: a ring graph of
 * 12 channels x 20 GB/s, 24 channels): the ring's LL bus bandwidth is
 * min(llMaxBw 87.7, 240 / 4) = 60 GB/s, 60 x 8/14 = 34.29 GB/s of
 * algorithm bandwidth (2.30: min(87.7, 240 / 2) x 8/14 = 50.11) after
 * 6.6 + 14 x 0.6 = 15.0 us; Tree's Simple step is 28 us with no base,
 * 2 x 7 x 28 = 392 us. At 2 MiB LL costs 15.0 + 2097152 / 34285.7 =
 * 76.2 us against LL128's 40.6 + 2097152 / (220.8 x 8/14 x 1000) = 57.2:
 * LL128 (2.30's LL: 15.0 + 41.8 = 56.8, below 57.2). The kernel's grain:
 * 512 threads x 8 bytes on LL (1 MiB: 24 channels), 640 x 30 on LL128
 * (2 MiB), none on Simple (32 MiB) or under 2.30. PAT is v2.23's. */
START_TEST(release_2_19_on_one_ampere_node)
{
    const strata_nccl_version *v19 = strata_nccl_version_find("2.19.3");
    ck_assert_ptr_nonnull(v19);
    strata_nccl_comm c = {.arch = STRATA_NCCL_AMPERE, .ranks = 8, .graph_channels = 12, .channel_gbs = 20,
                          .version = v19};
    double lat, bw;
    ck_assert(strata_nccl_model(&c, STRATA_OP_ALL_REDUCE, STRATA_NCCL_RING, STRATA_NCCL_LL, &lat, &bw));
    ck_assert_double_eq_tol(lat, 15.0, 1e-9);
    ck_assert_double_eq_tol(bw, 60.0 * 8 / 14, 1e-9);
    ck_assert(strata_nccl_model(&c, STRATA_OP_ALL_REDUCE, STRATA_NCCL_TREE, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert_double_eq_tol(lat, 392.0, 1e-9);
    strata_nccl_choice ch;
    ck_assert(strata_nccl_choose(&c, STRATA_OP_ALL_REDUCE, 2u << 20, &ch));
    ck_assert_int_eq(ch.algo, STRATA_NCCL_RING);
    ck_assert_int_eq(ch.proto, STRATA_NCCL_LL128);
    ck_assert_uint_eq(ch.ring_grain_bytes, 640 * 30);
    ck_assert(strata_nccl_choose(&c, STRATA_OP_ALL_REDUCE, 1u << 20, &ch));
    ck_assert_int_eq(ch.proto, STRATA_NCCL_LL);
    ck_assert_uint_eq(ch.channels, 24);
    ck_assert_uint_eq(ch.ring_grain_bytes, 512 * 8);
    ck_assert(strata_nccl_choose(&c, STRATA_OP_ALL_REDUCE, 32u << 20, &ch));
    ck_assert_int_eq(ch.proto, STRATA_NCCL_SIMPLE);
    ck_assert_uint_eq(ch.ring_grain_bytes, 0);
    c.version = strata_nccl_version_find("2.30");
    ck_assert(strata_nccl_model(&c, STRATA_OP_ALL_REDUCE, STRATA_NCCL_RING, STRATA_NCCL_LL, &lat, &bw));
    ck_assert_double_eq_tol(bw, 87.7 * 8 / 14, 1e-9);
    ck_assert(strata_nccl_choose(&c, STRATA_OP_ALL_REDUCE, 2u << 20, &ch));
    ck_assert_int_eq(ch.proto, STRATA_NCCL_LL);
    /* from v2.25 runRing's 16-byte alignment (LL and LL128) */
    ck_assert_uint_eq(ch.ring_grain_bytes, 16);
    /* one GPU on each of 8 nodes: PAT from v2.23 only */
    strata_nccl_comm pat = {.arch = STRATA_NCCL_HOPPER, .ranks = 8, .graph_channels = 16, .channel_gbs = 20,
                            .nodes = 8, .nics = 1, .nic_gbs = 50, .nic_gpus = 1, .version = strata_nccl_version_find("2.26")};
    ck_assert(strata_nccl_model(&pat, STRATA_OP_ALL_GATHER, STRATA_NCCL_PAT, STRATA_NCCL_SIMPLE, &lat, &bw));
    pat.version = v19;
    ck_assert(!strata_nccl_model(&pat, STRATA_OP_ALL_GATHER, STRATA_NCCL_PAT, STRATA_NCCL_SIMPLE, &lat, &bw));
}
END_TEST

/* The a100-8.ini case: the release's grain reaches the hardware's tuning;
 * 2.19 across nodes of Hopper GPUs (h100-2x8-ib.ini; Volta and Ampere
 * nodes run since wave 39), or on Blackwell, is refused. */
START_TEST(release_2_19_scope)
{
    const char *set19[] = {"interconnect.nvlink.nccl_version=2.19", NULL};
    strata_hw *hw = strata_test_load_hw("a100-8", set19);
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 8, 16u << 20, 0, &t, NULL));
    ck_assert_int_eq(t.proto, STRATA_NCCL_LL128);
    ck_assert_uint_eq(t.ring_grain, 19200);
    strata_hw_free(hw);
    hw = strata_test_load_hw("h100-2x8-ib", set19);
    GError *err = NULL;
    ck_assert(!strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 16, 8, 2u << 20, 0, &t, &err));
    ck_assert_str_eq(err->message, "algo=nccl: nccl_version = 2.19 models one node (across nodes: all-reduce, "
                                   "all-gather and reduce-scatter of Volta or Ampere GPUs); expected the 16 ranks in "
                                   "one scale-up domain, got 2 domains (its rules across nodes are not in strata's "
                                   "model)");
    g_error_free(err);
    strata_hw_free(hw);
    static const char head[] = "[hardware]\nname = t\ndevices = 4\n[memory hbm]\nkind = device\ncapacity = 1GiB\n"
                               "bandwidth = 1TB/s\n[interconnect x]\ntopology = switch\nbandwidth = 1GB/s\n"
                               "collectives = nccl\nnccl_arch = blackwell\nnccl_channels = 4\n"
                               "nccl_channel_bandwidth = 1GB/s\n";
    strata_test_hw_text_refused(head, "nccl_version = 2.19\n",
                                "t.ini:15: [interconnect x] nccl_version: expected Volta, Ampere or Hopper GPUs "
                                "for NCCL 2.19 (it predates Blackwell), got nccl_arch = blackwell");
}
END_TEST

/* NCCL 2.22 (v2.22.3-1 src/graph/tuning.cc) across two nodes of four A100s
 * on AMD hosts (Perlmutter, held-out set 30). Latencies (us), N2,
 * log2i(2) = 1, 8 / 2 - 1 = 3 NVLink steps; the ring's nsteps 2 x 7 = 14,
 * its network steps 2 x nNodes = 4 (v2.25: 2 x (nNodes - 1) = 2); AMD's
 * network overhead 2 (x 3 on Simple) over NVLink's step:
 *   Tree Simple  v2.22: 0 + 2 (3 x 28 + 28) = 224; v2.25: 8.4 + 2 (3 x 4 + 14) = 60.4
 *   Ring Simple  v2.22: 8.4 + 10 x 6 + 4 x 14 = 124.4; v2.25: 8.4 + 12 x 6 + 2 x 14 = 108.4
 *   Ring LL      v2.22: 6.6 + 10 x 2 + 4 x 2.7 = 37.4; v2.25: 6.6 + 12 x 2 + 2 x 2.7 = 36.0
 *   Tree LL      both: 6.8 + 2 (3 x 0.6 + 5.0) = 20.4
 * The ring's LL bandwidth is v2.25's (from v2.21.5-1: half the graph's,
 * capped at llMaxBws' AMD N2 22.5), not v2.19's quarter. */
START_TEST(release_2_22_across_ampere_nodes)
{
    strata_nccl_comm c = {.arch = STRATA_NCCL_AMPERE, .ranks = 8, .graph_channels = 4, .channel_gbs = 20.0,
                          .nodes = 2, .nics = 4, .nic_gbs = 25.0, .nic_gpus = 4, .cpu = STRATA_NCCL_AMD,
                          .version = strata_nccl_version_find("2.22.3")};
    ck_assert_ptr_nonnull(c.version);
    ck_assert_str_eq(c.version->name, "2.22");
    strata_nccl_comm n25 = c;
    n25.version = strata_nccl_version_find("2.25");
    static const struct {
        strata_nccl_algo a;
        strata_nccl_proto p;
        double v222, v225;
    } rows[] = {{STRATA_NCCL_TREE, STRATA_NCCL_SIMPLE, 224.0, 60.4},
                {STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, 124.4, 108.4},
                {STRATA_NCCL_RING, STRATA_NCCL_LL, 37.4, 36.0},
                {STRATA_NCCL_TREE, STRATA_NCCL_LL, 20.4, 20.4}};
    double lat, bw, lat25, bw25;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ck_assert(strata_nccl_model(&c, STRATA_OP_ALL_REDUCE, rows[i].a, rows[i].p, &lat, &bw));
        ck_assert_double_eq_tol(lat, rows[i].v222, 1e-9);
        ck_assert(strata_nccl_model(&n25, STRATA_OP_ALL_REDUCE, rows[i].a, rows[i].p, &lat25, &bw25));
        ck_assert_double_eq_tol(lat25, rows[i].v225, 1e-9);
        ck_assert_double_eq_tol(bw, bw25, 1e-9);
    }
    /* no PAT before v2.23 */
    ck_assert(!c.version->pat);
    /* Hopper across nodes is not in the table: refused, as 2.19 is */
    const char *set22[] = {"interconnect.nvlink.nccl_version=2.22", NULL};
    strata_hw *hw = strata_test_load_hw("h100-2x8-ib", set22);
    strata_coll_tuning t;
    GError *err = NULL;
    ck_assert(!strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 16, 8, 2u << 20, 0, &t, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "nccl_version = 2.22 models one node"));
    g_error_free(err);
    strata_hw_free(hw);
}
END_TEST

/* The tree's x .85 with one GPU a node (strata_nccl_version
 * tree_pattern_cut): NVIDIA/nccl v2.25.1-1 src/graph/tuning.cc l. 260 "if
 * (a == NCCL_ALGO_TREE && graphs[a]->pattern == NCCL_TOPO_PATTERN_TREE)
 * busBw *= .85" (v2.26.6-1 l. 261 reads comm->maxTreePattern, the same on
 * one communicator), the pattern search.cc l. 995 gives the tree graph at
 * ngpus == 1. One H100 and one 400 Gb/s NIC on each of 2 nodes
 * (test_nccl_tree_graph.c): tree graph 2 channels, bwIntra 48, so Tree
 * Simple's bus min(2 x 48 x .92 = 88.32, 2 x 41.4 = 82.8) = 82.8, x .85 =
 * 70.38, algorithm x .5 = 35.19 GB/s under 2.25, 2.26 and 2.30 alike;
 * latency 8.4 + 2 x (0 + 1 x 14) = 36.4 us. Forced to Tree, 1 GiB (log2
 * (2^30 / 64) = 24: no correction) takes 36.4 + 2^30 / 35190 = 30549.10
 * us. Eight GPUs a node (two_nodes: tree graph 8 x 45 / 45, the balanced
 * pattern) keep min(331.2, 331.2) x .5 = 165.6 in 2.25. */
START_TEST(tree_pattern_cut_at_one_gpu_a_node)
{
    const char *releases[] = {"2.25", "2.26", "2.30"};
    double lat, bw;
    for (size_t i = 0; i < sizeof releases / sizeof releases[0]; i++) {
        strata_nccl_comm one = {.arch = STRATA_NCCL_HOPPER, .ranks = 2, .graph_channels = 12, .channel_gbs = 30.0,
                                .nodes = 2, .nics = 1, .nic_gbs = 50.0, .nic_gpus = 1,
                                .version = strata_nccl_version_find(releases[i])};
        ck_assert(strata_nccl_version_find(releases[i])->tree_pattern_cut);
        ck_assert(strata_nccl_model(&one, STRATA_OP_ALL_REDUCE, STRATA_NCCL_TREE, STRATA_NCCL_SIMPLE, &lat, &bw));
        ck_assert_double_eq_tol(lat, 36.4, 1e-9);
        ck_assert_double_eq_tol(bw, 35.19, 1e-9);
        one.algos = 1u << STRATA_NCCL_TREE;
        one.protos = 1u << STRATA_NCCL_SIMPLE;
        strata_nccl_choice ch;
        ck_assert(strata_nccl_choose(&one, STRATA_OP_ALL_REDUCE, 1ull << 30, &ch));
        ck_assert_double_eq_tol(ch.time_us, 36.4 + 1073741824.0 / 35190.0, 1e-6);
    }
    strata_nccl_comm eight = two_nodes("2.25");
    ck_assert(strata_nccl_model(&eight, STRATA_OP_ALL_REDUCE, STRATA_NCCL_TREE, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert_double_eq_tol(bw, 165.6, 1e-9);
}
END_TEST

/* NCCL 2.8 (v2.8.4-1 src/graph/tuning.cc) on one 8x A100 node (a100-8.ini's
 * ring graph, 12 channels x 20 GB/s = 240, 24 channels). Any busBw on sm80
 * is at most 235 first. Ring LL: min(llMaxBw 87.7, 235 / 4 = 58.75) x 8/14
 * = 33.571 GB/s after 3.6 + 14 x 0.47 = 10.18 us. Ring LL128: min(235 x
 * 0.92 = 216.2, ll128MaxBwPerCh[AllReduce] 16.9 x 12 = 202.8) x 8/14 =
 * 115.886 after 10.0 + 14 x 1.9 = 36.6. Ring Simple: 235 x 8/14 = 134.286
 * after 8.4 + 14 x 3.4 = 56.0. LL128 against Simple: 36.6 + B / 115886
 * = 56.0 + B / 134286 at B = 19.4 / (1/115886 - 1/134286) = 16.41 MB, so
 * 8 MiB runs LL128 (36.6 + 72.39 = 108.99 us against 56.0 + 62.47 =
 * 118.47) and 16 MiB Simple (56.0 + 124.94 = 180.94 against 36.6 + 144.77
 * = 181.37), where 2.19 keeps LL128 to 24.3 MB. All-gather: LL128 capped
 * at 18.3 x 12 = 219.6 above 216.2, so 216.2. Tree LL128 (one node): bus
 * min(216.2 x 7/9 = 168.156, 202.8) x 0.5 = 84.078, after 4.4 + 2 x 7 x
 * 1.25 = 21.9 us; at 8 MiB (log2(8 MiB / 64) = 17) the release's
 * correction row gives 0.7 (v2.19's 0.9): 21.9 + 8388608 / (84.078 x 0.7
 * x 1000) = 164.43 us. */
START_TEST(release_2_8_on_one_ampere_node)
{
    const strata_nccl_version *v28 = strata_nccl_version_find("2.8.4");
    ck_assert_ptr_nonnull(v28);
    ck_assert_str_eq(strata_nccl_version_find("2.9.9")->name, "2.9");
    strata_nccl_comm c = {.arch = STRATA_NCCL_AMPERE, .ranks = 8, .graph_channels = 12, .channel_gbs = 20,
                          .version = v28};
    const strata_op_kind ar = STRATA_OP_ALL_REDUCE;
    double lat, bw;
    ck_assert(strata_nccl_model(&c, ar, STRATA_NCCL_RING, STRATA_NCCL_LL, &lat, &bw));
    ck_assert_double_eq_tol(lat, 10.18, 1e-9);
    ck_assert_double_eq_tol(bw, 58.75 * 8 / 14, 1e-9);
    ck_assert(strata_nccl_model(&c, ar, STRATA_NCCL_RING, STRATA_NCCL_LL128, &lat, &bw));
    ck_assert_double_eq_tol(lat, 36.6, 1e-9);
    ck_assert_double_eq_tol(bw, 202.8 * 8 / 14, 1e-9);
    ck_assert(strata_nccl_model(&c, ar, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert_double_eq_tol(lat, 56.0, 1e-9);
    ck_assert_double_eq_tol(bw, 235.0 * 8 / 14, 1e-9);
    ck_assert(strata_nccl_model(&c, STRATA_OP_ALL_GATHER, STRATA_NCCL_RING, STRATA_NCCL_LL128, &lat, &bw));
    ck_assert_double_eq_tol(bw, 216.2 * 8 / 7, 1e-9);
    strata_nccl_choice ch;
    ck_assert(strata_nccl_choose(&c, ar, 8u << 20, &ch));
    ck_assert(ch.algo == STRATA_NCCL_RING && ch.proto == STRATA_NCCL_LL128);
    ck_assert_double_eq_tol(ch.time_us, 36.6 + 8388608 / (202.8 * 8 / 14 * 1000), 1e-6);
    ck_assert_uint_eq(ch.channels, 24);
    ck_assert_uint_eq(ch.ring_grain_bytes, 640 * 30);
    ck_assert(strata_nccl_choose(&c, ar, 16u << 20, &ch));
    ck_assert(ch.algo == STRATA_NCCL_RING && ch.proto == STRATA_NCCL_SIMPLE);
    ck_assert_double_eq_tol(ch.time_us, 56.0 + 16777216 / (235.0 * 8 / 14 * 1000), 1e-6);
    ck_assert_double_eq_tol(strata_nccl_time_us(&c, ar, STRATA_NCCL_TREE, STRATA_NCCL_LL128, 8u << 20),
                            21.9 + 8388608 / (168.156 * 0.5 * 0.7 * 1000), 1e-3);
    c.version = strata_nccl_version_find("2.19");
    ck_assert(strata_nccl_choose(&c, ar, 16u << 20, &ch));
    ck_assert_int_eq(ch.proto, STRATA_NCCL_LL128);
    /* the cap is sm80's: a Volta communicator of the same graph keeps 240 */
    c = (strata_nccl_comm){.arch = STRATA_NCCL_VOLTA, .ranks = 8, .graph_channels = 12, .channel_gbs = 20,
                           .version = v28};
    ck_assert(strata_nccl_model(&c, ar, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert_double_eq_tol(bw, 240.0 * 8 / 14, 1e-9);
}
END_TEST

/* 2.8 on a Hopper node is refused at its line: the release has no
 * Hopper tables. */
START_TEST(release_2_8_scope)
{
    static const char head[] = "[hardware]\nname = t\ndevices = 4\n[memory hbm]\nkind = device\ncapacity = 1GiB\n"
                               "bandwidth = 1TB/s\n[interconnect x]\ntopology = switch\nbandwidth = 1GB/s\n"
                               "collectives = nccl\nnccl_arch = hopper\nnccl_channels = 4\n"
                               "nccl_channel_bandwidth = 1GB/s\n";
    strata_test_hw_text_refused(head, "nccl_version = 2.8\n",
                                "t.ini:15: [interconnect x] nccl_version: expected Volta or Ampere GPUs for NCCL "
                                "2.8 (it predates Hopper), got nccl_arch = hopper");
}
END_TEST

static Suite *nccl_versions_suite(void)
{
    Suite *s = suite_create("nccl_versions");
    TCase *tc = tcase_create("nccl_versions");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_2_mib_all_reduce_under_two_releases);
    tcase_add_test(tc, nvls_on_one_node_by_release);
    tcase_add_test(tc, a_b200_node_at_mid_sizes);
    tcase_add_test(tc, b200_copy_warps_pace_at_32k);
    tcase_add_test(tc, nvls_channels_by_release_and_nodes);
    tcase_add_test(tc, release_names);
    tcase_add_test(tc, hw_key_names_the_release);
    tcase_add_test(tc, hw_key_sets_min_ctas);
    tcase_add_test(tc, max_channels_by_variable);
    tcase_add_test(tc, hw_keys_set_max_channels);
    tcase_add_test(tc, release_2_19_on_one_ampere_node);
    tcase_add_test(tc, release_2_19_scope);
    tcase_add_test(tc, release_2_8_on_one_ampere_node);
    tcase_add_test(tc, release_2_8_scope);
    tcase_add_test(tc, tree_pattern_cut_at_one_gpu_a_node);
    tcase_add_test(tc, release_2_22_across_ampere_nodes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(nccl_versions_suite()); }
